"""A stateful fake of the Mem0 platform HTTP API on loopback, for the real ``mem0ai`` SDK.

It speaks the paths and JSON that ``mem0.MemoryClient`` 2.2 sends (``GET
/v1/ping/``, ``POST /v3/memories/add/``, ``POST /v3/memories/search/``, ``POST
/v3/memories/``, ``GET/PUT/DELETE /v1/memories/{id}/``), checks the ``Token``
auth header, stores what is added and answers searches from it by word overlap,
so tests prove round trips. Built on :class:`hermes_core.testing.http_fake.FakeHTTPServer`:
every request is recorded (``requests``, ``calls``) and faults (HTTP errors,
delays, malformed bodies, dropped connections) are injected per ``"METHOD /path"``
regex with ``fail``.
"""

from __future__ import annotations

import math
import re
import time
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from hermes_core.testing.http_fake import (
    FakeHTTPServer,
    HTTPError,
    RecordedRequest,
    Reply,
    RouteHandler,
)

__all__ = ["FakeMem0Platform", "RecordedRequest"]

ENTITY_KEYS = ("user_id", "agent_id", "app_id", "run_id")
_WORD = re.compile(r"\w+")
_STOPWORDS = frozenset({"a", "an", "the", "is", "are", "do", "i", "my", "me", "of", "to", "in"})
_MEMORY_PATH = r"/v1/memories/([^/]+)/"


def _tokens(text: str) -> set[str]:
    return {word for word in _WORD.findall(text.lower()) if word not in _STOPWORDS}


def _now() -> str:
    return datetime.now(UTC).isoformat()


