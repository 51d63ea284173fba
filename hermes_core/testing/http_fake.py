"""A real HTTP server on 127.0.0.1 to build faithful local fakes of HTTP APIs on.

Subclass :class:`FakeHTTPServer`, register routes (a method, a path regex and a
handler returning a :class:`Reply` or ``(status, json_body)``) and keep the
service's state on the subclass; the real SDK then talks to ``fake.url`` over
real sockets. The base does the rest:

* every request is recorded (:class:`RecordedRequest`: method, path, query,
  headers, decoded body) before anything else happens;
* faults are injected per ``"METHOD /path"`` regex with :meth:`~FakeHTTPServer.fail`:
  an HTTP status, a delay, a malformed body or a dropped connection;
* clients that hang up (timeouts) make no noise, and a handler that crashes
  answers 500 naming the exception instead of hanging the client;
* :meth:`~FakeHTTPServer.stop` returns at once and drops keep-alive
  connections, so the port refuses connections until :meth:`~FakeHTTPServer.start`
  binds it again.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import socket
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self
from urllib.parse import parse_qs, unquote, urlsplit

__all__ = ["FakeHTTPServer", "Fault", "HTTPError", "RecordedRequest", "Reply", "RouteHandler"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the fake received it.

    ``path`` is percent-decoded and has no query string; ``query`` keeps the
    last value of each parameter; header names are lower-case; ``body`` is the
    decoded JSON, else the text, else ``None`` for an empty body.
    """

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any
    raw_body: bytes = b""


@dataclass(frozen=True)
class Reply:
    """What to answer.

    ``body``: ``bytes`` are sent as they are, ``None`` sends an empty body, anything
    else is JSON-encoded. ``stream``: chunks written one by one (each flushed),
    after which the connection closes (server-sent events). ``drop``: close the
    connection without answering.
    """

    status: int = 200
    body: Any = None
    content_type: str = "application/json"
    headers: Mapping[str, str] = field(default_factory=dict)
    stream: Iterable[bytes] | None = None
    drop: bool = False


@dataclass
class Fault:
    """An injected failure for requests whose ``"METHOD /path"`` matches ``pattern``.

    ``times`` is how many requests it still applies to (``None``: until cleared).
    ``delay`` sleeps first; then ``drop`` closes the connection, ``raw_body``
    answers those bytes (with ``status``, 200 if unset), or ``status`` answers
    that status with the fake's error body. With none of those three the request
    is answered normally after the delay.
    """

    pattern: re.Pattern[str]
    times: int | None = 1
    status: int | None = 500
    delay: float = 0.0
    raw_body: bytes | None = None
    drop: bool = False


