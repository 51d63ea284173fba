"""Local mode with a model: an extraction answer mem0 cannot use never loses the turn.

mem0's ``Memory.add(infer=True)`` swallows an extraction answer it cannot parse
(it logs an ERROR and stores nothing), so these run the real SDK against the
loopback fake model and check what ends up in the store.
"""

from __future__ import annotations

import json
import logging
import threading

import pytest
from conftest import StartProvider, local_config
from hermes_memory_mem0 import Mem0MemoryProvider

from hermes_core.testing.openai_fake import FakeOpenAIServer, FakeReply

TURN = ("I work as a nurse at the city hospital.", "Noted.")


def memories(provider: Mem0MemoryProvider, query: str) -> list[str]:
    found = json.loads(provider.handle_tool_call("mem0_search", {"query": query}))
    return [hit["memory"] for hit in found["results"]]


def sync_one_turn(
    start_provider: StartProvider, replies: list[FakeReply | str] | None
) -> tuple[Mem0MemoryProvider, FakeOpenAIServer]:
    """Sync TURN through a provider whose model answers *replies* (None: the fake's echo)."""
    with FakeOpenAIServer() as llm:
        if replies:
            llm.script(*replies)
        config = local_config(llm={"base_url": llm.base_url, "model": "extractor"})
        provider = start_provider(config, user_id="alice")
        provider.sync_turn(*TURN)
        provider.on_session_end([])
        assert provider.flush(120)
    return provider, llm


def mem0_console_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        f"{r.levelname} {r.name}: {r.getMessage()}"
        for r in caplog.records
        if r.name.startswith("mem0") and r.levelno >= logging.WARNING
    ]


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param(None, id="echo"),  # the fake's default: "echo: <the extraction prompt>"
        pytest.param("The user is a nurse at the city hospital.", id="plain-text"),
        pytest.param("", id="empty"),
        pytest.param('{"memory": [{"id": "0", "text": "Nurse at', id="truncated-json"),
        pytest.param('["User is a nurse"]', id="json-list"),
        pytest.param('{"facts": ["User is a nurse"]}', id="no-memory-key"),
        pytest.param('{"memory": [{"fact": "User is a nurse"}]}', id="items-without-text"),
    ],
)
def test_an_unusable_extraction_answer_stores_the_turn_verbatim(
    start_provider: StartProvider, caplog: pytest.LogCaptureFixture, answer: str | None
) -> None:
    caplog.set_level(logging.DEBUG)
    provider, llm = sync_one_turn(start_provider, None if answer is None else [answer])
    assert len(llm.chat_requests) == 1  # the model was asked once
    assert "I work as a nurse at the city hospital." in memories(provider, "nurse city hospital")
    # mem0's own ERROR line stays out of the console; ours says what happened.
    assert mem0_console_lines(caplog) == []
    warnings = [
        r.getMessage()
        for r in caplog.records
        if r.name == "hermes_memory_mem0.local_engine" and r.levelno == logging.WARNING
    ]
    assert len(warnings) == 1 and "verbatim" in warnings[0], warnings


def test_an_answer_with_no_facts_stores_nothing(
    start_provider: StartProvider, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    provider, llm = sync_one_turn(start_provider, [json.dumps({"memory": []})])
    assert len(llm.chat_requests) == 1
    assert memories(provider, "nurse city hospital") == []
    assert memories(provider, "Noted") == []
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_fenced_or_thinking_answers_are_still_extracted(start_provider: StartProvider) -> None:
    fenced = '```json\n{"memory": [{"id": "0", "text": "Works as a nurse"}]}\n```'
    thinking = '<think>{"x": 1}</think>{"memory": [{"id": "1", "text": "At the city hospital"}]}'
    with FakeOpenAIServer() as llm:
        llm.script(fenced, thinking)
        config = local_config(llm={"base_url": llm.base_url, "model": "extractor"})
        provider = start_provider(config, user_id="alice")
        provider.sync_turn(*TURN)
        provider.sync_turn("I moved there in 2019.", "Nice.")
        assert provider.flush(120)
    assert memories(provider, "nurse") == ["Works as a nurse"]
    assert memories(provider, "city hospital") == ["At the city hospital"]
    assert "I work as a nurse at the city hospital." not in memories(provider, "nurse hospital")


def test_repeated_failures_warn_once(
    start_provider: StartProvider, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    with FakeOpenAIServer() as llm:
        llm.script("not JSON", "still not JSON", FakeReply(status=400), FakeReply(status=400))
        config = local_config(llm={"base_url": llm.base_url, "model": "extractor"}, retries=0)
        provider = start_provider(config, user_id="alice")
        provider.sync_turn("My locker code is 4711.", "Noted.")
        provider.sync_turn("My bike is a green Brompton.", "Nice.")
        provider.sync_turn("My train leaves at 7:15.", "OK.")
        provider.sync_turn("My desk is on floor 3.", "OK.")
        assert provider.flush(120)
    for fact in ("locker code is 4711", "green Brompton", "train leaves at 7:15", "desk floor 3"):
        assert any(fact.split()[-1] in hit for hit in memories(provider, fact)), fact
    assert mem0_console_lines(caplog) == []
    warnings = [
        r.getMessage()
        for r in caplog.records
        if r.name == "hermes_memory_mem0.local_engine" and r.levelno >= logging.WARNING
    ]
    assert len(warnings) == 2, warnings  # one per kind: unusable answer, failed call


def test_mem0_log_lines_are_held_only_on_the_extracting_thread() -> None:
    """Another thread's mem0 errors reach the console while an extraction is held."""
    from hermes_memory_mem0.local_engine import hold_mem0_logs

    mem0_logger = logging.getLogger("mem0.memory.main")
    seen: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record.getMessage())

    handler = Collect()
    mem0_logger.addHandler(handler)
    try:
        with hold_mem0_logs() as held:
            mem0_logger.error("held on this thread")
            other = threading.Thread(target=lambda: mem0_logger.error("from another thread"))
            other.start()
            other.join()
        mem0_logger.error("after the hold")
    finally:
        mem0_logger.removeHandler(handler)
    assert [r.getMessage() for r in held] == ["held on this thread"]
    assert seen == ["from another thread", "after the hold"]
