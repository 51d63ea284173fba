"""A stateful fake of the Mem0 platform HTTP API on loopback, for the real ``mem0ai`` SDK.

It speaks the paths and JSON that ``mem0.MemoryClient`` 2.2 sends (``GET
/v1/ping/``, ``POST /v3/memories/add/``, ``POST /v3/memories/search/``, ``POST
/v3/memories/``, ``GET/PUT/DELETE /v1/memories/{id}/``), checks the ``Token``
auth header, stores what is added and answers searches from it by word overlap,
so tests prove round trips. Every request is recorded; faults (HTTP errors,
delays, malformed JSON, dropped connections) can be injected per path.
"""

from __future__ import annotations

import json
import math
import re
import socket
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

__all__ = ["FakeMem0Platform", "Fault", "RecordedRequest"]

ENTITY_KEYS = ("user_id", "agent_id", "app_id", "run_id")
_WORD = re.compile(r"\w+")
_STOPWORDS = frozenset({"a", "an", "the", "is", "are", "do", "i", "my", "me", "of", "to", "in"})
_MEMORY_PATH = re.compile(r"^/v1/memories/([^/]+)/$")


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the fake received it (header names lower-cased)."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any


@dataclass(frozen=True)
class Fault:
    """What to do instead of answering normally.

    ``status`` answers with that HTTP status (and ``body``); ``malformed`` answers
    200 with broken JSON; ``drop`` closes the connection without a reply;
    ``delay`` sleeps first (then answers normally unless another field is set).
    ``path`` limits the fault to requests whose path starts with it.
    """

    status: int | None = None
    body: str | None = None
    delay: float = 0.0
    malformed: bool = False
    drop: bool = False
    path: str | None = None


def _tokens(text: str) -> set[str]:
    return {word for word in _WORD.findall(text.lower()) if word not in _STOPWORDS}


def _now() -> str:
    return datetime.now(UTC).isoformat()


