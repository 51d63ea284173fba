"""One process serving many chats, as a messaging gateway embeds hermes-memory.

An AgentSession per chat, turns of different chats on different threads, a
chat's next message arriving while its turn still runs, a chat closed from
another thread, sessions dropped without close, and a CLI and a gateway
process sharing one HERMES_HOME. Everything runs against real SQLite, real
files and a fake model over loopback HTTP.
"""

from __future__ import annotations

import gc
import os
import re
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from runtime_kit import RecordingProvider, build_session

from hermes_core.runtime.session import AgentSession, RuntimeSettings
from hermes_core.sessions import SessionStore
from hermes_core.testing.openai_fake import FakeOpenAIServer, FakeReply, tool_call

WAIT = 30.0
GATE = 1.0
"""How long a held answer waits for a request the old code would have let through."""


def _last_user_text(body: dict[str, Any]) -> str:
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    return str(users[-1].get("content") or "") if users else ""


def _runtime_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name.startswith(("hermes-hook-", "memory-"))}


def _join_all(threads: set[threading.Thread]) -> list[str]:
    """Join *threads* within one shared deadline; the names of those still alive."""
    deadline = time.monotonic() + WAIT
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    return sorted(t.name for t in threads if t.is_alive())


def _stored(home: Path, session_id: str) -> list[tuple[str, str]]:
    with SessionStore(home / "state.db", read_only=True) as store:
        return [(m["role"], m["content"]) for m in store.get_messages_as_conversation(session_id)]


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as fake:
        yield fake


def _in_thread(fn: Any, *args: Any) -> tuple[threading.Thread, list[Any]]:
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(fn(*args))
        except Exception as exc:  # handed to the test
            outcome.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


def test_a_chats_next_message_waits_for_the_turn_still_running(
    hermes_home: Path, server: FakeOpenAIServer
) -> None:
    first_asked = threading.Event()
    second_asked = threading.Event()

    def answer(body: dict[str, Any]) -> FakeReply:
        text = _last_user_text(body)
        if text.startswith("first"):
            first_asked.set()
            second_asked.wait(GATE)  # interleaved turns would send the second one now
        else:
            second_asked.set()
        return FakeReply(content=f"answer to {text.split()[0]}")

    server.responder = answer
    recorder = RecordingProvider()
    with build_session(hermes_home, server, recorder) as session:
        first, first_result = _in_thread(session.run_turn, "first question")
        assert first_asked.wait(WAIT)
        second, second_result = _in_thread(session.run_turn, "second question")
        first.join(WAIT)
        second.join(WAIT)
        assert [r.content for r in first_result + second_result] == [
            "answer to first",
            "answer to second",
        ]
        assert _stored(hermes_home, session.session_id) == [
            ("user", "first question"),
            ("assistant", "answer to first"),
            ("user", "second question"),
            ("assistant", "answer to second"),
        ]
        second_request = server.chat_requests[-1].messages
        assert [m["role"] for m in second_request] == ["system", "user", "assistant", "user"]
        turns = [args[0] for args, _ in recorder.calls_to("on_turn_start")]
        assert turns == [1, 2]


def test_closing_a_chat_from_another_thread_waits_for_its_running_turn(
    hermes_home: Path, server: FakeOpenAIServer
) -> None:
    asked = threading.Event()
    closed = threading.Event()

    def answer(body: dict[str, Any]) -> FakeReply:
        asked.set()
        closed.wait(GATE)  # a close that did not wait would pull the client away now
        return FakeReply(content="the answer")

    server.responder = answer
    recorder = RecordingProvider()
    session = build_session(hermes_home, server, recorder)
    session_id = session.start()
    turn, outcome = _in_thread(session.run_turn, "a question")
    assert asked.wait(WAIT)
    closer, _ = _in_thread(lambda: (session.close(), closed.set()))
    turn.join(WAIT)
    closer.join(WAIT)

    assert [getattr(r, "content", r) for r in outcome] == ["the answer"]
    assert _stored(hermes_home, session_id) == [("user", "a question"), ("assistant", "the answer")]
    ((ended,), _) = recorder.calls_to("on_session_end")[0]
    assert [m["content"] for m in ended] == ["a question", "the answer"]
    hooks = recorder.hooks()
    assert hooks.index("sync_turn") < hooks.index("on_session_end") < hooks.index("shutdown")
    with pytest.raises(Exception, match="closed"):
        session.run_turn("too late")


def test_a_session_dropped_without_close_ends_its_threads(
    hermes_home: Path, server: FakeOpenAIServer
) -> None:
    before = _runtime_threads()
    session: AgentSession | None = build_session(hermes_home, server, RecordingProvider(recall="r"))
    assert session is not None
    session.run_turn("what did we decide about deploys?")
    started = _runtime_threads() - before
    assert {t.name for t in started} >= {
        "hermes-hook-prefetch_all",
        "memory-sync",
        "memory-prefetch-recorder",
    }

    assert session.manager.flush_pending(WAIT)  # idle, as a forgotten chat would be

    session = None  # the host forgot close(): an exception path, an evicted cache entry
    gc.collect()
    assert _join_all(started) == []


