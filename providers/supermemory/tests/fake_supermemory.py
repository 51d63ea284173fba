"""A stateful local fake of Supermemory's 5.x HTTP API, served on 127.0.0.1.

It speaks the paths and JSON of the namespace API that the supermemory 5.x SDK
calls (``/ns/{namespace}/document``, ``/search``, ``/profile``, ``/memories``,
``/memories/semantic``), checks ``Authorization: Bearer <key>``, stores
documents per namespace and "extracts" one memory per sentence of each
document, so searches and profiles answer from what was written.

Faults for reliability tests: scripted HTTP errors, malformed JSON, delays
(longer than the client timeout gives a timeout), a "down" switch answering
503, and ``stop()``/``start()`` on the same port for connection refused.
Every request is recorded (method, path, headers, JSON body).
"""

from __future__ import annotations

import itertools
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from hermes_core.testing.http_fake import FakeHTTPServer, HTTPError, RecordedRequest, Reply

__all__ = ["FakeSupermemory", "RecordedRequest", "StoredDocument", "StoredMemory"]

_WORD = re.compile(r"[a-z0-9]+")
_STOPWORDS = frozenset(
    (
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "do",
        "does",
        "did",
        "for",
        "from",
        "has",
        "have",
        "i",
        "in",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "so",
        "that",
        "the",
        "their",
        "them",
        "they",
        "this",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "you",
        "your",
        "user",
        "assistant",
    )
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_ROLE_PREFIX = re.compile(r"^(user|assistant)\s*:\s*", re.IGNORECASE)


def _tokens(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) > 1 and w not in _STOPWORDS}


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class StoredMemory:
    """A memory the fake extracted from a document."""

    id: str
    text: str
    doc_id: str
    metadata: dict[str, Any]
    static: bool
    created_at: str
    forgotten: bool = False


@dataclass
class StoredDocument:
    """A document as stored in one namespace."""

    id: str
    content: str
    metadata: dict[str, Any]
    created_at: str
    updated_at: str
    memory_ids: list[str] = field(default_factory=list)


@dataclass
class Namespace:
    """Everything stored under one namespace."""

    documents: dict[str, StoredDocument] = field(default_factory=dict)
    memories: dict[str, StoredMemory] = field(default_factory=dict)

    def live_memories(self) -> list[StoredMemory]:
        return [m for m in self.memories.values() if not m.forgotten]


class _HTTPError(HTTPError):
    """An error answer in Supermemory's shape: ``{"error": ..., "details": ...}``."""

    def __init__(self, status: int, error: str, details: str | None = None) -> None:
        body = {"error": error} if details is None else {"error": error, "details": details}
        super().__init__(status, error, body=body)


