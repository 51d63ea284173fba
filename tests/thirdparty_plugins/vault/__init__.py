"""Vault memory plugin — MemoryProvider with a setup schema and CLI commands."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict, List

from agent.memory_provider import MemoryProvider
from tools.registry import tool_error

from .config_schema import get_config_schema, load_settings, save_config

RECALL_SCHEMA = {
    "name": "vault_search",
    "description": "Search facts stored in the vault.",
    "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
}


class VaultMemoryProvider(MemoryProvider):
    def __init__(self):
        self._home = ""
        self._settings: Dict[str, Any] = {}

    @property
    def name(self) -> str:
        return "vault"

    def is_available(self) -> bool:
        return bool(os.environ.get("VAULT_TOKEN"))

    def unavailable_reason(self) -> str:
        return "Set VAULT_TOKEN in $HERMES_HOME/.env (hermes memory setup does it for you)."

    def get_config_schema(self) -> List[Dict[str, Any]]:
        return get_config_schema()

    def save_config(self, values: Dict[str, Any], hermes_home: str) -> None:
        save_config(values, hermes_home)

    def initialize(self, session_id: str, **kwargs) -> None:
        self._home = str(kwargs.get("hermes_home") or "")
        self._settings = load_settings(self._home)

    def _path(self) -> Path:
        return Path(self._home) / "vault" / "facts.json"

    def _facts(self) -> List[str]:
        path = self._path()
        return json.loads(path.read_text(encoding="utf-8")) if path.exists() else []

    def _store(self, fact: str) -> None:
        facts = self._facts() + [fact.strip()]
        self._path().parent.mkdir(parents=True, exist_ok=True)
        self._path().write_text(json.dumps(facts), encoding="utf-8")

    def _match(self, query: str) -> List[str]:
        words = {w.lower().strip("?.,!") for w in query.split() if len(w) > 3}
        hits = [f for f in self._facts() if words & {w.lower().strip("?.,!") for w in f.split()}]
        return hits[: int(self._settings.get("max_results", 5))]

    def system_prompt_block(self) -> str:
        return f"# {self._settings.get('label', 'Vault')} memory\nUse vault_search for stored facts."

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        return "\n".join(f"- {fact}" for fact in self._match(query))

    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "",
                  messages: List[Dict[str, Any]] | None = None) -> None:
        self._store(user_content)

    def get_tool_schemas(self) -> List[Dict[str, Any]]:
        return [RECALL_SCHEMA]

    def handle_tool_call(self, tool_name: str, args: Dict[str, Any], **kwargs) -> str:
        if tool_name == "vault_search":
            return json.dumps({"results": self._match(str(args.get("query", "")))})
        return tool_error(f"Unknown tool: {tool_name}")

    def on_memory_write(self, action: str, target: str, content: str,
                        metadata: Dict[str, Any] | None = None) -> None:
        if action == "add":
            self._store(content)


def register(ctx) -> None:
    ctx.register_memory_provider(VaultMemoryProvider())