class FakeMem0Platform(FakeHTTPServer):
    """The fake platform server. Use as a context manager or call start()/stop()."""

    name = "fake-mem0"

    def __init__(
        self,
        api_key: str = "m0-test-key",
        *,
        org_id: str = "org_fake",
        project_id: str = "proj_fake",
    ) -> None:
        super().__init__()
        self.api_key = api_key
        self.org_id = org_id
        self.project_id = project_id
        self.memories: dict[str, dict[str, Any]] = {}
        self.latency = 0.0
        """Seconds added before every routed answer (a remote service, for benchmarks)."""
        self.rate_limited = 0
        """How many of the next requests answer 429 (with ``Retry-After: retry_after``)."""
        self.retry_after = 30
        for method, pattern, handler in (
            ("GET", "/v1/ping/", self._ping),
            ("POST", "/v3/memories/add/", self._add),
            ("POST", "/v3/memories/search/", self._search),
            ("POST", "/v3/memories/", self._list),
            ("GET", _MEMORY_PATH, self._get),
            ("PUT", _MEMORY_PATH, self._update),
            ("DELETE", _MEMORY_PATH, self._delete),
        ):
            self.route(method, pattern, self._locked(handler))

    # -- state ---------------------------------------------------------------------

    def seed(self, text: str, *, user_id: str, agent_id: str | None = None, **metadata: Any) -> str:
        """Store a memory directly (as if added earlier); returns its id."""
        with self._lock:
            return self._store(text, {"user_id": user_id, "agent_id": agent_id}, metadata, "user")

    def memories_of(self, user_id: str) -> list[str]:
        """Texts of the memories stored for *user_id*, oldest first."""
        with self._lock:
            return [m["memory"] for m in self.memories.values() if m["user_id"] == user_id]

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

    # -- HTTP ----------------------------------------------------------------------

    def before_route(self, request: RecordedRequest) -> Reply | None:
        if self.latency:
            time.sleep(self.latency)
        if request.headers.get("authorization") != f"Token {self.api_key}":
            return Reply(401, {"detail": "Invalid API key"})
        with self._lock:
            if self.rate_limited > 0:
                self.rate_limited -= 1
                return Reply(
                    429,
                    {"detail": "Request was throttled."},
                    headers={"Retry-After": str(self.retry_after)},
                )
        return None

    def error_body(self, status: int, message: str) -> Any:
        return {"detail": message}

    def _locked(self, handler: RouteHandler) -> RouteHandler:
        """*handler* run under the fake's lock: the server threads share the state."""

        def handle(request: RecordedRequest, *groups: str) -> Reply | tuple[int, Any]:
            with self._lock:
                return handler(request, *groups)

        return handle

    # -- the API ---------------------------------------------------------------------

    def _ping(self, request: RecordedRequest) -> tuple[int, Any]:
        return 200, {
            "status": "ok",
            "message": "API key is valid",
            "org_id": self.org_id,
            "project_id": self.project_id,
            "user_email": "developer@example.com",
        }

    def _add(self, request: RecordedRequest) -> tuple[int, Any]:
        body = request.body
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            raise HTTPError(400, "messages must be a list of {role, content}.")
        filters: dict[str, Any] = body["filters"] if isinstance(body.get("filters"), dict) else {}
        ids = {key: body.get(key) or filters.get(key) for key in ENTITY_KEYS}
        if not any(ids.values()):
            raise HTTPError(400, "One of user_id, agent_id, app_id or run_id is required.")
        infer = body.get("infer", True)
        metadata: dict[str, Any] = (
            body["metadata"] if isinstance(body.get("metadata"), dict) else {}
        )
        for message in body["messages"]:
            if not isinstance(message, dict) or not isinstance(message.get("content"), str):
                raise HTTPError(400, "Each message needs a string content.")
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

    @staticmethod
    def _scope(body: Any) -> dict[str, Any]:
        """The ``filters`` of a search or list body, which must name an entity."""
        if not isinstance(body, dict):
            raise HTTPError(400, "A JSON object body is required.")
        stray = [key for key in ENTITY_KEYS if key in body]
        if stray:
            raise HTTPError(400, f"Pass {', '.join(stray)} inside filters.")
        filters = body.get("filters")
        if not isinstance(filters, dict) or not _has_entity(filters):
            raise HTTPError(400, "filters must contain user_id, agent_id, app_id or run_id.")
        return filters

    def _search(self, request: RecordedRequest) -> tuple[int, Any]:
        body = request.body
        filters = self._scope(body)
        query = body.get("query")
        if not isinstance(query, str) or not query.strip():
            raise HTTPError(400, "query is required.")
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

    def _list(self, request: RecordedRequest) -> tuple[int, Any]:
        filters = self._scope(request.body)
        found = [dict(m) for m in self.memories.values() if self._matches(m, filters)]
        page = max(1, int(request.query.get("page", 1)))
        size = max(1, int(request.query.get("page_size", 100)))
        chunk = found[(page - 1) * size : page * size]
        more = page * size < len(found)
        return 200, {
            "count": len(found),
            "next": f"?page={page + 1}&page_size={size}" if more else None,
            "previous": f"?page={page - 1}&page_size={size}" if page > 1 else None,
            "results": chunk,
        }

    def _memory(self, memory_id: str) -> dict[str, Any]:
        memory = self.memories.get(memory_id)
        if memory is None:
            raise HTTPError(404, "Memory not found.")
        return memory

    def _get(self, request: RecordedRequest, memory_id: str) -> tuple[int, Any]:
        return 200, dict(self._memory(memory_id))

    def _update(self, request: RecordedRequest, memory_id: str) -> tuple[int, Any]:
        memory, body = self._memory(memory_id), request.body
        if not isinstance(body, dict) or not ({"text", "metadata"} & set(body)):
            raise HTTPError(400, "Provide text or metadata.")
        if isinstance(body.get("text"), str):
            memory["memory"] = body["text"]
        if isinstance(body.get("metadata"), dict):
            memory["metadata"] = body["metadata"]
        memory["updated_at"] = _now()
        return 200, dict(memory)

    def _delete(self, request: RecordedRequest, memory_id: str) -> tuple[int, Any]:
        self._memory(memory_id)  # 404 when unknown
        del self.memories[memory_id]
        return 200, {"message": "Memory deleted successfully!"}


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
