"""Jotter — a one-file memory plugin for Hermes Agent.

Keeps short notes as JSON lines in ``$HERMES_HOME/jotter/notes.jsonl`` and
recalls the ones that share words with the user's message. Drop this folder
into ``~/.hermes/plugins/jotter`` and set ``memory.provider: jotter``.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from pathlib import Path
from typing import Any, Dict, List

from agent.memory_provider import MemoryProvider
from tools.registry import tool_error, tool_result

logger = logging.getLogger(__name__)

_WORD = re.compile(r"[a-zA-Z]{4,}")

SEARCH_SCHEMA = {
    "name": "jotter_search",
    "description": "Search the notes Jotter has kept about the user.",
    "parameters": {
        "type": "object",
        "properties": {"query": {"type": "string", "description": "Words to look for."}},
        "required": ["query"],
    },
}


def _words(text: str) -> set:
    return {w.lower() for w in _WORD.findall(text or "")}


class JotterMemoryProvider(MemoryProvider):
    """Plain-file notes with keyword recall."""

    def __init__(self):
        self._path: Path | None = None
        self._lock = threading.Lock()
        self._session_id = ""
        self.closed = False

    @property
    def name(self) -> str:
        return "jotter"

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id: str, **kwargs) -> None:
        hermes_home = kwargs.get("hermes_home")
        if not hermes_home:
            from hermes_constants import get_hermes_home

            hermes_home = str(get_hermes_home())
        self._path = Path(hermes_home) / "jotter" / "notes.jsonl"
        self._path.parent.mkdir(parents=True, exist_ok=True)
        self._session_id = session_id

    def _add(self, text: str, source: str) -> None:
        if not self._path or not text.strip():
            return
        with self._lock, open(self._path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"text": text.strip(), "source": source}) + "\n")

    def _notes(self) -> List[Dict[str, Any]]:
        if not self._path or not self._path.exists():
            return []
        with self._lock:
            lines = self._path.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.strip()]

    def _search(self, query: str) -> List[str]:
        wanted = _words(query)
        return [n["text"] for n in self._notes() if wanted & _words(n["text"])]

    def system_prompt_block(self) -> str:
        return "# Jotter memory\nNotes from earlier sessions are recalled automatically; jotter_search finds more."

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        hits = self._search(query)
        return "\n".join(f"- {hit}" for hit in hits[:5])

    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "",
                  messages: List[Dict[str, Any]] | None = None) -> None:
        self._add(user_content, "turn")

    def get_tool_schemas(self) -> List[Dict[str, Any]]:
        return [SEARCH_SCHEMA]

    def handle_tool_call(self, tool_name: str, args: Dict[str, Any], **kwargs) -> str:
        if tool_name != "jotter_search":
            return tool_error(f"Unknown tool: {tool_name}")
        query = str(args.get("query") or "").strip()
        if not query:
            return tool_error("query is required", tool=tool_name)
        return tool_result(results=self._search(query), count=len(self._search(query)))

    def on_memory_write(self, action: str, target: str, content: str,
                        metadata: Dict[str, Any] | None = None) -> None:
        if action in ("add", "replace"):
            self._add(content, f"memory:{target}")

    def shutdown(self) -> None:
        self.closed = True
