"""The MCP server: memory tools and resources on the official MCP SDK's low-level server.

Each MCP connection gets its own memory session (:class:`~hermes_core.runtime.
host_async.AsyncMemory`, ``platform="mcp"``), opened on its first request and
closed — ``on_session_end``, a bounded ``shutdown_all``, the ``state.db`` row
ended — when the connection ends or the server stops. Requests without a
connection of their own (stateless HTTP) share one memory session. Every
session writes the same ``state.db``, whose writes are locked and retried.

Tools are the session's memory tools (the builtin ``memory`` and
``session_search``, then the external provider's), routed through
:meth:`MemoryManager.handle_tool_call` exactly as in a turn, plus
``remember_turn`` to hand over a finished exchange and ``note_turn`` to say
what a turn is made of: the user's message (a memory write repeating it is
recorded as said by the user) and the text of the client's own tool results
(web pages, files, e-mails, other agents: a write repeating it is held for
the user's review). The memory tools' own results count without it. A turn
that ``note_turn`` began ends at ``remember_turn``; outside such a turn the
builtin records a write nothing explains as ``client``-written (the server
cannot see what the model read) and screens it as untrusted.
Resources are the frozen snapshot, each memory file and the recent
conversations.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError

from hermes_core import __version__
from hermes_core.runtime.host import Memory
from hermes_core.runtime.host_async import AsyncMemory

__all__ = [
    "MAX_ARGUMENT_BYTES",
    "NOTE_TURN_TOOL",
    "REMEMBER_TURN_TOOL",
    "MemorySessions",
    "ServerOptions",
    "build_server",
]

logger = logging.getLogger(__name__)

MAX_ARGUMENT_BYTES = 256 * 1024
"""The largest tool-call ``arguments`` (as JSON) the server accepts; larger calls are refused."""
SNAPSHOT_URI = "memory://snapshot"
RECENT_URI = "sessions://recent"
FILE_URIS = {"memory://files/MEMORY.md": "memory", "memory://files/USER.md": "user"}
RECENT_LIMIT = 20

REMEMBER_TURN_TOOL: dict[str, Any] = {
    "name": "remember_turn",
    "description": (
        "Hand over a finished exchange of your conversation (what the user said and what "
        "you answered) so it is kept: stored in the conversation history that session_search "
        "reads, and given to the memory provider. Call it once per exchange, after answering; "
        "it ends the turn note_turn began."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "user": {"type": "string", "description": "The user's message."},
            "assistant": {"type": "string", "description": "Your answer."},
        },
        "required": ["user", "assistant"],
        "additionalProperties": False,
    },
}

NOTE_TURN_TOOL: dict[str, Any] = {
    "name": "note_turn",
    "description": (
        "Tell memory where this turn's text comes from, so an entry you save is recorded "
        "with its true origin (without it, entries are recorded as from an unseen client "
        "and held for review more readily). At the start of every turn give 'user', the "
        "user's message; the turn lasts until remember_turn. After "
        "each tool result you read that memory did not give you (a web page, a file, an "
        "e-mail, another agent's message), give its text as 'tool_output': an entry that "
        "repeats it is held for the user's review instead of saved."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "user": {"type": "string", "description": "The user's message; starts a new turn."},
            "tool_output": {"type": "string", "description": "Text of a tool result."},
            "tool": {"type": "string", "description": "The name of that tool."},
        },
        "additionalProperties": False,
    },
}

_READ_ONLY = types.ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
_ANNOTATIONS: dict[str, types.ToolAnnotations] = {
    # add / replace / remove entries of MEMORY.md and USER.md: remove deletes.
    "memory": types.ToolAnnotations(
        read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False
    ),
    "session_search": _READ_ONLY,
    # appends to state.db and the provider; never changes what is there.
    "remember_turn": types.ToolAnnotations(
        read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
    ),
    # changes only what this session knows of the turn; nothing is stored.
    "note_turn": types.ToolAnnotations(
        read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
    ),
}
_EXTERNAL = types.ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=True)
"""An external provider's tool: it may write or delete, in a service beyond this machine."""


@dataclass(frozen=True)
class ServerOptions:
    """How the server opens memory sessions (the ``hermes-memory mcp`` options)."""

    hermes_home: Path | None = None
    user_id: str | None = None
    session_end_timeout: float = 10.0
    """Seconds one session's ``on_session_end`` and ``shutdown_all`` may take, each."""
    settings: Mapping[str, Any] = field(default_factory=dict)
    """More :class:`~hermes_core.runtime.settings.RuntimeSettings` overrides."""


