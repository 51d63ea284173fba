"""profilemem — reads its settings from config.yaml and .env when it is imported.

Config (``$HERMES_HOME/config.yaml``)::

    plugins:
      profilemem:
        max_facts: 50
        capture: true

Secret: ``PROFILEMEM_KEY`` in ``$HERMES_HOME/.env``.
"""

from __future__ import annotations

import hashlib
import logging
from typing import Any, Dict, List

from agent.memory_provider import MemoryProvider
from agent.secret_scope import get_secret
from hermes_cli.config import cfg_get, load_config
from hermes_constants import display_hermes_home, get_hermes_home
from tools.registry import tool_error, tool_result
from utils import atomic_json_write, is_truthy_value, read_json_or_empty

logger = logging.getLogger(__name__)

# Read once at import time, the way many plugins do.
_CONFIG = load_config()
MAX_FACTS = int(cfg_get(_CONFIG, "plugins", "profilemem", "max_facts", default=20))
CAPTURE = is_truthy_value(cfg_get(_CONFIG, "plugins", "profilemem", "capture", default="true"))
HOME_AT_IMPORT = get_hermes_home()
STORE_PATH = HOME_AT_IMPORT / "profilemem" / "facts.json"


class ProfileMemProvider(MemoryProvider):
    def __init__(self):
        self.facts: List[str] = read_json_or_empty(STORE_PATH).get("facts", [])

    @property
    def name(self) -> str:
        return "profilemem"

    def is_available(self) -> bool:
        return bool(get_secret("PROFILEMEM_KEY", ""))

    def unavailable_reason(self) -> str:
        return f"PROFILEMEM_KEY is not set in {display_hermes_home()}/.env"

    def initialize(self, session_id: str, **kwargs) -> None:
        key = get_secret("PROFILEMEM_KEY")
        self.key_fingerprint = hashlib.sha256(key.encode()).hexdigest()[:8]

    def _save(self) -> None:
        atomic_json_write(STORE_PATH, {"facts": self.facts[-MAX_FACTS:]}, mode=0o600)

    def _matching(self, query: str) -> List[str]:
        words = {w.strip("?.,!").lower() for w in query.split() if len(w) > 3}
        return [f for f in self.facts if words & {w.strip("?.,!").lower() for w in f.split()}]

    def system_prompt_block(self) -> str:
        return f"# Profilemem memory\nKeeping up to {MAX_FACTS} facts in {display_hermes_home()}."

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        return "\n".join(f"- {f}" for f in self._matching(query))

    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "",
                  messages: List[Dict[str, Any]] | None = None) -> None:
        if CAPTURE:
            self.facts.append(user_content)
            self._save()

    def get_tool_schemas(self) -> List[Dict[str, Any]]:
        return [{"name": "profilemem_search", "description": "Search profile facts.",
                 "parameters": {"type": "object", "properties": {"query": {"type": "string"}}}}]

    def handle_tool_call(self, tool_name: str, args: Dict[str, Any], **kwargs) -> str:
        if tool_name != "profilemem_search":
            return tool_error(f"Unknown tool: {tool_name}")
        return tool_result({"results": self._matching(args.get("query", ""))})

    def on_memory_write(self, action: str, target: str, content: str,
                        metadata: Dict[str, Any] | None = None) -> None:
        if action == "add":
            self.facts.append(content)
            self._save()

    def save_config(self, values: Dict[str, Any], hermes_home: str) -> None:
        from hermes_cli.config import save_config

        config = load_config()
        config.setdefault("plugins", {}).setdefault("profilemem", {}).update(values)
        save_config(config)


def register(ctx) -> None:
    ctx.register_memory_provider(ProfileMemProvider())
