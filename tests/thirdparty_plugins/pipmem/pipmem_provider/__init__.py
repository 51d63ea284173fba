"""pipmem — a MemoryProvider packaged as a normal Python distribution."""

from __future__ import annotations

import json
from typing import Any, Dict, List

from agent.memory_provider import MemoryProvider
from tools.registry import tool_error

from .engine import Engine

__version__ = "2.0.0"


class PipMemProvider(MemoryProvider):
    def __init__(self):
        self._engine: Engine | None = None

    @property
    def name(self) -> str:
        return "pipmem"

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id: str, **kwargs) -> None:
        self._engine = Engine(kwargs.get("hermes_home", ""))

    def system_prompt_block(self) -> str:
        return "# PipMem memory\nRecalled facts appear in context; pipmem_search searches them."

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        if not self._engine:
            return ""
        return "\n".join(f"- {hit}" for hit in self._engine.search(query))

    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "",
                  messages: List[Dict[str, Any]] | None = None) -> None:
        if self._engine:
            self._engine.remember(user_content)

    def get_tool_schemas(self) -> List[Dict[str, Any]]:
        return [{
            "name": "pipmem_search",
            "description": "Search PipMem.",
            "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
        }]

    def handle_tool_call(self, tool_name: str, args: Dict[str, Any], **kwargs) -> str:
        if tool_name != "pipmem_search" or not self._engine:
            return tool_error(f"Unknown tool: {tool_name}")
        return json.dumps({"results": self._engine.search(args.get("query", ""))})

    def on_memory_write(self, action: str, target: str, content: str,
                        metadata: Dict[str, Any] | None = None) -> None:
        if self._engine and action != "remove":
            self._engine.remember(content)

    def shutdown(self) -> None:
        if self._engine:
            self._engine.flush()


def register(ctx) -> None:
    ctx.register_memory_provider(PipMemProvider())
