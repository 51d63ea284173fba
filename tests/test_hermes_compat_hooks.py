"""``ctx.register_hook``: a memory plugin's turn and session hooks run with its provider."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from plugin_kit import folder_plugin, fresh_discovery, provider_source
from thirdparty_kit import write_config

from hermes_core import hermes_compat
from hermes_core.manager import MemoryManager
from hermes_core.plugins import activate_providers, load_memory_provider

# A plugin in the shape of ones that moved recall into ``pre_llm_call`` (prefetch
# returns "") and capture into ``post_llm_call``, with session hooks for bookkeeping.
HOOKED = """
from agent.memory_provider import MemoryProvider

EVENTS = []
NOTES = []


class Hooked(MemoryProvider):
    name = "hooked"

    def is_available(self):
        return True

    def initialize(self, session_id, **kwargs):
        EVENTS.append(("initialize", session_id))

    def get_tool_schemas(self):
        return []

    def prefetch(self, query):  # legacy signature: no session_id
        return ""


def recall(user_message, session_id, is_first_turn, **kwargs):
    EVENTS.append(("pre_llm_call", session_id, is_first_turn, kwargs.get("platform")))
    hits = [n for n in NOTES if any(w in n for w in user_message.lower().split())]
    return {"context": "Known: " + "; ".join(hits)} if hits else None


def capture(user_message, assistant_response, conversation_history):
    NOTES.append(user_message.lower())
    EVENTS.append(("post_llm_call", len(conversation_history)))


async def always(**kwargs):
    return "Always: be brief"


def ended(session_id, completed):
    EVENTS.append(("end", session_id, completed))


def broken(**kwargs):
    raise RuntimeError("hook bug")


def register(ctx):
    ctx.register_memory_provider(Hooked())
    ctx.register_hook(
        "on_session_start", lambda **kw: EVENTS.append(("start", kw["session_id"], kw["platform"]))
    )
    ctx.register_hook("pre_llm_call", broken)
    ctx.register_hook("pre_llm_call", recall)
    ctx.register_hook("pre_llm_call", always)  # an async callback is awaited
    ctx.register_hook(hook_name="post_llm_call", callback=capture)  # Hermes' keywords
    ctx.register_hook("on_session_end", ended)
    ctx.register_hook("pre_tool_call", lambda **kw: EVENTS.append(("tool",)))
