"""Broken variants of :class:`DictProvider`, each breaking one promise of the contract.

The conformance-suite tests check that the suite catches each one and says what to fix.
"""

from __future__ import annotations

import json
import socket
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from dict_provider import DictProvider, _words

from hermes_core import sanitize_context

__all__ = [
    "BlockingPrefetchProvider",
    "DictProvider",
    "DictToolResultProvider",
    "EchoingProvider",
    "HangingSyncProvider",
    "LeakyUsersProvider",
    "LegacyWriteProvider",
    "MalformedSchemaProvider",
    "NetworkCheckProvider",
    "RaisingAvailabilityProvider",
    "RaisingToolProvider",
    "ThreadBoundSqliteProvider",
    "UnlockedFileProvider",
]

_RELEASE = threading.Event()


class BlockingPrefetchProvider(DictProvider):
    """Breaks the prefetch budget: prefetch waits on the backend with no timeout."""

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        _RELEASE.wait()
        return ""


class LegacyWriteProvider(DictProvider):
    """Valid: the first ``on_memory_write`` of Hermes, three arguments and no metadata."""

    def on_memory_write(self, action: str, target: str, content: str) -> None:  # type: ignore[override]
        if action == "add":
            self._add(content)

    def on_pre_compress(self, messages: list[dict[str, Any]]) -> None:  # type: ignore[override]
        return None  # nothing to keep, as many Hermes plugins say it


class MalformedSchemaProvider(DictProvider):
    """Breaks strict backends: a bad tool name, top-level anyOf, no description."""

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return [
            {
                "name": "dict search!",
                "parameters": {"anyOf": [{"type": "object"}, {"type": "string"}]},
            }
        ]


class LeakyUsersProvider(DictProvider):
    """Breaks user isolation: every user reads and writes one shared pool."""

    user_scoped = False


class EchoingProvider(DictProvider):
    """Breaks fencing: stores recalled <memory-context> blocks as new memory."""

    sanitize = False


class NetworkCheckProvider(DictProvider):
    """Breaks is_available: it pings a server to decide."""

    def is_available(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", 9), timeout=0.2):
                return True
        except OSError:
            return True


class RaisingToolProvider(DictProvider):
    """Breaks handle_tool_call: bad arguments raise instead of answering JSON."""

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        return json.dumps({"results": self._search(args["query"].lower())})


class DictToolResultProvider(DictProvider):
    """Breaks handle_tool_call: returns a dict instead of a JSON string."""

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> Any:
        return {"results": []}


class ArrayToolResultProvider(DictProvider):
    """Conforms: its search answers a JSON array, as memory-wire's does (Hermes passes it on)."""

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        answer = json.loads(super().handle_tool_call(tool_name, args, **kwargs))
        return json.dumps(answer if "error" in answer else answer["results"])


class RaisingAvailabilityProvider(DictProvider):
    """Breaks is_available: once initialized, it raises instead of answering False."""

    def is_available(self) -> bool:
        if self.session:
            raise RuntimeError("NOTES_URL is not set")
        return True


class HangingSyncProvider(DictProvider):
    """Breaks sync_turn: it waits on a backend that never answers, with no timeout."""

    def sync_turn(
        self,
        user_content: str,
        assistant_content: str,
        *,
        session_id: str = "",
        messages: list[dict[str, Any]] | None = None,
    ) -> None:
        _RELEASE.wait()


class ThreadBoundSqliteProvider(DictProvider):
    """Breaks thread safety: one SQLite connection, usable only by the thread that opened it."""

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        super().initialize(session_id, **kwargs)
        self.db = sqlite3.connect(Path(kwargs["hermes_home"]) / "notes.db")
        self.db.execute("CREATE TABLE IF NOT EXISTS notes (text TEXT)")

    def _add(self, text: str) -> None:
        self.db.execute("INSERT INTO notes VALUES (?)", (sanitize_context(text),))

    def _search(self, query: str) -> list[str]:
        wanted = _words(query)
        rows = self.db.execute("SELECT text FROM notes").fetchall()
        return [text for (text,) in rows if wanted & _words(text)]


class UnlockedFileProvider(DictProvider):
    """Breaks thread safety: rewrites its JSON file in place while readers parse it."""

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        super().initialize(session_id, **kwargs)
        self.path = Path(kwargs["hermes_home"]) / "notes.json"

    def _load(self) -> list[str]:
        return json.loads(self.path.read_text(encoding="utf-8")) if self.path.exists() else []

    def _add(self, text: str) -> None:
        notes = self._load()
        notes.append(sanitize_context(text))
        with self.path.open("w", encoding="utf-8") as file:  # truncated first: readers see ""
            file.flush()
            time.sleep(0.005)  # a slow disk widens the window every real store has
            file.write(json.dumps(notes))

    def _search(self, query: str) -> list[str]:
        wanted = _words(query)
        return [text for text in self._load() if wanted & _words(text)]
