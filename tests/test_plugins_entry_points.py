"""Entry-point plugins: pluggy's ``hermes_memory`` group and Hermes' own group."""

from __future__ import annotations

import logging
import time
import types
from collections.abc import Iterator
from pathlib import Path

import pytest
from plugin_kit import ensure_builtin, fresh_discovery, install_distribution, provider_source

from hermes_core.hookspecs import hookimpl
from hermes_core.plugins import (
    HERMES_ENTRY_POINT_GROUP,
    discover_providers,
    get_plugin_manager,
    list_plugins,
    load_memory_provider,
    reset_plugin_manager,
)
from hermes_core.provider import MemoryProvider


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with fresh_discovery(tmp_path_factory.getbasetemp()):
        yield


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory on sys.path where test distributions are installed."""
    path = tmp_path / "site-packages"
    path.mkdir()
    monkeypatch.syspath_prepend(str(path))
    return path


PLUGGY_MODULE = """
from hermes_core import hookimpl
from {package}.provider import Provider


@hookimpl
def register_memory_providers(register):
    register(Provider)
"""


def install_pluggy_provider(site: Path, dist: str, package: str, name: str, **kw: object) -> None:
    install_distribution(
        site,
        dist,
        version="0.4.2",
        entry_points={"hermes_memory": {name: f"{package}.plugin"}},
        modules={
            f"{package}/__init__.py": "",
            f"{package}/provider.py": provider_source(name, **kw)  # type: ignore[arg-type]
            + "\n    def prefetch(self, query, *, session_id=''):\n        return ''\n",
            f"{package}/plugin.py": PLUGGY_MODULE.format(package=package),
        },
    )


def by_name() -> dict[str, object]:
    return {info.name: info for info in discover_providers()}


def test_hermes_memory_entry_point_provider_is_listed_with_its_distribution(site: Path) -> None:
    install_pluggy_provider(site, "hermes-memory-epmem", "epmem_pkg", "epmem", doc="EP memory.")
    info = by_name()["epmem"]
    assert info.source == "entry_point"
    assert (info.distribution, info.version) == ("hermes-memory-epmem", "0.4.2")
    assert info.plugin == "epmem"
    assert info.description == "EP memory."
    assert info.hooks == ("prefetch",)
    assert info.available is True
    assert info.path is not None and info.path.endswith("provider.py")
    provider = load_memory_provider("epmem")
    assert isinstance(provider, MemoryProvider) and provider.name == "epmem"
    assert load_memory_provider("no-such-provider") is None


def test_plugin_listing_reports_distribution_and_hooks(site: Path) -> None:
    install_pluggy_provider(site, "hermes-memory-epmem", "epmem_pkg", "epmem")
    record = next(r for r in list_plugins() if r.name == "epmem")
    assert (record.distribution, record.version, record.status) == (
        "hermes-memory-epmem",
        "0.4.2",
        "loaded",
    )
    assert record.hooks == ("register_memory_providers",)


def test_failing_entry_point_warns_once_naming_distribution_and_others_load(
    site: Path, caplog: pytest.LogCaptureFixture
) -> None:
    install_pluggy_provider(site, "hermes-memory-good", "good_pkg", "good")
    install_distribution(
        site,
        "hermes-memory-bad",
        entry_points={"hermes_memory": {"bad": "bad_pkg.plugin"}},
        modules={"bad_pkg/__init__.py": "", "bad_pkg/plugin.py": "import not_installed_dep\n"},
    )
    with caplog.at_level(logging.WARNING, logger="hermes_core.plugins"):
        get_plugin_manager()
        get_plugin_manager()
    warnings = [r.getMessage() for r in caplog.records if "bad" in r.getMessage()]
    assert len(warnings) == 1
    assert "hermes-memory-bad" in warnings[0] and "not_installed_dep" in warnings[0]
    assert "good" in by_name()
    record = next(r for r in list_plugins() if r.name == "bad")
    assert record.status == "failed" and "ModuleNotFoundError" in (record.error or "")


def test_plugin_manager_is_cached_until_reset() -> None:
    first = get_plugin_manager()
    assert get_plugin_manager() is first
    reset_plugin_manager()
    assert get_plugin_manager() is not first
    assert get_plugin_manager().project_name == "hermes_memory"


class _Registered(MemoryProvider):
    def __init__(self, name: str = "runtime-class") -> None:
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id: str, **kwargs: object) -> None:
        pass

    def get_tool_schemas(self) -> list[dict[str, object]]:
        return []


def test_register_accepts_a_class_a_factory_and_an_instance() -> None:
    plugin = types.ModuleType("runtime_plugin")

    @hookimpl
    def register_memory_providers(register):  # type: ignore[no-untyped-def]
        register(_Registered)
        register(lambda: _Registered("runtime-factory"))
        register(_Registered("runtime-instance"))

    plugin.register_memory_providers = register_memory_providers  # type: ignore[attr-defined]
    get_plugin_manager().register(plugin, name="runtime")
    entries = by_name()
    for name in ("runtime-class", "runtime-factory", "runtime-instance"):
        assert entries[name].available is True
        assert entries[name].plugin == "runtime"
        assert entries[name].distribution is None


def test_misspelt_hook_is_reported(site: Path, caplog: pytest.LogCaptureFixture) -> None:
    install_distribution(
        site,
        "hermes-memory-typo",
        entry_points={"hermes_memory": {"typo": "typo_pkg"}},
        modules={
            "typo_pkg/__init__.py": """
                from hermes_core import hookimpl

                @hookimpl
                def register_memory_provider(register):
                    pass
            """
        },
    )
    with caplog.at_level(logging.WARNING, logger="hermes_core.plugins"):
        get_plugin_manager()
    assert "unknown hook 'register_memory_provider'" in caplog.text
    assert "hermes-memory-typo" in caplog.text


EXPOSURES = {
    "as_register": (
        "entrymem_a",
        "entrymem_a:register",
        "def register(ctx):\n    ctx.register_memory_provider(Provider())\n",
    ),
    "as_class": ("entrymem_b", "entrymem_b:Provider", ""),
    "as_factory": (
        "entrymem_c",
        "entrymem_c:make_provider",
        "def make_provider():\n    return Provider()\n",
    ),
    "as_instance": ("entrymem_d", "entrymem_d:INSTANCE", "INSTANCE = Provider()\n"),
    "as_module": (
        "entrymem_e",
        "entrymem_e",
        "def register(ctx):\n    ctx.register_memory_provider(Provider)\n",
    ),
    "as_namespace": ("entrymem_f", "entrymem_f:Holder", "class Holder:\n    Impl = Provider\n"),
}


@pytest.mark.parametrize("exposure", sorted(EXPOSURES))
def test_hermes_agent_entry_point_exposures_all_load(site: Path, exposure: str) -> None:
    module, target, extra = EXPOSURES[exposure]
    install_distribution(
        site,
        f"{module}-dist",
        version="3.0",
        entry_points={HERMES_ENTRY_POINT_GROUP: {"entrymem": target}},
        modules={f"{module}.py": provider_source("entrymem-instance") + "\n" + extra},
    )
    info = by_name()["entrymem"]
    assert info.source == "hermes_entry_point"
    assert (info.distribution, info.version, info.available) == (f"{module}-dist", "3.0", True)
    assert info.provider_name == "entrymem-instance"
    provider = load_memory_provider("entrymem")
    assert provider is not None and provider.name == "entrymem-instance"


def test_hermes_entry_point_may_import_hermes_module_names(site: Path) -> None:
    install_distribution(
        site,
        "hermes-style-dist",
        entry_points={HERMES_ENTRY_POINT_GROUP: {"hstyle": "hstyle_mod:register"}},
        modules={
            "hstyle_mod.py": provider_source("hstyle").replace(
                "from hermes_core.provider import MemoryProvider",
                "from agent.memory_provider import MemoryProvider",
            )
            + "\ndef register(ctx):\n    ctx.register_memory_provider(Provider())\n"
        },
    )
    assert by_name()["hstyle"].available is True


def test_provider_with_a_class_level_name_is_created_only_when_needed(tmp_path: Path) -> None:
    created = tmp_path / "created.txt"

    class Counted(_Registered):
        name = "counted"  # type: ignore[assignment]

        def __init__(self) -> None:
            with created.open("a") as handle:
                handle.write("x")

    class Other(_Registered):
        name = "other-static"  # type: ignore[assignment]

        def __init__(self) -> None:
            pass

    plugin = types.ModuleType("static_plugin")

    @hookimpl
    def register_memory_providers(register):  # type: ignore[no-untyped-def]
        register(Counted)
        register(Other)

    plugin.register_memory_providers = register_memory_providers  # type: ignore[attr-defined]
    get_plugin_manager().register(plugin, name="static")
    assert load_memory_provider("other-static") is not None
    assert not created.exists()  # looking up another name never created Counted
    provider = load_memory_provider("counted")
    assert provider is not None and created.read_text() == "x"


def test_pluggy_plugins_that_hang_after_import_are_cut_off_and_the_rest_load(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from hermes_core.discovery import deadline

    monkeypatch.setattr(deadline, "PROVIDER_CALL_TIMEOUT", 0.3)

    class NameHangs(MemoryProvider):  # its name is read when the listing is built
        @property
        def name(self) -> str:
            time.sleep(10**6)
            return "never"

        def is_available(self) -> bool:
            return True

        def initialize(self, session_id: str, **kwargs: object) -> None:
            pass

        def get_tool_schemas(self) -> list[dict[str, object]]:
            return []

    class Fine(NameHangs):
        name = "fine"  # type: ignore[assignment]

    hanging_name = types.ModuleType("hanging_name")
    hanging_register = types.ModuleType("hanging_register")
    fine = types.ModuleType("fine")

    @hookimpl
    def register_name(register: object) -> None:
        register(NameHangs)  # type: ignore[operator]

    @hookimpl
    def register_forever(register: object) -> None:
        time.sleep(10**6)

    @hookimpl
    def register_fine(register: object) -> None:
        register(Fine)  # type: ignore[operator]

    for module, hook in (
        (hanging_name, register_name),
        (hanging_register, register_forever),
        (fine, register_fine),
    ):
        module.register_memory_providers = hook  # type: ignore[attr-defined]
        get_plugin_manager().register(module, name=module.__name__)
    listing = {i.name: i for i in discover_providers()}
    assert listing["fine"].status == "available"
    assert "name did not return within 0.3 s" in (listing["hanging_name"].error or "")
    assert "register_memory_providers() did not return within 0.3 s" in (
        listing["hanging_register"].error or ""
    )


def test_an_entry_point_that_hangs_while_imported_is_cut_off(
    site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hermes_core.discovery import deadline

    monkeypatch.setattr(deadline, "PLUGIN_LOAD_TIMEOUT", 0.3)
    install_pluggy_provider(site, "hermes-memory-good", "good_pkg", "good")
    install_distribution(
        site,
        "hermes-memory-slow",
        entry_points={"hermes_memory": {"slow": "slow_pkg.plugin"}},
        modules={
            "slow_pkg/__init__.py": "",
            "slow_pkg/plugin.py": "import time\ntime.sleep(10**6)\n",
        },
    )
    reset_plugin_manager()
    assert by_name()["good"].status == "available"
    record = next(r for r in list_plugins() if r.name == "slow")
    assert record.status == "failed"
    assert "loading did not finish within 0.3 s" in (record.error or "")


OBSERVER_PLUGIN = '''
"""Hermes plugin entry point of an observer.

