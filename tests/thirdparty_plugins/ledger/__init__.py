"""Ledger memory plugin — MemoryProvider backed by SQLite FTS5.

Every completed turn and every builtin memory write lands in a local SQLite
ledger; recall is FTS5 keyword search. Data lives in
``$HERMES_HOME/ledger/ledger.db`` (profile-scoped).
"""

from __future__ import annotations

import json
import logging
from typing import Any, Dict, List

from agent.memory_provider import MemoryProvider, RecallStatus, is_trivial_prompt
from tools.registry import tool_error

from . import schemas
from .store import LedgerStore
from .text.normalize import clip

logger = logging.getLogger(__name__)


class LedgerMemoryProvider(MemoryProvider):
    """Full-text ledger of the conversation."""

    def __init__(self):
        self._store: LedgerStore | None = None
        self._session_id = ""
        self._last_hits = 0
        self.session_ends = 0

    @property
    def name(self) -> str:
        return "ledger"

    def is_available(self) -> bool:
        return True  # sqlite3 ships with Python

    def initialize(self, session_id: str, **kwargs) -> None:
        from pathlib import Path

        home = Path(kwargs["hermes_home"])
        self._store = LedgerStore(home / "ledger" / "ledger.db")
        self._session_id = session_id

    def system_prompt_block(self) -> str:
        count = self._store.count() if self._store else 0
        return f"# Ledger memory\nActive. {count} entries on record. Use ledger_search to look things up."

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        if not self._store or is_trivial_prompt(query):
            self._last_hits = 0
            return ""
        rows = self._store.search(query, limit=5)
        self._last_hits = len(rows)
        return "\n".join(f"- {clip(row['text'])}" for row in rows)

    def recall_status(self):
        return RecallStatus("Ledger", self._last_hits) if self._last_hits else None

    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "",
                  messages: List[Dict[str, Any]] | None = None) -> None:
        if self._store:
            self._store.add(user_content, kind="turn", session_id=session_id or self._session_id)

    def get_tool_schemas(self) -> List[Dict[str, Any]]:
        return [schemas.SEARCH, schemas.RECORD]

    def handle_tool_call(self, tool_name: str, args: Dict[str, Any], **kwargs) -> str:
        if not self._store:
            return tool_error("ledger is not initialized")
        if tool_name == "ledger_search":
            rows = self._store.search(str(args.get("query", "")), limit=int(args.get("limit", 10)))
            return json.dumps({"results": [row["text"] for row in rows]})
        if tool_name == "ledger_record":
            entry_id = self._store.add(str(args.get("text", "")), kind="tool", session_id=self._session_id)
            return json.dumps({"recorded": entry_id})
        return tool_error(f"Unknown tool: {tool_name}")

    def on_memory_write(self, action: str, target: str, content: str,
                        metadata: Dict[str, Any] | None = None) -> None:
        if self._store and action in {"add", "replace"} and content:
            self._store.add(content, kind=f"memory:{target}", session_id=(metadata or {}).get("session_id", ""))

    def on_session_end(self, messages: List[Dict[str, Any]]) -> None:
        self.session_ends += 1

    def shutdown(self) -> None:
        if self._store is not None:
            self._store.close()
        self._store = None


def register(ctx) -> None:
    """Register Ledger as a memory provider plugin."""
    ctx.register_memory_provider(LedgerMemoryProvider())