class HTTPError(Exception):
    """Raise from a handler to answer *status*; the body is *body*, else the fake's
    :meth:`~FakeHTTPServer.error_body` for *message*."""

    def __init__(self, status: int, message: str, *, body: Any = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.body = body


RouteHandler = Callable[..., "Reply | tuple[int, Any]"]
"""``handler(request, *groups)``: the recorded request and the path regex's groups."""


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients that hang up mid-answer (timeouts, dropped faults) are normal here."""


class FakeHTTPServer:
    """A threaded loopback server with a route table, request log and fault injection.

    Use as a context manager or call :meth:`start` / :meth:`stop`. *port* 0 picks
    a free port; after :meth:`stop`, :meth:`start` binds the same port again.
    """

    name = "fake-http"
    """Thread name of the server loop (subclasses name their service)."""
    request_type: type[RecordedRequest] = RecordedRequest
    """What requests are recorded as (a subclass may add accessors)."""

    def __init__(self, *, port: int = 0) -> None:
        self.requests: list[RecordedRequest] = []
        self.faults: list[Fault] = []
        self._routes: list[tuple[str, re.Pattern[str], RouteHandler]] = []
        self._lock = threading.RLock()
        self._port = port
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._connections: set[socket.socket] = set()

    # -- routes and override points ------------------------------------------------------

    def route(self, method: str, pattern: str, handler: RouteHandler) -> None:
        """Answer *method* requests whose whole path matches the regex *pattern*."""
        self._routes.append((method.upper(), re.compile(pattern), handler))

    def before_route(self, request: RecordedRequest) -> Reply | None:
        """Override to refuse a request before routing (auth, a "down" switch)."""
        return None

    def error_body(self, status: int, message: str) -> Any:
        """The JSON body of an error answer; override with the service's error shape."""
        return {"error": message}

    def dispatch(self, request: RecordedRequest) -> Reply | tuple[int, Any]:
        """Answer a request that no fault intercepted: :meth:`before_route`, then routes."""
        refused = self.before_route(request)
        if refused is not None:
            return refused
        for method, pattern, handler in self._routes:
            match = pattern.fullmatch(request.path)
            if match and method == request.method:
                return handler(request, *match.groups())
        raise HTTPError(404, f"No route for {request.method} {request.path}")

    # -- lifecycle ------------------------------------------------------------------------

    @property
    def port(self) -> int:
        """The bound port (the requested one before the first start)."""
        return self._port

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self._port}"

    def start(self) -> Self:
        """Bind 127.0.0.1 and serve on daemon threads."""
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # no delayed-ACK stalls on keep-alive

            def log_message(self, format: str, *args: Any) -> None:
                return

            def setup(self) -> None:
                super().setup()
                with fake._lock:
                    fake._connections.add(self.connection)

            def finish(self) -> None:
                with fake._lock:
                    fake._connections.discard(self.connection)
                with contextlib.suppress(OSError):
                    super().finish()

            def _handle(self) -> None:
                fake._http_serve(self)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle

        server = _Server(("127.0.0.1", self._port), Handler)
        self._port = server.server_address[1]
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, name=self.name, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop listening and drop open connections; safe to call twice."""
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        with self._lock:
            connections, self._connections = list(self._connections), set()
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- faults and inspection ------------------------------------------------------------

    def fail(
        self,
        pattern: str = ".*",
        *,
        times: int | None = 1,
        status: int | None = 500,
        delay: float = 0.0,
        raw_body: bytes | None = None,
        drop: bool = False,
    ) -> Fault:
        """Inject a fault for requests whose ``"METHOD /path"`` the regex *pattern* finds.

        ``times=None`` keeps failing until :meth:`clear_faults`. With ``status=None``
        and a *delay* the request is answered normally after the delay; with
        *raw_body* those bytes are the answer, sent with *status* (200 if None).
        Faults apply in the order they were added.
        """
        fault = Fault(re.compile(pattern), times, status, delay, raw_body, drop)
        with self._lock:
            self.faults.append(fault)
        return fault

    def clear_faults(self) -> None:
        """Forget every injected fault."""
        with self._lock:
            self.faults.clear()

    def calls(self, method: str | None = None, path: str | None = None) -> list[RecordedRequest]:
        """Recorded requests, optionally of one *method* and with a path ending in regex *path*."""
        ending = re.compile(f"(?:{path})$") if path is not None else None
        with self._lock:
            found = list(self.requests)
        return [
            r
            for r in found
            if (method is None or r.method == method)
            and (ending is None or ending.search(r.path) is not None)
        ]

    def reset_log(self) -> None:
        """Forget the recorded requests (the fake's state is kept)."""
        with self._lock:
            self.requests.clear()

    # -- plumbing -------------------------------------------------------------------------

    def _http_take_fault(self, method: str, path: str) -> Fault | None:
        with self._lock:
            for fault in self.faults:
                if fault.times != 0 and fault.pattern.search(f"{method} {path}"):
                    if fault.times is not None:
                        fault.times -= 1
                    return fault
        return None

    def _http_serve(self, handler: BaseHTTPRequestHandler) -> None:
        split = urlsplit(handler.path)
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        body: Any = None
        if raw:
            try:
                body = json.loads(raw)
            except ValueError:
                body = raw.decode("utf-8", "replace")
        request = self.request_type(
            method=handler.command,
            path=unquote(split.path),
            query={k: v[-1] for k, v in parse_qs(split.query, keep_blank_values=True).items()},
            headers={k.lower(): v for k, v in handler.headers.items()},
            body=body,
            raw_body=raw,
        )
        with self._lock:
            self.requests.append(request)
        reply = self._http_answer(request)
        if reply is not None:
            self._http_send(handler, reply)
        else:
            handler.close_connection = True

    def _http_answer(self, request: RecordedRequest) -> Reply | None:
        fault = self._http_take_fault(request.method, request.path)
        if fault is not None:
            if fault.delay:
                time.sleep(fault.delay)
            if fault.drop:
                return None
            if fault.raw_body is not None:
                return Reply(fault.status or 200, fault.raw_body)
            if fault.status is not None:
                return Reply(fault.status, self.error_body(fault.status, "injected fault"))
        try:
            answer = self.dispatch(request)
        except HTTPError as exc:
            body = exc.body if exc.body is not None else self.error_body(exc.status, exc.message)
            return Reply(exc.status, body)
        except Exception as exc:
            logger.exception("%s crashed on %s %s", self.name, request.method, request.path)
            return Reply(500, self.error_body(500, f"{self.name} crashed: {exc!r}"))
        if isinstance(answer, Reply):
            return None if answer.drop else answer
        status, payload = answer
        return Reply(status, payload)

    @staticmethod
    def _http_send(handler: BaseHTTPRequestHandler, reply: Reply) -> None:
        if reply.body is None:
            data = b""
        elif isinstance(reply.body, bytes):
            data = reply.body
        else:
            data = json.dumps(reply.body).encode("utf-8")
        try:
            handler.send_response(reply.status)
            handler.send_header("Content-Type", reply.content_type)
            for name, value in reply.headers.items():
                handler.send_header(name, value)
            if reply.stream is None:
                handler.send_header("Content-Length", str(len(data)))
                handler.end_headers()
                handler.wfile.write(data)
                return
            handler.send_header("Connection", "close")
            handler.end_headers()
            handler.close_connection = True
            for chunk in reply.stream:
                handler.wfile.write(chunk)
                handler.wfile.flush()
        except OSError:  # the client hung up (a timeout): nothing to answer
            handler.close_connection = True
