"""Courier — a memory provider that does its work on background threads.

Writes go through a queue drained by a writer thread; ``queue_prefetch`` warms
the next turn's recall on a short-lived thread. Both threads are created with
``spawn_context_thread`` so they run in a copy of the caller's contextvars
(the session tag below travels with them).
"""

from __future__ import annotations

import contextvars
import json
import logging
import queue
import threading
from typing import Any, Dict, List, Optional

from agent.memory_provider import MemoryProvider, spawn_context_thread
from tools.registry import tool_error

logger = logging.getLogger(__name__)

_SESSION_TAG: contextvars.ContextVar[str] = contextvars.ContextVar("courier_session", default="")
_STOP = object()


class CourierMemoryProvider(MemoryProvider):
    def __init__(self):
        self._queue: "queue.Queue[Any]" = queue.Queue()
        self._lock = threading.Lock()
        self._entries: List[Dict[str, str]] = []
        self._writer: Optional[threading.Thread] = None
        self._prefetch_thread: Optional[threading.Thread] = None
        self._prefetch_cache: Dict[str, str] = {}
        self.threads_started: List[str] = []

    @property
    def name(self) -> str:
        return "courier"

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id: str, **kwargs) -> None:
        _SESSION_TAG.set(session_id)
        self._writer = spawn_context_thread(self._drain, name="courier-writer")
        self._writer.start()
        self.threads_started.append(self._writer.name)

    def _drain(self) -> None:
        session = _SESSION_TAG.get()  # inherited from initialize() through the context copy
        while True:
            item = self._queue.get()
            try:
                if item is _STOP:
                    return
                with self._lock:
                    self._entries.append({"text": item, "session": session})
            finally:
                self._queue.task_done()

    def _search(self, query: str) -> List[str]:
        words = {w.strip("?.,!").lower() for w in query.split() if len(w) > 3}
        with self._lock:
            return [e["text"] for e in self._entries
                    if words & {w.strip("?.,!").lower() for w in e["text"].split()}]

    def system_prompt_block(self) -> str:
        return "# Courier memory\nRecall arrives in context; courier_lookup searches on demand."

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        def warm() -> None:
            self._queue.join()  # let pending writes land first
            hits = self._search(query)
            with self._lock:
                self._prefetch_cache[query] = "\n".join(f"- {h}" for h in hits)

        if self._prefetch_thread and self._prefetch_thread.is_alive():
            self._prefetch_thread.join(timeout=3.0)
        self._prefetch_thread = spawn_context_thread(warm, name="courier-prefetch")
        self._prefetch_thread.start()
        self.threads_started.append(self._prefetch_thread.name)

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        if self._prefetch_thread and self._prefetch_thread.is_alive():
            self._prefetch_thread.join(timeout=3.0)
        with self._lock:
            cached = self._prefetch_cache.pop(query, None)
        if cached is not None:
            return cached
        self._queue.join()
        return "\n".join(f"- {h}" for h in self._search(query))

    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "",
                  messages: List[Dict[str, Any]] | None = None) -> None:
        self._queue.put(user_content)

    def get_tool_schemas(self) -> List[Dict[str, Any]]:
        return [{"name": "courier_lookup", "description": "Look up delivered notes.",
                 "parameters": {"type": "object", "properties": {"query": {"type": "string"}},
                                "required": ["query"]}}]

    def handle_tool_call(self, tool_name: str, args: Dict[str, Any], **kwargs) -> str:
        if tool_name != "courier_lookup":
            return tool_error(f"Unknown tool: {tool_name}")
        self._queue.join()
        return json.dumps({"results": self._search(args.get("query", ""))})

    def on_memory_write(self, action: str, target: str, content: str,
                        metadata: Dict[str, Any] | None = None) -> None:
        if action in ("add", "replace"):
            self._queue.put(content)

    def sessions_seen(self) -> List[str]:
        with self._lock:
            return sorted({e["session"] for e in self._entries})

    def shutdown(self) -> None:
        if self._writer is not None:
            self._queue.put(_STOP)
            self._writer.join(timeout=5.0)
        if self._prefetch_thread is not None:
            self._prefetch_thread.join(timeout=5.0)


def register(ctx) -> None:
    ctx.register_memory_provider(CourierMemoryProvider())
