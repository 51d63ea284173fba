"""The host API: layered memory for an agent loop that owns its model client.

:class:`Memory` is the memory lifecycle on its own — what :class:`~hermes_core.
runtime.session.AgentSession` runs around its model calls, for a host that
makes those calls itself (the OpenAI SDK by hand, an agents framework, the MCP
server)::

    with Memory.open(user_id="alice") as memory:
        system = memory.system_prompt()           # frozen for the session
        api = memory.prepare([{"role": "system", "content": system}, *history, user])
        ... call the model with api and memory.tools(); route tool calls through
        memory.call_tool(name, arguments); your own tools' results reach memory
        through the next prepare() (or memory.note_tool_result(name, text)) ...
        memory.record_turn(user_text, answer)      # state.db, then sync_turn

The lifecycle is Hermes Agent's: ``initialize_all`` at start, one frozen
system-prompt block per session, fenced recall on the API copy of the user
message only, tool calls through :meth:`MemoryManager.handle_tool_call`, the
finished turn stored in ``state.db``, ended (``on_turn_end``, at once) and
handed to ``sync_turn`` and ``queue_prefetch`` on the manager's background
worker, and ``on_session_end`` plus ``shutdown_all`` at close. Every tool
result of a turn — the memory tools' and the host's own (web pages, files,
e-mails, other agents) — is handed to :meth:`MemoryManager.on_tool_result`
as untrusted text, so a memory write that repeats it is known to be
tool-derived (the builtin holds it for the user's review). Every provider
call is bounded by :class:`~hermes_core.runtime.guard.HookGuard`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_core.config import get_hermes_home, load_config
from hermes_core.errors import LLMError, SessionNotFoundError, SessionStoreError
from hermes_core.fencing import (
    StreamingContextScrubber,
    build_memory_context_block,
    clean_text,
    scrub_context_spans,
)
from hermes_core.llm import ToolCall
from hermes_core.provider import is_trivial_prompt
from hermes_core.runtime.guard import HookGuard
from hermes_core.runtime.settings import RuntimeSettings, new_session_id, profile_name
from hermes_core.runtime.workspace import git_root, path_text

if TYPE_CHECKING:
    from hermes_core.manager import MemoryManager
    from hermes_core.sessions import SessionStore
    from hermes_core.sessions.opening import UpgradeProgress

__all__ = [
    "TRANSCRIPT_WINDOW",
    "Memory",
    "Recall",
    "derive_title",
    "open_parts",
    "openai_tool",
    "store_row",
]

logger = logging.getLogger(__name__)

_STORED_ROLES = frozenset({"user", "assistant", "tool"})
TRANSCRIPT_WINDOW = 400
"""Recorded messages kept for ``sync_turn`` and ``on_session_end`` (the newest; all are stored).

