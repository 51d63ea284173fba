"""End to end: turns of one session are synced; a later session's prefetch recalls them.

The provider is found through the ``hermes_memory`` entry point (as a host
finds it), driven by hermes-memory-core's MemoryManager and by the AgentSession
runtime with a fake model, against the fake Honcho.
"""

from __future__ import annotations

import json
from pathlib import Path

from fake_honcho import FakeHoncho
from hermes_memory_honcho import HonchoMemoryProvider

from hermes_core.manager import MemoryManager
from hermes_core.plugins import load_memory_provider
from hermes_core.provider import MemoryProvider


def honcho_from_entry_point(home: Path) -> MemoryProvider:
    provider = load_memory_provider("honcho", home)
    assert isinstance(provider, HonchoMemoryProvider)
    assert provider.is_available(), provider.unavailable_reason()
    return provider


def test_manager_sessions_share_what_the_user_said(
    hermes_home: Path, configure: object, fake: FakeHoncho
) -> None:
    first = MemoryManager()
    first.add_provider(honcho_from_entry_point(hermes_home))
    first.initialize_all("20260101_090000_aaaa", platform="cli", user_id="alice")
    first.prefetch_all("My dog is named Biscuit and he loves the beach.")
    first.sync_all(
        "My dog is named Biscuit and he loves the beach.",
        "Biscuit sounds like a happy dog!",
        session_id="20260101_090000_aaaa",
    )
    assert first.flush_pending(10)
    first.on_session_end([])
    first.shutdown_all()
    assert fake.messages_of("alice") == ["My dog is named Biscuit and he loves the beach."]

    second = MemoryManager()
    second.add_provider(honcho_from_entry_point(hermes_home))
    second.initialize_all("20260102_090000_bbbb", platform="cli", user_id="alice")
    recalled = second.prefetch_all("What is my dog called?", session_id="20260102_090000_bbbb")
    assert "Biscuit" in recalled
    assert "Honcho" in second.describe_recall()
    found = json.loads(second.handle_tool_call("honcho_search", {"query": "dog beach"}))
    assert "[alice · 20260101_090000_aaaa] My dog is named Biscuit" in found["result"]
    second.shutdown_all()

    stranger = MemoryManager()
    stranger.add_provider(honcho_from_entry_point(hermes_home))
    stranger.initialize_all("20260103_090000_cccc", platform="cli", user_id="mallory")
    assert "Biscuit" not in stranger.prefetch_all("What is my dog called?")
    stranger.shutdown_all()


def test_runtime_sessions_recall_through_honcho(
    hermes_home: Path, configure: object, fake: FakeHoncho
) -> None:
    from hermes_core.llm import ChatClient
    from hermes_core.runtime.session import AgentSession, RuntimeSettings
    from hermes_core.sessions import SessionStore
    from hermes_core.testing.openai_fake import FakeOpenAIServer

    def open_session(model: FakeOpenAIServer) -> AgentSession:
        manager = MemoryManager()
        manager.add_provider(honcho_from_entry_point(hermes_home))
        return AgentSession(
            manager,
            SessionStore(hermes_home / "state.db"),
            ChatClient(model.base_url, "fake-model"),
            hermes_home=hermes_home,
            settings=RuntimeSettings(user_id="alice", stream=False),
        )

    with FakeOpenAIServer() as model:
        model.script("Noted, you are moving to Lisbon in May.")
        with open_session(model) as first:
            first.run_turn("I am moving to Lisbon in May for a new job.")
            assert "# Honcho memory" in first.system_prompt
        assert fake.messages_of("alice") == ["I am moving to Lisbon in May for a new job."]

        model.script("You are moving to Lisbon.")
        with open_session(model) as second:
            result = second.run_turn("Where am I moving to?")
        assert "Lisbon in May" in result.recalled
        sent = model.chat_requests[-1].messages[-1]
        assert sent["role"] == "user"
        assert "<memory-context>" in sent["content"]
        assert "I am moving to Lisbon in May" in sent["content"]
