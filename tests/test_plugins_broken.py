"""A broken plugin never breaks discovery: one warning, an error on its entry, the rest load."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from plugin_kit import folder_plugin, fresh_discovery, install_distribution, provider_source

from hermes_core.plugins import HERMES_ENTRY_POINT_GROUP, discover_providers, load_memory_provider


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with fresh_discovery(tmp_path_factory.getbasetemp()):
        yield


@pytest.fixture(autouse=True)
def _good_plugin(hermes_home: Path) -> None:
    folder_plugin(hermes_home / "plugins", "healthy", provider_source("healthy"))


def method(name: str, body: str) -> str:
    return f"\n    def {name}(self, *args, **kwargs):\n        {body}\n"


# kind -> (__init__.py source, text the error must contain)
FOLDER_BREAKAGES: dict[str, tuple[str, str]] = {
    "syntax_error": (provider_source("broken") + "\ndef oops(:\n", "SyntaxError"),
    "import_error": (
        "import hermes_missing_dependency\n" + provider_source("broken"),
        "ModuleNotFoundError: No module named 'hermes_missing_dependency'",
    ),
    "system_exit_at_import": (provider_source("broken") + "\nraise SystemExit(3)\n", "SystemExit"),
    "raising_constructor": (
        provider_source("broken").replace(
            "self.initialized = None", "raise RuntimeError('no credentials file')"
        ),
        "creating Provider raised RuntimeError: no credentials file",
    ),
    "failing_get_tool_schemas": (
        provider_source("broken") + method("get_tool_schemas", "raise KeyError('schema')"),
        "get_tool_schemas() raised KeyError: 'schema'",
    ),
    "get_tool_schemas_not_a_list": (
        provider_source("broken") + method("get_tool_schemas", "return 42"),
        "get_tool_schemas() returned int, expected a list of tool schemas",
    ),
    "raising_is_available": (
        provider_source("broken") + method("is_available", "raise OSError('probe failed')"),
        "is_available() raised OSError: probe failed",
    ),
    "raising_name": (
        provider_source("broken").replace('return "broken"', "raise ValueError('nameless')"),
        "name raised ValueError: nameless",
    ),
    "no_provider_inside": (
        "# mentions MemoryProvider but defines none\nVALUE = 1\n",
        "no provider found",
    ),
    "register_raises_and_no_subclass": (
        "# register_memory_provider\n"
        "def register(ctx):\n    raise RuntimeError('setup exploded')\n",
        "register(ctx) raised RuntimeError: setup exploded",
    ),
}


def assert_one_warning(caplog: pytest.LogCaptureFixture, name: str, cause: str) -> None:
    relevant = [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.WARNING and repr(name) in r.getMessage()
    ]
    assert len(relevant) == 1, relevant
    assert cause in relevant[0]


@pytest.mark.parametrize("kind", sorted(FOLDER_BREAKAGES))
def test_broken_folder_plugin(
    kind: str, hermes_home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    source, cause = FOLDER_BREAKAGES[kind]
    folder_plugin(hermes_home / "plugins", "broken", source)
    with caplog.at_level(logging.WARNING, logger="hermes_core.plugins"):
        listing = {i.name: i for i in discover_providers()}
    assert listing["healthy"].available is True and listing["healthy"].error is None
    broken = listing["broken"]
    assert broken.available is False
    assert broken.status == "broken"
    assert cause in (broken.error or "")
    assert_one_warning(caplog, "broken", cause)


def test_unavailable_is_not_broken(hermes_home: Path) -> None:
    folder_plugin(
        hermes_home / "plugins",
        "offline",
        provider_source("offline", available=False)
        + method("unavailable_reason", "return 'set OFFLINE_API_KEY'"),
    )
    info = {i.name: i for i in discover_providers()}["offline"]
    assert (info.available, info.unavailable_reason, info.error) == (
        False,
        "set OFFLINE_API_KEY",
        None,
    )
    assert info.status == "unavailable"
    assert info.hooks == ("unavailable_reason",)


def test_raising_unavailable_reason_is_reported_not_fatal(hermes_home: Path) -> None:
    folder_plugin(
        hermes_home / "plugins",
        "shy",
        provider_source("shy", available=False)
        + method("unavailable_reason", "raise RuntimeError('hidden')"),
    )
    info = {i.name: i for i in discover_providers()}["shy"]
    assert info.error is None
    assert "unavailable_reason() raised RuntimeError: hidden" in info.unavailable_reason


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "site-packages"
    path.mkdir()
    monkeypatch.syspath_prepend(str(path))
    return path


PLUGGY_BREAKAGES: dict[str, tuple[str, str]] = {
    "hook_raises": (
        "from hermes_core import hookimpl\n\n@hookimpl\n"
        "def register_memory_providers(register):\n    raise RuntimeError('hook exploded')\n",
        "register_memory_providers() raised RuntimeError: hook exploded",
    ),
    "constructor_raises": (
        provider_source("pluggybroken").replace(
            "self.initialized = None", "raise RuntimeError('ctor exploded')"
        )
        + "\nfrom hermes_core import hookimpl\n\n@hookimpl\n"
        "def register_memory_providers(register):\n    register(Provider)\n",
        "creating Provider raised RuntimeError: ctor exploded",
    ),
    "registers_garbage": (
        "from hermes_core import hookimpl\n\n@hookimpl\n"
        "def register_memory_providers(register):\n    register(42)\n",
        "42 is not a MemoryProvider class, instance or factory",
    ),
}


@pytest.mark.parametrize("kind", sorted(PLUGGY_BREAKAGES))
def test_broken_pluggy_plugin(kind: str, site: Path, caplog: pytest.LogCaptureFixture) -> None:
    source, cause = PLUGGY_BREAKAGES[kind]
    install_distribution(
        site,
        "hermes-memory-pluggybroken",
        entry_points={"hermes_memory": {"pluggybroken": "pluggybroken_mod"}},
        modules={"pluggybroken_mod.py": source},
    )
    with caplog.at_level(logging.WARNING, logger="hermes_core.plugins"):
        listing = {i.name: i for i in discover_providers()}
    assert listing["healthy"].available is True
    broken = listing["pluggybroken"]
    assert broken.distribution == "hermes-memory-pluggybroken"
    assert cause in (broken.error or "")
    assert_one_warning(caplog, "pluggybroken", cause)
    assert load_memory_provider("pluggybroken") is None


def test_broken_hermes_entry_points(site: Path, caplog: pytest.LogCaptureFixture) -> None:
    install_distribution(
        site,
        "hermes-agent-broken",
        entry_points={
            HERMES_ENTRY_POINT_GROUP: {
                "missing_attr": "hbroken_mod:NoSuchThing",
                "bad_factory": "hbroken_mod:make",
            }
        },
        modules={"hbroken_mod.py": "def make():\n    return 'not a provider'\n"},
    )
    with caplog.at_level(logging.WARNING, logger="hermes_core.plugins"):
        listing = {i.name: i for i in discover_providers()}
    assert "AttributeError" in (listing["missing_attr"].error or "")
    assert "factory make() returned str, not a MemoryProvider" in (
        listing["bad_factory"].error or ""
    )
    assert listing["healthy"].available is True
    assert_one_warning(caplog, "missing_attr", "AttributeError")


def test_hook_failing_after_registering_keeps_what_it_registered(
    site: Path, caplog: pytest.LogCaptureFixture
) -> None:
    install_distribution(
        site,
        "hermes-memory-half",
        entry_points={"hermes_memory": {"half": "half_mod"}},
        modules={
            "half_mod.py": provider_source("half")
            + "\nfrom hermes_core import hookimpl\n\n@hookimpl\n"
            "def register_memory_providers(register):\n"
            "    register(Provider)\n    raise RuntimeError('second provider failed')\n"
        },
    )
    with caplog.at_level(logging.WARNING, logger="hermes_core.plugins"):
        listing = {i.name: i for i in discover_providers()}
    assert listing["half"].available is True and listing["half"].error is None
    assert "second provider failed" in caplog.text and "keeping them" in caplog.text


TOOL = (
    "{'name': 'ping', 'description': 'Ping.', 'parameters': {'type': 'object', 'properties': {}}}"
)


def test_tools_in_a_tuple_are_offered_and_tools_in_a_dict_are_a_warning(
    hermes_home: Path,
) -> None:
    from hermes_core.manager import MemoryManager

    folder_plugin(
        hermes_home / "plugins",
        "tupled",
        provider_source("tupled") + method("get_tool_schemas", f"return ({TOOL},)"),
    )
    folder_plugin(
        hermes_home / "plugins",
        "keyed",
        provider_source("keyed") + method("get_tool_schemas", f"return {{'ping': {TOOL}}}"),
    )
    listing = {i.name: i for i in discover_providers()}
    tupled, keyed = listing["tupled"], listing["keyed"]
    assert (tupled.status, tupled.error, tupled.warnings) == ("available", None, ())
    assert (keyed.status, keyed.error) == ("available", None)
    assert "returned a dict, not a list of tool schemas" in keyed.warnings[0]
    assert "none of its tools are offered" in keyed.warnings[0]
    for name, tools in (("tupled", ["ping"]), ("keyed", [])):
        manager = MemoryManager()
        provider = load_memory_provider(name)
        assert provider is not None
        manager.add_provider(provider)
        assert [schema["name"] for schema in manager.get_all_tool_schemas()] == tools


def test_a_provider_on_a_look_alike_base_is_explained(hermes_home: Path) -> None:
    # formalcc-memory subclasses an async MemoryProvider ABC of its own.
    folder_plugin(
        hermes_home / "plugins",
        "lookalike",
        "from abc import ABC\n\n\nclass MemoryProvider(ABC):\n    pass\n\n\n"
        "class FormalProvider(MemoryProvider):\n    name = 'lookalike'\n",
    )
    info = {i.name: i for i in discover_providers()}["lookalike"]
    assert info.status == "broken"
    assert (
        "(FormalProvider extends a MemoryProvider class of the plugin's own, "
        "not agent.memory_provider.MemoryProvider)" in (info.error or "")
    )


def test_a_plugin_that_hangs_while_loading_is_cut_off_and_the_rest_load(
    hermes_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A blocking connect or a model download at import time used to hang every listing.
    from hermes_core.discovery import deadline

    monkeypatch.setattr(deadline, "PLUGIN_LOAD_TIMEOUT", 0.5)
    folder_plugin(
        hermes_home / "plugins", "stuck", "# MemoryProvider\nimport time\ntime.sleep(60)\n"
    )
    listing = {i.name: i for i in discover_providers()}
    assert listing["healthy"].status == "available"
    assert listing["stuck"].status == "broken"
    assert "did not finish within 0.5 s" in (listing["stuck"].error or "")
    assert load_memory_provider("healthy") is not None


def test_an_unavailable_reason_given_as_a_property_is_shown(hermes_home: Path) -> None:
    # memlite defines unavailable_reason as a property holding its install hint.
    folder_plugin(
        hermes_home / "plugins",
        "propped",
        provider_source("propped", available=False)
        + "\n    @property\n    def unavailable_reason(self):\n"
        "        return 'pip install memlite'\n",
    )
    info = {i.name: i for i in discover_providers()}["propped"]
    assert (info.status, info.unavailable_reason) == ("unavailable", "pip install memlite")


def test_an_unrelated_module_named_like_hermes_is_named_in_the_failure(
    site: Path, hermes_home: Path
) -> None:
    # hermes-ultimate installs a top-level hermes_cli.py of its own
    info = install_distribution(
        site,
        "hermes-ultimate",
        entry_points={},
        modules={"hermes_cli.py": "def main():\n    return 0\n"},
    )
    (info / "top_level.txt").write_text("hermes_cli\n", encoding="utf-8")
    folder_plugin(
        hermes_home / "plugins",
        "configured",
        "from hermes_cli.config import load_config\n" + provider_source("configured"),
    )

    listing = {i.name: i for i in discover_providers()}

    error = listing["configured"].error or ""
    assert "'hermes_cli' is not a package" in error  # Python's own message stays first
    assert f"is {site / 'hermes_cli.py'} (installed by hermes-ultimate)" in error
    assert "not Hermes Agent's module" in error and "uninstall that package" in error
    assert listing["healthy"].available is True
