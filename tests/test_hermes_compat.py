"""The Hermes module names a plugin imports, and never shadowing a real package."""

from __future__ import annotations

import importlib
import importlib.util
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from plugin_kit import folder_plugin, fresh_discovery, write_files

from hermes_core import hermes_compat, provider
from hermes_core.plugins import discover_providers, load_memory_provider

# These tests assume Hermes Agent itself is not installed (the layer then steps aside).
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("agent") is not None, reason="a real 'agent' package is installed"
)


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    hermes_compat.uninstall()
    with fresh_discovery(tmp_path_factory.getbasetemp()):
        yield


@pytest.fixture
def compat() -> None:
    hermes_compat.install()


def test_names_are_absent_until_the_layer_is_installed() -> None:
    assert not hermes_compat.is_installed()
    assert importlib.util.find_spec("agent") is None
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("tools.registry")


def test_agent_memory_provider_is_the_core_contract(compat: None) -> None:
    module = importlib.import_module("agent.memory_provider")
    assert module.MemoryProvider is provider.MemoryProvider
    assert module.RecallStatus is provider.RecallStatus
    assert module.is_trivial_prompt is provider.is_trivial_prompt
    assert module.spawn_context_thread is provider.spawn_context_thread
    assert module.ctx_bound is provider.ctx_bound
    import agent  # the parent package is bound like a normal import

    assert agent.memory_provider is module


def test_tool_error_and_tool_result_return_json(compat: None) -> None:
    from tools.registry import tool_error, tool_result  # type: ignore[import-not-found]

    assert json.loads(tool_error("bad query")) == {"error": "bad query"}
    assert json.loads(tool_error("nope", success=False)) == {"error": "nope", "success": False}
    assert json.loads(tool_result({"hits": [1]}, total=1)) == {"hits": [1], "total": 1}
    assert json.loads(tool_result(["a"])) == ["a"]


def test_get_hermes_home_follows_the_environment_at_call_time(
    compat: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hermes_constants import get_hermes_home  # type: ignore[import-not-found]

    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "one"))
    assert get_hermes_home() == tmp_path / "one"
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "two"))
    assert get_hermes_home() == tmp_path / "two"


def test_hermes_cli_config_reads_and_writes_config_yaml(compat: None, hermes_home: Path) -> None:
    from hermes_cli.config import cfg_get, load_config, save_config  # type: ignore[import-not-found]

    save_config({"mine": {"url": "http://localhost:1"}})
    assert (hermes_home / "config.yaml").is_file()
    config = load_config()
    assert cfg_get(config, "mine.url") == "http://localhost:1"
    assert cfg_get(config, "mine.missing", "dflt") == "dflt"


def test_only_the_exact_names_are_served(compat: None) -> None:
    for name in ("agent.other", "tools.terminal_tool", "hermes_cli.main", "hermes_cli.config.x"):
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(name)


def test_a_real_package_is_never_shadowed(
    compat: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = tmp_path / "real-hermes"
    write_files(
        real,
        {
            "agent/__init__.py": "REAL = True\n",
            "agent/memory_provider.py": """
                from abc import ABC, abstractmethod

                REAL = True


                class MemoryProvider(ABC):
                    @property
                    @abstractmethod
                    def name(self): ...

                    @abstractmethod
                    def is_available(self): ...

                    @abstractmethod
                    def initialize(self, session_id, **kwargs): ...

                    @abstractmethod
                    def get_tool_schemas(self): ...

                    def prefetch(self, query, *, session_id=""):
                        return ""
            """,
            "tools/__init__.py": "REAL = True\n",
        },
    )
    monkeypatch.syspath_prepend(str(real))
    module = importlib.import_module("agent.memory_provider")
    assert module.REAL is True
    assert module.MemoryProvider is not provider.MemoryProvider
    # tools is real but has no registry: the layer does not graft one onto it.
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("tools.registry")
    # hermes_constants is absent from the real tree, so the layer still serves it.
    assert importlib.import_module("hermes_constants").__hermes_compat__ is True


def test_plugin_for_real_hermes_base_class_is_discovered(
    tmp_path: Path, hermes_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = tmp_path / "real-hermes"
    write_files(
        real,
        {
            "agent/__init__.py": "",
            "agent/memory_provider.py": """
                from abc import ABC, abstractmethod


                class MemoryProvider(ABC):
                    @property
                    @abstractmethod
                    def name(self): ...

                    def prefetch(self, query, *, session_id=""):
                        return ""
            """,
        },
    )
    monkeypatch.syspath_prepend(str(real))
    folder_plugin(
        hermes_home / "plugins",
        "realbase",
        """
        from agent.memory_provider import MemoryProvider


        class RealBaseProvider(MemoryProvider):
            name = "realbase"

            def is_available(self):
                return True

            def initialize(self, session_id, **kwargs):
                pass

            def get_tool_schemas(self):
                return []

            def prefetch(self, query, *, session_id=""):
                return "recalled"
        """,
    )
    info = {i.name: i for i in discover_providers()}["realbase"]
    assert info.available is True and info.hooks == ("prefetch",)
    loaded = load_memory_provider("realbase")
    assert loaded is not None and loaded.prefetch("q") == "recalled"


def test_lazy_imports_inside_hooks_resolve_after_loading(hermes_home: Path) -> None:
    folder_plugin(
        hermes_home / "plugins",
        "lazy",
        """
        from agent.memory_provider import MemoryProvider


        class LazyProvider(MemoryProvider):
            name = "lazy"

            def is_available(self):
                return True

            def initialize(self, session_id, **kwargs):
                pass

            def get_tool_schemas(self):
                return [{"name": "lazy_tool", "description": "d", "parameters": {}}]

            def handle_tool_call(self, tool_name, args, **kwargs):
                from tools.registry import tool_error  # imported only when called

                return tool_error(f"{tool_name} is lazy")
        """,
    )
    loaded = load_memory_provider("lazy")
    assert loaded is not None
    assert json.loads(loaded.handle_tool_call("lazy_tool", {})) == {"error": "lazy_tool is lazy"}


def test_uninstall_removes_the_finder_and_its_modules(compat: None) -> None:
    importlib.import_module("agent.memory_provider")
    hermes_compat.uninstall()
    assert not hermes_compat.is_installed()
    assert "agent.memory_provider" not in sys.modules
    assert importlib.util.find_spec("agent") is None
