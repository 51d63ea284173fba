"""Bad input: faulty providers, a failing model endpoint, interrupted turns."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from runtime_kit import FaultyProvider, build_session

from hermes_core.errors import LLMError, SessionStoreError
from hermes_core.runtime.compression import CompressionSettings
from hermes_core.runtime.session import AgentSession, RuntimeSettings
from hermes_core.sessions import SessionStore
from hermes_core.testing.openai_fake import FakeOpenAIServer, FakeReply, tool_call

FAST = RuntimeSettings(
    hook_timeout=0.3, prefetch_timeout=0.3, tool_timeout=0.5, session_end_timeout=0.5
)


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as fake:
        yield fake


def stored(home: Path, session_id: str) -> list[dict[str, Any]]:
    with SessionStore(home / "state.db", read_only=True) as store:
        return store.get_messages_as_conversation(session_id)


def assert_consistent(session: AgentSession, home: Path) -> None:
    """The store and the in-memory transcript agree and hold no orphan tool call."""
    transcript = stored(home, session.session_id)
    assert [(m["role"], m["content"]) for m in transcript] == [
        (m["role"], m["content"]) for m in session.messages
    ]
    issued = {c["id"] for m in transcript for c in m.get("tool_calls") or []}
    answered = {m["tool_call_id"] for m in transcript if m["role"] == "tool"}
    assert issued == answered


# ---------------------------------------------------------------- faulty providers


@pytest.mark.parametrize("mode", ["raise", "hang", "slow", "junk"])
def test_a_faulty_provider_never_breaks_a_turn(
    hermes_home: Path, server: FakeOpenAIServer, mode: str
) -> None:
    faulty = FaultyProvider(mode, slow_seconds=0.05)
    server.script(
        FakeReply(
            tool_calls=[
                tool_call("memory", {"action": "add", "target": "user", "content": "Ada"}, "m1"),
                tool_call("faulty_note", {"text": "x"}, "f1"),
            ]
        ),
        FakeReply(content="first answer"),
        FakeReply(content="second answer"),
        FakeReply(content="third answer"),
    )
    compression = CompressionSettings(context_window=100_000, protect_last_n=2)
    session = build_session(
        hermes_home,
        server,
        faulty,
        settings=FAST,
        drain_timeout=0.3,
        prefetch_timeout=0.3,
        compression=compression,
    )
    try:
        with session:
            first = session.run_turn("remember I am Ada")
            second = session.run_turn("and now?")
            assert (first.content, second.content) == ("first answer", "second answer")
            memory, note = (json.loads(run.result) for run in first.tool_runs)
            assert memory["success"] is True
            if mode == "slow":
                assert note == {"ok": True}
                assert "slow recall" in server.chat_requests[0].messages[-1]["content"]
                assert "FAULTY-BLOCK" in session.system_prompt
            elif mode == "junk":
                assert "type 'object' is not a JSON type" in note["error"]  # refused, clearly
            else:
                assert "error" in note
            assert "Ada" in (hermes_home / "memories" / "USER.md").read_text(encoding="utf-8")
            assert session.run_turn("one more").content == "third answer"
            assert session.compress() is not None
            assert_consistent(session, hermes_home)
            session_id = session.session_id
    finally:
        faulty.release.set()
    assert [m["role"] for m in stored(hermes_home, session_id)][-1] == "assistant"
    if mode == "hang":
        assert any("no answer within" in line for line in session.hook_failures)
        assert "handle_tool_call" in faulty.entered


def test_a_hung_hook_is_skipped_until_it_returns(
    hermes_home: Path, server: FakeOpenAIServer
) -> None:
    faulty = FaultyProvider("hang")
    server.script("one", "two", "three")
    session = build_session(
        hermes_home, server, faulty, settings=FAST, drain_timeout=0.3, prefetch_timeout=0.3
    )
    try:
        with session:
            session.run_turn("first question")
            entered = faulty.entered.count("on_turn_start")
            session.run_turn("second question")
            assert faulty.entered.count("on_turn_start") == entered  # not called again
            assert any("on_turn_start: skipped" in f for f in session.hook_failures)
            faulty.release.set()
            session.run_turn("third question")
    finally:
        faulty.release.set()


# ---------------------------------------------------------------- the model endpoint


def test_an_endpoint_that_is_down_loses_no_stored_message(
    hermes_home: Path, server: FakeOpenAIServer
) -> None:
    server.script("fine")
    with build_session(hermes_home, server) as session:
        session.run_turn("first")
        server.script(FakeReply(status=503))
        with pytest.raises(LLMError, match="HTTP 503"):
            session.run_turn("second")
        assert_consistent(session, hermes_home)
        assert [m["content"] for m in session.messages] == ["first", "fine", "second"]
        server.script("recovered")
        assert session.run_turn("third").content == "recovered"
        assert_consistent(session, hermes_home)


def test_a_refused_connection_is_a_clear_error(hermes_home: Path) -> None:
    with FakeOpenAIServer() as server:
        session = build_session(hermes_home, server)
    with session, pytest.raises(LLMError, match="Cannot reach model endpoint"):
        session.run_turn("anyone there?")
    assert [m["content"] for m in stored(hermes_home, session.session_id)] == ["anyone there?"]


def test_a_malformed_tool_call_is_a_clear_error(
    hermes_home: Path, server: FakeOpenAIServer
) -> None:
    body = {
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [{"id": "x", "function": ["memory"]}],
                },
                "finish_reason": "tool_calls",
            }
        ]
    }
    server.script(FakeReply(raw_body=json.dumps(body).encode()))
    settings = RuntimeSettings(stream=False)
    with build_session(hermes_home, server, settings=settings) as session:
        with pytest.raises(LLMError, match="malformed tool call"):
            session.run_turn("use a tool")
        assert_consistent(session, hermes_home)
        assert [m["role"] for m in session.messages] == ["user"]


def test_not_configured_model_says_what_to_set(hermes_home: Path) -> None:
    with AgentSession.open(client=None) as session:
        with pytest.raises(LLMError, match=r"model\.base_url"):
            session.run_turn("hello")
        assert session.session_id


# ---------------------------------------------------------------- interrupted turns


def test_ctrl_c_between_tool_calls_leaves_the_store_consistent(
    hermes_home: Path, server: FakeOpenAIServer
) -> None:
    server.script(
        FakeReply(
            tool_calls=[
                tool_call("session_search", {"query": "a"}, "c1"),
                tool_call("session_search", {"query": "b"}, "c2"),
            ]
        ),
        FakeReply(content="after the interrupt"),
    )

    def interrupt(run: Any) -> None:
        raise KeyboardInterrupt

    with build_session(hermes_home, server) as session:
        with pytest.raises(KeyboardInterrupt):
            session.run_turn("search twice", on_tool=interrupt)
        assert_consistent(session, hermes_home)
        assert [m["role"] for m in session.messages] == ["user"]
        assert session.run_turn("try again").content == "after the interrupt"
        assert_consistent(session, hermes_home)
    last = server.chat_requests[-1].messages
    assert [m["role"] for m in last] == ["system", "user", "user"]


def test_ctrl_c_while_streaming_keeps_completed_steps(
    hermes_home: Path, server: FakeOpenAIServer
) -> None:
    server.script(
        FakeReply(tool_calls=[tool_call("session_search", {"query": "a"}, "c1")]),
        FakeReply(content="a long streamed answer " * 5, chunk_size=4),
    )
    seen: list[str] = []

    def interrupt_midway(text: str) -> None:
        seen.append(text)
        if len(seen) == 3:
            raise KeyboardInterrupt

    with build_session(hermes_home, server) as session:
        with pytest.raises(KeyboardInterrupt):
            session.run_turn("search then answer", on_text=interrupt_midway)
        assert_consistent(session, hermes_home)
        assert [m["role"] for m in session.messages] == ["user", "assistant", "tool"]


def test_a_store_failure_during_compression_keeps_the_session_as_it_was(
    hermes_home: Path, server: FakeOpenAIServer
) -> None:
    session = build_session(hermes_home, server)
    with session:
        for i in range(6):
            session.run_turn(f"turn {i}")
        before = (session.session_id, session.messages, session.system_prompt)
        session.store.close()  # every write now fails
        assert session.compress() is None
        assert (session.session_id, session.messages, session.system_prompt) == before
        assert session.compressor.compression_count == 0
    with SessionStore(hermes_home / "state.db", read_only=True) as store:
        rows = store.list_sessions(limit=10, collapse_lineage=False)
    assert [r["id"] for r in rows] == [before[0]]


# ---------------------------------------------------------------- host callbacks, locked store


def test_a_host_callback_that_raises_loses_nothing(
    hermes_home: Path, server: FakeOpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    memory_call = {"action": "add", "target": "user", "content": "User likes green tea"}
    server.script(FakeReply(tool_calls=[tool_call("memory", memory_call, "m1")]), "Noted.")

    def broken_pipe(_: object) -> None:
        raise BrokenPipeError("stdout closed")

    with build_session(hermes_home, server) as session:
        result = session.run_turn("I like green tea", on_text=broken_pipe, on_tool=broken_pipe)
        assert result.content == "Noted."
        assert [run.name for run in result.tool_runs] == ["memory"]
        assert [m["role"] for m in session.messages] == ["user", "assistant", "tool", "assistant"]
        assert_consistent(session, hermes_home)
    assert sum("callback raised BrokenPipeError" in r.message for r in caplog.records) == 2


def test_an_answer_a_locked_store_cannot_take_is_kept_and_stored_with_the_next_message(
    hermes_home: Path,
) -> None:
    import sqlite3

    from hermes_core.llm import ChatClient
    from hermes_core.manager import MemoryManager
    from hermes_core.plugins import load_builtin_provider

    requests = []
    lockers: list[sqlite3.Connection] = []

    def respond(body: dict[str, Any]) -> FakeReply:
        requests.append(body)
        if len(requests) == 1:
            memory_call = {"action": "add", "target": "user", "content": "User likes oolong"}
            return FakeReply(tool_calls=[tool_call("memory", memory_call, "m1")])
        if len(requests) == 2:  # another process takes the write lock while the answer streams
            locker = sqlite3.connect(
                hermes_home / "state.db", isolation_level=None, check_same_thread=False
            )
            locker.execute("BEGIN IMMEDIATE")
            lockers.append(locker)  # until the turn has returned
            return FakeReply(content="Got it, you like oolong.")
        return FakeReply(content="Oolong, as you said.")

    with FakeOpenAIServer(respond) as server:
        manager = MemoryManager()
        manager.add_provider(load_builtin_provider())
        store = SessionStore(hermes_home / "state.db", write_patience=0.5)
        client = ChatClient(server.base_url, server.model, max_retries=1, timeout=10.0)
        with AgentSession(manager, store, client, hermes_home=hermes_home) as session:
            first = session.run_turn("I like oolong")
            assert first.content == "Got it, you like oolong."
            assert "1 message(s) of this conversation are not stored yet" in first.notice
            assert session.messages[-1]["content"] == "Got it, you like oolong."
            for locker in lockers:  # the other writer is done
                locker.execute("ROLLBACK")
                locker.close()
            second = session.run_turn("What tea do I like?")
            assert second.content == "Oolong, as you said." and second.notice == ""
            assert_consistent(session, hermes_home)
            assert [m["content"] for m in session.messages][-3:] == [
                "Got it, you like oolong.",
                "What tea do I like?",
                "Oolong, as you said.",
            ]


@pytest.mark.parametrize("stream", [False, True])
def test_a_nameless_tool_call_is_answered_alike_streamed_or_not(
    hermes_home: Path, server: FakeOpenAIServer, stream: bool
) -> None:
    server.script(FakeReply(tool_calls=[tool_call("", {}, "x")]), "done")
    with build_session(hermes_home, server, settings=RuntimeSettings(stream=stream)) as session:
        result = session.run_turn("use a tool")
        assert result.content == "done"
        assert "Unknown tool ''" in json.loads(result.tool_runs[0].result)["error"]
        assert_consistent(session, hermes_home)


def test_a_choice_whose_message_is_null_is_a_clear_error(
    hermes_home: Path, server: FakeOpenAIServer
) -> None:
    server.script(FakeReply(raw_body=b'{"choices": [{"message": null, "finish_reason": "stop"}]}'))
    with build_session(hermes_home, server, settings=RuntimeSettings(stream=False)) as session:
        with pytest.raises(LLMError, match="malformed message"):
            session.run_turn("hello")
        assert_consistent(session, hermes_home)
        assert [m["role"] for m in session.messages] == ["user"]


def test_a_session_that_cannot_start_in_a_with_block_is_closed(
    hermes_home: Path, server: FakeOpenAIServer
) -> None:
    """``with`` skips ``__exit__`` when ``__enter__`` raises; the session closes itself."""
    import sqlite3

    from hermes_core.llm import ChatClient
    from hermes_core.manager import MemoryManager
    from hermes_core.plugins import load_builtin_provider

    SessionStore(hermes_home / "state.db").close()  # the file exists; another process writes
    locker = sqlite3.connect(hermes_home / "state.db", isolation_level=None)
    locker.execute("BEGIN IMMEDIATE")
    manager = MemoryManager()
    manager.add_provider(load_builtin_provider())
    store = SessionStore(hermes_home / "state.db", write_patience=0.3)
    client = ChatClient(server.base_url, server.model, max_retries=1, timeout=10.0)
    session = AgentSession(manager, store, client, hermes_home=hermes_home)
    try:
        with pytest.raises(SessionStoreError, match=r"busy|locked"), session:
            pytest.fail("the body must not run")
    finally:
        locker.execute("ROLLBACK")
        locker.close()
    with pytest.raises(SessionStoreError, match="closed"):
        session.start()
    with pytest.raises(SessionStoreError, match="closed"):
        store.search_messages("anything")


_EXIT_WITHOUT_CLOSE = """
import sqlite3, sys, threading
from pathlib import Path
from hermes_core.llm import ChatClient
from hermes_core.manager import MemoryManager
from hermes_core.plugins import load_builtin_provider
from hermes_core.runtime.session import AgentSession
from hermes_core.sessions import SessionStore
from hermes_core.testing.openai_fake import FakeOpenAIServer, FakeReply

