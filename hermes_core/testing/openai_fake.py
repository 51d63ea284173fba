"""A real OpenAI-compatible HTTP server on loopback, scripted by the test or demo.

``FakeOpenAIServer`` speaks ``POST /v1/chat/completions`` (JSON and SSE
streaming, tool calls, usage) and ``GET /v1/models``. Each request is recorded;
each reply comes from a queue of scripted :class:`FakeReply` objects or from a
responder callable, so tests prove what the client actually sent and how it
handles what came back (delays, HTTP errors, malformed JSON, dropped
connections). The offline demo uses it as its scripted model.
"""

from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from hermes_core.testing import http_fake
from hermes_core.testing.http_fake import FakeHTTPServer, Reply

__all__ = ["FakeOpenAIServer", "FakeReply", "RecordedRequest", "tool_call"]


def tool_call(name: str, arguments: Mapping[str, Any] | str, call_id: str = "") -> dict[str, Any]:
    """A tool call for :class:`FakeReply` (*arguments* as a dict or raw JSON text)."""
    text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return {"id": call_id, "name": name, "arguments": text}


@dataclass
class FakeReply:
    """One scripted answer.

    ``status`` other than 200 sends ``body`` (or a JSON error) with that status;
    ``raw_body`` sends those exact bytes with status 200; ``raw_stream`` sends
    those chunks one by one as an event stream (malformed lines, keep-alive
    comments, a missing ``[DONE]``: whatever the test scripts), then closes;
    ``drop_connection`` closes the socket without answering; ``delay`` sleeps
    first. ``headers`` are added to the answer (``Retry-After``, ``Location``)
    and ``content_type`` replaces its type (an HTML error page, say).
    """

    content: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, int] | None = None
    finish_reason: str | None = None
    delay: float = 0.0
    status: int = 200
    body: str | None = None
    raw_body: bytes | None = None
    drop_connection: bool = False
    chunk_size: int = 8
    raw_stream: Iterable[bytes] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str | None = None


