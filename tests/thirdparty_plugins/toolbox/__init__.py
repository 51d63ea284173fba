"""Toolbox — a memory provider that also uses the wider Hermes plugin context.

Besides ``ctx.register_memory_provider`` it registers general tools through
``ctx.register_tool`` (one gated by ``check_fn``, one by ``requires_env``, one
async), a maintenance skill, a lifecycle hook and a CLI command, and reads its
greeting with ``ctx.get_config``.
"""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any, Dict, List

from agent.memory_provider import MemoryProvider
from tools.registry import tool_error, tool_result

_PLUGIN_DIR = Path(__file__).parent


class ToolboxProvider(MemoryProvider):
    def __init__(self, greeting: str = "hello"):
        self.greeting = greeting
        self.notes: List[str] = []
        self._lock = threading.Lock()
        self.tool_kwargs: List[Dict[str, Any]] = []

    @property
    def name(self) -> str:
        return "toolbox"

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id: str, **kwargs) -> None:
        self.session_id = session_id

    def system_prompt_block(self) -> str:
        return f"# Toolbox memory\n{self.greeting}! toolbox_search and toolbox_stats are available."

    def _matching(self, query: str) -> List[str]:
        words = {w for w in query.lower().replace("?", " ").split() if len(w) > 3}
        with self._lock:
            return [n for n in self.notes if words & set(n.lower().split())]

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        return "\n".join(f"- {n}" for n in self._matching(query))

    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "",
                  messages: List[Dict[str, Any]] | None = None) -> None:
        with self._lock:
            self.notes.append(user_content)

    def get_tool_schemas(self) -> List[Dict[str, Any]]:
        return [{
            "name": "toolbox_search",
            "description": "Search toolbox notes.",
            "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
        }]

    def handle_tool_call(self, tool_name: str, args: Dict[str, Any], **kwargs) -> str:
        if tool_name == "toolbox_search":
            return json.dumps({"results": self._matching(args.get("query", ""))})
        return tool_error(f"Unknown tool: {tool_name}")

    def on_memory_write(self, action: str, target: str, content: str,
                        metadata: Dict[str, Any] | None = None) -> None:
        if action == "add":
            with self._lock:
                self.notes.append(content)

    # -- general tools (registered through ctx.register_tool) --------------

    def stats_tool(self, args: Dict[str, Any], **kwargs) -> str:
        self.tool_kwargs.append(dict(kwargs))
        with self._lock:
            return tool_result(notes=len(self.notes), greeting=self.greeting)


_SESSION_STARTS: List[Dict[str, Any]] = []


def _on_session_start(session_id: str = "", **kwargs) -> None:
    _SESSION_STARTS.append({"session_id": session_id, **kwargs})


def _cli_setup(parser) -> None:
    parser.add_argument("--verbose", action="store_true")


def _cli_handler(args) -> None:
    print("toolbox ok")


def register(ctx) -> None:
    greeting = ctx.get_config("greeting", "hello")
    provider = ToolboxProvider(greeting=greeting)
    ctx.register_memory_provider(provider)

    ctx.register_tool(
        "toolbox_stats",
        "toolbox",
        {
            "name": "toolbox_stats",
            "description": "How many notes the toolbox holds.",
            "parameters": {"type": "object", "properties": {}},
        },
        provider.stats_tool,
        check_fn=lambda: True,
        emoji="🧰",
    )
    ctx.register_tool(
        "toolbox_cloud_sync",
        "toolbox",
        {"name": "toolbox_cloud_sync", "description": "Sync notes to the cloud.",
         "parameters": {"type": "object", "properties": {}}},
        lambda args, **kw: tool_result(synced=True),
        requires_env=["TOOLBOX_CLOUD_KEY"],
    )

    async def _echo(args: Dict[str, Any], **kwargs) -> str:
        await asyncio.sleep(0)
        return json.dumps({"echo": args.get("text", "")})

    ctx.register_tool(
        "toolbox_echo",
        "toolbox",
        {"type": "function", "function": {
            "name": "toolbox_echo",
            "description": "Echo text back (async handler).",
            "parameters": {"type": "object", "properties": {"text": {"type": "string"}}},
        }},
        _echo,
        is_async=True,
    )
    if hasattr(ctx, "register_skill"):
        ctx.register_skill("toolbox-maintenance", _PLUGIN_DIR / "skills" / "toolbox-maintenance" / "SKILL.md",
                           description="Compact the toolbox notes.")
    ctx.register_hook("on_session_start", _on_session_start)
    ctx.register_hook("pre_tool_call", _on_session_start)  # a general agent hook
    ctx.register_cli_command("toolbox", "Manage the toolbox", _cli_setup, _cli_handler,
                             description="Toolbox maintenance commands")
