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
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FakeOpenAIServer", "FakeReply", "RecordedRequest", "tool_call"]


def tool_call(name: str, arguments: Mapping[str, Any] | str, call_id: str = "") -> dict[str, Any]:
    """A tool call for :class:`FakeReply` (*arguments* as a dict or raw JSON text)."""
    text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return {"id": call_id, "name": name, "arguments": text}


@dataclass
class FakeReply:
    """One scripted answer.

    ``status`` other than 200 sends ``body`` (or a JSON error) with that status;
    ``raw_body`` sends those exact bytes with status 200; ``drop_connection``
    closes the socket without answering; ``delay`` sleeps first.
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


@dataclass(frozen=True)
class RecordedRequest:
    """A request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The ``messages`` of a chat-completions request (``[]`` otherwise)."""
        if isinstance(self.body, dict) and isinstance(self.body.get("messages"), list):
            return list(self.body["messages"])
        return []


class _QuietHTTPServer(ThreadingHTTPServer):
    """Drops the traceback a client that hung up (timed out) would print."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


Responder = Callable[[dict[str, Any]], "FakeReply | str"]


def _estimate_tokens(value: Any) -> int:
    return max(1, len(json.dumps(value, ensure_ascii=False)) // 4)


class FakeOpenAIServer:
    """A threaded loopback server; use as a context manager or call ``start``/``stop``.

    Replies come from ``script(...)`` in order, then from *responder*, then a
    default that echoes the last user message.
    """

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        model: str = "fake-model",
        api_key: str | None = None,
    ) -> None:
        self.responder = responder
        self.model = model
        self.api_key = api_key
        self.requests: list[RecordedRequest] = []
        self._script: deque[FakeReply | str] = deque()
        self._lock = threading.Lock()
        self._in_flight = 0
        self.peak_concurrency = 0
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------
    def start(self) -> FakeOpenAIServer:
        """Bind to a free port on 127.0.0.1 and serve in a daemon thread."""
        handler = self._make_handler()
        self._server = _QuietHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="fake-openai",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        """The ``…/v1`` URL to configure a client with."""
        if self._server is None:
            raise RuntimeError("FakeOpenAIServer is not started")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    # -- scripting -----------------------------------------------------------------
    def script(self, *replies: FakeReply | str) -> None:
        """Queue replies to send, in order, to the next requests."""
        with self._lock:
            self._script.extend(replies)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        """Recorded chat-completions requests, oldest first."""
        with self._lock:
            return [r for r in self.requests if r.path.endswith("/chat/completions")]

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
    def _make_handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def _record(self, body: Any) -> None:
                with server._lock:
                    server.requests.append(
                        RecordedRequest(
                            method=self.command,
                            path=self.path,
                            headers={k.lower(): v for k, v in self.headers.items()},
                            body=body,
                        )
                    )

            def _send_json(self, status: int, payload: Any) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _authorized(self) -> bool:
                if server.api_key is None:
                    return True
                if self.headers.get("Authorization") == f"Bearer {server.api_key}":
                    return True
                self._send_json(401, {"error": {"message": "invalid api key"}})
                return False

            def do_GET(self) -> None:
                self._record(None)
                if not self._authorized():
                    return
                if self.path.rstrip("/").endswith("/models"):
                    self._send_json(
                        200, {"object": "list", "data": [{"id": server.model, "object": "model"}]}
                    )
                else:
                    self._send_json(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else {}
                except json.JSONDecodeError:
                    body = {"_raw": raw.decode("utf-8", "replace")}
                self._record(body)
                if not self._authorized():
                    return
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send_json(404, {"error": {"message": f"no route {self.path}"}})
                    return
                with server._lock:
                    server._in_flight += 1
                    server.peak_concurrency = max(server.peak_concurrency, server._in_flight)
                try:
                    self._answer(body if isinstance(body, dict) else {})
                finally:
                    with server._lock:
                        server._in_flight -= 1

            def _answer(self, body: dict[str, Any]) -> None:
                reply = server._next_reply(body)
                if reply.delay:
                    time.sleep(reply.delay)
                if reply.drop_connection:
                    self.close_connection = True
                    self.connection.close()
                    return
                if reply.status != 200:
                    if reply.body is not None:
                        data = reply.body.encode()
                        self.send_response(reply.status)
                        self.send_header("Content-Type", "text/plain")
                        self.send_header("Content-Length", str(len(data)))
                        self.end_headers()
                        self.wfile.write(data)
                    else:
                        self._send_json(reply.status, {"error": {"message": "scripted error"}})
                    return
                if reply.raw_body is not None:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(reply.raw_body)))
                    self.end_headers()
                    self.wfile.write(reply.raw_body)
                    return
                usage = reply.usage or {
                    "prompt_tokens": _estimate_tokens(body.get("messages", [])),
                    "completion_tokens": _estimate_tokens(reply.content),
                }
                usage.setdefault(
                    "total_tokens",
                    usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0),
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
                if body.get("stream"):
                    self._stream(reply, calls, usage, finish)
                else:
                    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
                    if calls:
                        message["tool_calls"] = calls
                    self._send_json(
                        200,
                        {
                            "id": "chatcmpl-fake",
                            "object": "chat.completion",
                            "model": server.model,
                            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                            "usage": usage,
                        },
                    )

            def _stream(
                self,
                reply: FakeReply,
                calls: list[dict[str, Any]],
                usage: dict[str, int],
                finish: str,
            ) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                for event in _stream_events(server.model, reply, calls, usage, finish):
                    self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
                    self.wfile.flush()
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

        return Handler


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