class FakeSupermemory(FakeHTTPServer):
    """The fake service; use as a context manager or call ``start()``/``stop()``."""

    name = "fake-supermemory"

    def __init__(self, api_key: str = "sm_test_key", *, port: int = 0) -> None:
        super().__init__(port=port)
        self.api_key = api_key
        self.namespaces: dict[str, Namespace] = {}
        self.down = False
        self._ids = itertools.count(1)
        for method, rest, action in (
            ("POST", "document", self._add),
            ("DELETE", "document", self._delete_documents),
            ("POST", "search", self._search),
            ("POST", "profile", lambda ns, body: self._profile(ns)),
            ("DELETE", "memories", self._forget),
            ("DELETE", "memories/semantic", self._forget_matching),
        ):
            self.route(method, rf"/ns/([^/]+)/{rest}", self._in_namespace(action))

    # ------------------------------------------------------------ fault injection

    def fail_next(self, count: int = 1, *, status: int = 500, path: str = "") -> None:
        """Answer the next *count* requests (whose path contains *path*) with *status*."""
        self.fail(re.escape(path), times=count, status=status)

    def malformed_next(self, count: int = 1, *, path: str = "") -> None:
        """Answer the next *count* requests with a 200 whose body is not JSON."""
        self.fail(
            re.escape(path), times=count, status=200, raw_body=b'{"results": [ this is not json'
        )

    def delay_next(self, count: int = 1, *, seconds: float, path: str = "") -> None:
        """Hold the next *count* requests for *seconds* before answering normally."""
        self.fail(re.escape(path), times=count, status=None, delay=seconds)

    # ------------------------------------------------------------ inspection helpers

    def memories(self, namespace: str) -> list[str]:
        """Texts of the live memories of *namespace*."""
        with self._lock:
            ns = self.namespaces.get(namespace)
            return [m.text for m in ns.live_memories()] if ns else []

    def documents(self, namespace: str) -> dict[str, StoredDocument]:
        with self._lock:
            ns = self.namespaces.get(namespace)
            return dict(ns.documents) if ns else {}

    # ------------------------------------------------------------ HTTP

    def before_route(self, request: RecordedRequest) -> Reply | None:
        if self.down:
            return Reply(503, {"error": "Service unavailable"})
        if request.headers.get("authorization") != f"Bearer {self.api_key}":
            return Reply(401, {"error": "Unauthorized", "details": "Missing or invalid API key"})
        return None

    def _in_namespace(
        self, action: Callable[[Namespace, dict[str, Any]], dict[str, Any]]
    ) -> Callable[[RecordedRequest, str], tuple[int, Any]]:
        """A route on ``/ns/{namespace}/...`` taking a JSON object body."""

        def handle(request: RecordedRequest, namespace: str) -> tuple[int, Any]:
            if not re.fullmatch(r"[A-Za-z0-9_-]{1,100}", namespace):
                raise _HTTPError(400, "Invalid namespace", namespace)
            if not isinstance(request.body, dict):
                raise _HTTPError(400, "Request body must be a JSON object")
            with self._lock:
                return 200, action(self.namespaces.setdefault(namespace, Namespace()), request.body)

        return handle

    # ------------------------------------------------------------ endpoints

    def _extract(self, ns: Namespace, doc: StoredDocument, text: str) -> None:
        static = doc.metadata.get("target") == "user" or doc.metadata.get("category") in (
            "preference",
        )
        for sentence in _SENTENCE.split(text):
            cleaned = _ROLE_PREFIX.sub("", sentence.strip()).strip()
            if len(cleaned) < 3:
                continue
            memory = StoredMemory(
                id=f"mem_{next(self._ids)}",
                text=cleaned,
                doc_id=doc.id,
                metadata=dict(doc.metadata),
                static=bool(static),
                created_at=_now(),
            )
            ns.memories[memory.id] = memory
            doc.memory_ids.append(memory.id)

    def _add(self, ns: Namespace, body: dict[str, Any]) -> dict[str, Any]:
        content = body.get("content")
        if not isinstance(content, str) or not content.strip():
            raise _HTTPError(400, "Validation failed", "content must be a non-empty string")
        metadata = body.get("metadata") or {}
        if not isinstance(metadata, dict):
            raise _HTTPError(400, "Validation failed", "metadata must be an object")
        doc_id = body.get("id") or f"doc_{next(self._ids)}"
        existing = ns.documents.get(doc_id)
        if existing is not None:
            if content.strip() in existing.content:
                return {"id": doc_id, "status": "done"}  # unchanged duplicate
            existing.content += "\n\n" + content
            existing.metadata.update(metadata)
            existing.updated_at = _now()
            self._extract(ns, existing, content)
            return {"id": doc_id, "status": "queued"}
        stamp = _now()
        doc = StoredDocument(doc_id, content, dict(metadata), stamp, stamp)
        ns.documents[doc_id] = doc
        self._extract(ns, doc, content)
        return {"id": doc_id, "status": "queued"}

    def _delete_documents(self, ns: Namespace, body: dict[str, Any]) -> dict[str, Any]:
        ids = body.get("ids")
        if not isinstance(ids, list) or not ids:
            raise _HTTPError(400, "Validation failed", "ids must be a non-empty array")
        count, errors = 0, []
        for doc_id in ids:
            doc = ns.documents.pop(doc_id, None)
            if doc is None:
                errors.append({"id": doc_id, "error": "Document not found"})
                continue
            for memory_id in doc.memory_ids:
                ns.memories.pop(memory_id, None)
            count += 1
        return {"count": count, "errors": errors}

    def _search(self, ns: Namespace, body: dict[str, Any]) -> dict[str, Any]:
        started = time.perf_counter()
        query = body.get("query")
        if not isinstance(query, str) or not query.strip():
            raise _HTTPError(400, "Validation failed", "query must be a non-empty string")
        limit = body.get("limit", 10)
        if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= 100:
            raise _HTTPError(400, "Validation failed", "limit must be an integer 1-100")
        mode = body.get("searchMode", "hybrid")
        if mode not in ("hybrid", "memories", "chunks"):
            raise _HTTPError(400, "Validation failed", f"unknown searchMode {mode!r}")
        wanted = _tokens(query)
        scored: list[tuple[float, dict[str, Any]]] = []
        if wanted and mode in ("hybrid", "memories"):
            for memory in ns.live_memories():
                overlap = len(wanted & _tokens(memory.text))
                if overlap:
                    scored.append((overlap / len(wanted), self._memory_result(memory)))
        if wanted and mode in ("hybrid", "chunks"):
            for doc in ns.documents.values():
                overlap = len(wanted & _tokens(doc.content))
                if overlap:
                    scored.append((overlap / len(wanted) * 0.9, self._chunk_result(doc)))
        scored.sort(key=lambda pair: -pair[0])
        results = []
        for score, result in scored[:limit]:
            result["similarity"] = round(min(1.0, score), 4)
            results.append(result)
        elapsed = (time.perf_counter() - started) * 1000
        return {"results": results, "searchTime": round(elapsed, 3)}

    @staticmethod
    def _memory_result(memory: StoredMemory) -> dict[str, Any]:
        return {
            "id": memory.id,
            "memory": memory.text,
            "metadata": memory.metadata,
            "isLatest": True,
            "isInference": False,
            "system": {"createdAt": memory.created_at, "updatedAt": memory.created_at},
        }

    @staticmethod
    def _chunk_result(doc: StoredDocument) -> dict[str, Any]:
        return {
            "id": f"chunk_{doc.id}",
            "chunk": doc.content,
            "metadata": doc.metadata,
            "isLatest": True,
            "isInference": False,
            "system": {"createdAt": doc.created_at, "updatedAt": doc.updated_at},
        }

    @staticmethod
    def _profile(ns: Namespace) -> dict[str, Any]:
        live = ns.live_memories()
        static = [{"id": m.id, "memory": m.text} for m in live if m.static]
        dynamic = [{"id": m.id, "memory": m.text} for m in live if not m.static][-10:]
        return {"profile": {"static": static, "dynamic": dynamic, "buckets": {}}}

    @staticmethod
    def _forget(ns: Namespace, body: dict[str, Any]) -> dict[str, Any]:
        ids = body.get("ids")
        if not isinstance(ids, list) or not ids:
            raise _HTTPError(400, "Validation failed", "ids must be a non-empty array")
        errors, matches = [], []
        for memory_id in ids:
            memory = ns.memories.get(memory_id)
            if memory is None or memory.forgotten:
                errors.append({"id": memory_id, "error": "Memory not found"})
                continue
            memory.forgotten = True
            matches.append({"id": memory.id, "memory": memory.text})
        return {"count": len(matches), "errors": errors, "matches": matches}

    @staticmethod
    def _forget_matching(ns: Namespace, body: dict[str, Any]) -> dict[str, Any]:
        query = body.get("query")
        if not isinstance(query, str) or not query.strip() or "dryRun" not in body:
            raise _HTTPError(400, "Validation failed", "query and dryRun are required")
        wanted = _tokens(query)
        matches = [m for m in ns.live_memories() if wanted and wanted <= _tokens(m.text)]
        if not body["dryRun"]:
            for memory in matches:
                memory.forgotten = True
        return {
            "count": len(matches),
            "errors": [],
            "matches": [{"id": m.id, "memory": m.text} for m in matches],
        }