:class:`AgentSession`'s transcript is bounded by compression; a host session that
records for days keeps this many, so each turn's hand-off stays the same size.
"""


def store_row(message: Mapping[str, Any]) -> dict[str, Any]:
    """An OpenAI-style transcript message as a ``state.db`` row."""
    row: dict[str, Any] = {"role": message["role"], "content": message.get("content")}
    if message.get("tool_calls"):
        row["tool_calls"] = message["tool_calls"]
    if message.get("tool_call_id"):
        row["tool_call_id"] = message["tool_call_id"]
        row["tool_name"] = message.get("name")
    elif message.get("name"):
        row["name"] = message["name"]  # who spoke, in a group chat
    return row


def open_parts(
    home: Path,
    config: Mapping[str, Any],
    settings: RuntimeSettings,
    *,
    upgrade_progress: UpgradeProgress | None = None,
) -> tuple[MemoryManager, SessionStore]:
    """The manager with the configured providers activated, and the session store
    (``home``'s ``state.db``, or ``sessions.url`` behind a spool that keeps appends
    through an outage) scoped to the settings' user; *upgrade_progress* sees the
    upgrade opening the store finishes, if any (a state.db's CJK index, a PostgreSQL
    store's stems)."""
    from hermes_core.manager import MemoryManager
    from hermes_core.plugins import activate_providers
    from hermes_core.sessions.backends import open_session_store
    from hermes_core.sessions.spool import with_spool

    manager = MemoryManager(external_prefetch_timeout=settings.prefetch_timeout)
    activate_providers(manager, dict(config), home)
    home.mkdir(parents=True, exist_ok=True)
    store = open_session_store(
        config=config,
        hermes_home=home,
        user_id=settings.user_id or None,
        upgrade_progress=upgrade_progress,
    )
    return manager, with_spool(store, home)


def derive_title(text: str) -> str:
    """A session title from its first user message (one line, at most 60 characters)."""
    line = " ".join(text.strip().split())
    return line if len(line) <= 60 else line[:57].rstrip() + "..."


def openai_tool(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A provider tool schema (``name``/``description``/``parameters``) in OpenAI's form."""
    return {"type": "function", "function": dict(schema)}


def _text_of(content: Any) -> str:
    """The text of a message's content: a string, or the text parts of a parts list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(part.get("text", ""))
            for part in content
            if isinstance(part, Mapping) and part.get("type") == "text"
        )
    return ""


def _with_block(content: Any, block: str) -> Any:
    """*content* with the fenced *block* appended (as a text part for a parts list)."""
    if isinstance(content, list):
        return [*content, {"type": "text", "text": block}]
    return f"{content}\n\n{block}" if content else block


def _without_spans(text: str) -> str:
    """*text* without ``<memory-context>`` spans (and the blank lines that joined one)."""
    clean = scrub_context_spans(text)
    return clean_text(clean.rstrip() if clean != text else clean)


def _unfenced(message: Mapping[str, Any]) -> dict[str, Any]:
    """*message* with any ``<memory-context>`` span removed from its text (never stored)."""
    clean = dict(message)
    content = clean.get("content")
    if isinstance(content, str):
        clean["content"] = _without_spans(content)
    elif isinstance(content, list):
        parts = [
            {**part, "text": _without_spans(str(part.get("text", "")))}
            if isinstance(part, Mapping) and part.get("type") == "text"
            else part
            for part in content
        ]
        clean["content"] = [p for p in parts if not (isinstance(p, dict) and p.get("text") == "")]
    return clean


@dataclass(frozen=True)
class Recall:
    """What the providers recalled for one user message."""

    block: str = ""
    """The fenced ``<memory-context>`` block for the API copy of the message, or ``""``."""
    status: str = ""
    """The manager's recall indicator (``"🧠 honcho — recalled 2 memories"``) or ``""``."""


class Memory:
    """One memory session for a host's own agent loop; see the module docstring.

    Build it with :meth:`open` (providers from ``config.yaml``, ``state.db``
    under ``hermes_home``) or from parts, then :meth:`start` it (the context
    manager does) and :meth:`close` it at the end. Calls from several threads
    are serialized.
    """

    def __init__(
        self,
        manager: MemoryManager,
        store: SessionStore,
        *,
        hermes_home: str | Path | None = None,
        settings: RuntimeSettings | None = None,
        session_id: str | None = None,
        title: str | None = None,
        model_name: str | None = None,
        clock: Callable[[], datetime] = datetime.now,
    ) -> None:
        self.manager = manager
        self.store = store
        self.hermes_home = Path(hermes_home) if hermes_home is not None else get_hermes_home()
        self.settings = settings or RuntimeSettings()
        self.model_name = model_name
        self.guard = HookGuard(self.settings.hook_timeout)
        self._clock = clock
        self._requested_id = session_id
        self._title = title
        self._session_id = ""
        self._block = ""
        self._tools: list[dict[str, Any]] = []
        self._transcript: list[dict[str, Any]] = []
        self._turn = 0
        self._turn_open = False
        """Whether the turn :meth:`begin_turn` began awaits its ``on_turn_end``."""
        self._last_recall: tuple[str, Recall] | None = None
        self._noted: set[str] = set()
        """Digests of the tool results of this turn already handed to the providers."""
        self._carried: list[tuple[str, str]] = []
        """Tool results to hand over again at the next turn start (:meth:`note_tool_result`)."""
        self._closed = False
        self._busy = threading.RLock()

    # -- construction ------------------------------------------------------------------
    @classmethod
    def open(
        cls,
        hermes_home: str | Path | None = None,
        *,
        user_id: str | None = None,
        platform: str | None = None,
        session_id: str | None = None,
        title: str | None = None,
        config: Mapping[str, Any] | None = None,
        upgrade_progress: UpgradeProgress | None = None,
        **settings: Any,
    ) -> Memory:
        """Build a memory session from ``hermes_home`` (default ``$HERMES_HOME``) and start it.

        The builtin provider and the ``memory.provider`` of ``config.yaml`` are
        activated; *settings* override :class:`RuntimeSettings` fields. A
        *session_id* already in ``state.db`` is continued. A ``state.db`` written
        before schema version 7 is upgraded before this returns (its CJK rows
        re-tokenised, a batch at a time), and so is a PostgreSQL store from before
        schema 4 (its messages stemmed, a batch at a time, while other processes
        write); *upgrade_progress* is called with (rows done, rows in all) after
        each batch, so a host can show it.
        """
        home = Path(hermes_home) if hermes_home is not None else get_hermes_home()
        cfg = dict(load_config(home) if config is None else config)
        runtime = RuntimeSettings.from_config(cfg, user_id=user_id, platform=platform, **settings)
        manager, store = open_parts(home, cfg, runtime, upgrade_progress=upgrade_progress)
        memory = cls(
            manager, store, hermes_home=home, settings=runtime, session_id=session_id, title=title
        )
        try:
            memory.start()
        except BaseException:
            memory.close("start_failed")
            raise
        return memory

    def __enter__(self) -> Memory:
        try:
            self.start()
        except BaseException:
            self.close("start_failed")
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- read-only views ---------------------------------------------------------------
    @property
    def session_id(self) -> str:
        """The session's id in ``state.db`` (``""`` before :meth:`start`)."""
        return self._session_id

    @property
    def title(self) -> str | None:
        """The session's title, once it has one."""
        return self._title

    @property
    def turn(self) -> int:
        """How many user turns :meth:`begin_turn` has seen in this session."""
        return self._turn

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` has run."""
        return self._closed

    @property
    def hook_failures(self) -> list[str]:
        """Provider hooks that failed, timed out or returned junk (newest last)."""
        return list(self.guard.failures)

    def system_prompt(self) -> str:
        """The frozen memory block: the builtin snapshot and the external provider's block.

        The same text for the whole session (writes during the session reach the
        next one), so a prompt cache keeps hitting. Put it in your system message.
        """
        self._ensure_started()
        return self._block

    def tool_schemas(self) -> list[dict[str, Any]]:
        """The memory tools as providers declare them (name, description, parameters)."""
        self._ensure_started()
        return [dict(t) for t in self._tools]

    def tools(self) -> list[dict[str, Any]]:
        """The memory tools as OpenAI ``tools`` entries (``{"type": "function", ...}``)."""
        return [openai_tool(t) for t in self.tool_schemas()]

    def has_tool(self, name: str) -> bool:
        """Whether *name* is one of this session's memory tools."""
        return any(t["name"] == name for t in self._tools)

    # -- lifecycle ---------------------------------------------------------------------
    def start(self, *, record_prompt: bool = True) -> str:
        """Create (or continue) the session row, initialize providers, freeze the block.

        With *record_prompt* the memory block is stored as the session's system
        prompt (a host with a fuller prompt stores its own with :meth:`record_system_prompt`).
        """
        with self._busy:
            if self._closed:
                raise SessionStoreError("This memory session is closed; open a new one.")
            if self._session_id:
                return self._session_id
            session_id = self._requested_id or new_session_id(self._clock())
            self.create_row(session_id, title=self._title)
            if self._requested_id:
                self._store_call(self.store.reopen_session, session_id)
            self.guard.call(
                "initialize_all",
                self.manager.initialize_all,
                session_id,
                default=None,
                **self._init_kwargs(),
            )
            self._session_id = session_id
            self._tools = self._load_tools()
            self.refresh_system_prompt()
            if record_prompt:
                self.record_system_prompt(self._block)
            return session_id

    def _init_kwargs(self) -> dict[str, Any]:
        settings = self.settings
        kwargs: dict[str, Any] = {
            **settings.provider_context,
            "hermes_home": str(self.hermes_home),
            "platform": settings.platform,
            "agent_context": "primary",
            "agent_identity": settings.agent_identity or profile_name(self.hermes_home),
            "agent_workspace": settings.agent_workspace,
        }
        if settings.working_dir is not None:
            kwargs["cwd"] = str(settings.working_dir)
        if settings.user_id:
            kwargs["user_id"] = settings.user_id
        if self._title:
            kwargs["session_title"] = self._title
        return kwargs

    def refresh_system_prompt(self) -> str:
        """Read the providers' blocks again (after a session switch); returns the new block.

        The manager bounds each external provider's block by its own timeout, so this
        waits a little longer than that: a hung provider costs only its own block, never
        the builtin one.
        """
        self._block = self.guard.call(
            "build_system_prompt",
            self.manager.build_system_prompt,
            default="",
            expect=str,
            timeout=self._fan_out_timeout,
        )
        return self._block

    @property
    def _fan_out_timeout(self) -> float:
        """Seconds to wait for a manager call that bounds each external provider by its
        own timeout: a little longer, so that a hung provider costs only its own part."""
        return max(self.settings.hook_timeout, self.manager.external_prefetch_timeout + 2.0)

    def record_system_prompt(self, prompt: str) -> None:
        """Store *prompt* as the session's system prompt in ``state.db`` (bookkeeping)."""
        self._store_call(self.store.update_system_prompt, self._session_id, prompt)

    def continue_in(
        self, session_id: str, *, title: str | None = None, new_conversation: bool = False
    ) -> None:
        """Carry on in *session_id*: a compression child, or (*new_conversation*) ``/new``."""
        with self._busy:
            self._session_id = session_id
            self._title = title
            if new_conversation:
                self._turn = 0
                self._transcript = []
                self._last_recall = None

    def close(
        self,
        end_reason: str = "user_exit",
        *,
        messages: Sequence[dict[str, Any]] | None = None,
        wait: float | None = None,
    ) -> None:
        """End the session: ``on_session_end``, the row ended, ``shutdown_all``, store closed.

        *messages* is the conversation handed to ``on_session_end`` (default: what
        :meth:`record` stored). Safe to call twice. A call running in another
        thread is waited for at most *wait* seconds (default ``session_end_timeout``).
        """
        limit = self.settings.session_end_timeout if wait is None else wait
        idle = self._busy.acquire(timeout=limit) if limit > 0 else self._busy.acquire(False)
        try:
            if self._closed:
                return
            self._closed = True
            transcript = list(messages) if messages is not None else list(self._transcript)
            timeout = self.settings.session_end_timeout
            try:
                if self._session_id:
                    try:
                        self.guard.call(
                            "on_session_end",
                            self.manager.on_session_end,
                            transcript,
                            default=None,
                            timeout=timeout,
                        )
                    finally:  # a Ctrl-C while providers finish still ends the row
                        self._store_call(self.store.end_session, self._session_id, end_reason)
                self.guard.call(
                    "shutdown_all", self.manager.shutdown_all, default=None, timeout=timeout
                )
            finally:
                self.guard.close()
                self._store_call(self.store.close)
        finally:
            if idle:
                self._busy.release()

    # -- a turn ------------------------------------------------------------------------
    def begin_turn(self, user_message: str, *, recall: bool = True, **turn_info: Any) -> Recall:
        """``on_turn_start``, then recall for *user_message* (skipped when trivial, or
        without *recall*).

        *turn_info* (``model``, ``remaining_tokens``…) goes to ``on_turn_start``.
        """
        with self._busy:
            self._ensure_started()
            self._turn += 1
            self._turn_open = True
            self._noted = set()
            info = {
                "model": self.model_name or "",
                "platform": self.settings.platform,
                "tool_count": len(self._tools),
                **turn_info,
            }
            self.guard.call(
                "on_turn_start",
                self.manager.on_turn_start,
                self._turn,
                user_message,
                default=None,
                **info,
            )
            carried, self._carried = self._carried, []
            for name, text in carried:
                self.note_tool_result(name, text)
            found_recall = Recall()
            if recall and not is_trivial_prompt(user_message):
                found = self.guard.call(
                    "prefetch_all",
                    self.manager.prefetch_all,
                    user_message,
                    default="",
                    expect=str,
                    timeout=self.settings.prefetch_timeout + 2.0,
                    session_id=self._session_id,
                )
                if found.strip():
                    status = self.guard.call(
                        "describe_recall", self.manager.describe_recall, default="", expect=str
                    )
                    found_recall = Recall(build_memory_context_block(found), status)
            self._last_recall = (user_message, found_recall)
            return found_recall

    def prepare(self, messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """A copy of *messages* for the model, with recall fenced into the last user message.

        *messages* is not changed. A new last user message starts a turn
        (:meth:`begin_turn`); calling again within the turn (between tool
        rounds) reuses its recall.
        """
        api = [dict(message) for message in messages]
        last = next((i for i in range(len(api) - 1, -1, -1) if api[i].get("role") == "user"), None)
        if last is None:
            return api
        text = _without_spans(_text_of(api[last].get("content")))
        if not text.strip():
            return api
        with self._busy:
            cached = self._last_recall
            recall = cached[1] if cached and cached[0] == text else self.begin_turn(text)
            self._note_turn_results(api[last + 1 :])
        if recall.block:
            api[last]["content"] = _with_block(api[last].get("content"), recall.block)
        return api

    def call_tool(
        self, name: str, arguments: str | Mapping[str, Any] | None = None, *, call_id: str = ""
    ) -> str:
        """Run memory tool *name* as a turn would; returns its JSON result text.

        *arguments* is a JSON object or its text. An unknown tool, arguments that
        are not a JSON object, or a tool that fails or times out give a JSON
        ``{"error": ...}`` result, never an exception.
        """
        self._ensure_started()
        if arguments is None:
            arguments = {}
        if isinstance(arguments, str):
            try:
                arguments = ToolCall(call_id, str(name), arguments).parsed_arguments()
            except LLMError as exc:
                return json.dumps({"error": f"{exc} Send a JSON object."})
        if not isinstance(arguments, Mapping):
            kind = type(arguments).__name__
            return json.dumps({"error": f"Tool arguments must be a JSON object, not {kind}."})
        if not isinstance(name, str) or not self.has_tool(name):
            available = ", ".join(sorted(t["name"] for t in self._tools)) or "none"
            error = f"Unknown tool {name!r}. Available tools: {available}."
            return json.dumps({"error": error})
        with self._busy:
            output = self._run_tool(name, dict(arguments), call_id)
            if self._closed:  # closed while the tool ran (close waits only within its bound)
                logger.warning(
                    "The memory session closed while tool %s ran; its result is returned "
                    "but not handed to the providers.",
                    name,
                )
                return output
            self.note_tool_result(name, output)
            return output

    def note_tool_result(self, name: str, result: Any, *, next_turn: bool = False) -> None:
        """Hand a tool result of this turn to the providers as untrusted text.

        For a host's own tools (a web page, a file, an e-mail, another agent's
        answer): a memory write that repeats it is then known to be tool-derived
        (the builtin holds it for the user's review). :meth:`prepare` does this
        for the ``tool`` messages of the turn, and :meth:`call_tool` for the
        memory tools; handing the same text twice in a turn counts once. With
        *next_turn* it is handed over again when the next turn begins (output
        obtained between turns that the model reads in the next one, such as a
        subagent's answer).
        """
        text = _text_of(result) if not isinstance(result, str) else result
        if not text.strip():
            return
        digest = hashlib.sha256(f"{name}\0{text}".encode("utf-8", "surrogatepass")).hexdigest()
        with self._busy:
            self._ensure_started()
            if next_turn:
                self._carried.append((str(name), text))
            if digest in self._noted:
                return
            self._noted.add(digest)
            self.guard.call(
                "on_tool_result",
                self.manager.on_tool_result,
                str(name),
                text,
                default=None,
                timeout=self._fan_out_timeout,
            )

    def _note_turn_results(self, messages: Sequence[Mapping[str, Any]]) -> None:
        """:meth:`note_tool_result` for the ``tool`` messages among *messages* (the turn's)."""
        names = {
            str(call.get("id")): str((call.get("function") or {}).get("name") or "")
            for message in messages
            if message.get("role") == "assistant"
            for call in message.get("tool_calls") or []
            if isinstance(call, Mapping) and isinstance(call.get("function") or {}, Mapping)
        }
        for message in messages:
            if message.get("role") != "tool":
                continue
            name = str(message.get("name") or names.get(str(message.get("tool_call_id")), ""))
            self.note_tool_result(name, message.get("content"))

    def _run_tool(self, name: str, arguments: dict[str, Any], call_id: str) -> str:
        fallback = json.dumps(
            {"error": f"Tool {name!r} did not complete; try again or continue without it."}
        )
        output: str = self.guard.call(
            f"tool:{name}",
            self.manager.handle_tool_call,
            name,
            arguments,
            default=fallback,
            expect=str,
            timeout=self.settings.tool_timeout,
        )
        if name == "memory":
            self.guard.call(
                "notify_memory_tool_write",
                self.manager.notify_memory_tool_write,
                output,
                arguments,
                default=None,
                build_metadata=self._mirror_metadata(call_id),
            )
        return output

    def record(self, messages: Iterable[Mapping[str, Any]]) -> None:
        """Store one finished turn's messages in ``state.db``, then sync it to the providers.

        Pass the turn's new messages (the user message, assistant tool-call steps
        with their ``tool`` results, the answer), not the whole history again.
        System messages are skipped and fenced recall is removed, so what is
        stored is what was said. It ends the turn :meth:`begin_turn` began
        (``on_turn_end``); ``sync_turn`` and ``queue_prefetch`` run on the
        manager's background worker.
        """
        stored = [_unfenced(m) for m in messages if m.get("role") in _STORED_ROLES]
        if not stored:
            return
        with self._busy:
            self._ensure_started()
            self.store_rows([store_row(m) for m in stored])
            self._transcript.extend(stored)
            del self._transcript[:-TRANSCRIPT_WINDOW]
            user = next((m for m in stored if m["role"] == "user"), None)
            user_text = _text_of(user.get("content")) if user else ""
            if user_text and not self._title:
                self.name_untitled(user_text)
            answer = next((m for m in reversed(stored) if m["role"] == "assistant"), None)
            if user_text:
                self.finish_turn(
                    user_text,
                    _text_of(answer.get("content")) if answer else "",
                    messages=self._transcript,
                )

    def record_turn(
        self,
        user: str,
        assistant: str,
        *,
        tool_calls: Sequence[Mapping[str, Any]] = (),
    ) -> None:
        """:meth:`record` for one exchange given as text.

        *tool_calls* are the tools the assistant ran before answering, each
        ``{"name": ..., "arguments": {...}, "result": "..."}`` (``id`` optional).
        """
        messages: list[dict[str, Any]] = [{"role": "user", "content": user}]
        if tool_calls:
            calls, results = [], []
            for number, call in enumerate(tool_calls):
                call_id = str(call.get("id") or f"call_{self._turn}_{number}")
                arguments = call.get("arguments") or {}
                text = arguments if isinstance(arguments, str) else json.dumps(arguments)
                calls.append(ToolCall(call_id, str(call["name"]), text).to_message())
                results.append(
                    {
                        "role": "tool",
                        "content": str(call.get("result", "")),
                        "tool_call_id": call_id,
                        "name": str(call["name"]),
                    }
                )
            messages.append({"role": "assistant", "content": "", "tool_calls": calls})
            messages.extend(results)
        messages.append({"role": "assistant", "content": assistant})
        self.record(messages)

    def finish_turn(
        self, user: str, assistant: str, *, messages: Sequence[dict[str, Any]] | None = None
    ) -> None:
        """End the turn :meth:`begin_turn` began (``on_turn_end``, at once), then hand it to
        ``sync_turn`` and warm the next recall (background)."""
        with self._busy:
            if self._turn_open:
                self._turn_open = False
                self.guard.call(
                    "on_turn_end",
                    self.manager.on_turn_end,
                    self._turn,
                    default=None,
                    timeout=self._fan_out_timeout,
                    session_id=self._session_id,
                )
            self.guard.call(
                "sync_all",
                self.manager.sync_all,
                user,
                assistant,
                default=None,
                session_id=self._session_id,
                messages=list(messages) if messages is not None else None,
            )
            self.guard.call(
                "queue_prefetch_all",
                self.manager.queue_prefetch_all,
                user,
                default=None,
                session_id=self._session_id,
            )

    def name_untitled(self, user_message: str) -> None:
        """Title an untitled session after its first user message (a taken title is skipped)."""
        if self._title:
            return
        title = derive_title(user_message)
        try:
            self.store.set_session_title(self._session_id, title)
        except SessionStoreError as exc:  # e.g. another session has this title
            logger.debug("Untitled session: %s", exc)
            return
        self._title = title

    # -- output ------------------------------------------------------------------------
    @staticmethod
    def scrub(text: str) -> str:
        """*text* without ``<memory-context>`` spans a model echoed back."""
        return scrub_context_spans(text)

    @staticmethod
    def scrubber() -> StreamingContextScrubber:
        """A scrubber for streamed output: ``feed(chunk)`` per chunk, ``flush()`` at the end."""
        return StreamingContextScrubber()

    # -- state.db ----------------------------------------------------------------------
    def create_row(
        self, session_id: str, *, title: str | None = None, parent_session_id: str | None = None
    ) -> None:
        """Create the ``state.db`` row of *session_id* with this session's source and user."""
        where = self.settings.working_dir
        self.store.create_session(
            session_id,
            source=self.settings.source or self.settings.platform,
            model=self.model_name,
            parent_session_id=parent_session_id,
            user_id=self.settings.user_id or None,
            cwd=path_text(where) if where is not None else None,
            git_repo_root=_stored_root(where),
        )
        if title:
            self._store_call(self.store.set_session_title, session_id, title)

    def store_rows(self, rows: list[dict[str, Any]], session_id: str | None = None) -> None:
        """Append *rows*; when the session was deleted meanwhile (``sessions delete`` from
        another process), it is stored again from these rows on."""
        target = session_id or self._session_id
        try:
            self.store.append_messages(target, rows)
        except SessionNotFoundError:
            logger.warning(
                "Session %s was deleted from %s while in use; it is stored again from "
                "this message on (the deleted messages stay deleted).",
                target,
                self.store.path,
            )
            self.create_row(target, title=self._title if target == self._session_id else None)
            self.store.append_messages(target, rows)

    # -- internals ---------------------------------------------------------------------
    def _ensure_started(self) -> None:
        if self._closed:
            raise SessionStoreError("This memory session is closed; open a new one.")
        if not self._session_id:
            self.start()

    def _store_call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """A store call whose failure is logged, not raised (bookkeeping, not content)."""
        try:
            return fn(*args, **kwargs)
        except (SessionStoreError, ValueError) as exc:
            logger.warning("Session store: %s", exc)
            return None

    def _load_tools(self) -> list[dict[str, Any]]:
        schemas = self.guard.call(
            "get_all_tool_schemas", self.manager.get_all_tool_schemas, default=[], expect=list
        )
        return [
            dict(schema)
            for schema in schemas
            if isinstance(schema, Mapping) and isinstance(schema.get("name"), str)
        ]

    def _mirror_metadata(self, call_id: str) -> Callable[[], Mapping[str, Any]] | None:
        """The builtin provider's metadata for mirrored writes (session, platform …), if any."""
        builtin = self.manager.get_provider("builtin")
        builder = getattr(builtin, "metadata_builder", None)
        if not callable(builder):
            return None
        try:
            built = builder(tool_call_id=call_id)
        except Exception as exc:  # metadata is a courtesy; the write itself stands
            logger.debug("builtin metadata_builder failed: %s", exc)
            return None
        return built if callable(built) else None


def _stored_root(working_dir: Path | None) -> str | None:
    root = git_root(working_dir) if working_dir is not None else None
    return path_text(root) if root is not None else None
