"""BuiltinMemoryProvider: registration, configuration, prompt block, tools, mirroring."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pluggy
import pytest
import yaml
from hermes_memory_builtin.provider import BuiltinMemoryProvider
from memory_support import MemoryBackend, as_dict

from hermes_core import hookspecs
from hermes_core.manager import MemoryManager
from hermes_core.provider import MemoryProvider


def _config(home: Path, memory: dict[str, Any]) -> None:
    (home / "config.yaml").write_text(yaml.safe_dump({"memory": memory}), encoding="utf-8")


def _started(home: Path, session_id: str = "session-1", **kwargs: Any) -> BuiltinMemoryProvider:
    provider = BuiltinMemoryProvider()
    provider.initialize(session_id, hermes_home=str(home), platform="cli", **kwargs)
    return provider


def _memory(provider: MemoryProvider, **args: Any) -> dict[str, Any]:
    return as_dict(provider.handle_tool_call("memory", args))


# -- registration -------------------------------------------------------------------------------


def test_the_entry_point_registers_the_provider_and_the_cli_group() -> None:
    pm = pluggy.PluginManager("hermes_memory")
    pm.add_hookspecs(hookspecs)
    pm.load_setuptools_entrypoints("hermes_memory", name="builtin")
    registered: list[Any] = []
    pm.hook.register_memory_providers(register=registered.append)
    assert registered == [BuiltinMemoryProvider]
    provider = registered[0]()
    assert provider.name == "builtin" and provider.is_available() is True

    import click

    group = click.Group("hermes-memory")
    pm.hook.register_commands(cli=group)
    assert "memory" in group.commands


def test_the_host_loads_it_as_the_builtin_provider() -> None:
    plugins = pytest.importorskip("hermes_core.plugins")
    plugins.reset_plugin_manager()
    assert isinstance(plugins.load_builtin_provider(), BuiltinMemoryProvider)


# -- initialize and configuration ---------------------------------------------------------------


def test_initialize_loads_memory_from_hermes_home(
    hermes_home: Path, backend: MemoryBackend
) -> None:
    backend.put_entries("memory", ["Project uses uv"])
    backend.put_entries("user", ["Name is Ada"])
    provider = _started(hermes_home)
    assert provider.store is not None
    assert provider.store.memory_entries == ["Project uses uv"]
    block = provider.system_prompt_block()
    memory_block, user_block = block.split("\n\n")
    assert memory_block.splitlines()[1].startswith("MEMORY (your personal notes) [")
    assert user_block.splitlines()[1].startswith("USER PROFILE (who the user is) [")


def test_budgets_come_from_config(hermes_home: Path, backend: MemoryBackend) -> None:
    _config(hermes_home, {"memory_char_limit": 40, "user_char_limit": "30"})
    provider = _started(hermes_home)
    assert provider.store is not None
    assert (provider.store.char_limit("memory"), provider.store.char_limit("user")) == (40, 30)
    assert _memory(provider, action="add", target="memory", content="x" * 41)["success"] is False


def test_disabled_user_profile_narrows_prompt_and_schema(
    hermes_home: Path, backend: MemoryBackend
) -> None:
    _config(hermes_home, {"user_profile_enabled": False})
    backend.put_entries("user", ["Name is Ada"])
    backend.put_entries("memory", ["Project uses uv"])
    provider = _started(hermes_home)
    assert "USER PROFILE" not in provider.system_prompt_block()
    assert "Project uses uv" in provider.system_prompt_block()
    schema = next(s for s in provider.get_tool_schemas() if s["name"] == "memory")
    assert schema["parameters"]["properties"]["target"]["enum"] == ["memory"]
    refused = _memory(provider, action="add", target="user", content="Likes tea")
    assert refused["success"] is False and "disabled" in refused["error"]


def test_with_both_files_disabled_there_is_no_memory_tool(
    hermes_home: Path, backend: MemoryBackend
) -> None:
    _config(hermes_home, {"memory_enabled": False, "user_profile_enabled": False})
    provider = _started(hermes_home)
    assert [s["name"] for s in provider.get_tool_schemas()] == ["session_search"]
    assert provider.system_prompt_block() == ""


@pytest.mark.parametrize("off", ["no", "False", " off ", "0"])
def test_a_switch_written_as_text_is_read_as_meant(
    hermes_home: Path, backend: MemoryBackend, off: str
) -> None:
    _config(hermes_home, {"memory_enabled": off, "user_profile_enabled": "yes"})
    provider = _started(hermes_home)
    schema = next(s for s in provider.get_tool_schemas() if s["name"] == "memory")
    assert schema["parameters"]["properties"]["target"]["enum"] == ["user"]


def test_a_broken_setting_falls_back_to_defaults(
    hermes_home: Path, backend: MemoryBackend, caplog: pytest.LogCaptureFixture
) -> None:
    _config(hermes_home, {"memory_char_limit": "lots"})
    with caplog.at_level(logging.WARNING):
        provider = _started(hermes_home)
    assert provider.store is not None and provider.store.char_limit("memory") == 2200
    assert any("memory.memory_char_limit" in r.getMessage() for r in caplog.records)


def test_an_injected_store_is_used_as_is(hermes_home: Path, backend: MemoryBackend) -> None:
    store = backend.store(memory_char_limit=99)
    provider = BuiltinMemoryProvider(memory_store=store, user_profile_enabled=False)
    provider.initialize("s", hermes_home=str(hermes_home), platform="cli")
    assert provider.store is store and store.char_limit("memory") == 99
    assert provider.user_profile_enabled is False


# -- frozen snapshot ----------------------------------------------------------------------------


def test_the_prompt_block_stays_frozen_until_the_session_changes(
    hermes_home: Path, backend: MemoryBackend
) -> None:
    provider = _started(hermes_home)
    _memory(provider, action="add", target="memory", content="loaded at start")
    provider.on_session_switch("session-2", parent_session_id="session-1")
    frozen = provider.system_prompt_block()
    assert "loaded at start" in frozen
    _memory(provider, action="add", target="memory", content="written mid-session")
    assert provider.system_prompt_block() == frozen
    provider.on_session_switch("session-2", rewound=True)
    assert provider.system_prompt_block() == frozen
    provider.on_session_switch("session-3", parent_session_id="session-2")
    assert "written mid-session" in provider.system_prompt_block()
    assert backend.entries("memory") == ["loaded at start", "written mid-session"]


# -- tools --------------------------------------------------------------------------------------


def test_tool_schemas_are_memory_and_session_search(hermes_home: Path) -> None:
    provider = BuiltinMemoryProvider()
    assert [s["name"] for s in provider.get_tool_schemas()] == ["memory", "session_search"]
    for schema in provider.get_tool_schemas():
        assert set(schema) == {"name", "description", "parameters"}


def test_memory_calls_before_initialize_fail_cleanly() -> None:
    provider = BuiltinMemoryProvider()
    result = _memory(provider, action="add", content="x")
    assert result["success"] is False and "not available" in result["error"]
    search = as_dict(provider.handle_tool_call("session_search", {"query": "x"}))
    assert search["success"] is False


def test_session_search_is_routed_to_the_session_search_tool(hermes_home: Path) -> None:
    provider = _started(hermes_home, session_id="current")
    tool = provider.session_search
    assert tool is not None and tool.session_id == "current"
    result = json.loads(provider.handle_tool_call("session_search", {"query": ""}))
    assert isinstance(result, dict) and "not available" not in json.dumps(result)
    provider.on_session_switch("next", parent_session_id="current")
    assert tool.session_id == "next"
    provider.shutdown()
    assert provider.session_search is None


def test_unknown_tools_get_a_json_error(hermes_home: Path) -> None:
    provider = _started(hermes_home)
    result = as_dict(provider.handle_tool_call("memory_read", {}))
    assert result["success"] is False and "memory_read" in result["error"]


# -- mirroring ----------------------------------------------------------------------------------


def test_mirror_metadata_describes_the_session(hermes_home: Path) -> None:
    provider = _started(
        hermes_home, session_id="s1", agent_context="primary", parent_session_id="s0"
    )
    assert provider.mirror_metadata(tool_call_id="call-7") == {
        "write_origin": "assistant_tool",
        "execution_context": "primary",
        "session_id": "s1",
        "parent_session_id": "s0",
        "platform": "cli",
        "tool_name": "memory",
        "tool_call_id": "call-7",
    }
    build = provider.metadata_builder(write_origin="background_review")
    provider.on_session_switch("s2", parent_session_id="s1")
    assert build()["session_id"] == "s2"
    assert build()["write_origin"] == "background_review"


class RecordingProvider(MemoryProvider):
    """An external provider that keeps every mirrored write it receives."""

    def __init__(self) -> None:
        self.writes: list[tuple[str, str, str, dict[str, Any]]] = []

    @property
    def name(self) -> str:
        return "recorder"

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        pass

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return []

    def on_memory_write(
        self, action: str, target: str, content: str, metadata: dict[str, Any] | None = None
    ) -> None:
        self.writes.append((action, target, content, dict(metadata or {})))


def test_committed_writes_reach_external_providers_through_the_manager(
    hermes_home: Path, backend: MemoryBackend
) -> None:
    builtin = BuiltinMemoryProvider()
    recorder = RecordingProvider()
    manager = MemoryManager()
    manager.add_provider(builtin)
    manager.add_provider(recorder)
    manager.initialize_all("s1", hermes_home=str(hermes_home), platform="cli")

    def run(args: dict[str, Any]) -> None:
        result = manager.handle_tool_call("memory", args)
        manager.notify_memory_tool_write(result, args, build_metadata=builtin.metadata_builder())

    run({"action": "add", "target": "memory", "content": "Project uses Python 3.11"})
    run({"action": "replace", "target": "memory", "old_text": "3.11", "content": "Py 3.12"})
    run({"action": "add", "target": "memory", "content": "x" * 5000})  # refused: not mirrored
    run(
        {
            "target": "memory",
            "operations": [
                {"action": "add", "content": "Uses uv"},
                {"action": "remove", "old_text": "Py 3.12"},
            ],
        }
    )
    manager.flush_pending(10)
    assert [(a, t, c) for a, t, c, _ in recorder.writes] == [
        ("add", "memory", "Project uses Python 3.11"),
        ("replace", "memory", "Py 3.12"),
        ("add", "memory", "Uses uv"),
        ("remove", "memory", ""),
    ]
    replace_meta = recorder.writes[1][3]
    assert replace_meta["previous_content"] == "Project uses Python 3.11"
    assert replace_meta["old_text"] == "3.11"
    assert replace_meta["session_id"] == "s1" and replace_meta["platform"] == "cli"
    assert replace_meta["write_origin"] == "assistant_tool"
    assert recorder.writes[3][3]["previous_content"] == "Py 3.12"
    assert backend.entries("memory") == ["Uses uv"]
    manager.shutdown_all()