Deliberately a plain pair of hooks rather than a `MemoryProvider` subclass, so
it runs beside whichever memory provider the user picked.
"""


def _on_post_llm_call(**kwargs):
    return None


def register(ctx):
    ctx.register_hook("post_llm_call", _on_post_llm_call)
'''


def _doctor_for(hermes_home: Path, provider: str) -> str:
    from click.testing import CliRunner

    from hermes_core.cli import cli

    (hermes_home / "config.yaml").write_text(f"memory:\n  provider: {provider}\n", "utf-8")
    result = CliRunner().invoke(cli, ["doctor"], catch_exceptions=False)
    assert result.exit_code == 1, result.stdout
    return result.stdout


def test_doctor_tells_a_general_plugin_whose_docstring_names_memory_provider(
    site: Path, hermes_home: Path
) -> None:
    # psy-core-hermes' hermes_agent.plugins module explains in its docstring that
    # it is no MemoryProvider; the text check took it for a misfiled provider and
    # told the user to copy a plugin folder or run an installer.
    ensure_builtin()
    install_distribution(
        site,
        "observer-hermes",
        version="0.1.4",
        entry_points={"hermes_agent.plugins": {"observer": "observer_core.hermes.register"}},
        modules={
            "observer_core/__init__.py": "",
            "observer_core/hermes/__init__.py": "",
            "observer_core/hermes/hooks.py": "# feeds the MemoryProvider-free observer\n",
            "observer_core/hermes/register.py": OBSERVER_PLUGIN
            + "\nfrom observer_core.hermes import hooks  # noqa\n",
        },
    )
    out = _doctor_for(hermes_home, "observer")
    assert (
        "observer-hermes 0.1.4 (hermes_agent.plugins: observer = observer_core.hermes.register) "
        "is a general Hermes plugin by that name (its code names no MemoryProvider)" in out
    ), out
    assert "declares it under an entry-point group" not in out
    assert "run the package's own installer" not in out
    assert "select a memory provider plugin instead (that package is a general plugin" in out
    assert "install the provider's package" not in out


def test_doctor_still_finds_a_provider_behind_a_forwarding_entry_module(
    site: Path, hermes_home: Path
) -> None:
    # The entry module names the provider only in its docstring and forwards to
    # ``.provider``, whose code subclasses MemoryProvider: still a misfiled provider.
    ensure_builtin()
    install_distribution(
        site,
        "forwarder-hermes",
        entry_points={"hermes_agent.plugins": {"forwarder": "forwarder_hermes"}},
        modules={
            "forwarder_hermes/__init__.py": (
                '"""The forwarder MemoryProvider."""\nfrom .provider import register\n'
            ),
            "forwarder_hermes/provider.py": provider_source("forwarder")
            + "\ndef register(ctx):\n    ctx.register_memory_provider(Provider())\n",
        },
    )
    out = _doctor_for(hermes_home, "forwarder")
    assert "declares it under an entry-point group that neither" in out, out
    assert "run the package's own installer" in out


def test_code_check_ignores_docstrings_and_follows_own_package_imports(tmp_path: Path) -> None:
    from hermes_core.discovery.folders import names_memory_provider_in_code

    def write(name: str, text: str) -> Path:
        (tmp_path / name).write_text(text, "utf-8")
        return tmp_path / name

    assert not names_memory_provider_in_code(write("doc.py", '"""Not a MemoryProvider."""\n'))
    assert not names_memory_provider_in_code(write("comment.py", "x = 1  # MemoryProvider\n"))
    assert names_memory_provider_in_code(write("base.py", "class Notes(MemoryProvider): pass\n"))
    assert names_memory_provider_in_code(write("call.py", "ctx.register_memory_provider(p)\n"))
    # unparsable: the text check decides
    assert names_memory_provider_in_code(write("broken.py", "MemoryProvider (\n"))
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "core.py").write_text("from agent.memory_provider import MemoryProvider\n", "utf-8")
    (pkg / "__init__.py").write_text("from .core import *\n", "utf-8")
    assert names_memory_provider_in_code(pkg / "__init__.py", "pkg")


def test_plugins_all_lists_hermes_entry_points_no_memory_loader_reads(
    site: Path, hermes_home: Path
) -> None:
    # pip-installed general Hermes plugins (psy-core-hermes, hermesguardian, …) and a
    # provider under a group nobody reads (context-compiler's hermes.plugins.memory)
    # left no trace in `plugins --all`, unlike a general plugin's folder.
    import json

    from click.testing import CliRunner

    from hermes_core.cli import cli

    install_distribution(
        site,
        "observer-hermes",
        version="0.1.4",
        entry_points={"hermes_agent.plugins": {"observer": "observer_plugin"}},
        modules={"observer_plugin.py": OBSERVER_PLUGIN},
    )
    install_distribution(
        site,
        "misfiled-hermes",
        entry_points={"hermes.plugins.memory": {"misfiled": "misfiled_mem:Provider"}},
        modules={"misfiled_mem.py": provider_source("misfiled")},
    )
    install_distribution(  # some other tool's group: not a Hermes one, not listed
        site,
        "unrelated",
        entry_points={"pytest11": {"observer": "observer_plugin"}},
        modules={},
    )
    ensure_builtin()  # after the installs: the entry-point scan is kept per sys.path

    def run(*args: str) -> str:
        result = CliRunner().invoke(cli, ["plugins", *args], catch_exceptions=False)
        assert result.exit_code == 0, result.stdout
        return result.stdout

    short = run()
    assert "1 installed package(s) declare a memory provider under an entry-point group" in short
    listed = run("--all")
    assert "Installed Hermes entry points that no memory loader reads" in listed
    assert (
        "observer-hermes 0.1.4 (hermes_agent.plugins: observer = observer_plugin): "
        "no memory provider" in listed
    )
    assert (
        "misfiled-hermes 1.0 (hermes.plugins.memory: misfiled = misfiled_mem:Provider): "
        "a memory provider under another group" in listed
    )
    assert "pytest11" not in listed
    payload = json.loads(run("--all", "--json"))
    kinds = {(p["distribution"], p["name"]): p["kind"] for p in payload["unread_entry_points"]}
    assert kinds == {
        ("observer-hermes", "observer"): "general plugin",
        ("misfiled-hermes", "misfiled"): "memory provider",
    }
