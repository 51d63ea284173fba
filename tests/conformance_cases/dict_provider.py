"""A small, correct memory provider for testing the conformance suite and its CLI.

Notes live in process memory, one list per HERMES_HOME shared by every
instance (so a second instance sees the first one's writes), kept per user.
It is also copied as a plugin folder by the CLI tests, so it imports only
hermes_core and the standard library.
"""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any

from hermes_core import MemoryProvider, sanitize_context
from hermes_core.config import get_hermes_home

_STORES: dict[str, list[dict[str, str]]] = {}
_STORES_LOCK = threading.Lock()
_WORD = re.compile(r"[^\W_]+")


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) > 3}


class DictProvider(MemoryProvider):
    """A correct provider: notes per user in process memory, shared per HERMES_HOME."""

    conformance_capabilities = frozenset(
        {
            "tools",
            "prefetch",
            "sync",
            "recall",
            "multi_user",
            "cross_session",
            "persistence",
            "mirror",
            "session_end_extraction",
        }
    )
    user_scoped = True
    sanitize = True

    def __init__(self) -> None:
        self.notes: list[dict[str, str]] = []
        self.user = "default"
        self.session = ""
        self.writes = False

    @property
    def name(self) -> str:
        return "dict-notes"

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        home = str(Path(kwargs.get("hermes_home") or get_hermes_home()).resolve())
        with _STORES_LOCK:
            self.notes = _STORES.setdefault(home, [])
        self.user = str(kwargs.get("user_id") or "default") if self.user_scoped else "shared"
        self.session = session_id
        self.writes = kwargs.get("agent_context", "primary") == "primary"

    def _add(self, text: str) -> None:
        text = (sanitize_context(text) if self.sanitize else text).strip()
        if not self.writes or not text:
            return
        with _STORES_LOCK:
            if not any(n["user"] == self.user and n["text"] == text for n in self.notes):
                self.notes.append({"user": self.user, "text": text})

    def _remove(self, text: str) -> None:
        with _STORES_LOCK:
            self.notes[:] = [
                n for n in self.notes if not (n["user"] == self.user and n["text"] == text)
            ]

    def _search(self, query: str) -> list[str]:
        wanted = _words(query)
        with _STORES_LOCK:
            return [
                n["text"]
                for n in self.notes
                if n["user"] == self.user and wanted & _words(n["text"])
            ]

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        return "\n".join(f"- {text}" for text in self._search(query))

    def sync_turn(
        self,
        user_content: str,
        assistant_content: str,
        *,
        session_id: str = "",
        messages: list[dict[str, Any]] | None = None,
    ) -> None:
        self._add(user_content)

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        for message in messages:
            if message.get("role") == "user":
                self._add(str(message.get("content") or ""))

    def on_memory_write(
        self, action: str, target: str, content: str, metadata: dict[str, Any] | None = None
    ) -> None:
        previous = str((metadata or {}).get("previous_content") or "")
        if action in ("replace", "remove") and previous:
            self._remove(previous)
        if action in ("add", "replace"):
            self._add(content)

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return [
            {
                "name": "dict_search",
                "description": "Search the notes.",
                "parameters": {
                    "type": "object",
                    "properties": {"query": {"type": "string"}},
                    "required": ["query"],
                },
            }
        ]

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        if tool_name != "dict_search":
            return json.dumps({"error": f"unknown tool {tool_name}"})
        query = args.get("query")
        if not isinstance(query, str) or not query:
            return json.dumps({"error": "'query' must be a non-empty string"})
        return json.dumps({"results": self._search(query)})
