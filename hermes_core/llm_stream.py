"""Reading a streamed answer: :class:`ChatStream` turns chat-completion chunks into text
deltas and, at the end, one :class:`~hermes_core.llm_answer.ChatResponse`."""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from typing import Any

from hermes_core.errors import LLMError
from hermes_core.fencing import clean_text
from hermes_core.llm_answer import (
    MAX_ANSWER_CHARS,
    TOOL_CALL_CHARS,
    ChatResponse,
    ToolCall,
    Usage,
    arguments_text,
    content_text,
    too_long,
    usage_from,
)

__all__ = ["ChatStream", "Done", "as_events"]


class Done:
    """The ``data: [DONE]`` marker of a stream."""


DONE = Done()


class ChatStream:
    """Iterate to receive text deltas; ``response`` holds the full reply afterwards.

    Iteration raises :class:`LLMError` when the stream is malformed, ends
    before the model finished (no ``[DONE]`` and no ``finish_reason``), runs
    past *deadline* (a ``time.monotonic()`` value) or grows past
    :data:`MAX_ANSWER_CHARS`. *events* yields ``None`` for bytes that carried
    no event (keep-alive comments), so the deadline holds while they last.
    """

    def __init__(
        self,
        events: Iterator[dict[str, Any] | Done | None],
        model: str,
        *,
        deadline: float | None = None,
        answer_timeout: float | None = None,
    ) -> None:
        self._events = events
        self._model = model
        self._deadline = deadline
        self._answer_timeout = answer_timeout
        self._text: list[str] = []
        self._size = 0
        self._calls: dict[int, dict[str, str]] = {}
        self._usage: Usage | None = None
        self._finish: str | None = None
        self.response: ChatResponse | None = None

    def __iter__(self) -> Iterator[str]:
        try:
            yield from self._read()
        finally:  # stopped early (an error, the reader gave up): the connection closes now
            close = getattr(self._events, "close", None)
            if close is not None:
                close()

    def _read(self) -> Iterator[str]:
        done = False
        for chunk in self._events:
            if isinstance(chunk, Done):
                done = True
                break
            self._check_bounds()
            if chunk is None:
                continue
            usage = usage_from(chunk.get("usage"))
            if usage is not None:
                self._usage = usage
            for delta in self._deltas(chunk):
                calls = delta.get("tool_calls") or []
                if not isinstance(calls, list):
                    raise LLMError(f"Model streamed malformed tool_calls: {calls!r:.200}")
                for call in calls:
                    self._merge_tool_call(call)
                text = content_text(delta.get("content"))
                if text:
                    text = clean_text(text)
                    self._grow(len(text))
                    self._text.append(text)
                    yield text
        if not done and self._finish is None:
            raise LLMError(
                "The model stream ended before it was complete (no finish_reason and no "
                "[DONE]): the connection was cut or the server stopped. Retry the turn."
            )
        calls = [
            ToolCall(id=c["id"] or f"call_{i}", name=c["name"], arguments=c["arguments"])
            for i, c in sorted(self._calls.items())
        ]
        self.response = ChatResponse(
            content="".join(self._text),
            tool_calls=calls,
            usage=self._usage,
            finish_reason=self._finish,
            model=self._model,
        )

    def _deltas(self, chunk: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
        """The ``delta`` of each choice of *chunk*, noting any ``finish_reason``."""
        choices = chunk.get("choices") or []
        if not isinstance(choices, list):
            raise LLMError(f"Model streamed malformed choices: {choices!r:.200}")
        for choice in choices:
            if not isinstance(choice, Mapping):
                continue
            if choice.get("finish_reason"):
                self._finish = clean_text(str(choice["finish_reason"]))
            delta = choice.get("delta") or {}
            if not isinstance(delta, Mapping):
                raise LLMError(f"Model streamed a malformed delta: {delta!r:.200}")
            yield delta

    def _check_bounds(self) -> None:
        if self._deadline is not None and time.monotonic() > self._deadline:
            raise LLMError(
                f"The model kept streaming for more than {self._answer_timeout:g}s without "
                "finishing its answer, so it was stopped. Retry, or raise model.answer_timeout "
                "for a slow model."
            )

    def _grow(self, chars: int) -> None:
        self._size += chars
        if self._size > MAX_ANSWER_CHARS:
            raise too_long()

    def _merge_tool_call(self, call: Any) -> None:
        if not isinstance(call, Mapping):
            raise LLMError(f"Model streamed a malformed tool call: {call!r:.200}")
        index = call.get("index", len(self._calls))
        if isinstance(index, str) and index.isdigit():
            index = int(index)
        if isinstance(index, bool) or not isinstance(index, int):
            raise LLMError(f"Model streamed a tool call with a malformed index: {call!r:.200}")
        if index not in self._calls:
            self._grow(TOOL_CALL_CHARS)
        slot = self._calls.setdefault(index, {"id": "", "name": "", "arguments": ""})
        if call.get("id"):
            slot["id"] = clean_text(str(call["id"]))
        function = call.get("function") or {}
        if isinstance(function, Mapping):
            name = clean_text(str(function.get("name") or ""))
            arguments = arguments_text(function.get("arguments"))
            self._grow(len(name) + len(arguments))
            slot["name"] += name
            slot["arguments"] += arguments


def as_events(answer: ChatResponse) -> Iterator[dict[str, Any] | Done | None]:
    """A whole answer as the one stream event that carries it, then ``[DONE]``."""
    usage = answer.usage
    yield {
        "choices": [
            {
                "delta": {
                    "content": answer.content,
                    "tool_calls": [
                        {"index": i, **call.to_message()}
                        for i, call in enumerate(answer.tool_calls)
                    ],
                },
                "finish_reason": answer.finish_reason or "stop",
            }
        ],
        "usage": None
        if usage is None
        else {
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.total_tokens,
            "prompt_tokens_details": {"cached_tokens": usage.cached_tokens},
        },
    }
    yield DONE
