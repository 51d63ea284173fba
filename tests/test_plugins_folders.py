"""Folder plugins under $HERMES_HOME/plugins: the Hermes discovery rules."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from plugin_kit import folder_plugin, fresh_discovery, provider_source

from hermes_core.discovery.folders import NAMESPACE
from hermes_core.plugins import discover_providers, load_memory_provider


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with fresh_discovery(tmp_path_factory.getbasetemp()):
        yield


@pytest.fixture
def plugins_dir(hermes_home: Path) -> Path:
    return hermes_home / "plugins"


def folder_entries(home: Path | None = None) -> dict[str, object]:
    return {i.name: i for i in discover_providers(home) if i.source == "folder"}


def test_folder_plugin_with_manifest_is_discovered_and_loaded(plugins_dir: Path) -> None:
    folder_plugin(
        plugins_dir,
        "myexternal",
        provider_source("myexternal"),
        **{"plugin.yaml": "name: myexternal\ndescription: My external memory\nversion: 2.3\n"},
    )
    info = folder_entries()["myexternal"]
    assert info.source == "folder"
    assert info.description == "My external memory"
    assert info.version == "2.3"
    assert info.available is True
    assert info.error is None
    assert info.path == str(plugins_dir / "myexternal")
    provider = load_memory_provider("myexternal")
    assert provider is not None and provider.name == "myexternal"


def test_plugin_yaml_with_byte_order_mark_is_read(plugins_dir: Path) -> None:
    root = folder_plugin(plugins_dir, "bom", provider_source("bom"))
    (root / "plugin.yaml").write_bytes("\ufeffdescription: Café memory\n".encode())
    assert folder_entries()["bom"].description == "Café memory"


def test_description_falls_back_to_the_class_docstring(plugins_dir: Path) -> None:
    folder_plugin(plugins_dir, "doc", provider_source("doc", doc="Remembers docs."))
    assert folder_entries()["doc"].description == "Remembers docs."


def test_directory_that_only_registers_a_tool_is_not_a_memory_plugin(plugins_dir: Path) -> None:
    folder_plugin(
        plugins_dir,
        "notmemory",
        """
        def register(ctx):
            ctx.register_tool("hello", {}, lambda args: "hi")
        """,
    )
    assert "notmemory" not in folder_entries()
    assert load_memory_provider("notmemory") is None


def test_hidden_private_and_nested_directories_are_skipped(plugins_dir: Path) -> None:
    folder_plugin(plugins_dir, "_private", provider_source("private"))
    folder_plugin(plugins_dir, ".hidden", provider_source("hidden"))
    folder_plugin(plugins_dir / "memory", "nested", provider_source("nested"))
    (plugins_dir / "loose.py").write_text(provider_source("loose"), encoding="utf-8")
    assert folder_entries() == {}


def test_heuristic_reads_only_the_first_8_kb(plugins_dir: Path) -> None:
    padding = "# " + "x" * 8200 + "\n"
    folder_plugin(plugins_dir, "late", padding + provider_source("late"))
    folder_plugin(plugins_dir, "early", provider_source("early") + padding)
    assert set(folder_entries()) == {"early"}


def test_relative_import_inside_a_plugin_works(plugins_dir: Path) -> None:
    folder_plugin(
        plugins_dir,
        "relative",
        """
        from hermes_core.provider import MemoryProvider
        from . import helper


        class RelativeProvider(MemoryProvider):
            name = helper.NAME

            def is_available(self):
                return True

            def initialize(self, session_id, **kwargs):
                pass

            def get_tool_schemas(self):
                return []
        """,
        **{"helper.py": "NAME = 'relative-from-helper'\n"},
    )
    provider = load_memory_provider("relative")
    assert provider is not None and provider.name == "relative-from-helper"


def test_reexport_from_a_namespace_subdirectory_with_register(plugins_dir: Path) -> None:
    folder_plugin(
        plugins_dir,
        "adapted",
        """
        # Re-exports a MemoryProvider from adapters/hermes (adapters has no __init__.py).
        from .adapters.hermes.provider import AdaptedProvider


        def register(ctx):
            ctx.register_memory_provider(AdaptedProvider())
        """,
        **{"adapters/hermes/provider.py": provider_source("adapted", cls="AdaptedProvider")},
    )
    provider = load_memory_provider("adapted")
    assert provider is not None and type(provider).__name__ == "AdaptedProvider"


STAR_SHIM = """
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "src"))
from {package} import *
"""


def test_a_shim_that_star_imports_its_package_is_a_memory_plugin(
    plugins_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # muninndb's installer: the package copied under src/, re-exported with a * import.
    provider_with_register = provider_source("muni", cls="MuniProvider") + (
        "\n\ndef register(ctx):\n    ctx.register_memory_provider(MuniProvider())\n"
    )
    folder_plugin(
        plugins_dir,
        "muni",
        STAR_SHIM.format(package="muni_pkg"),
        **{"src/muni_pkg/__init__.py": provider_with_register},
    )
    # ...or installed with pip, the folder only re-exporting it
    site = tmp_path / "site"
    (site / "inst_pkg").mkdir(parents=True)
    (site / "inst_pkg" / "__init__.py").write_text(
        provider_source("inst", cls="InstProvider"), encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(site))
    folder_plugin(plugins_dir, "inst", "from inst_pkg import *\n")
    # a * import of a package with no memory provider is still a general plugin
    (site / "tool_pkg").mkdir()
    (site / "tool_pkg" / "__init__.py").write_text("def register(ctx): pass\n", "utf-8")
    folder_plugin(plugins_dir, "tooly", "from tool_pkg import *\n")
    found = folder_entries()
    assert {"muni", "inst"} <= set(found) and "tooly" not in found
    muni = load_memory_provider("muni")
    assert muni is not None and type(muni).__name__ == "MuniProvider"


def test_pip_style_layout_without_root_init(plugins_dir: Path) -> None:
    root = plugins_dir / "mimir"
    folder_plugin(root, "hermes_mimir", provider_source("mimir"))
    (root / "plugin.yaml").write_text("description: Pip package provider\n", encoding="utf-8")
    (root / "README.md").write_text("docs", encoding="utf-8")
    info = folder_entries()["mimir"]
    assert (info.name, info.description, info.available) == ("mimir", "Pip package provider", True)
    assert load_memory_provider("mimir") is not None


def test_siblings_are_preloaded_as_submodules(plugins_dir: Path) -> None:
    folder_plugin(
        plugins_dir,
        "sibs",
        provider_source("sibs")
        + "\nimport sys\nHELPER_PRELOADED = (__name__ + '.extra') in sys.modules\n",
        **{"extra.py": "VALUE = 1\n", "broken_sibling.py": "raise RuntimeError('not needed')\n"},
    )
    provider = load_memory_provider("sibs")
    assert provider is not None
    package = sys.modules[type(provider).__module__]
    assert package.HELPER_PRELOADED is True
    assert package.extra.VALUE == 1
    assert not hasattr(package, "broken_sibling")


def test_synthetic_module_names_differ_per_home(tmp_path: Path) -> None:
    homes = [tmp_path / "home-a", tmp_path / "home-b"]
    for index, home in enumerate(homes):
        folder_plugin(
            home / "plugins",
            "same",
            provider_source("same") + f"\nHOME_INDEX = {index}\n",
        )
    modules = []
    for index, home in enumerate(homes):
        provider = load_memory_provider("same", home)
        assert provider is not None
        module = sys.modules[type(provider).__module__]
        assert index == module.HOME_INDEX
        modules.append(module.__name__)
    assert modules[0] != modules[1]
    assert all(name.startswith(NAMESPACE + ".same__source_") for name in modules)


def test_hermes_home_is_resolved_at_call_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    folder_plugin(first / "plugins", "one", provider_source("one"))
    folder_plugin(second / "plugins", "two", provider_source("two"))
    monkeypatch.setenv("HERMES_HOME", str(first))
    assert set(folder_entries()) == {"one"}
    monkeypatch.setenv("HERMES_HOME", str(second))
    assert set(folder_entries()) == {"two"}
    assert load_memory_provider("one") is None


def test_failed_import_leaves_no_module_behind_and_a_fix_loads(plugins_dir: Path) -> None:
    source = provider_source("fixme")
    root = folder_plugin(plugins_dir, "fixme", source + "\nraise ValueError('x')\n")
    assert load_memory_provider("fixme") is None
    assert not [m for m in sys.modules if m.startswith(f"{NAMESPACE}.fixme__")]
    (root / "__init__.py").write_text(source, encoding="utf-8")
    provider = load_memory_provider("fixme")
    assert provider is not None and provider.name == "fixme"


def test_concurrent_loads_run_the_module_once(plugins_dir: Path, tmp_path: Path) -> None:
    runs = tmp_path / "runs.txt"
    folder_plugin(
        plugins_dir,
        "once",
        provider_source("once")
        + f"\nimport time\nwith open({str(runs)!r}, 'a') as fh:\n    fh.write('run\\n')\n"
        "time.sleep(0.2)\n",
    )
    barrier = threading.Barrier(4)
    results: list[object] = []

    def load() -> None:
        barrier.wait(timeout=10)
        results.append(load_memory_provider("once"))

    threads = [threading.Thread(target=load) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(results) == 4
    assert all(r is not None and r.name == "once" for r in results)
    assert runs.read_text().splitlines() == ["run"]


def test_register_ctx_with_other_registrations_is_harmless(plugins_dir: Path) -> None:
    folder_plugin(
        plugins_dir,
        "chatty",
        provider_source("chatty")
        + """