class MemorySessions:
    """The open memory sessions, one per connection key; closes them all at the end."""

    def __init__(self, options: ServerOptions) -> None:
        self.options = options
        self._sessions: dict[object, AsyncMemory] = {}
        self._opening: dict[object, anyio.Lock] = {}
        self._closing = False

    @property
    def open_count(self) -> int:
        """How many memory sessions are open."""
        return len(self._sessions)

    async def get(self, key: object) -> AsyncMemory:
        """The memory session of *key*, opened on first use (refused while shutting down)."""
        if self._closing:
            raise MCPError(types.INTERNAL_ERROR, "The memory server is shutting down; reconnect.")
        if key in self._sessions:
            return self._sessions[key]
        lock = self._opening.setdefault(key, anyio.Lock())
        async with lock:
            if key not in self._sessions:
                memory = await AsyncMemory.open(
                    self.options.hermes_home,
                    user_id=self.options.user_id,
                    platform="mcp",
                    session_end_timeout=self.options.session_end_timeout,
                    **self.options.settings,
                )
                if self._closing:  # the server began to stop while this one opened
                    await memory.close("mcp_disconnect")
                    raise MCPError(types.INTERNAL_ERROR, "The memory server is shutting down.")
                self._sessions[key] = memory
        return self._sessions[key]

    async def close(self, key: object) -> None:
        """End the memory session of *key*, if one is open."""
        self._opening.pop(key, None)
        memory = self._sessions.pop(key, None)
        if memory is not None:
            await memory.close("mcp_disconnect")

    async def close_all(self) -> None:
        """End every open session, concurrently; each is bounded by its own hook timeouts."""
        self._closing = True
        keys = list(self._sessions)
        async with anyio.create_task_group() as group:
            for key in keys:
                group.start_soon(self.close, key)


def _connection_key(ctx: ServerRequestContext[Any, Any]) -> tuple[object, Any]:
    """The key of the request's connection, and the connection when it has its own teardown.

    A stateful HTTP session (``Mcp-Session-Id``) lives across requests and tears
    down when it ends; a stateless request gets a fresh connection each time, so
    those share one key. (The SDK's ``ServerSession`` keeps its connection in
    ``_connection``; should that change, every request falls back to the shared key.)
    """
    connection = getattr(ctx.session, "_connection", None)
    if connection is not None and getattr(connection, "session_id", None) is not None:
        return connection, connection
    return "shared", None


