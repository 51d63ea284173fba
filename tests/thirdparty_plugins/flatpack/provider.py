from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

_PLUGIN_DIR = str(Path(__file__).resolve().parent)
if _PLUGIN_DIR not in sys.path:
    sys.path.insert(0, _PLUGIN_DIR)

from client import FlatClient  # noqa: E402
from config import FlatConfig, load_config  # noqa: E402

try:
    from agent.memory_provider import MemoryProvider  # type: ignore[import-untyped]
except ImportError:
    from abc import ABC as _ABC

    class MemoryProvider(_ABC):  # type: ignore[no-redef]
        pass


class FlatProvider(MemoryProvider):
    def __init__(self, config: FlatConfig | None = None) -> None:
        self._config = config or FlatConfig()
        self._client: FlatClient | None = None

    @property
    def name(self) -> str:
        return "flatpack"

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        hermes_home = kwargs.get("hermes_home", "")
        if hermes_home:
            self._config = load_config(hermes_home)
        self._client = FlatClient(self._config)

    def _find(self, query: str) -> list:
        words = {w.strip("?.,!").lower() for w in query.split() if len(w) > 3}
        notes = self._client.all() if self._client else []
        hits = [n for n in notes if words & {w.strip("?.,!").lower() for w in n.split()}]
        return hits[: self._config.recall_limit]

    def system_prompt_block(self) -> str:
        return "# Flatpack memory\nUse flatpack_search."

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return [{
            "name": "flatpack_search",
            "description": "Search flatpack notes",
            "input_schema": {"type": "object", "properties": {"query": {"type": "string"}}},
        }]

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        if tool_name == "flatpack_search":
            return json.dumps({"ok": True, "results": self._find(args.get("query", ""))})
        raise ValueError(f"Unknown tool: {tool_name}")

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        return "\n\n".join(self._find(query))

    def sync_turn(self, user: str, assistant: str, *, session_id: str = "", **kwargs: Any) -> None:
        if self._client:
            self._client.add(user)

    def on_memory_write(
        self, action: str, target: str, content: str, metadata: dict[str, Any] | None = None
    ) -> None:
        if action in ("add", "replace") and self._client:
            self._client.add(content)

    def shutdown(self) -> None:
        pass