home = Path(sys.argv[1])
lockers = []

def respond(body):
    locker = sqlite3.connect(home / "state.db", isolation_level=None, check_same_thread=False)
    locker.execute("BEGIN IMMEDIATE")  # another process writes while the answer streams
    lockers.append(locker)  # until the turn has returned
    return FakeReply(content="Noted: the deploy key rotates on Fridays.")

with FakeOpenAIServer(respond) as server:
    manager = MemoryManager()
    manager.add_provider(load_builtin_provider())
    store = SessionStore(home / "state.db", write_patience=0.3)
    client = ChatClient(server.base_url, server.model, max_retries=1, timeout=10.0)
    session = AgentSession(manager, store, client, hermes_home=home)
    session.start()
    result = session.run_turn("The deploy key rotates on Fridays.")
    assert "not stored yet" in result.notice, result.notice
    for locker in lockers:  # the other writer is done before the host exits
        locker.execute("ROLLBACK")
        locker.close()
print(session.session_id)
sys.exit(0)  # a host that exits without close()
"""


def test_messages_a_locked_store_kept_back_are_stored_when_the_host_exits_without_close(
    hermes_home: Path,
) -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", _EXIT_WITHOUT_CLOSE, str(hermes_home)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    session_id = done.stdout.strip().splitlines()[-1]
    with SessionStore(hermes_home / "state.db", read_only=True) as store:
        contents = [m["content"] for m in store.get_messages(session_id)]
    assert contents == [
        "The deploy key rotates on Fridays.",
        "Noted: the deploy key rotates on Fridays.",
    ]
