"""nested — provider implementation (loaded by the root shim)."""

from __future__ import annotations

import json
from typing import Any, Dict, List

try:
    from agent.memory_provider import MemoryProvider
    from tools.registry import tool_error
except ImportError:  # imported outside Hermes (installer CLI)
    class MemoryProvider:  # type: ignore[no-redef]
        pass

    def tool_error(message: str) -> str:  # type: ignore[misc]
        return json.dumps({"error": message})

from .store import NoteStore


class NestedMemoryProvider(MemoryProvider):
    def __init__(self):
        self._store: NoteStore | None = None

    @property
    def name(self) -> str:
        return "nested"

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id: str, **kwargs) -> None:
        self._store = NoteStore()

    def system_prompt_block(self) -> str:
        return "# Nested memory\nnested_find looks up earlier notes."

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        return "\n".join(f"- {n}" for n in self._store.find(query)) if self._store else ""

    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "",
                  messages: List[Dict[str, Any]] | None = None) -> None:
        if self._store:
            self._store.add(user_content)

    def get_tool_schemas(self) -> List[Dict[str, Any]]:
        return [{"name": "nested_find", "description": "Find notes.",
                 "parameters": {"type": "object", "properties": {"query": {"type": "string"}}}}]

    def handle_tool_call(self, tool_name: str, args: Dict[str, Any], **kwargs) -> str:
        if tool_name != "nested_find" or not self._store:
            return tool_error(f"Unknown tool: {tool_name}")
        return json.dumps({"results": self._store.find(args.get("query", ""))})

    def on_memory_write(self, action: str, target: str, content: str,
                        metadata: Dict[str, Any] | None = None) -> None:
        if self._store and action == "add":
            self._store.add(content)


def register(ctx) -> None:
    ctx.register_memory_provider(NestedMemoryProvider())
