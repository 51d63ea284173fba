"""Compression inside a live session: the split, lineage, titles, tip and provider callbacks."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from runtime_kit import RecordingProvider, build_session

from hermes_core.runtime.compression import CompressionSettings
from hermes_core.runtime.session import AgentSession, TurnResult
from hermes_core.runtime.summary import SUMMARY_PREFIX
from hermes_core.sessions import SessionStore
from hermes_core.testing.openai_fake import FakeOpenAIServer, FakeReply

CHECKPOINT_MARKERS = ("TURNS TO SUMMARIZE:", "NEW TURNS TO FOLD IN:")


class Model:
    """Answers turns at length and checkpoint requests with a numbered summary."""

    def __init__(self, fail_checkpoints: bool = False) -> None:
        self.checkpoints: list[str] = []
        self.fail_checkpoints = fail_checkpoints

    def __call__(self, body: dict[str, Any]) -> FakeReply | str:
        last = body["messages"][-1]["content"]
        if isinstance(last, str) and any(m in last for m in CHECKPOINT_MARKERS):
            self.checkpoints.append(last)
            if self.fail_checkpoints:
                return FakeReply(status=500)
            return f"## Historical Task Snapshot\nsummary number {len(self.checkpoints)}"
        return "Here is a detailed answer. " + "Details follow. " * 25


@pytest.fixture
def model() -> Model:
    return Model()


@pytest.fixture
def server(model: Model) -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(model) as fake:
        yield fake


def long_message(i: int) -> str:
    return f"Request {i}: " + f"please consider requirement {i} carefully. " * 20


def run_until_compressed(session: AgentSession, start: int = 0, limit: int = 30) -> TurnResult:
    for i in range(start, start + limit):
        result = session.run_turn(long_message(i))
        if result.compression is not None:
            return result
    raise AssertionError("no compression happened")


def open_store(home: Path) -> SessionStore:
    return SessionStore(home / "state.db", read_only=True)


def test_compression_splits_the_session_with_lineage_titles_and_callbacks(
    hermes_home: Path, server: FakeOpenAIServer, model: Model
) -> None:
    recorder = RecordingProvider(pre_compress="PROVIDER-CONTEXT-XYZ")
    settings = CompressionSettings(context_window=4000)
    session = build_session(hermes_home, server, recorder, compression=settings, title="Planning")
    with session:
        first_id = session.start()
        prompt_before = session.system_prompt
        result = run_until_compressed(session)
        outcome = result.compression
        assert outcome is not None
        before_hooks = len(recorder.calls)
        child_id = session.session_id
        transcript = session.messages
        turn_request = server.chat_requests[-1]
        second = run_until_compressed(session, start=100)
        assert second.compression is not None
        grandchild_id = session.session_id

    assert outcome.old_session_id == first_id
    assert outcome.new_session_id == child_id == result.session_id
    assert outcome.title == "Planning #2"
    assert outcome.summary_source == "model"
    assert outcome.tokens_after < outcome.tokens_before
    assert session.system_prompt == prompt_before  # rebuilt from unchanged memory

    # providers: pre-compress with the transcript, then the switch, then a prompt rebuild
    background = ("sync_turn", "queue_prefetch")  # on the manager's worker, any time
    hooks = [hook for hook in recorder.hooks() if hook not in background]
    pre = hooks.index("on_pre_compress")
    assert hooks[pre : pre + 3] == ["on_pre_compress", "on_session_switch", "system_prompt_block"]
    args, kwargs = recorder.calls_to("on_session_switch")[0]
    assert args == (child_id,)
    assert kwargs == {"parent_session_id": first_id, "reset": False, "reason": "compression"}
    assert "on_session_end" not in recorder.hooks()[:before_hooks]  # not a session end

    # the model wrote the checkpoint, with what the provider returned
    assert "PROVIDER-CONTEXT-XYZ" in model.checkpoints[0]
    assert "PREVIOUS CHECKPOINT" not in model.checkpoints[0]
    assert (
        "PREVIOUS CHECKPOINT:\n## Historical Task Snapshot\nsummary number 1"
        in (model.checkpoints[1])
    )

    # the next request carries head + checkpoint + tail under the same system prompt
    sent = turn_request.messages
    assert sent[0]["content"] == prompt_before
    assert sent[1]["content"] == long_message(0)
    summaries = [m for m in sent if SUMMARY_PREFIX in str(m["content"])]
    assert len(summaries) == 1 and "summary number 1" in summaries[0]["content"]

    with open_store(hermes_home) as store:
        old = store.get_session(first_id)
        child = store.get_session(child_id)
        grandchild = store.get_session(grandchild_id)
        assert old is not None and child is not None and grandchild is not None
        assert old["end_reason"] == "compression"
        assert child["parent_session_id"] == first_id
        assert child["end_reason"] == "compression"
        assert grandchild["parent_session_id"] == child_id
        assert (old["title"], child["title"], grandchild["title"]) == (
            "Planning",
            "Planning #2",
            "Planning #3",
        )
        assert child["system_prompt"] == prompt_before
        assert store.get_compression_tip(first_id) == grandchild_id
        assert store.get_lineage(child_id) == [first_id, child_id, grandchild_id]
        child_messages = store.get_messages_as_conversation(child_id)
        assert [m["content"] for m in child_messages[: len(transcript)]] == [
            m["content"].strip() for m in transcript
        ]
        listed = store.list_sessions(limit=10)
        assert [r["id"] for r in listed] == [grandchild_id]
        old_messages = store.get_messages_as_conversation(first_id)
        assert any(m["content"] == long_message(2).strip() for m in old_messages)  # kept


def test_delegation_children_are_never_the_compression_tip(
    hermes_home: Path, server: FakeOpenAIServer
) -> None:
    session = build_session(
        hermes_home, server, title="Lead", compression=CompressionSettings(context_window=4000)
    )
    with session:
        parent = session.start()
        session.run_turn(long_message(0))
        session.delegate("look something up")
        result = run_until_compressed(session, start=1)
    assert result.compression is not None
    with open_store(hermes_home) as store:
        assert store.get_compression_tip(parent) == result.compression.new_session_id
        assert [r["id"] for r in store.list_sessions(limit=10)] == [session.session_id]


def test_reported_usage_triggers_compression(hermes_home: Path, server: FakeOpenAIServer) -> None:
    settings = CompressionSettings(context_window=100_000)  # threshold 75 000 tokens
    usage = {"prompt_tokens": 80_000, "completion_tokens": 5}
    server.script("a", "b", "c", "d", "e", FakeReply(content="f", usage=usage))
    with build_session(hermes_home, server, compression=settings) as session:
        for text in ("one", "two", "three", "four", "five", "six"):
            assert session.run_turn(text).compression is None
        assert session.context_tokens() == 80_005
        result = session.run_turn("seven")
    assert result.compression is not None
    assert session.context_tokens() < 75_000


def test_failing_summary_model_falls_back_and_the_turn_goes_on(hermes_home: Path) -> None:
    model = Model(fail_checkpoints=True)
    with FakeOpenAIServer(model) as server:
        session = build_session(
            hermes_home, server, compression=CompressionSettings(context_window=4000)
        )
        with session:
            result = run_until_compressed(session)
    assert result.compression is not None
    assert result.compression.summary_source == "fallback"
    assert result.content.startswith("Here is a detailed answer.")
    with open_store(hermes_home) as store:
        messages = store.get_messages_as_conversation(result.session_id)
    checkpoint = next(m for m in messages if SUMMARY_PREFIX in str(m["content"]))
    assert "Built offline" in checkpoint["content"]


def test_manual_compression_and_nothing_to_compress(
    hermes_home: Path, server: FakeOpenAIServer, model: Model
) -> None:
    with build_session(hermes_home, server) as session:
        assert session.compress() is None  # empty transcript
        for i in range(6):
            session.run_turn(f"short {i}")
        outcome = session.compress(focus="requirement 3")
        assert outcome is not None
        assert session.session_id == outcome.new_session_id
    assert outcome.title == "short 0 #2"  # untitled sessions take their first message
    assert "FOCUS TOPIC: requirement 3" in model.checkpoints[0]
