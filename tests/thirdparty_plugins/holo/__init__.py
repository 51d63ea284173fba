"""holo — fact memory written as a plugin bundled with Hermes Agent.

Config in $HERMES_HOME/config.yaml (profile-scoped):
  plugins:
    holo:
      db_path: $HERMES_HOME/holo.db   # omit to use the default
      auto_capture: true
"""

from __future__ import annotations

import json
import logging
from typing import Any, Dict, List

from agent.memory_provider import MemoryProvider
from tools.registry import tool_error
from utils import is_truthy_value
from .store import FactStore
from hermes_cli.config import cfg_get

logger = logging.getLogger(__name__)

FACT_SCHEMA = {
    "name": "holo_facts",
    "description": "Search or add facts. action: search|add.",
    "parameters": {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["search", "add"]},
            "query": {"type": "string"},
            "content": {"type": "string"},
        },
        "required": ["action"],
    },
}


def _load_plugin_config() -> dict:
    try:
        from hermes_cli.config import load_config_readonly
        return cfg_get(load_config_readonly(), "plugins", "holo", default={}) or {}
    except Exception:
        return {}


class HoloMemoryProvider(MemoryProvider):
    """Fact store with keyword retrieval."""

    def __init__(self, config: dict | None = None):
        self._config = config or _load_plugin_config()
        self._store = None

    @property
    def name(self) -> str:
        return "holo"

    def is_available(self) -> bool:
        return True

    def get_config_schema(self):
        from hermes_constants import display_hermes_home
        return [{"key": "db_path", "description": "SQLite database path",
                 "default": f"{display_hermes_home()}/holo.db"}]

    def initialize(self, session_id: str, **kwargs) -> None:
        from hermes_constants import get_hermes_home
        home = str(get_hermes_home())
        db_path = str(self._config.get("db_path", home + "/holo.db")).replace("$HERMES_HOME", home)
        self._store = FactStore(db_path)

    def system_prompt_block(self) -> str:
        return f"# Holo memory\nActive. {self._store.count() if self._store else 0} facts stored."

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        if not self._store:
            return ""
        from plugins.memory.holo.retrieval import Retriever  # absolute, as bundled plugins do
        rows = Retriever(self._store).search(query, limit=5)
        return "\n".join(f"- {r['content']}" for r in rows)

    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "") -> None:
        if self._store and is_truthy_value(self._config.get("auto_capture", True)):
            self._store.add_fact(user_content)

    def get_tool_schemas(self) -> List[Dict[str, Any]]:
        return [FACT_SCHEMA]

    def handle_tool_call(self, tool_name: str, args: Dict[str, Any], **kwargs) -> str:
        if tool_name != "holo_facts" or not self._store:
            return tool_error(f"Unknown tool: {tool_name}")
        if args.get("action") == "add":
            return json.dumps({"fact_id": self._store.add_fact(args.get("content", ""))})
        return json.dumps({"results": [r["content"] for r in self._store.search_facts(args.get("query", ""))]})

    def on_memory_write(self, action: str, target: str, content: str) -> None:
        if action == "add" and self._store and content:
            self._store.add_fact(content)

    def shutdown(self) -> None:
        if self._store is not None:
            self._store.close()
        self._store = None


def register(ctx) -> None:
    ctx.register_memory_provider(HoloMemoryProvider())