class _Handlers:
    """The request handlers, over a :class:`MemorySessions`."""

    def __init__(self, sessions: MemorySessions, *, per_connection: bool) -> None:
        self.sessions = sessions
        self.per_connection = per_connection

    async def memory_for(self, ctx: ServerRequestContext[Any, Any]) -> AsyncMemory:
        if not self.per_connection:
            return await self.sessions.get("process")
        key, connection = _connection_key(ctx)
        fresh = key not in self.sessions._sessions
        memory = await self.sessions.get(key)
        if fresh and connection is not None:
            connection.exit_stack.push_async_callback(self.sessions.close, key)
        return memory

    # -- tools -------------------------------------------------------------------------
    async def list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        memory = await self.memory_for(ctx)
        tools = [
            types.Tool(
                name=schema["name"],
                description=str(schema.get("description") or ""),
                input_schema=dict(schema.get("parameters") or {"type": "object"}),
                annotations=_ANNOTATIONS.get(schema["name"], _EXTERNAL),
            )
            for schema in [*memory.tool_schemas(), REMEMBER_TURN_TOOL, NOTE_TURN_TOOL]
        ]
        return types.ListToolsResult(tools=tools)

    async def call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        arguments = params.arguments or {}
        size = len(json.dumps(arguments, ensure_ascii=False).encode())
        if size > MAX_ARGUMENT_BYTES:
            return _tool_error(
                f"The arguments of {params.name!r} are {size:,} bytes; at most "
                f"{MAX_ARGUMENT_BYTES:,} are accepted. Send less at a time."
            )
        memory = await self.memory_for(ctx)
        if params.name == REMEMBER_TURN_TOOL["name"]:
            return await self._remember_turn(memory, arguments)
        if params.name == NOTE_TURN_TOOL["name"]:
            return await self._note_turn(memory, arguments)
        result = await memory.call_tool(params.name, arguments, call_id=str(ctx.request_id or ""))
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=result)], is_error=_is_error(result)
        )

    async def _remember_turn(
        self, memory: AsyncMemory, arguments: Mapping[str, Any]
    ) -> types.CallToolResult:
        user, assistant = arguments.get("user"), arguments.get("assistant")
        extra = sorted(set(arguments) - {"user", "assistant"})
        if extra:
            return _tool_error(f"remember_turn takes only user and assistant, not {extra}.")
        if not isinstance(user, str) or not user.strip():
            return _tool_error("remember_turn needs user: the user's message, as text.")
        if not isinstance(assistant, str):
            return _tool_error("remember_turn needs assistant: your answer, as text.")
        await memory.record_turn(user, assistant)
        text = json.dumps({"success": True, "session_id": memory.session_id})
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])

    async def _note_turn(
        self, memory: AsyncMemory, arguments: Mapping[str, Any]
    ) -> types.CallToolResult:
        extra = sorted(set(arguments) - {"user", "tool_output", "tool"})
        if extra:
            return _tool_error(f"note_turn takes only user, tool_output and tool, not {extra}.")
        user, output, tool = (arguments.get(k) for k in ("user", "tool_output", "tool"))
        for key, value in (("user", user), ("tool_output", output), ("tool", tool)):
            if value is not None and not isinstance(value, str):
                return _tool_error(f"note_turn needs {key} as text.")
        if not (user or "").strip() and not (output or "").strip():
            return _tool_error("note_turn needs user (the user's message) or tool_output.")
        if user and user.strip():
            await memory.begin_turn(user, recall=False)
        if output and output.strip():
            await memory.note_tool_result(tool or "client_tool", output)
        text = json.dumps({"success": True, "turn": memory.memory.turn})
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])

    # -- resources ---------------------------------------------------------------------
    async def list_resources(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        resources = [
            types.Resource(
                uri=SNAPSHOT_URI,
                name="snapshot",
                title="Memory snapshot",
                description="The frozen memory block of this session, as a system prompt has it.",
                mime_type="text/plain",
            ),
            *(
                types.Resource(
                    uri=uri,
                    name=uri.rsplit("/", 1)[-1],
                    description=f"The {target} memory file as it is now on disk.",
                    mime_type="text/markdown",
                )
                for uri, target in FILE_URIS.items()
            ),
            types.Resource(
                uri=RECENT_URI,
                name="recent",
                title="Recent conversations",
                description=f"The {RECENT_LIMIT} most recent conversations in state.db (JSON).",
                mime_type="application/json",
            ),
        ]
        return types.ListResourcesResult(resources=resources)

    async def read_resource(
        self, ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        memory = await self.memory_for(ctx)
        if uri == SNAPSHOT_URI:
            text, mime = memory.system_prompt(), "text/plain"
        elif uri in FILE_URIS:
            text, mime = (
                await memory.run(_memory_file, memory.memory, FILE_URIS[uri]),
                "text/markdown",
            )
        elif uri == RECENT_URI:
            text, mime = await memory.run(_recent, memory.memory), "application/json"
        else:
            known = ", ".join([SNAPSHOT_URI, *FILE_URIS, RECENT_URI])
            raise MCPError(types.INVALID_PARAMS, f"Unknown resource {uri!r}. Resources: {known}.")
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type=mime, text=text)]
        )


def _tool_error(message: str) -> types.CallToolResult:
    text = json.dumps({"error": message})
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def _is_error(result: str) -> bool:
    try:
        value = json.loads(result)
    except ValueError:
        return False
    return isinstance(value, dict) and bool(value.get("error")) and not value.get("success")


def _memory_file(memory: Memory, target: str) -> str:
    builtin = memory.manager.get_provider("builtin")
    store = getattr(builtin, "store", None)
    if store is None:
        return ""
    path = Path(store.path(target))
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""


def _recent(memory: Memory) -> str:
    rows = memory.store.list_sessions(limit=RECENT_LIMIT)
    keep = ("id", "title", "source", "started_at", "last_active", "message_count", "preview")
    return json.dumps([{k: row.get(k) for k in keep if k in row} for row in rows], default=str)


def build_server(
    options: ServerOptions, *, per_connection: bool = True
) -> tuple[Server[Any], MemorySessions]:
    """The MCP server and its memory sessions (closed by the server's lifespan)."""
    sessions = MemorySessions(options)
    handlers = _Handlers(sessions, per_connection=per_connection)

    @asynccontextmanager
    async def lifespan(_: Server[Any]) -> AsyncIterator[dict[str, Any]]:
        try:
            yield {}
        finally:
            with anyio.CancelScope(shield=True):
                await sessions.close_all()

    server: Server[Any] = Server(
        "hermes-memory",
        version=__version__,
        title="hermes-memory",
        instructions=(
            "Layered memory. Read memory://snapshot into your system prompt; use the memory "
            "tool to keep durable facts, session_search to recall past conversations, and "
            "remember_turn after each exchange so it is kept."
        ),
        lifespan=lifespan,
        on_list_tools=handlers.list_tools,
        on_call_tool=handlers.call_tool,
        on_list_resources=handlers.list_resources,
        on_read_resource=handlers.read_resource,
    )
    return server, sessions
