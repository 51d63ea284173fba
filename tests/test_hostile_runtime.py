"""The turn loop against a hostile model and misbehaving providers.

Whatever the model streams (garbage shapes, unpaired surrogates, endless
tool calls, an answer that never ends or stops half-way) and whatever a
provider returns, a turn ends with an answer or a clear ``LLMError``, the
store matches the transcript, and the next turn works.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from runtime_kit import RecordingProvider, build_session

from hermes_core.errors import LLMError, MessageTooLongError
from hermes_core.llm import ChatClient
from hermes_core.manager import MAX_PROMPT_BLOCK_CHARS, MAX_RECALL_CHARS, MAX_TOOL_RESULT_CHARS
from hermes_core.provider import MemoryProvider
from hermes_core.runtime.compression import CompressionSettings
from hermes_core.runtime.session import AgentSession, RuntimeSettings
from hermes_core.sessions import SessionStore
from hermes_core.testing.http_fake import Reply
from hermes_core.testing.openai_fake import FakeOpenAIServer, FakeReply, tool_call


class StreamingServer(FakeOpenAIServer):
    """The fake, plus raw server-sent-event streams queued by the test."""

    def __init__(self) -> None:
        super().__init__()
        self.streams: list[Iterable[bytes]] = []

    def _answer(self, reply: FakeReply, body: dict[str, Any]) -> Reply:
        if self.streams and body.get("stream"):
            return Reply(200, content_type="text/event-stream", stream=self.streams.pop(0))
        return super()._answer(reply, body)


def event(delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any) -> bytes:
    chunk = {"choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}], **extra}
    return f"data: {json.dumps(chunk)}\n\n".encode()


DONE = b"data: [DONE]\n\n"


@pytest.fixture
def server() -> Iterator[StreamingServer]:
    with StreamingServer() as fake:
        yield fake


def assert_consistent(session: AgentSession, home: Path) -> None:
    """The store holds exactly the transcript; every tool call has its result."""
    with SessionStore(home / "state.db", read_only=True) as store:
        stored = store.get_messages(session.session_id)
    assert [(m["role"], m["content"]) for m in stored] == [
        (m["role"], m["content"]) for m in session.messages
    ]
    for message in session.messages:
        for text in (message.get("content") or "",):
            text.encode("utf-8")
    answered = {m.get("tool_call_id") for m in session.messages if m["role"] == "tool"}
    for message in session.messages:
        for call in message.get("tool_calls") or []:
            assert call["id"] in answered


def next_turn_works(session: AgentSession, server: FakeOpenAIServer) -> None:
    server.script(FakeReply(content="back to normal"))
    assert session.run_turn("are you still there?").content == "back to normal"


# -- malformed model output -------------------------------------------------------------


def test_tool_calls_without_ids_or_names_and_with_bad_arguments(
    hermes_home: Path, server: StreamingServer
) -> None:
    server.script(
        FakeReply(
            tool_calls=[
                tool_call("memory", "{not json", ""),
                tool_call("memory", '{"a": ' + "[" * 50_000 + "]" * 50_000 + "}", ""),
                tool_call("", {}, ""),
                tool_call("rm_rf", {"path": "/"}, "same"),
                tool_call("memory", {"action": "add", "target": "memory", "content": "ok"}, "same"),
            ]
        ),
        FakeReply(content="done"),
    )
    with build_session(hermes_home, server) as session:
        result = session.run_turn("save that please")
        assert result.content == "done"
        assert [json.loads(run.result).get("success") for run in result.tool_runs][-1] is True
        assert_consistent(session, hermes_home)
        next_turn_works(session, server)


@pytest.mark.parametrize(
    "stream",
    [
        [event({"tool_calls": 5}, "stop"), DONE],
        [event({"tool_calls": [{"index": [0], "function": {"name": "memory"}}]}, "stop"), DONE],
        [
            event({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "memory"}}]}),
            event({"tool_calls": [{"index": "0", "id": "b", "function": {"name": "memory"}}]}),
            event({}, "tool_calls"),
            DONE,
        ],
        [b'data: {"choices": {"0": {"delta": {"content": "x"}}}}\n\n', DONE],
        [b'data: {"choices": [{"delta": ["not", "a", "mapping"]}]}\n\n', DONE],
        [b"data: [1, 2, 3]\n\n", DONE],
    ],
    ids=[
        "calls-not-a-list",
        "index-a-list",
        "index-str-and-int",
        "choices-a-dict",
        "delta-a-list",
        "event-a-list",
    ],
)
def test_malformed_stream_shapes_are_a_clear_model_error(
    hermes_home: Path, server: StreamingServer, stream: list[bytes]
) -> None:
    server.streams.append(stream)
    with build_session(hermes_home, server) as session:
        try:
            session.run_turn("what is the weather like")
        except LLMError as exc:
            assert "Model" in str(exc) or "model" in str(exc)
        assert_consistent(session, hermes_home)
        next_turn_works(session, server)


@pytest.mark.parametrize(
    "body",
    [
        {"choices": [{"message": {"content": "x", "tool_calls": 5}, "finish_reason": "stop"}]},
        {"choices": {"a": 1}},
        {"choices": [{"message": {"content": None, "tool_calls": [{"function": "memory"}]}}]},
        {"choices": [{"message": {"content": ["a", "list"]}, "finish_reason": "stop"}]},
    ],
)
def test_malformed_completions_are_a_clear_model_error(
    hermes_home: Path, server: StreamingServer, body: dict[str, Any]
) -> None:
    server.script(FakeReply(raw_body=json.dumps(body).encode()))
    settings = RuntimeSettings(stream=False)
    with build_session(hermes_home, server, settings=settings) as session:
        with contextlib.suppress(LLMError):
            session.run_turn("what is the weather like")
        assert_consistent(session, hermes_home)
        next_turn_works(session, server)


@pytest.mark.parametrize("stream", [True, False])
def test_unpaired_surrogates_from_the_model_never_poison_the_session(
    hermes_home: Path, server: StreamingServer, stream: bool
) -> None:
    text = "bad \\ud800 text, and \\udfff"
    args = (
        '{\\"action\\": \\"remove\\", \\"target\\": \\"memory\\", \\"old_text\\": \\"\\\\udfff\\"}'
    )
    if stream:
        server.streams.append(
            [
                f'data: {{"choices": [{{"delta": {{"content": "{text}"}}}}]}}\n\n'.encode(),
                f'data: {{"choices": [{{"delta": {{"tool_calls": [{{"index": 0, "id": "c1", '
                f'"function": {{"name": "memory", "arguments": "{args}"}}}}]}}, '
                f'"finish_reason": "tool_calls"}}]}}\n\n'.encode(),
                DONE,
            ]
        )
        server.streams.append([event({"content": "done"}, "stop"), DONE])
    else:
        server.script(
            FakeReply(
                raw_body=(
                    f'{{"choices": [{{"message": {{"content": "{text}", "tool_calls": [{{"id": '
                    f'"c1", "function": {{"name": "memory", "arguments": "{args}"}}}}]}}, '
                    f'"finish_reason": "tool_calls"}}]}}'
                ).encode()
            )
        )
        server.script(FakeReply(content="done"))
    with build_session(hermes_home, server, settings=RuntimeSettings(stream=stream)) as session:
        result = session.run_turn("remove the odd entry")
        assert result.content == "done"
        assert "\ufffd" in session.messages[1]["content"]
        assert_consistent(session, hermes_home)
        next_turn_works(session, server)


def test_unpaired_surrogates_typed_by_the_user_never_poison_the_session(
    hermes_home: Path, server: StreamingServer
) -> None:
    # A terminal hands undecodable bytes to input() as lone surrogates ("caf\xe9").
    with build_session(hermes_home, server) as session:
        server.script(FakeReply(content="noted"))
        assert session.run_turn("caf\udce9 au lait").content == "noted"
        assert session.messages[0]["content"] == "caf\ufffd au lait"
        assert server.chat_requests[-1].messages[-1]["content"] == "caf\ufffd au lait"
        assert_consistent(session, hermes_home)
        next_turn_works(session, server)
        server.script(FakeReply(content="sub-answer"))
        assert session.delegate("check caf\udce9", system_message="be \ud800 brief") == (
            "sub-answer"
        )
        child = server.chat_requests[-1].messages
        assert child[-1]["content"] == "check caf\ufffd" and "\ufffd" in child[0]["content"]
    with SessionStore(hermes_home / "state.db", read_only=True) as store:
        ended = [row["end_reason"] for row in store.list_sessions(collapse_lineage=False)]
    assert sorted(ended) == ["delegation_complete", "user_exit"]


def test_a_message_bigger_than_the_context_window_is_refused_and_the_session_goes_on(
    hermes_home: Path, server: StreamingServer
) -> None:
    with build_session(
        hermes_home, server, compression=CompressionSettings(context_window=20_000)
    ) as session:
        server.script(FakeReply(content="first answer"))
        assert session.run_turn("hello").content == "first answer"
        requests = len(server.chat_requests)
        with pytest.raises(MessageTooLongError, match=r"model\.context_window: 20,000") as caught:
            session.run_turn("log line\n" * 20_000)  # about 45,000 tokens
        assert isinstance(caught.value, LLMError) and "not sent or stored" in str(caught.value)
        assert len(server.chat_requests) == requests
        assert [m["content"] for m in session.messages] == ["hello", "first answer"]
        assert_consistent(session, hermes_home)
        server.script(FakeReply(content="a message that fits"))
        assert session.run_turn("log line\n" * 5_000).content == "a message that fits"
        next_turn_works(session, server)


class UnencodableToolProvider(RecordingProvider):
    """Declares tools a request encoder or a strict backend cannot take, and one good tool."""

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return [
            {"name": "bad_set", "parameters": {"type": "object", "enum": {1, 2}}},
            {"name": "bad_nan", "parameters": {"type": "number", "maximum": float("nan")}},
            {"name": "bad name", "parameters": {"type": "object"}},
            {"name": "bad_params", "parameters": "a string"},
            {"name": "odd_text", "description": "lone \ud800", "parameters": {"type": "object"}},
        ]


def test_tool_schemas_no_request_could_carry_never_break_a_turn(
    hermes_home: Path, server: StreamingServer
) -> None:
    with build_session(hermes_home, server, UnencodableToolProvider()) as session:
        server.script(FakeReply(content="fine"))
        assert session.run_turn("hello there").content == "fine"
        sent = server.chat_requests[-1].body["tools"]
        names = [tool["function"]["name"] for tool in sent]
        assert names == ["memory", "session_search", "odd_text"]
        assert sent[-1]["function"]["description"] == "lone \ufffd"
        next_turn_works(session, server)


# -- runaway models --------------------------------------------------------------------------


def test_hundreds_of_tool_calls_in_one_reply_are_capped_and_all_answered(
    hermes_home: Path, server: StreamingServer
) -> None:
    calls = [
        tool_call("memory", {"action": "add", "target": "memory", "content": f"fact {n}"}, f"c{n}")
        for n in range(500)
    ]
    server.script(FakeReply(tool_calls=calls), FakeReply(content="done"))
    settings = RuntimeSettings(max_tool_calls_per_reply=20)
    with build_session(hermes_home, server, settings=settings) as session:
        result = session.run_turn("remember all of this")
        assert result.content == "done"
        ran = [r for r in result.tool_runs if "not run" not in r.result]
        assert len(ran) == 20
        skipped = json.loads(result.tool_runs[-1].result)
        assert "20" in skipped["error"] and "next reply" in skipped["error"]
        assert_consistent(session, hermes_home)
    entries = (hermes_home / "memories" / "MEMORY.md").read_text(encoding="utf-8")
    assert entries.count("fact ") == 20


def test_a_tool_loop_that_never_ends_stops_with_a_notice(
    hermes_home: Path, server: StreamingServer
) -> None:
    server.responder = lambda body: FakeReply(
        tool_calls=[tool_call("memory", {"action": "add", "target": "memory", "content": "x"})]
    )
    settings = RuntimeSettings(max_tool_iterations=3)
    with build_session(hermes_home, server, settings=settings) as session:
        result = session.run_turn("loop please")
        assert result.model_calls == 4
        assert "3 rounds of tool calls" in result.notice
        assert session.messages[-1]["role"] == "assistant"
        assert_consistent(session, hermes_home)
        server.responder = None
        next_turn_works(session, server)


def _forever() -> Iterator[bytes]:
    while True:
        yield event({"content": "la "})
        time.sleep(0.002)


def test_a_stream_that_never_ends_is_cut_off_with_a_clear_error(
    hermes_home: Path, server: StreamingServer
) -> None:
    server.streams.append(_forever())
    session = build_session(hermes_home, server)
    session.client = ChatClient(server.base_url, server.model, max_retries=1, answer_timeout=1.0)
    with session:
        started = time.monotonic()
        with pytest.raises(LLMError, match="answer_timeout"):
            session.run_turn("sing forever")
        assert time.monotonic() - started < 30
        assert [m["role"] for m in session.messages] == ["user"]
        assert_consistent(session, hermes_home)
        next_turn_works(session, server)


def test_a_reply_larger_than_any_real_answer_is_cut_off(
    hermes_home: Path, server: StreamingServer
) -> None:
    server.script(FakeReply(content="z" * 3_000_000, chunk_size=100_000))
    with build_session(hermes_home, server) as session:
        with pytest.raises(LLMError, match="characters"):
            session.run_turn("write a lot")
        assert_consistent(session, hermes_home)
        next_turn_works(session, server)


@pytest.mark.parametrize(
    "stream",
    [
        [event({"content": "The answer is 4"})],
        [
            event(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "c",
                            "function": {"name": "memory", "arguments": '{"act'},
                        }
                    ]
                }
            )
        ],
    ],
    ids=["text", "tool-call"],
)
def test_a_stream_that_stops_half_way_is_not_taken_as_the_answer(
    hermes_home: Path, server: StreamingServer, stream: list[bytes]
) -> None:
    server.streams.append(stream)
    with build_session(hermes_home, server) as session:
        with pytest.raises(LLMError, match="before it was complete"):
            session.run_turn("what is two plus two")
        assert [m["role"] for m in session.messages] == ["user"]
        assert_consistent(session, hermes_home)
        next_turn_works(session, server)


def test_ctrl_c_while_streaming_or_after_a_tool_keeps_the_store_consistent(
    hermes_home: Path, server: StreamingServer
) -> None:
    def interrupt(*_: object) -> None:
        raise KeyboardInterrupt

    server.script(FakeReply(content="a long answer", chunk_size=2))
    server.script(
        FakeReply(
            tool_calls=[tool_call("memory", {"action": "add", "target": "user", "content": "Ada"})]
        )
    )
    with build_session(hermes_home, server) as session:
        with pytest.raises(KeyboardInterrupt):
            session.run_turn("tell me a story", on_text=interrupt)
        assert_consistent(session, hermes_home)
        with pytest.raises(KeyboardInterrupt):
            session.run_turn("my name is Ada", on_tool=interrupt)
        assert_consistent(session, hermes_home)
        next_turn_works(session, server)


# -- misbehaving providers ----------------------------------------------------------------


class Hoarder(MemoryProvider):
    """An external provider that returns far too much, and text that is not valid Unicode."""

    def __init__(self, factor: int = 2) -> None:
        self.factor = factor

    @property
    def name(self) -> str:
        return "hoarder"

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        pass

    def system_prompt_block(self) -> str:
        return "B\ud800" * MAX_PROMPT_BLOCK_CHARS * self.factor

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        return "<memory-context>recall</memory-context> R\udfff" * (MAX_RECALL_CHARS // 20)

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return [{"name": "hoard", "description": "x", "parameters": {"type": "object"}}]

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        return "T\udc80" * MAX_TOOL_RESULT_CHARS * self.factor


def test_huge_and_invalid_provider_output_is_bounded_and_cleaned(
    hermes_home: Path, server: StreamingServer
) -> None:
    server.script(FakeReply(tool_calls=[tool_call("hoard", {})]), FakeReply(content="fine"))
    with build_session(hermes_home, server, Hoarder()) as session:
        result = session.run_turn("what do you remember about me")
        assert result.content == "fine"
        prompt = session.system_prompt
        prompt.encode("utf-8")
        assert len(prompt) < MAX_PROMPT_BLOCK_CHARS + 20_000
        recalled = result.recalled
        recalled.encode("utf-8")
        assert len(recalled) < MAX_RECALL_CHARS + 2_000
        assert recalled.count("<memory-context>") == 1
        tool_result = result.tool_runs[0].result
        tool_result.encode("utf-8")
        assert len(tool_result) < MAX_TOOL_RESULT_CHARS + 2_000
        assert "more than" in json.loads(tool_result)["error"]
        assert_consistent(session, hermes_home)
        next_turn_works(session, server)


def test_a_provider_that_returns_non_strings_never_breaks_a_turn(
    hermes_home: Path, server: StreamingServer
) -> None:
    odd = RecordingProvider()
    odd.recall = {"not": "text"}  # type: ignore[assignment]
    odd.block = 12345  # type: ignore[assignment]
    server.script(FakeReply(content="fine"))
    with build_session(hermes_home, server, odd) as session:
        result = session.run_turn("what do you remember about me")
        assert result.content == "fine"
        assert "{'not': 'text'}" not in result.recalled
        assert "12345" not in session.system_prompt
        assert_consistent(session, hermes_home)


def test_concurrent_turns_on_two_sessions_share_memory_safely(
    hermes_home: Path, server: StreamingServer
) -> None:
    server.responder = lambda body: (
        FakeReply(content="ok")
        if body["messages"][-1]["role"] == "tool"
        else FakeReply(
            tool_calls=[
                tool_call(
                    "memory",
                    {
                        "action": "add",
                        "target": "memory",
                        "content": body["messages"][-1]["content"],
                    },
                )
            ]
        )
    )
    errors: list[BaseException] = []

    def chat(name: str) -> None:
        try:
            with build_session(hermes_home, server) as session:
                for n in range(5):
                    session.run_turn(f"note {name}{n} for later")
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=chat, args=(name,)) for name in "ab"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors
    text = (hermes_home / "memories" / "MEMORY.md").read_text(encoding="utf-8")
    assert sorted(line for line in text.split("\n") if line.startswith("note")) == sorted(
        f"note {name}{n} for later" for name in "ab" for n in range(5)
    )


# -- files around the session --------------------------------------------------------------


def test_odd_identity_and_context_files_never_block_or_bloat_the_prompt(
    hermes_home: Path, server: StreamingServer, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "AGENTS.md").write_text("Use tabs. " * 200_000, encoding="utf-8")
    (project / "CLAUDE.md").write_bytes(b"caf\xe9 rules \xff")
    if hasattr(os, "mkfifo"):
        os.mkfifo(hermes_home / "SOUL.md")
        os.mkfifo(project / ".cursorrules")
    session = build_session(hermes_home, server, settings=RuntimeSettings(working_dir=project))
    started = threading.Thread(target=session.start, daemon=True)
    started.start()
    started.join(20)
    assert not started.is_alive(), "a named pipe blocked the session start"
    with session:
        prompt = session.system_prompt
        assert len(prompt) < 60_000
        assert "characters omitted" in prompt and "caf\ufffd rules" in prompt
        next_turn_works(session, server)


def test_a_huge_identity_file_is_clipped(hermes_home: Path, server: StreamingServer) -> None:
    (hermes_home / "SOUL.md").write_text("You are a pirate. " * 100_000, encoding="utf-8")
    with build_session(hermes_home, server) as session:
        assert session.system_prompt.startswith("You are a pirate.")
        assert len(session.system_prompt) < 40_000
