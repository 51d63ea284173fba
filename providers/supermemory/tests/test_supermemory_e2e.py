"""End to end: turns of one session are recalled by the next, through the fake service.

Driven by the real ``MemoryManager`` (and the real ``AgentSession`` runtime
with a scripted model on a fake OpenAI endpoint), with the provider found
through its ``hermes_memory`` entry point.
"""

from __future__ import annotations

import pytest
from hermes_memory_supermemory import SupermemoryProvider

from hermes_core.manager import MemoryManager

FACT = "My favourite hiking trail is the Kungsleden in Lapland."
QUESTION = "Which hiking trail should I plan for this summer?"


def _manager(hermes_home, session_id: str, **init) -> tuple[MemoryManager, SupermemoryProvider]:
    manager = MemoryManager()
    provider = SupermemoryProvider()
    manager.add_provider(provider)
    manager.initialize_all(session_id, hermes_home=str(hermes_home), platform="cli", **init)
    return manager, provider


def _run_turn(manager: MemoryManager, turn: int, user: str, assistant: str, sid: str) -> str:
    manager.on_turn_start(turn, user)
    recalled = manager.prefetch_all(user, session_id=sid)
    manager.sync_all(user, assistant, session_id=sid)
    manager.queue_prefetch_all(user, session_id=sid)
    return recalled


def test_a_fact_from_one_session_is_recalled_in_the_next(configured, hermes_home, fake) -> None:
    first, _ = _manager(hermes_home, "s1", agent_context="primary")
    turns = [
        (FACT, "Kungsleden is a beautiful trail; noted."),
        ("I also need new boots before the trip.", "Good idea, break them in early."),
    ]
    messages = []
    for number, (user, assistant) in enumerate(turns, 1):
        _run_turn(first, number, user, assistant, "s1")
        messages += [{"role": "user", "content": user}, {"role": "assistant", "content": assistant}]
    assert first.flush_pending(10)
    first.on_session_end(messages)
    first.shutdown_all()

    second, provider = _manager(hermes_home, "s2", agent_context="primary")
    try:
        recalled = second.prefetch_all(QUESTION, session_id="s2")
        assert FACT in recalled
        assert "Supermemory" in second.describe_recall()
        assert provider.namespace == "hermes"
    finally:
        second.shutdown_all()
    assert [r.body["content"] for r in fake.calls("POST", "/document")] == [
        f"user: {user}\nassistant: {assistant}" for user, assistant in turns
    ]


def test_builtin_memory_writes_reach_the_next_session(configured, hermes_home, fake) -> None:
    first, _ = _manager(hermes_home, "s1")
    first.notify_memory_tool_write(
        {"success": True}, {"action": "add", "target": "user", "content": "Allergic to peanuts"}
    )
    first.shutdown_all()
    second, _ = _manager(hermes_home, "s2")
    try:
        assert "Allergic to peanuts" in second.prefetch_all("any allergies I should know about?")
    finally:
        second.shutdown_all()


def test_users_do_not_see_each_other(configured, hermes_home, fake) -> None:
    alice, _ = _manager(hermes_home, "a1", user_id="alice")
    _run_turn(alice, 1, FACT, "Noted.", "a1")
    alice.shutdown_all()
    bob, _ = _manager(hermes_home, "b1", user_id="bob")
    try:
        assert "Kungsleden" not in bob.prefetch_all(QUESTION)
    finally:
        bob.shutdown_all()


def test_turns_complete_while_the_service_is_down(configured, hermes_home, fake) -> None:
    fake.down = True
    manager, provider = _manager(hermes_home, "s1")
    try:
        for number in range(1, 6):
            assert (
                _run_turn(manager, number, f"Question {number} about boats?", "Answer.", "s1") == ""
            )
        assert manager.flush_pending(10)
        assert provider.breaker.state == "open"
    finally:
        manager.shutdown_all()


def test_the_provider_is_found_through_its_entry_point(configured, hermes_home) -> None:
    plugins = pytest.importorskip("hermes_core.plugins")
    provider = plugins.load_memory_provider("supermemory", hermes_home)
    assert isinstance(provider, SupermemoryProvider)
    assert provider.is_available()


def test_runtime_sessions_recall_through_supermemory(configured, hermes_home, fake) -> None:
    session_mod = pytest.importorskip("hermes_core.runtime.session")
    scripted = pytest.importorskip("hermes_core.runtime.scripted")
    sessions = pytest.importorskip("hermes_core.sessions")
    if not hasattr(sessions, "SessionStore"):
        pytest.skip("hermes_core.sessions.SessionStore is not there yet")
    from hermes_core.llm import ChatClient
    from hermes_core.testing.openai_fake import FakeOpenAIServer

    def open_session(model: FakeOpenAIServer):
        manager = MemoryManager()
        manager.add_provider(SupermemoryProvider())
        return session_mod.AgentSession(
            manager,
            sessions.SessionStore(hermes_home / "state.db"),
            ChatClient(model.base_url, "scripted", max_retries=0),
            hermes_home=hermes_home,
        )

    with FakeOpenAIServer(scripted.ScriptedModel(), model="scripted") as model:
        with open_session(model) as first:
            first.run_turn(FACT)
        with open_session(model) as second:
            result = second.run_turn(QUESTION)
        assert "Kungsleden" in result.recalled
        last_user = [m for m in model.requests[-1].messages if m["role"] == "user"][-1]
        assert "Kungsleden" in str(last_user["content"])