class FakeMem0Platform:
    """The fake platform server. Use as a context manager or call start()/stop()."""

    def __init__(
        self,
        api_key: str = "m0-test-key",
        *,
        org_id: str = "org_fake",
        project_id: str = "proj_fake",
    ) -> None:
        self.api_key = api_key
        self.org_id = org_id
        self.project_id = project_id
        self.memories: dict[str, dict[str, Any]] = {}
        self.latency = 0.0
        """Seconds added before every answer (a remote service, for benchmarks)."""
        self._requests: list[RecordedRequest] = []
        self._faults: list[Fault] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------

    def start(self) -> FakeMem0Platform:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._make_handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="fake-mem0", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeMem0Platform:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        assert self._server is not None, "start() the fake first"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    # -- inspection and control -------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    def requests_to(self, method: str, path_prefix: str) -> list[RecordedRequest]:
        return [r for r in self.requests if r.method == method and r.path.startswith(path_prefix)]

    def clear_requests(self) -> None:
        with self._lock:
            self._requests.clear()

    def inject(self, fault: Fault, times: int = 1) -> None:
        """Apply *fault* to the next *times* matching requests."""
        with self._lock:
            self._faults.extend([fault] * times)

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()

    def seed(self, text: str, *, user_id: str, agent_id: str | None = None, **metadata: Any) -> str:
        """Store a memory directly (as if added earlier); returns its id."""
        with self._lock:
            return self._store(text, {"user_id": user_id, "agent_id": agent_id}, metadata, "user")

    def memories_of(self, user_id: str) -> list[str]:
        with self._lock:
            return [m["memory"] for m in self.memories.values() if m["user_id"] == user_id]

    # -- the API ---------------------------------------------------------------------

    def _take_fault(self, path: str) -> Fault | None:
        with self._lock:
            for index, fault in enumerate(self._faults):
                if fault.path is None or path.startswith(fault.path):
                    return self._faults.pop(index)
        return None

    def _store(
        self, text: str, ids: Mapping[str, Any], metadata: Mapping[str, Any], role: str
    ) -> str:
        memory_id = str(uuid.uuid4())
        stamp = _now()
        self.memories[memory_id] = {
            "id": memory_id,
            "memory": text,
            "user_id": ids.get("user_id"),
            "agent_id": ids.get("agent_id"),
            "run_id": ids.get("run_id"),
            "app_id": ids.get("app_id"),
            "metadata": dict(metadata) or None,
            "categories": [],
            "role": role,
            "created_at": stamp,
            "updated_at": stamp,
        }
        return memory_id

    def route(self, method: str, path: str, query: Mapping[str, str], body: Any) -> tuple[int, Any]:
        """Answer one authenticated request: ``(status, json_body)``."""
        with self._lock:
            if method == "GET" and path == "/v1/ping/":
                return 200, {
                    "status": "ok",
                    "message": "API key is valid",
                    "org_id": self.org_id,
                    "project_id": self.project_id,
                    "user_email": "developer@example.com",
                }
            if method == "POST" and path == "/v3/memories/add/":
                return self._add(body)
            if method == "POST" and path == "/v3/memories/search/":
                return self._search(body)
            if method == "POST" and path == "/v3/memories/":
                return self._list(body, query)
            match = _MEMORY_PATH.match(path)
            if match:
                return self._one(method, match.group(1), body)
        return 404, {"detail": "Not found."}

    def _add(self, body: Any) -> tuple[int, Any]:
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return 400, {"detail": "messages must be a list of {role, content}."}
        filters: dict[str, Any] = body["filters"] if isinstance(body.get("filters"), dict) else {}
        ids = {key: body.get(key) or filters.get(key) for key in ENTITY_KEYS}
        if not any(ids.values()):
            return 400, {"detail": "One of user_id, agent_id, app_id or run_id is required."}
        infer = body.get("infer", True)
        metadata: dict[str, Any] = (
            body["metadata"] if isinstance(body.get("metadata"), dict) else {}
        )
        for message in body["messages"]:
            if not isinstance(message, dict) or not isinstance(message.get("content"), str):
                return 400, {"detail": "Each message needs a string content."}
            role = message.get("role", "user")
            # infer=True stands in for extraction: the user's statements become the facts.
            if role == "system" or (infer and role != "user") or not message["content"].strip():
                continue
            self._store(message["content"], ids, metadata, role)
        return 200, {
            "results": [
                {
                    "message": "Memory processing has been queued for background execution",
                    "status": "PENDING",
                    "event_id": str(uuid.uuid4()),
                }
            ]
        }

    def _matches(self, memory: Mapping[str, Any], filters: Mapping[str, Any]) -> bool:
        for key, value in filters.items():
            if key == "AND" and isinstance(value, list):
                if not all(self._matches(memory, part) for part in value):
                    return False
            elif key == "OR" and isinstance(value, list):
                if not any(self._matches(memory, part) for part in value):
                    return False
            elif key in ENTITY_KEYS and value not in (None, "*") and memory.get(key) != value:
                return False
        return True

    def _scope(self, body: Any) -> tuple[dict[str, Any] | None, tuple[int, Any] | None]:
        if not isinstance(body, dict):
            return None, (400, {"detail": "A JSON object body is required."})
        stray = [key for key in ENTITY_KEYS if key in body]
        if stray:
            return None, (400, {"detail": f"Pass {', '.join(stray)} inside filters."})
        filters = body.get("filters")
        if not isinstance(filters, dict) or not _has_entity(filters):
            return None, (
                400,
                {"detail": "filters must contain user_id, agent_id, app_id or run_id."},
            )
        return filters, None

    def _search(self, body: Any) -> tuple[int, Any]:
        filters, error = self._scope(body)
        if error is not None or filters is None:
            return error or (400, {})
        query = body.get("query")
        if not isinstance(query, str) or not query.strip():
            return 400, {"detail": "query is required."}
        top_k = int(body.get("top_k") or 10)
        threshold = float(body.get("threshold") or 0.0)
        wanted = _tokens(query)
        scored = []
        for memory in self.memories.values():
            if not self._matches(memory, filters):
                continue
            words = _tokens(memory["memory"])
            overlap = len(wanted & words)
            if not overlap:
                continue
            score = overlap / math.sqrt(len(wanted) * len(words))
            if score >= threshold:
                scored.append({**memory, "score": round(score, 6)})
        scored.sort(key=lambda item: item["score"], reverse=True)
        return 200, {"results": scored[:top_k]}

    def _list(self, body: Any, query: Mapping[str, str]) -> tuple[int, Any]:
        filters, error = self._scope(body)
        if error is not None or filters is None:
            return error or (400, {})
        found = [dict(m) for m in self.memories.values() if self._matches(m, filters)]
        page = max(1, int(query.get("page", 1)))
        size = max(1, int(query.get("page_size", 100)))
        chunk = found[(page - 1) * size : page * size]
        more = page * size < len(found)
        return 200, {
            "count": len(found),
            "next": f"?page={page + 1}&page_size={size}" if more else None,
            "previous": f"?page={page - 1}&page_size={size}" if page > 1 else None,
            "results": chunk,
        }

    def _one(self, method: str, memory_id: str, body: Any) -> tuple[int, Any]:
        memory = self.memories.get(memory_id)
        if memory is None:
            return 404, {"detail": "Memory not found."}
        if method == "GET":
            return 200, dict(memory)
        if method == "PUT":
            if not isinstance(body, dict) or not ({"text", "metadata"} & set(body)):
                return 400, {"detail": "Provide text or metadata."}
            if isinstance(body.get("text"), str):
                memory["memory"] = body["text"]
            if isinstance(body.get("metadata"), dict):
                memory["metadata"] = body["metadata"]
            memory["updated_at"] = _now()
            return 200, dict(memory)
        if method == "DELETE":
            del self.memories[memory_id]
            return 200, {"message": "Memory deleted successfully!"}
        return 405, {"detail": "Method not allowed."}

    # -- HTTP plumbing -----------------------------------------------------------------

    def _make_handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                # Answer in one segment: no Nagle / delayed-ACK stall on keep-alive.
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self._handle("GET")

            def do_POST(self) -> None:
                self._handle("POST")

            def do_PUT(self) -> None:
                self._handle("PUT")

            def do_DELETE(self) -> None:
                self._handle("DELETE")

            def _handle(self, method: str) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                headers = {name.lower(): value for name, value in self.headers.items()}
                with fake._lock:
                    fake._requests.append(
                        RecordedRequest(
                            method, parts.path, dict(parse_qsl(parts.query)), headers, body
                        )
                    )
                if fake.latency:
                    time.sleep(fake.latency)
                fault = fake._take_fault(parts.path)
                if fault is not None:
                    if fault.delay:
                        time.sleep(fault.delay)
                    if fault.drop:
                        self.close_connection = True
                        return
                    if fault.malformed:
                        self._send(200, b'{"results": [{"id": ')
                        return
                    if fault.status is not None:
                        text = fault.body or json.dumps({"detail": f"injected {fault.status}"})
                        self._send(fault.status, text.encode())
                        return
                if headers.get("authorization") != f"Token {fake.api_key}":
                    self._send(401, json.dumps({"detail": "Invalid API key"}).encode())
                    return
                status, payload = fake.route(method, parts.path, dict(parse_qsl(parts.query)), body)
                self._send(status, json.dumps(payload).encode())

            def _send(self, status: int, data: bytes) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the client gave up (timeout test)
                    self.close_connection = True

        return Handler


def _has_entity(filters: Mapping[str, Any]) -> bool:
    for key, value in filters.items():
        if key in ENTITY_KEYS and value:
            return True
        if (
            key in ("AND", "OR")
            and isinstance(value, list)
            and any(isinstance(part, Mapping) and _has_entity(part) for part in value)
        ):
            return True
    return False
