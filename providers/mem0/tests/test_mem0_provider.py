"""The provider contract: identity, availability, tools, prompt block, registration."""

from __future__ import annotations

import json
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest
from conftest import StartProvider, local_config, platform_config
from fake_mem0 import FakeMem0Platform
from hermes_memory_mem0 import Mem0MemoryProvider
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core.provider import MemoryProvider

STRICT_KEYWORDS = {
    "type",
    "description",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
}


def test_registered_through_the_hermes_memory_entry_point_group() -> None:
    (entry,) = [ep for ep in entry_points(group="hermes_memory") if ep.name == "mem0"]
    module = entry.load()
    registered: list = []
    module.register_memory_providers(register=registered.append)
    assert registered == [Mem0MemoryProvider]
    provider = registered[0]()
    assert isinstance(provider, MemoryProvider)
    assert provider.name == "mem0"


def test_availability_says_exactly_what_is_missing(hermes_home: Path) -> None:
    platform = Mem0MemoryProvider({"mem0": {"mode": "platform"}}, env={})
    assert not platform.is_available()
    assert "export MEM0_API_KEY" in platform.unavailable_reason()
    assert "mem0.mode: local" in platform.unavailable_reason()

    ready = Mem0MemoryProvider({}, env={"MEM0_API_KEY": "m0-k"})
    assert ready.is_available() and ready.unavailable_reason() == ""

    broken = Mem0MemoryProvider({"mem0": {"mode": "sideways"}}, env={})
    assert not broken.is_available()
    assert "mem0.mode must be one of platform, local" in broken.unavailable_reason()

    (hermes_home / "config.yaml").write_text("mem0: [unclosed\n")
    from_file = Mem0MemoryProvider()
    assert not from_file.is_available()
    reason = from_file.unavailable_reason()
    assert "config.yaml" in reason and "not valid YAML" in reason


def test_a_missing_sdk_names_the_package_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "mem0", None)  # what an absent package looks like
    provider = Mem0MemoryProvider(local_config(), env={})
    assert not provider.is_available()
    reason = provider.unavailable_reason()
    assert "pip install 'mem0ai>=2.2,<3'" in reason
    assert "pip install ./providers/mem0" in reason
    assert "hermes-memory-mem0" not in reason  # the distribution comes from a clone


def test_tool_schemas_suit_strict_backends() -> None:
    schemas = Mem0MemoryProvider().get_tool_schemas()
    assert [s["name"] for s in schemas] == ["mem0_search", "mem0_add", "mem0_update", "mem0_delete"]
    for schema in schemas:
        assert set(schema) == {"name", "description", "parameters"}
        parameters = schema["parameters"]
        assert parameters["type"] == "object"
        assert parameters["additionalProperties"] is False
        assert set(parameters["required"]) <= set(parameters["properties"])
        for prop in parameters["properties"].values():
            assert set(prop) <= STRICT_KEYWORDS
            assert prop["type"] in {"string", "integer", "boolean"} and prop["description"]
        json.dumps(schema)
    schemas[0]["name"] = "mutated"
    assert Mem0MemoryProvider().get_tool_schemas()[0]["name"] == "mem0_search"


def test_tool_calls_always_answer_json(
    fake_platform: FakeMem0Platform, start_provider: StartProvider
) -> None:
    provider = start_provider(
        platform_config(fake_platform), env={"MEM0_API_KEY": fake_platform.api_key}
    )
    cases = {
        ("mem0_unknown", ()): "Unknown mem0 tool",
        ("mem0_search", ()): "needs a non-empty string 'query'",
        ("mem0_search", (("query", "  "),)): "needs a non-empty string 'query'",
        ("mem0_search", (("query", "x"), ("top_k", "lots"))): "'top_k' must be an integer",
        ("mem0_search", (("query", "x"), ("rerank", "perhaps"))): "'rerank' must be true or false",
        ("mem0_add", (("content", None),)): "needs a non-empty string 'content'",
        ("mem0_update", (("memory_id", "m"),)): "needs a non-empty string 'text'",
        ("mem0_delete", ()): "needs a non-empty string 'memory_id'",
    }
    for (tool, args), message in cases.items():
        result = json.loads(provider.handle_tool_call(tool, dict(args)))
        assert message in result["error"], (tool, result)
    # strict backends send null for optional arguments: that means "absent"
    ok = json.loads(
        provider.handle_tool_call("mem0_search", {"query": "x", "top_k": None, "rerank": None})
    )
    assert ok["count"] == 0