class RecordedRequest(http_fake.RecordedRequest):
    """A request as the server received it."""

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The ``messages`` of a chat-completions request (``[]`` otherwise)."""
        if isinstance(self.body, dict) and isinstance(self.body.get("messages"), list):
            return list(self.body["messages"])
        return []


Responder = Callable[[dict[str, Any]], "FakeReply | str"]


def _estimate_tokens(value: Any) -> int:
    return max(1, len(json.dumps(value, ensure_ascii=False)) // 4)


class FakeOpenAIServer(FakeHTTPServer):
    """A threaded loopback server; use as a context manager or call ``start``/``stop``.

    Replies come from ``script(...)`` in order, then from *responder*, then a
    default that echoes the last user message.
    """

    name = "fake-openai"
    request_type = RecordedRequest

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        model: str = "fake-model",
        api_key: str | None = None,
    ) -> None:
        super().__init__()
        self.responder = responder
        self.model = model
        self.api_key = api_key
        self._script: deque[FakeReply | str] = deque()
        self._in_flight = 0
        self.peak_concurrency = 0
        self.route("GET", r".*/models/?", self._models)
        self.route("POST", r".*/chat/completions", self._chat)

    @property
    def base_url(self) -> str:
        """The ``…/v1`` URL to configure a client with."""
        if self._server is None:
            raise RuntimeError("FakeOpenAIServer is not started")
        return f"{self.url}/v1"

    # -- scripting -----------------------------------------------------------------
    def script(self, *replies: FakeReply | str) -> None:
        """Queue replies to send, in order, to the next requests."""
        with self._lock:
            self._script.extend(replies)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        """Recorded chat-completions requests, oldest first."""
        with self._lock:
            return [
                r
                for r in self.requests
                if isinstance(r, RecordedRequest) and r.path.endswith("/chat/completions")
            ]

    def _next_reply(self, body: dict[str, Any]) -> FakeReply:
        with self._lock:
            queued = self._script.popleft() if self._script else None
        reply: FakeReply | str
        if queued is not None:
            reply = queued
        elif self.responder is not None:
            reply = self.responder(body)
        else:
            reply = FakeReply(content=f"echo: {_last_user_text(body)}")
        return FakeReply(content=reply) if isinstance(reply, str) else reply

    # -- HTTP ----------------------------------------------------------------------
    def before_route(self, request: http_fake.RecordedRequest) -> Reply | None:
        if self.api_key is None or request.headers.get("authorization") == f"Bearer {self.api_key}":
            return None
        return Reply(401, self.error_body(401, "invalid api key"))

    def error_body(self, status: int, message: str) -> Any:
        return {"error": {"message": message}}

    def _models(self, request: http_fake.RecordedRequest) -> Reply:
        return Reply(200, {"object": "list", "data": [{"id": self.model, "object": "model"}]})

    def _chat(self, request: http_fake.RecordedRequest) -> Reply:
        body = request.body if isinstance(request.body, dict) else {}
        with self._lock:
            self._in_flight += 1
            self.peak_concurrency = max(self.peak_concurrency, self._in_flight)
        try:
            reply = self._next_reply(body)
            if reply.delay:
                time.sleep(reply.delay)
            return self._answer(reply, body)
        finally:
            with self._lock:
                self._in_flight -= 1

    def _answer(self, reply: FakeReply, body: dict[str, Any]) -> Reply:
        if reply.drop_connection:
            return Reply(drop=True)
        if reply.status != 200:
            if reply.body is not None:
                return Reply(
                    reply.status,
                    reply.body.encode(),
                    content_type=reply.content_type or "text/plain",
                    headers=reply.headers,
                )
            return Reply(
                reply.status,
                self.error_body(reply.status, "scripted error"),
                headers=reply.headers,
            )
        if reply.raw_stream is not None:
            return Reply(
                200,
                content_type=reply.content_type or "text/event-stream",
                headers={"Cache-Control": "no-cache", **reply.headers},
                stream=reply.raw_stream,
            )
        if reply.raw_body is not None:
            return Reply(
                200,
                reply.raw_body,
                content_type=reply.content_type or "application/json",
                headers=reply.headers,
            )
        usage = reply.usage or {
            "prompt_tokens": _estimate_tokens(body.get("messages", [])),
            "completion_tokens": _estimate_tokens(reply.content),
        }
        usage.setdefault(
            "total_tokens", usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)
        )
        calls = [
            {
                "id": c.get("id") or f"call_{i}",
                "type": "function",
                "function": {"name": c["name"], "arguments": c["arguments"]},
            }
            for i, c in enumerate(reply.tool_calls)
        ]
        finish = reply.finish_reason or ("tool_calls" if calls else "stop")
        # OpenAI names the model that answered: the one asked for.
        asked = body.get("model")
        model = asked if isinstance(asked, str) and asked else self.model
        if body.get("stream"):
            events = _stream_events(model, reply, calls, usage, finish)
            return Reply(
                200,
                content_type="text/event-stream",
                headers={"Cache-Control": "no-cache", **reply.headers},
                stream=_sse(events),
            )
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if calls:
            message["tool_calls"] = calls
        return Reply(
            200,
            {
                "id": "chatcmpl-fake",
                "object": "chat.completion",
                "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": usage,
            },
            headers=reply.headers,
        )


def _sse(events: Iterable[dict[str, Any]]) -> Iterator[bytes]:
    for event in events:
        yield f"data: {json.dumps(event)}\n\n".encode()
    yield b"data: [DONE]\n\n"


def _stream_events(
    model: str,
    reply: FakeReply,
    calls: list[dict[str, Any]],
    usage: dict[str, int],
    finish: str,
) -> Iterable[dict[str, Any]]:
    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
        }

    yield chunk({"role": "assistant", "content": ""})
    size = max(1, reply.chunk_size)
    for start in range(0, len(reply.content), size):
        yield chunk({"content": reply.content[start : start + size]})
    for index, call in enumerate(calls):
        arguments = call["function"]["arguments"]
        half = len(arguments) // 2
        yield chunk(
            {
                "tool_calls": [
                    {
                        "index": index,
                        "id": call["id"],
                        "type": "function",
                        "function": {
                            "name": call["function"]["name"],
                            "arguments": arguments[:half],
                        },
                    }
                ]
            }
        )
        yield chunk({"tool_calls": [{"index": index, "function": {"arguments": arguments[half:]}}]})
    yield chunk({}, finish)
    yield {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "model": model,
        "choices": [],
        "usage": usage,
    }


def _last_user_text(body: Mapping[str, Any]) -> str:
    for message in reversed(body.get("messages") or []):
        if isinstance(message, Mapping) and message.get("role") == "user":
            content = message.get("content")
            return content if isinstance(content, str) else json.dumps(content)
    return ""
