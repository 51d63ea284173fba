"""Round trips through the real SDK and the stateful platform fake."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import StartProvider, platform_config
from fake_mem0 import FakeMem0Platform
from hermes_memory_mem0 import Mem0MemoryProvider

from hermes_core.fencing import build_memory_context_block


def call(provider: Mem0MemoryProvider, tool: str, **args: Any) -> dict[str, Any]:
    return json.loads(provider.handle_tool_call(tool, args))


@pytest.fixture
def platform(fake_platform: FakeMem0Platform, start_provider: StartProvider) -> StartProvider:
    def start(**kwargs: Any) -> Mem0MemoryProvider:
        config = platform_config(fake_platform, **kwargs.pop("settings", {}))
        provider = start_provider(config, env={"MEM0_API_KEY": fake_platform.api_key}, **kwargs)
        assert provider.flush(60)  # first use imports the SDK
        return provider

    return start


def test_synced_turns_are_recalled_by_prefetch_and_search(
    platform: StartProvider, fake_platform: FakeMem0Platform
) -> None:
    provider = platform(user_id="alice")
    provider.sync_turn("My daughter's name is Ines and she plays cello.", "Lovely!")
    assert provider.flush(10)
    assert fake_platform.memories_of("alice") == ["My daughter's name is Ines and she plays cello."]

    recalled = provider.prefetch("what instrument does my daughter play?")
    assert recalled == "## Mem0 Memory\n- My daughter's name is Ines and she plays cello."
    status = provider.recall_status()
    assert status is not None and (status.provider_label, status.count) == ("Mem0", 1)

    found = call(provider, "mem0_search", query="daughter cello")
    assert found["count"] == 1 and found["results"][0]["memory"].startswith("My daughter")
    empty = call(provider, "mem0_search", query="quantum chromodynamics")
    assert empty == {"results": [], "count": 0, "result": "No relevant memories found."}


def test_tools_add_update_delete_round_trip(
    platform: StartProvider, fake_platform: FakeMem0Platform
) -> None:
    provider = platform(user_id="alice")
    added = call(provider, "mem0_add", content="Alice is vegetarian.")
    assert added["result"] == "Fact queued for storage." and added["event_id"]
    (memory_id,) = fake_platform.memories
    assert call(provider, "mem0_update", memory_id=memory_id, text="Alice is vegan.") == {
        "result": "Memory updated.",
        "memory_id": memory_id,
    }
    assert call(provider, "mem0_search", query="vegan")["results"][0]["memory"] == "Alice is vegan."
    assert call(provider, "mem0_delete", memory_id=memory_id)["result"] == "Memory deleted."
    assert fake_platform.memories == {}
    missing = call(provider, "mem0_delete", memory_id=memory_id)
    assert "not found" in missing["error"].lower()
    assert provider.breaker.consecutive_failures == 0  # a 404 is not an outage


def test_users_are_isolated(platform: StartProvider, fake_platform: FakeMem0Platform) -> None:
    other = fake_platform.seed("Bob's bank PIN hint is his cat", user_id="bob")
    provider = platform(user_id="alice")
    assert call(provider, "mem0_search", query="bank PIN hint cat")["count"] == 0
    assert provider.prefetch("bank PIN hint cat") == ""
    denied = call(provider, "mem0_delete", memory_id=other)
    assert "not found" in denied["error"].lower()
    denied = call(provider, "mem0_update", memory_id=other, text="hacked")
    assert "not found" in denied["error"].lower()
    assert fake_platform.memories[other]["memory"] == "Bob's bank PIN hint is his cat"


def test_host_user_id_wins_over_configured_one(
    platform: StartProvider, fake_platform: FakeMem0Platform
) -> None:
    provider = platform(user_id="gateway-user-7", settings={"user_id": "configured"})
    assert provider.user_id == "gateway-user-7"
    cli = platform(settings={"user_id": "configured"})
    assert cli.user_id == "configured"
    default = platform()
    assert default.user_id == "hermes-user"


@pytest.mark.parametrize("context", ["subagent", "cron", "flush"])
def test_non_primary_contexts_read_but_never_write(
    platform: StartProvider, fake_platform: FakeMem0Platform, context: str
) -> None:
    fake_platform.seed("The office wifi is called Ganymede", user_id="alice")
    provider = platform(user_id="alice", agent_context=context)
    provider.sync_turn("Remember my locker is 42.", "Sure.")
    provider.on_memory_write("add", "user", "Locker 42")
    assert provider.flush(10)
    refused = call(provider, "mem0_add", content="Locker 42")
    assert "primary" in refused["error"]
    assert call(provider, "mem0_search", query="office wifi")["count"] == 1
    assert fake_platform.calls("POST", "/v3/memories/add/") == []
    assert "does not write" in provider.system_prompt_block()


def test_builtin_memory_writes_are_mirrored(
    platform: StartProvider, fake_platform: FakeMem0Platform
) -> None:
    provider = platform(user_id="alice")
    provider.on_memory_write("add", "user", "Prefers metric units", {"session_id": "s1"})
    assert provider.flush(10)
    assert fake_platform.memories_of("alice") == ["Prefers metric units"]
    (stored,) = fake_platform.memories.values()
    assert stored["metadata"] == {"source": "hermes-builtin", "target": "user", "channel": "cli"}

    provider.on_memory_write(
        "replace",
        "user",
        "Prefers imperial units",
        {"old_text": "metric", "previous_content": "Prefers metric units"},
    )
    assert provider.flush(10)
    assert fake_platform.memories_of("alice") == ["Prefers imperial units"]

    provider.on_memory_write(
        "remove", "user", "", {"old_text": "imperial", "previous_content": "Prefers imperial units"}
    )
    assert provider.flush(10)
    assert fake_platform.memories_of("alice") == []


def test_mirrored_remove_never_touches_memories_it_did_not_write(
    platform: StartProvider, fake_platform: FakeMem0Platform
) -> None:
    fake_platform.seed("Prefers metric units", user_id="alice")  # learnt by mem0 itself
    provider = platform(user_id="alice")
    provider.on_memory_write("remove", "user", "", {"previous_content": "Prefers metric units"})
    provider.on_memory_write("replace", "memory", "Project uses uv", {"previous_content": "gone"})
    assert provider.flush(10)
    assert sorted(fake_platform.memories_of("alice")) == ["Prefers metric units", "Project uses uv"]


def test_prefetch_serves_background_results_without_waiting(
    platform: StartProvider, fake_platform: FakeMem0Platform
) -> None:
    fake_platform.seed("The user's dog is called Biscuit", user_id="alice")
    fake_platform.seed("The user's favourite colour is teal", user_id="alice")
    provider = platform(user_id="alice")

    # Cold start: nothing finished yet, so the first prefetch waits for its own search.
    assert "Biscuit" in provider.prefetch("what is my dog called")
    # queue_prefetch warms the cache; the next prefetch for that query is served from it.
    provider.queue_prefetch("what is my favourite colour")
    assert provider.flush(10)
    searches = len(fake_platform.calls("POST", "/v3/memories/search/"))
    assert "teal" in provider.prefetch("what is my favourite colour")
    assert len(fake_platform.calls("POST", "/v3/memories/search/")) == searches

    # A new query whose search has not finished gets the latest finished result at once,
    # while its own search runs in the background for the next call.
    fake_platform.fail("/v3/memories/search/", status=None, delay=1.0)
    assert "teal" in provider.prefetch("tell me about my dog again")
    assert provider.flush(10)
    assert "Biscuit" in provider.prefetch("tell me about my dog again")


def test_trivial_prompts_do_not_search(
    platform: StartProvider, fake_platform: FakeMem0Platform
) -> None:
    provider = platform(user_id="alice")
    for prompt in ("ok", "thanks!", "/help", "   "):
        provider.on_turn_start(1, prompt)
        assert provider.prefetch(prompt) == ""
    assert provider.flush(10)
    assert fake_platform.calls("POST", "/v3/memories/search/") == []
    assert provider.recall_status() is None


def test_session_end_flushes_pending_writes(
    platform: StartProvider, fake_platform: FakeMem0Platform
) -> None:
    provider = platform(user_id="alice")
    fake_platform.fail("/v3/memories/add/", status=None, delay=0.5)
    provider.sync_turn("My passport expires in May.", "I'll remember that.")
    provider.on_session_end([])
    assert fake_platform.memories_of("alice") == ["My passport expires in May."]


def test_recalled_context_is_never_stored_again(
    platform: StartProvider, fake_platform: FakeMem0Platform
) -> None:
    provider = platform(user_id="alice")
    fenced = build_memory_context_block("## Mem0 Memory\n- The user's cat is called Miso")
    provider.sync_turn(f"I got a second cat, Tofu.\n\n{fenced}", "Two cats now!")
    assert provider.flush(10)
    assert fake_platform.memories_of("alice") == ["I got a second cat, Tofu."]


def test_mirrored_adds_are_stored_once(
    platform: StartProvider, fake_platform: FakeMem0Platform
) -> None:
    provider = platform(user_id="alice")
    for _ in range(2):
        provider.on_memory_write("add", "memory", "The repo uses nox for CI")
    assert provider.flush(10)
    assert fake_platform.memories_of("alice") == ["The repo uses nox for CI"]


def test_recall_reflects_a_delete_made_after_it_was_cached(
    platform: StartProvider, fake_platform: FakeMem0Platform
) -> None:
    memory_id = fake_platform.seed("The user's old address is 12 Elm Street", user_id="alice")
    provider = platform(user_id="alice")
    assert "Elm Street" in provider.prefetch("what is my address")
    assert call(provider, "mem0_delete", memory_id=memory_id)["result"] == "Memory deleted."
    provider.queue_prefetch("what is my address")
    assert provider.flush(10)
    assert provider.prefetch("what is my address") == ""