@given(
    st.dictionaries(
        st.sampled_from(["query", "top_k", "rerank", "content", "memory_id"]),
        st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    )
)
@settings(max_examples=40, deadline=None)
def test_uninitialized_provider_answers_every_tool_with_json(args: dict) -> None:
    provider = Mem0MemoryProvider({}, env={})
    for tool in ("mem0_search", "mem0_add", "mem0_update", "mem0_delete"):
        result = json.loads(provider.handle_tool_call(tool, args))
        assert set(result) == {"error"}


def test_hooks_are_harmless_before_initialize_and_after_shutdown() -> None:
    provider = Mem0MemoryProvider({}, env={})
    for _ in range(2):
        assert provider.prefetch("what do you know about me") == ""
        provider.queue_prefetch("anything")
        provider.on_turn_start(1, "hello there")
        provider.sync_turn("u", "a")
        provider.on_memory_write("add", "user", "x")
        provider.on_session_end([])
        provider.on_session_switch("s2", reset=True)
        assert provider.system_prompt_block() == ""
        assert provider.recall_status() is None
        provider.shutdown()


def test_a_config_error_at_initialize_disables_the_provider_quietly(
    start_provider: StartProvider,
) -> None:
    provider = start_provider({"mem0": {"top_k": 999}})
    assert provider.system_prompt_block() == ""
    result = json.loads(provider.handle_tool_call("mem0_search", {"query": "x"}))
    assert "mem0.top_k must be a whole number between 1 and 50" in result["error"]


def test_system_prompt_block_is_static_and_describes_the_mode(
    fake_platform: FakeMem0Platform, start_provider: StartProvider
) -> None:
    provider = start_provider(
        platform_config(fake_platform), env={"MEM0_API_KEY": fake_platform.api_key}, user_id="u7"
    )
    block = provider.system_prompt_block()
    assert block.startswith("# Mem0 Memory\nActive. Mode: platform (Mem0 API). User: u7.")
    assert "mem0_search" in block and "Rerank is available" in block
    provider.sync_turn("I like jazz.", "Noted.")
    provider.prefetch("music taste")
    assert provider.system_prompt_block() == block


def test_local_mode_prompt_block(start_provider: StartProvider) -> None:
    provider = start_provider(local_config())
    assert "Mode: local engine (offline, hash embeddings). User: hermes-user." in (
        provider.system_prompt_block()
    )
    assert "Rerank" not in provider.system_prompt_block()


def test_session_reset_drops_cached_recall(
    fake_platform: FakeMem0Platform, start_provider: StartProvider
) -> None:
    fake_platform.seed("The user's cat is Miso", user_id="hermes-user")
    provider = start_provider(
        platform_config(fake_platform), env={"MEM0_API_KEY": fake_platform.api_key}
    )
    assert "Miso" in provider.prefetch("my cat")
    provider.on_session_switch("session-2", parent_session_id="session-1", reset=False)
    assert "Miso" in provider.prefetch("completely different topic")  # latest result served
    provider.on_session_switch("session-3", reset=True)
    fake_platform.memories.clear()
    assert provider.prefetch("completely different topic") == ""


def test_backup_paths_only_name_stores_outside_hermes_home(
    hermes_home: Path, tmp_path: Path
) -> None:
    inside = Mem0MemoryProvider(local_config(), env={})
    assert inside.backup_paths() == []
    outside = tmp_path / "elsewhere"
    moved = Mem0MemoryProvider(
        local_config(local={"embedder": "hash", "path": str(outside)}), env={}
    )
    assert moved.backup_paths() == [str(outside.resolve())]


@pytest.mark.parametrize("mode", ["platform", "local"])
def test_initialize_for_inspection_connects_to_nothing(
    mode: str, fake_platform: FakeMem0Platform, hermes_home: Path
) -> None:
    config = platform_config(fake_platform) if mode == "platform" else local_config()
    provider = Mem0MemoryProvider(config, env={"MEM0_API_KEY": fake_platform.api_key})
    provider.initialize_for_inspection("s1", hermes_home=str(hermes_home), platform="cli")
    assert provider.system_prompt_block().startswith("# Mem0 Memory")
    provider.shutdown()
    assert fake_platform.requests == []
    assert not (hermes_home / "mem0" / "qdrant").exists()