"""


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    hermes_compat.uninstall()
    with fresh_discovery(tmp_path_factory.getbasetemp()):
        yield


@pytest.fixture
def hooked(hermes_home: Path) -> Iterator[tuple[MemoryManager, Any]]:
    folder_plugin(hermes_home / "plugins", "hooked", HOOKED)
    write_config(hermes_home, "hooked")
    manager = MemoryManager()
    assert activate_providers(manager, None, hermes_home) == ["builtin", "hooked"]
    provider = manager.get_provider("hooked")
    assert provider is not None
    try:
        yield manager, __import__(type(provider).__module__, fromlist=["EVENTS"])
    finally:
        manager.shutdown_all()


def test_recall_and_capture_in_hooks_work_through_the_manager(
    hooked: tuple[MemoryManager, Any], caplog: pytest.LogCaptureFixture
) -> None:
    manager, plugin = hooked
    manager.initialize_all("s1", platform="telegram")
    with caplog.at_level(logging.WARNING, logger="hermes_core.plugins"):
        first = manager.prefetch_all("my cat is called Miso", session_id="s1")
    assert "Always: be brief" in first and "Known:" not in first
    assert any(
        "pre_llm_call hook raised RuntimeError: hook bug" in r.message for r in caplog.records
    )
    transcript = [{"role": "user", "content": "x"}, {"role": "assistant", "content": "y"}]
    manager.sync_all("My cat is called Miso", "Noted.", session_id="s1", messages=transcript)
    assert manager.flush_pending(timeout=10)

    second = manager.prefetch_all("what is my cat called?", session_id="s1")
    assert "Known: my cat is called miso" in second
    manager.on_session_end(transcript)
    assert manager.flush_pending(timeout=10)
    assert plugin.EVENTS == [
        ("initialize", "s1"),
        ("start", "s1", "telegram"),
        ("pre_llm_call", "s1", True, "telegram"),
        ("post_llm_call", 2),
        ("pre_llm_call", "s1", False, "telegram"),
        ("end", "s1", True),
    ]  # pre_tool_call has no counterpart here: never run


def test_a_plugin_without_hooks_keeps_its_own_methods(hermes_home: Path) -> None:
    plain = provider_source("plain", cls="Plain")
    register = "\n\ndef register(ctx):\n    ctx.register_memory_provider(Plain())\n"
    folder_plugin(hermes_home / "plugins", "plain", plain + register)
    provider = load_memory_provider("plain")
    assert provider is not None
    assert "prefetch" not in vars(provider) and "initialize" not in vars(provider)


def test_hooks_run_even_when_the_providers_own_method_fails(
    hermes_home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder_plugin(
        hermes_home / "plugins",
        "flaky",
        """
        from agent.memory_provider import MemoryProvider

        SEEN = []

        class Flaky(MemoryProvider):
            name = "flaky"
            def is_available(self):
                return True
            def initialize(self, session_id, **kwargs):
                pass
            def get_tool_schemas(self):
                return []
            def prefetch(self, query, *, session_id=""):
                raise ConnectionError("backend down")
            def sync_turn(self, user_content, assistant_content, *, session_id=""):
                raise ConnectionError("backend down")

        def register(ctx):
            ctx.register_memory_provider(Flaky())
            ctx.register_hook("pre_llm_call", lambda **kw: "from the hook")
            ctx.register_hook("post_llm_call", lambda user_message, **kw: SEEN.append(user_message))
        """,
    )
    write_config(hermes_home, "flaky")
    manager = MemoryManager()
    assert activate_providers(manager, None, hermes_home) == ["builtin", "flaky"]
    provider = manager.get_provider("flaky")
    plugin = __import__(type(provider).__module__, fromlist=["SEEN"])
    try:
        manager.initialize_all("s1")
        assert manager.prefetch_all("anything", session_id="s1") == "from the hook"
        with caplog.at_level(logging.WARNING, logger="hermes_core"):
            manager.sync_all("remember this", "ok", session_id="s1")
            assert manager.flush_pending(timeout=10)
        assert plugin.SEEN == ["remember this"]
        assert any(
            "sync_turn" in r.getMessage() and "backend down" in r.getMessage()
            for r in caplog.records
        )
    finally:
        manager.shutdown_all()


# A recall-only plugin in the shape of ones written against Hermes' newer hook
# payload: it names task_id and turn_id without defaults and reads the history.
HISTORIAN_HOOKS = """
    def prefetch(self, query, session_id, /):  # the session id only by position
        return "Own recall for " + session_id


CALLS = []


def recall(session_id, task_id, turn_id, user_message, conversation_history, is_first_turn):
    said = [m["content"] for m in conversation_history]
    CALLS.append(("pre", task_id, turn_id, is_first_turn, said))
    earlier = [m["content"] for m in conversation_history[:-1] if m["role"] == "user"]
    return "Earlier you said: " + " | ".join(earlier) if earlier else None


def seen(turn_id, user_message):
    CALLS.append(("post", turn_id, user_message))


def register(ctx):
    ctx.register_memory_provider(Historian())
    ctx.register_hook("pre_llm_call", recall)
    ctx.register_hook("post_llm_call", seen)
"""


def test_pre_llm_call_gets_the_history_and_the_turn_ids_hermes_gives(hermes_home: Path) -> None:
    plugin_source = provider_source("historian", cls="Historian") + HISTORIAN_HOOKS
    folder_plugin(hermes_home / "plugins", "historian", plugin_source)
    write_config(hermes_home, "historian")
    manager = MemoryManager()
    assert activate_providers(manager, None, hermes_home) == ["builtin", "historian"]
    plugin = __import__(type(manager.get_provider("historian")).__module__, fromlist=["CALLS"])
    try:
        manager.initialize_all("s1")
        assert manager.prefetch_all("I moved to Porto", session_id="s1") == "Own recall for s1"
        transcript = [
            {"role": "user", "content": "I moved to Porto"},
            {"role": "assistant", "content": "Nice city."},
        ]
        manager.sync_all("I moved to Porto", "Nice city.", session_id="s1", messages=transcript)
        assert manager.flush_pending(timeout=10)
        second = manager.prefetch_all("Where do I live?", session_id="s1")
        assert second == "Own recall for s1\n\nEarlier you said: I moved to Porto"
        # another session starts without this one's history
        assert manager.prefetch_all("Where do I live?", session_id="s2") == "Own recall for s2"
    finally:
        manager.shutdown_all()
    (pre1, post1, pre2, pre3) = plugin.CALLS
    assert pre1[:2] == ("pre", "s1") and pre1[3:] == (True, ["I moved to Porto"])
    assert post1 == ("post", pre1[2], "I moved to Porto")  # the turn's own id
    assert pre2[3:] == (False, ["I moved to Porto", "Nice city.", "Where do I live?"])
    assert pre2[2] != pre1[2] and len({pre1[2], pre2[2], pre3[2]}) == 3
    assert pre3[1:2] == ("s2",) and pre3[3:] == (True, ["Where do I live?"])


ORDERED = """
from agent.memory_provider import MemoryProvider