def test_chats_in_parallel_threads_keep_to_themselves_and_leave_no_threads(
    hermes_home: Path, server: FakeOpenAIServer
) -> None:
    chats = 6
    everyone_asking = threading.Barrier(chats, timeout=WAIT)
    server.responder = lambda body: FakeReply(content=f"re: {_last_user_text(body).split()[0]}")
    before = _runtime_threads()
    recorders: dict[int, RecordingProvider] = {}
    sessions: dict[int, str] = {}

    def chat(number: int) -> None:
        recorder = recorders[number] = RecordingProvider(recall=f"chat{number} remembers")
        settings = RuntimeSettings(platform="telegram", user_id=f"user{number}")
        with build_session(hermes_home, server, recorder, settings=settings) as session:
            sessions[number] = session.start()
            everyone_asking.wait()  # every chat opened; turns run side by side
            for turn in range(3):
                result = session.run_turn(f"chat{number}-turn{turn} about the release")
                assert result.content == f"re: chat{number}-turn{turn}"
                assert f"chat{number} remembers" in result.recalled

    threads = [threading.Thread(target=chat, args=(n,)) for n in range(chats)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT)
    assert len(sessions) == chats

    for number, session_id in sessions.items():
        words = [content for _, content in _stored(hermes_home, session_id)]
        assert words == [
            text
            for turn in range(3)
            for text in (
                f"chat{number}-turn{turn} about the release",
                f"re: chat{number}-turn{turn}",
            )
        ]
        recorder = recorders[number]
        synced = recorder.calls_to("sync_turn")
        assert {kwargs["session_id"] for _, kwargs in synced} == {session_id}
        assert [args[0].split()[0] for args, _ in synced] == [
            f"chat{number}-turn{turn}" for turn in range(3)
        ]
        ((init_id,), init_kwargs) = recorder.calls_to("initialize")[0]
        assert (init_id, init_kwargs["user_id"]) == (session_id, f"user{number}")
    for request in server.chat_requests:
        chats_seen = {
            match
            for m in request.messages[1:]
            for match in re.findall(r"chat\d+", str(m.get("content")))
        }
        assert len(chats_seen) == 1, chats_seen

    assert _join_all(_runtime_threads() - before) == []


_CHAT_PROCESS = textwrap.dedent(
    """
    import sys, threading
    from pathlib import Path
    sys.path.insert(0, sys.argv[5])
    from runtime_kit import build_session
    from hermes_core.runtime.compression import CompressionSettings

    home, url, tag, chats = Path(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])

    class Endpoint:
        base_url, model = url, "fake-model"

    failures = []

    def chat(number):
        try:
            session = build_session(
                home, Endpoint(), compression=CompressionSettings(context_window=2500)
            )
            with session:
                for turn in range(6):
                    session.run_turn(f"remember {tag}-{number}-{turn} " + "filler words " * 60)
        except BaseException as exc:
            failures.append(repr(exc))

    threads = [threading.Thread(target=chat, args=(n,)) for n in range(chats)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print(failures)
    sys.exit(1 if failures else 0)
    """
)


def test_a_cli_and_a_gateway_process_share_one_home_without_losing_writes(
    hermes_home: Path, server: FakeOpenAIServer
) -> None:
    def answer(body: dict[str, Any]) -> FakeReply:
        messages = body["messages"]
        last = messages[-1]
        if len(messages) > 1 and last["role"] == "user":
            fact = last["content"].split()[1]
            return FakeReply(
                tool_calls=[
                    tool_call("memory", {"action": "add", "target": "memory", "content": fact})
                ]
            )
        return FakeReply(content="noted" if last["role"] == "tool" else "a summary")

    server.responder = answer
    kit = str(Path(__file__).parent)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _CHAT_PROCESS, str(hermes_home), server.base_url, tag, "2", kit],
            env={**os.environ, "HERMES_HOME": str(hermes_home)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tag in ("cli", "gateway")
    ]
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, out + err

    facts = {f"{tag}-{n}-{t}" for tag in ("cli", "gateway") for n in range(2) for t in range(6)}
    memory = (hermes_home / "memories" / "MEMORY.md").read_text(encoding="utf-8")
    assert set(re.findall(r"(?:cli|gateway)-\d-\d", memory)) == facts
    with SessionStore(hermes_home / "state.db", read_only=True) as store:
        assert store.check() == []
        user_turns = {
            m["content"].split()[1]
            for session in store.list_sessions(limit=1000, collapse_lineage=False)
            for m in store.get_messages(session["id"])
            if m["role"] == "user" and str(m["content"]).startswith("remember")
        }
        compressed = [
            s
            for s in store.list_sessions(limit=1000, collapse_lineage=False)
            if s.get("end_reason") == "compression"
        ]
    assert facts <= user_turns
    assert compressed, "the chats were meant to compress while the other process wrote"
