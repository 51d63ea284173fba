from __future__ import annotations

import json
from typing import Any

try:
    from agent.memory_provider import MemoryProvider
except ImportError:

    class MemoryProvider:  # type: ignore[no-redef]
        """Development fallback when Hermes is not installed."""


class EpMemProvider(MemoryProvider):
    def __init__(self) -> None:
        self._cache: dict[str, str] = {}
        self._notes: list[str] = []

    @property
    def name(self) -> str:
        return "epmem"

    def is_available(self) -> bool:
        return True

    def unavailable_reason(self) -> str | None:
        return None

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        self._session_id = session_id

    def _find(self, query: str) -> list[str]:
        words = {w.strip("?.,!").lower() for w in query.split() if len(w) > 3}
        return [n for n in self._notes if words & {w.strip("?.,!").lower() for w in n.split()}]

    def system_prompt_block(self) -> str:
        return "# EpMem memory\nepmem_search finds earlier notes."

    def prefetch(self, query: str, **_kwargs: Any) -> str:
        return "\n".join(f"- {n}" for n in self._find(query))

    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "",
                  messages: list[dict[str, Any]] | None = None, **_kwargs: Any) -> None:
        self._notes.append(user_content)

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return [{"name": "epmem_search", "description": "Search epmem.",
                 "parameters": {"type": "object", "properties": {"query": {"type": "string"}}}}]

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **_kwargs: Any) -> str:
        if tool_name != "epmem_search":
            return json.dumps({"ok": False, "error": "Unknown memory tool."})
        return json.dumps({"ok": True, "results": self._find(args.get("query", ""))})

    def on_memory_write(self, action: str, target: str, content: str,
                        metadata: dict[str, Any] | None = None) -> None:
        if action == "add":
            self._notes.append(content)

    def on_session_end(self, *_args: Any, **_kwargs: Any) -> None:
        self._cache.clear()

    def shutdown(self) -> None:
        self._cache.clear()