LOG = []


class Ordered(MemoryProvider):
    name = "ordered"

    def is_available(self):
        return True

    def initialize(self, session_id, **kwargs):
        LOG.append(("initialize", session_id))

    def get_tool_schemas(self):
        return []

    def on_turn_start(self, turn_number, message, **kwargs):
        LOG.append(("on_turn_start", turn_number, message))

    def prefetch(self, query, *, session_id=""):
        LOG.append(("prefetch", query))
        return ""

    def sync_turn(self, user_content, assistant_content, *, session_id=""):
        LOG.append(("sync_turn", user_content))


def before_call(user_message, session_id, is_first_turn, **kwargs):
    LOG.append(("pre_llm_call", user_message, session_id, is_first_turn))
    return "Now is the turn of: " + user_message


def register(ctx):
    ctx.register_memory_provider(Ordered())
    ctx.register_hook("pre_llm_call", before_call)
"""


def test_pre_llm_call_runs_first_on_every_turn_as_in_hermes(hermes_home: Path) -> None:
    from hermes_core.llm import ChatClient
    from hermes_core.runtime.session import AgentSession
    from hermes_core.testing.openai_fake import FakeOpenAIServer

    folder_plugin(hermes_home / "plugins", "ordered", ORDERED)
    write_config(hermes_home, "ordered")
    with FakeOpenAIServer() as server:
        server.script("Sure.", "You're welcome.")
        client = ChatClient(server.base_url, server.model, max_retries=1, timeout=10.0)
        session = AgentSession.open(hermes_home, client=client, stream=False)
        try:
            session.start()
            session_id = session.session_id
            first = session.run_turn("Book the dentist for Friday")
            assert session.manager.flush_pending(timeout=10)
            second = session.run_turn("thanks")  # trivial: no recall, but the hook still runs
            assert session.manager.flush_pending(timeout=10)
            plugin = __import__(
                type(session.manager.get_provider("ordered")).__module__, fromlist=["LOG"]
            )
        finally:
            session.close()
    assert "Now is the turn of: Book the dentist for Friday" in first.recalled
    assert second.recalled == ""
    turns = [event for event in plugin.LOG if event[0] != "initialize"]
    assert turns == [
        ("pre_llm_call", "Book the dentist for Friday", session_id, True),
        ("on_turn_start", 1, "Book the dentist for Friday"),
        ("prefetch", "Book the dentist for Friday"),
        ("sync_turn", "Book the dentist for Friday"),
        ("pre_llm_call", "thanks", session_id, False),
        ("on_turn_start", 2, "thanks"),
        ("sync_turn", "thanks"),
    ]


def test_pre_llm_call_follows_a_session_switch(hermes_home: Path) -> None:
    folder_plugin(hermes_home / "plugins", "ordered", ORDERED)
    write_config(hermes_home, "ordered")
    manager = MemoryManager()
    assert activate_providers(manager, None, hermes_home) == ["builtin", "ordered"]
    plugin = __import__(type(manager.get_provider("ordered")).__module__, fromlist=["LOG"])
    try:
        manager.initialize_all("s1")
        manager.on_turn_start(1, "hello there")
        assert manager.prefetch_all("hello there", session_id="s1").endswith("hello there")
        manager.on_session_switch("s2", parent_session_id="s1")
        manager.on_turn_start(1, "and again")
        assert manager.prefetch_all("and again", session_id="s2").endswith("and again")
    finally:
        manager.shutdown_all()
    hooks = [event for event in plugin.LOG if event[0] == "pre_llm_call"]
    assert hooks == [
        ("pre_llm_call", "hello there", "s1", True),
        ("pre_llm_call", "and again", "s2", True),
    ]