def register(ctx):
    ctx.register_tool("x", {}, lambda args: "")
    ctx.register_skill("maintenance", "/nowhere")
    ctx.register_cli_command("chatty", None)
    ctx.register_memory_provider(Provider())
    ctx.register_hook("on_session_start", print)
""",
    )
    provider = load_memory_provider("chatty")
    assert provider is not None and provider.name == "chatty"


def test_register_raising_after_registering_keeps_the_provider(
    plugins_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder_plugin(
        plugins_dir,
        "late_fail",
        provider_source("late_fail")
        + """
def register(ctx):
    ctx.register_memory_provider(Provider())
    raise RuntimeError("secondary setup failed")
""",
    )
    provider = load_memory_provider("late_fail")
    assert provider is not None and provider.name == "late_fail"
    assert "secondary setup failed" in caplog.text


def test_register_raising_before_registering_falls_back_to_the_subclass(
    plugins_dir: Path,
) -> None:
    folder_plugin(
        plugins_dir,
        "early_fail",
        provider_source("early_fail")
        + """
def register(ctx):
    raise RuntimeError("nothing registered")
""",
    )
    provider = load_memory_provider("early_fail")
    assert provider is not None and provider.name == "early_fail"


def test_fallback_prefers_the_plugins_own_subclass(plugins_dir: Path) -> None:
    folder_plugin(
        plugins_dir,
        "own",
        """
        from hermes_core.provider import MemoryProvider
        from .base import AAAImported


        class ZZZOwn(AAAImported):
            name = "own"
        """,
        **{"base.py": provider_source("imported", cls="AAAImported")},
    )
    provider = load_memory_provider("own")
    assert provider is not None and type(provider).__name__ == "ZZZOwn"


def test_project_plugins_need_the_opt_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "repo"
    folder_plugin(project / ".hermes" / "plugins", "projmem", provider_source("projmem"))
    monkeypatch.chdir(project)
    monkeypatch.delenv("HERMES_ENABLE_PROJECT_PLUGINS", raising=False)
    assert "projmem" not in {i.name for i in discover_providers()}
    monkeypatch.setenv("HERMES_ENABLE_PROJECT_PLUGINS", "false")
    assert load_memory_provider("projmem") is None
    monkeypatch.setenv("HERMES_ENABLE_PROJECT_PLUGINS", "1")
    entries = {i.name: i for i in discover_providers()}
    assert entries["projmem"].source == "project"
    assert load_memory_provider("projmem") is not None
