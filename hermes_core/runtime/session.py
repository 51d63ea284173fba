"""The agent-session runtime: the turn loop that makes the memory layers work together.

:class:`AgentSession` is what a host agent embeds (and what ``hermes-memory
chat`` and ``demo`` run). It owns a :class:`~hermes_core.manager.MemoryManager`,
a :class:`~hermes_core.sessions.SessionStore` and a
:class:`~hermes_core.llm.ChatClient`, and calls the memory hooks in the order
of Hermes Agent's lifecycle:

* **start** — ``initialize_all(session_id, hermes_home=…, platform=…,
  agent_context="primary", agent_identity=…, agent_workspace="hermes")``, then
  the system prompt is assembled once (:mod:`hermes_core.runtime.prompt`) and
  cached; every model call of the session sends the same bytes;
* **each turn** — ``on_turn_start``; ``prefetch_all`` (skipped for trivial
  prompts), fenced by ``build_memory_context_block`` and appended to the API
  copy of the user message only; the model call; tool calls routed through
  ``handle_tool_call`` in a bounded loop (``notify_memory_tool_write`` after
  ``memory`` calls); streamed text through ``StreamingContextScrubber``; the
  messages persisted; ``sync_all`` and ``queue_prefetch_all`` (background);
* **compression** — at a share of the context window: ``on_pre_compress``, a
  checkpoint, the old session ended with ``end_reason='compression'``, a child
  with ``parent_session_id``, a numbered title, ``on_session_switch(new,
  parent_session_id=old, reset=False, reason='compression')``, a rebuilt prompt;
* **end** — ``on_session_end(messages)``, ``shutdown_all()``.

Everything handed to providers goes through the manager, which redacts it
(:func:`hermes_core.redaction.redact_egress`); every manager call is bounded
by :class:`~hermes_core.runtime.guard.HookGuard`, so a provider that raises,
hangs or returns junk never breaks a turn. Messages are stored as they
complete (the user message at once, an assistant tool-call step together with
all its results), so an interrupted or failed turn leaves the store consistent.
"""

from __future__ import annotations

import atexit
import functools
import json
import logging
import threading
import time
import uuid
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from hermes_core.config import cfg_get, config_section, get_hermes_home, load_config
from hermes_core.errors import (
    ConfigError,
    LLMError,
    LLMNotConfiguredError,
    MessageTooLongError,
    SessionNotFoundError,
    SessionStoreError,
)
from hermes_core.fencing import (
    StreamingContextScrubber,
    build_memory_context_block,
    clean_text,
    scrub_context_spans,
)
from hermes_core.llm import ChatClient, ChatResponse, ToolCall, Usage
from hermes_core.provider import is_trivial_prompt
from hermes_core.redaction import redact_egress
from hermes_core.runtime.compression import CompressionSettings, ContextCompressor
from hermes_core.runtime.guard import HookGuard
from hermes_core.runtime.interrupts import deferred_interrupt
from hermes_core.runtime.prompt import (
    CONTEXT_FILE_NAMES,
    PromptParts,
    context_files_block,
    load_identity,
    tool_guidance,
)
from hermes_core.runtime.tokens import (
    estimate_messages_tokens,
    estimate_text_tokens,
    estimate_tools_tokens,
)
from hermes_core.runtime.workspace import git_root, path_text

if TYPE_CHECKING:
    from hermes_core.manager import MemoryManager
    from hermes_core.sessions import SessionStore

__all__ = [
    "DELEGATION_END_REASON",
    "DELEGATION_SOURCE",
    "AgentSession",
    "CompressionOutcome",
    "RuntimeSettings",
    "ToolRun",
    "TurnResult",
    "new_session_id",
]

logger = logging.getLogger(__name__)
_V = TypeVar("_V")
_Method = TypeVar("_Method", bound=Callable[..., Any])

_HOLDING: weakref.WeakSet[AgentSession] = weakref.WeakSet()
"""Open sessions keeping messages that a locked ``state.db`` could not take yet."""


def _store_held_messages_at_exit() -> None:
    """At interpreter exit, write what open sessions kept back from a locked ``state.db``.

    They are normally stored before the next message or by ``close()``; a host that
    exits without closing (a gateway stopped with chats open) would lose them.
    """
    for session in list(_HOLDING):
        session._store_held_at_exit()


atexit.register(_store_held_messages_at_exit)

DELEGATION_SOURCE = "delegate"
"""``source`` of a subagent's session row; never taken for a compression continuation."""
DELEGATION_END_REASON = "delegation_complete"
"""``end_reason`` of a finished subagent session."""

MAX_TOOL_ITERATIONS = 100
"""The most rounds of tool calls one turn may take (``runtime.max_tool_iterations``)."""
MAX_TOOL_CALLS_PER_REPLY = 1_000
"""The most tool calls run from one reply (``runtime.max_tool_calls_per_reply``)."""
_OWN_INIT_KEYS = frozenset(
    {
        "session_id",
        "hermes_home",
        "platform",
        "agent_context",
        "agent_identity",
        "agent_workspace",
        "cwd",
        "user_id",
        "session_title",
        "parent_session_id",
    }
)
"""``initialize`` keywords the runtime itself gives; ``provider_context`` cannot replace them."""
DEFAULT_AGENT_WORKSPACE = "hermes"
"""``agent_workspace`` given to providers: the name Hermes Agent gives, so a plugin
that keys its storage on it (a Hindsight bank, a scope-recall scope) finds the
same data as under Hermes."""

_UNSET: Any = object()
_MAX_SECONDS = 86_400.0


def new_session_id(now: datetime | None = None) -> str:
    """A sortable, unique session id: ``20250514_093012_a1b2c3``."""
    stamp = (now or datetime.now()).strftime("%Y%m%d_%H%M%S")
    return f"{stamp}_{uuid.uuid4().hex[:6]}"


def _row(message: Mapping[str, Any]) -> dict[str, Any]:
    """A transcript message as a store row."""
    row: dict[str, Any] = {"role": message["role"], "content": message.get("content")}
    if message.get("tool_calls"):
        row["tool_calls"] = message["tool_calls"]
    if message.get("tool_call_id"):
        row["tool_call_id"] = message["tool_call_id"]
        row["tool_name"] = message.get("name")
    elif message.get("name"):
        row["name"] = message["name"]  # who spoke, in a group chat
    return row


def _not_run(call: ToolCall, allowed: int) -> ToolRun:
    """The answer to a tool call past the per-reply limit (every call id needs one)."""
    error = (
        f"Tool call not run: at most {allowed} tool calls are run from one reply. Send the "
        "ones that still matter in your next reply."
    )
    return ToolRun(call.name, {}, json.dumps({"error": error}))


def _tolerant(callback: Callable[[_V], None] | None, name: str) -> Callable[[_V], None] | None:
    """*callback* made harmless: an exception in the host's own code is logged once, not raised.

    The turn has already run tools and called the model when a callback fires;
    failing there (a broken pipe while printing) would leave the step unrecorded.
    """
    if callback is None:
        return None
    warned = False

    def call(value: _V) -> None:
        nonlocal warned
        try:
            callback(value)
        except Exception as exc:
            if not warned:
                warned = True
                logger.warning("The %s callback raised %r; the turn goes on without it", name, exc)

    return call


def _one_at_a_time(method: _Method) -> _Method:
    """Run *method* holding the session's lock: a chat's calls never interleave.

    A gateway may hand a chat's next message to another thread while the
    previous turn still runs; that turn finishes first, then the next one runs.
    """

    @functools.wraps(method)
    def serialized(self: AgentSession, *args: Any, **kwargs: Any) -> Any:
        with self._busy:
            return method(self, *args, **kwargs)

    return cast(_Method, serialized)


def _stored_root(working_dir: Path | None) -> str | None:
    root = git_root(working_dir) if working_dir is not None else None
    return path_text(root) if root is not None else None


def _derive_title(text: str) -> str:
    line = " ".join(text.strip().split())
    return line if len(line) <= 60 else line[:57].rstrip() + "..."


def _float(config: Mapping[str, Any] | None, key: str, default: float) -> float:
    value = cfg_get(config, key, None)
    if value in (None, ""):
        return default
    if isinstance(value, bool):
        raise ConfigError(f"{key} must be a number of seconds, got {value!r}.")
    try:
        number = float(value)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{key} must be a number of seconds, got {value!r}.") from exc
    if not 0 < number < _MAX_SECONDS:
        raise ConfigError(
            f"{key} must be positive and below {_MAX_SECONDS:.0f} seconds, got {value!r}."
        )
    return number


@dataclass(frozen=True)
class RuntimeSettings:
    """How a session runs (``runtime.*`` in ``config.yaml``, plus constructor overrides)."""

    platform: str = "cli"
    source: str = ""
    """``source`` of the session rows; defaults to the platform."""
    working_dir: Path | None = None
    """Where context files such as ``AGENTS.md`` are read from (``None``: none)."""
    context_files: tuple[str, ...] = CONTEXT_FILE_NAMES
    system_message: str = ""
    """The host's own instructions, placed after the identity in the system prompt."""
    stream: bool = True
    max_tool_iterations: int = 8
    max_tool_calls_per_reply: int = 32
    """Tool calls run from one model reply; the rest are answered "not run"."""
    hook_timeout: float = 10.0
    prefetch_timeout: float = 8.0
    tool_timeout: float = 60.0
    session_end_timeout: float = 30.0
    user_id: str = ""
    agent_identity: str = ""
    """The profile name given to providers; empty: derived from ``HERMES_HOME``."""
    agent_workspace: str = DEFAULT_AGENT_WORKSPACE
    """The workspace name given to providers; Hermes Agent always gives ``"hermes"``."""
    provider_context: Mapping[str, str] = field(default_factory=dict)
    """More ``initialize`` keywords, as a gateway host gives them: ``user_name``,
    ``user_id_alt``, ``chat_id``, ``chat_name``, ``chat_type``, ``thread_id``,
    ``gateway_session_key``…"""

    def __post_init__(self) -> None:
        for key, value in self.provider_context.items():
            if not isinstance(key, str) or not key.isidentifier():
                raise ConfigError(f"provider_context key {key!r} must be a keyword name.")
            if key in _OWN_INIT_KEYS:
                raise ConfigError(
                    f"provider_context cannot set {key!r}: the runtime gives it (set it "
                    "through its own setting, such as user_id or agent_workspace)."
                )
            if not isinstance(value, str):
                raise ConfigError(
                    f"provider_context[{key!r}] must be text, got {type(value).__name__}."
                )
        if not 1 <= self.max_tool_iterations <= MAX_TOOL_ITERATIONS:
            raise ConfigError(
                f"runtime.max_tool_iterations must be between 1 and {MAX_TOOL_ITERATIONS}, "
                f"got {self.max_tool_iterations}."
            )
        if not 1 <= self.max_tool_calls_per_reply <= MAX_TOOL_CALLS_PER_REPLY:
            raise ConfigError(
                "runtime.max_tool_calls_per_reply must be between 1 and "
                f"{MAX_TOOL_CALLS_PER_REPLY}, got {self.max_tool_calls_per_reply}."
            )

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | None, **overrides: Any) -> RuntimeSettings:
        """Read ``runtime.*`` and ``memory.prefetch_timeout``; *overrides* win."""
        config_section(config, "runtime")
        config_section(config, "memory")
        counts = {}
        for name, default in (("max_tool_iterations", 8), ("max_tool_calls_per_reply", 32)):
            value = cfg_get(config, f"runtime.{name}", default)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ConfigError(f"runtime.{name} must be an integer, got {value!r}.")
            counts[name] = value
        stream = cfg_get(config, "runtime.stream", True)
        if not isinstance(stream, bool):
            raise ConfigError(f"runtime.stream must be true or false, got {stream!r}.")
        values: dict[str, Any] = {
            **counts,
            "stream": stream,
            "hook_timeout": _float(config, "runtime.hook_timeout", 10.0),
            "prefetch_timeout": _float(config, "memory.prefetch_timeout", 8.0),
            "tool_timeout": _float(config, "runtime.tool_timeout", 60.0),
            "session_end_timeout": _float(config, "runtime.session_end_timeout", 30.0),
        }
        identity = cfg_get(config, "runtime.agent_identity", "")
        if not isinstance(identity, str):
            raise ConfigError(f"runtime.agent_identity must be a string, got {identity!r}.")
        values["agent_identity"] = identity.strip()
        workspace = cfg_get(config, "runtime.agent_workspace", DEFAULT_AGENT_WORKSPACE)
        if not isinstance(workspace, str) or not workspace.strip():
            raise ConfigError(
                f"runtime.agent_workspace must be a non-empty name, got {workspace!r}; "
                f"leave it out to use {DEFAULT_AGENT_WORKSPACE!r}, as Hermes Agent does."
            )
        values["agent_workspace"] = workspace.strip()
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)


def profile_name(hermes_home: Path) -> str:
    """The Hermes profile a home belongs to: ``<root>/profiles/NAME`` → NAME, else ``default``."""
    if hermes_home.parent.name == "profiles" and hermes_home.name:
        return hermes_home.name
    return "default"


@dataclass(frozen=True)
class ToolRun:
    """One tool call of a turn and what it returned."""

    name: str
    arguments: dict[str, Any]
    result: str


@dataclass(frozen=True)
class CompressionOutcome:
    """A compression that split the session."""

    old_session_id: str
    new_session_id: str
    title: str | None
    summary_source: str
    dropped: int
    tokens_before: int
    tokens_after: int


@dataclass
class TurnResult:
    """What one call of :meth:`AgentSession.run_turn` did."""

    content: str
    session_id: str
    tool_runs: list[ToolRun] = field(default_factory=list)
    recalled: str = ""
    """The fenced ``<memory-context>`` block added to the API copy of the user message."""
    recall_status: str = ""
    """The manager's recall indicator (``"🧠 honcho — recalled 2 memories"``) or ``""``."""
    compression: CompressionOutcome | None = None
    usage: Usage | None = None
    model_calls: int = 0
    notice: str = ""
    """Why the turn ended unusually (the tool-call rounds ran out), for the user; else ``""``."""


class AgentSession:
    """One conversation with layered memory; see the module docstring for the lifecycle.

    Use :meth:`open` to build one from ``$HERMES_HOME`` and ``config.yaml``, or
    pass the parts in. Call :meth:`start` (or use it as a context manager),
    then :meth:`run_turn` per user message, and :meth:`close` at the end.
    One session runs one turn at a time: calls from several threads (turns,
    ``/new``, ``/compress``, delegation) wait for each other, and :meth:`close`
    waits for a running turn. Use one session per conversation.
    """

    def __init__(
        self,
        manager: MemoryManager,
        store: SessionStore,
        client: ChatClient | None,
        *,
        hermes_home: str | Path | None = None,
        settings: RuntimeSettings | None = None,
        compression: CompressionSettings | None = None,
        title: str | None = None,
        model_name: str | None = None,
        clock: Callable[[], datetime] = datetime.now,
    ) -> None:
        self.manager = manager
        self.store = store
        self.client = client
        self.hermes_home = Path(hermes_home) if hermes_home is not None else get_hermes_home()
        self.settings = settings or RuntimeSettings()
        self.compressor = ContextCompressor(
            compression or CompressionSettings(),
            summarizer=self._summarize if client is not None else None,
        )
        self.model_name = model_name or (client.model if client is not None else None)
        self._clock = clock
        self._title = title
        self._guard = HookGuard(self.settings.hook_timeout)
        self._session_id = ""
        self._system_prompt = ""
        self._tools: list[dict[str, Any]] = []
        self._messages: list[dict[str, Any]] = []
        self._api_content: dict[int, str] = {}
        self._unsaved: list[tuple[str, list[dict[str, Any]]]] = []
        self._unsaved_error = ""
        self._turn = 0
        self._reported_tokens: int | None = None
        self._closed = False
        self._busy = threading.RLock()
        self._warned_paused = False
        self.compressions: list[CompressionOutcome] = []

    # -- construction ------------------------------------------------------------------
    @classmethod
    def open(
        cls,
        hermes_home: str | Path | None = None,
        *,
        config: Mapping[str, Any] | None = None,
        client: ChatClient | None = _UNSET,
        title: str | None = None,
        **settings: Any,
    ) -> AgentSession:
        """Build a session from ``$HERMES_HOME``: providers, ``state.db`` and the model.

        *client* defaults to :meth:`ChatClient.from_config` (``None`` when no
        model is configured: the session then compresses offline but cannot run
        turns). Keyword *settings* override :class:`RuntimeSettings` fields.
        """
        from hermes_core.manager import MemoryManager
        from hermes_core.plugins import activate_providers
        from hermes_core.sessions.backends import open_session_store

        home = Path(hermes_home) if hermes_home is not None else get_hermes_home()
        cfg = dict(load_config(home) if config is None else config)
        runtime = RuntimeSettings.from_config(cfg, **settings)
        compression = CompressionSettings.from_config(cfg)
        if client is _UNSET:
            client = ChatClient.from_config(cfg, hermes_home=home)
        manager = MemoryManager(external_prefetch_timeout=runtime.prefetch_timeout)
        activate_providers(manager, cfg, home)
        home.mkdir(parents=True, exist_ok=True)
        store = open_session_store(config=cfg, hermes_home=home, user_id=runtime.user_id or None)
        return cls(
            manager,
            store,
            client,
            hermes_home=home,
            settings=runtime,
            compression=compression,
            title=title,
        )

    # -- read-only views ---------------------------------------------------------------
    @property
    def session_id(self) -> str:
        """The current session id (changes on compression and :meth:`new_session`)."""
        return self._session_id

    @property
    def system_prompt(self) -> str:
        """The cached system prompt sent with every model call of this session."""
        return self._system_prompt

    @property
    def messages(self) -> list[dict[str, Any]]:
        """A copy of the in-context transcript as stored (no system prompt, no recall)."""
        return [dict(m) for m in self._messages]

    @property
    def tool_schemas(self) -> list[dict[str, Any]]:
        """The tools offered to the model, fixed for the session."""
        return [dict(t) for t in self._tools]

    @property
    def hook_failures(self) -> list[str]:
        """Provider hooks that failed, timed out or returned junk (newest last)."""
        return list(self._guard.failures)

    def context_tokens(self, pending: str = "") -> int:
        """Tokens of the next request: reported usage when known, else an estimate."""
        if self._reported_tokens is not None:
            return self._reported_tokens + estimate_text_tokens(pending)
        return (
            estimate_text_tokens(self._system_prompt)
            + estimate_messages_tokens(self._api_messages()[1:])
            + estimate_tools_tokens(self._tools)
            + estimate_text_tokens(pending)
        )

    def _check_fits(self, user_message: str) -> None:
        """Refuse a message no request could carry: stored, it would fail every later turn."""
        window = self.compressor.settings.context_window
        fixed = estimate_text_tokens(self._system_prompt) + estimate_tools_tokens(self._tools)
        needed = estimate_text_tokens(user_message)
        if needed + fixed > window:
            raise MessageTooLongError(
                f"This message is about {needed:,} tokens, but the model's context window "
                f"(model.context_window: {window:,}) has room for about {max(0, window - fixed):,} "
                "beside the system prompt and tools. It was not sent or stored: shorten it or "
                "send it in parts, or raise model.context_window in config.yaml if the model "
                "takes more."
            )

    # -- lifecycle ---------------------------------------------------------------------
    @_one_at_a_time
    def start(self) -> str:
        """Create the session row, initialize providers, freeze the system prompt."""
        if self._closed:
            raise SessionStoreError("This AgentSession is closed; open a new one.")
        if self._session_id:
            return self._session_id
        session_id = new_session_id(self._clock())
        self._create_row(session_id, title=self._title)
        init_kwargs: dict[str, Any] = {
            **self.settings.provider_context,
            "hermes_home": str(self.hermes_home),
            "platform": self.settings.platform,
            "agent_context": "primary",
            "agent_identity": self.settings.agent_identity or profile_name(self.hermes_home),
            "agent_workspace": self.settings.agent_workspace,
        }
        if self.settings.working_dir is not None:
            init_kwargs["cwd"] = str(self.settings.working_dir)
        if self.settings.user_id:
            init_kwargs["user_id"] = self.settings.user_id
        if self._title:
            init_kwargs["session_title"] = self._title
        self._guard.call(
            "initialize_all",
            self.manager.initialize_all,
            session_id,
            default=None,
            **init_kwargs,
        )
        self._session_id = session_id
        self._tools = self._load_tools()
        self._freeze_system_prompt()
        return session_id

    def __enter__(self) -> AgentSession:
        try:
            self.start()
        except BaseException:
            # ``with`` runs no ``__exit__`` when ``__enter__`` raises: close here, so a
            # session that could not start (state.db locked) leaves no threads or files.
            self.close("start_failed")
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self, end_reason: str = "user_exit") -> None:
        """End the session: ``on_session_end(messages)``, ``shutdown_all()``, close resources.

        Safe to call twice, from any thread, and after a Ctrl-C. A turn running
        in another thread is waited for, at most ``runtime.session_end_timeout``
        seconds; after that the session closes anyway and that turn fails.
        """
        if self._closed:
            return
        wait = self.settings.session_end_timeout
        idle = self._busy.acquire(timeout=wait)
        if not idle:
            logger.warning(
                "A turn of session %s is still running after %gs; closing the session anyway, "
                "so that turn will fail.",
                self._session_id,
                wait,
            )
        try:
            self._close(end_reason)
        finally:
            if idle:
                self._busy.release()

    def _close(self, end_reason: str) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            if self._unsaved:
                try:
                    self._store_unsaved()
                except SessionStoreError as exc:
                    count = sum(len(rows) for _, rows in self._unsaved)
                    logger.error(
                        "%d message(s) of this conversation could not be stored in %s: %s",
                        count,
                        self.store.path,
                        exc,
                    )
            if self._session_id:
                try:
                    self._guard.call(
                        "on_session_end",
                        self.manager.on_session_end,
                        self.messages,
                        default=None,
                        timeout=self.settings.session_end_timeout,
                    )
                finally:  # a Ctrl-C while providers finish still ends the row
                    self._store_call(self.store.end_session, self._session_id, end_reason)
            self._guard.call(
                "shutdown_all",
                self.manager.shutdown_all,
                default=None,
                timeout=self.settings.session_end_timeout,
            )
        finally:
            self._guard.close()
            self._store_call(self.store.close)
            if self.client is not None:
                self.client.close()

    @_one_at_a_time
    def new_session(self, *, title: str | None = None) -> str:
        """Start over (``/new``): end this session, start a fresh one with a new snapshot.

        Providers get ``on_session_end(messages)`` then
        ``on_session_switch(new, parent_session_id=old, reset=True,
        reason='new_session')``, in that order, on the manager's worker.
        """
        self._ensure_started()
        old_id, transcript = self._session_id, self.messages
        new_id = new_session_id(self._clock())
        with deferred_interrupt():  # Ctrl-C cannot leave the rows and this object disagreeing
            self._create_row(new_id, title=title)
            self._store_call(self.store.end_session, old_id, "new_session")
            self._session_id = new_id
            self._title = title
            self._messages, self._api_content = [], {}
            self._turn = 0
            self._reported_tokens = None
            self.compressor.previous_summary = None
            self.compressor.ineffective_streak = 0
        try:
            self._guard.call(
                "commit_session_boundary_async",
                self.manager.commit_session_boundary_async,
                transcript,
                default=None,
                new_session_id=new_id,
                parent_session_id=old_id,
                reason="new_session",
            )
            # The providers reload their snapshot on the switch; wait for it (bounded).
            self._guard.call(
                "flush_pending",
                self.manager.flush_pending,
                self.settings.session_end_timeout,
                default=False,
                timeout=self.settings.session_end_timeout + 1.0,
            )
        finally:  # even after a Ctrl-C while waiting, the new session gets its own prompt
            self._freeze_system_prompt()
        return new_id

    # -- the turn ----------------------------------------------------------------------
    @_one_at_a_time
    def run_turn(
        self,
        user_message: str,
        *,
        on_text: Callable[[str], None] | None = None,
        on_tool: Callable[[ToolRun], None] | None = None,
    ) -> TurnResult:
        """Run one user turn to its final answer and return what happened.

        *on_text* receives the visible text as it streams (fenced memory
        echoed by the model is removed first); *on_tool* each tool call once
        it has run. Raises :class:`LLMError` when
        the model endpoint fails; the user message stays stored and the
        transcript stays consistent, so the turn can simply be retried.
        """
        self._ensure_started()
        if not isinstance(user_message, str) or not user_message.strip():
            raise ValueError("user_message must be a non-empty string")
        on_text, on_tool = _tolerant(on_text, "on_text"), _tolerant(on_tool, "on_tool")
        # An unpaired surrogate (from a terminal's undecodable bytes, say) cannot be
        # encoded into a request: kept in the transcript, it would fail every later turn.
        user_message = clean_text(user_message)
        if self.client is None:
            raise self._no_model_error()
        self._check_fits(user_message)
        result = TurnResult(content="", session_id=self._session_id)
        if self.compressor.should_compress(self.context_tokens(user_message)):
            result.compression = self.compress(force=False)
            result.session_id = self._session_id
        if self.compressor.paused and not self._warned_paused:
            self._warned_paused = True
            logger.warning(
                "Context is over the compression threshold but compression is not "
                "helping any more; start a new session (/new) to keep answers accurate."
            )

        self._turn += 1
        self._guard.call(
            "on_turn_start",
            self.manager.on_turn_start,
            self._turn,
            user_message,
            default=None,
            model=self.model_name or "",
            platform=self.settings.platform,
            tool_count=len(self._tools),
            remaining_tokens=max(
                0, self.compressor.settings.context_window - self.context_tokens(user_message)
            ),
        )
        recall = ""
        if not is_trivial_prompt(user_message):
            recall = self._guard.call(
                "prefetch_all",
                self.manager.prefetch_all,
                user_message,
                default="",
                expect=str,
                timeout=self.settings.prefetch_timeout + 2.0,
                session_id=self._session_id,
            )
        block = build_memory_context_block(recall) if recall.strip() else ""
        result.recalled = block
        if block:
            result.recall_status = self._guard.call(
                "describe_recall", self.manager.describe_recall, default="", expect=str
            )
        self._commit([{"role": "user", "content": user_message}], api_content=block)
        if not self._title and self._turn == 1:
            self._title = _derive_title(user_message)
            try:
                self.store.set_session_title(self._session_id, self._title)
            except SessionStoreError as exc:  # e.g. another session has this title
                logger.debug("Untitled session: %s", exc)

        scrubber = StreamingContextScrubber()
        limit = self.settings.max_tool_iterations
        for iteration in range(limit + 1):
            last_round = iteration == limit
            response = self._call_model(
                tools=None if last_round else self._tools, scrubber=scrubber, on_text=on_text
            )
            result.model_calls += 1
            result.usage = response.usage or result.usage
            if response.tool_calls and not last_round:
                calls = self._unique_call_ids(response.tool_calls)
                step: list[dict[str, Any]] = [
                    {
                        "role": "assistant",
                        "content": response.content,
                        "tool_calls": [call.to_message() for call in calls],
                    }
                ]
                allowed = self.settings.max_tool_calls_per_reply
                for number, call in enumerate(calls):
                    run = self._run_tool(call) if number < allowed else _not_run(call, allowed)
                    result.tool_runs.append(run)
                    if on_tool is not None:
                        on_tool(run)
                    step.append(
                        {
                            "role": "tool",
                            "content": run.result,
                            "tool_call_id": call.id,
                            "name": call.name,
                        }
                    )
                self._commit(step, defer=True)
                continue
            result.content = response.content
            if last_round:
                result.notice = (
                    f"Stopped after {limit} rounds of tool calls: the model kept calling tools, "
                    "so it was asked to answer without them."
                    + ("" if response.content.strip() else " It gave no answer; ask again.")
                )
                logger.warning("%s", result.notice)
            self._commit(
                [{"role": "assistant", "content": response.content}],
                finish_reason=response.finish_reason,
                defer=True,
            )
            if self._unsaved:
                count = sum(len(rows) for _, rows in self._unsaved)
                unsaved = (
                    f"{count} message(s) of this conversation are not stored yet: "
                    f"{self._unsaved_error} They are kept and stored with the next message."
                )
                result.notice = f"{result.notice} {unsaved}".strip()
                logger.warning("%s", unsaved)
            break

        self._guard.call(
            "sync_all",
            self.manager.sync_all,
            user_message,
            result.content,
            default=None,
            session_id=self._session_id,
            messages=self.messages,
        )
        self._guard.call(
            "queue_prefetch_all",
            self.manager.queue_prefetch_all,
            user_message,
            default=None,
            session_id=self._session_id,
        )
        return result

    # -- compression -------------------------------------------------------------------
    @_one_at_a_time
    def compress(
        self, *, focus: str | None = None, force: bool = True
    ) -> CompressionOutcome | None:
        """Compress now (``/compress``); ``None`` when there is too little to drop.

        *force* (the default for a manual call) resumes automatic compression
        after it was paused for being ineffective.
        """
        self._ensure_started()
        if force:
            self.compressor.ineffective_streak = 0
            self._warned_paused = False
        provider_context = self._guard.call(
            "on_pre_compress",
            self.manager.on_pre_compress,
            self.messages,
            default="",
            expect=str,
        )
        carried = (self.compressor.previous_summary, self.compressor.compression_count)
        compressed = self.compressor.compress(
            self._messages,
            provider_context=provider_context,
            focus=clean_text(focus) if focus else focus,
            today=self._clock().date(),
            redact=redact_egress,
        )
        if compressed is None:
            return None
        old_id = self._session_id
        new_id = new_session_id(self._clock())
        try:
            title = self._publish_child(old_id, new_id, compressed.messages)
        except SessionStoreError as exc:
            logger.warning("Compression skipped, the session store failed: %s", exc)
            self.compressor.previous_summary, self.compressor.compression_count = carried
            return None
        self._guard.call(
            "on_session_switch",
            self.manager.on_session_switch,
            new_id,
            default=None,
            parent_session_id=old_id,
            reset=False,
            reason="compression",
        )
        self._freeze_system_prompt()
        self._reported_tokens = None
        self.compressor.note_context(self.context_tokens())
        outcome = CompressionOutcome(
            old_session_id=old_id,
            new_session_id=new_id,
            title=title,
            summary_source=compressed.summary_source,
            dropped=compressed.dropped,
            tokens_before=compressed.tokens_before,
            tokens_after=compressed.tokens_after,
        )
        self.compressions.append(outcome)
        if self.compressor.compression_count >= 3:
            logger.warning(
                "Session compressed %d times; accuracy may degrade. Consider /new.",
                self.compressor.compression_count,
            )
        return outcome

    def _publish_child(
        self, old_id: str, new_id: str, messages: list[dict[str, Any]]
    ) -> str | None:
        """End *old_id*, create its child *new_id* holding *messages*; return its title.

        Ctrl-C cannot split this step; if the store fails, the parent is
        reopened, the half-made child removed, and the error raised.
        """
        old_row = self._store_call(self.store.get_session, old_id) or {}
        old_title = old_row.get("title") if isinstance(old_row, Mapping) else None
        with deferred_interrupt():
            try:
                # End the parent first: a continuation starts after its parent ended.
                self.store.end_session(old_id, "compression")
                self._create_row(new_id, parent_session_id=old_id)
                title = None
                if old_title:
                    title = self._store_call(self.store.next_title_in_lineage, old_title)
                    if title:
                        self._store_call(self.store.set_session_title, new_id, title)
                self.store.append_messages(new_id, [_row(m) for m in messages])
            except SessionStoreError:
                self._store_call(self.store.delete_session, new_id)
                self._store_call(self.store.reopen_session, old_id)
                raise
            self._session_id = new_id
            self._messages = [dict(m) for m in messages]
            self._api_content = {}
        return title

    def _no_model_error(self) -> LLMNotConfiguredError:
        return LLMNotConfiguredError(
            "No model endpoint is configured. Set model.base_url and model.model in "
            f"{self.hermes_home / 'config.yaml'} (or HERMES_MODEL_BASE_URL and "
            "HERMES_MODEL), or run `hermes-memory demo` for the offline demo."
        )

    # -- delegation --------------------------------------------------------------------
    @_one_at_a_time
    def delegate(self, task: str, *, system_message: str = "") -> str:
        """Run *task* in a subagent session and return its answer.

        The subagent's row has ``parent_session_id`` = this session,
        ``source='delegate'``, ``model_config._delegate_from`` = this session,
        and ends with ``end_reason='delegation_complete'``, so lineage readers
        never mistake it for a compression continuation.
        Providers get ``on_delegation(task, result, child_session_id=…)``.
        """
        self._ensure_started()
        if self.client is None:
            raise self._no_model_error()
        task, system_message = clean_text(task), clean_text(system_message)
        child_id = new_session_id(self._clock())
        self._store_call(
            self.store.create_session,
            child_id,
            source=DELEGATION_SOURCE,
            model=self.model_name,
            parent_session_id=self._session_id,
            model_config={"_delegate_from": self._session_id},
        )
        prompt = PromptParts(
            identity="You are a subagent. Complete the task you are given and report the result.",
            system_message=system_message,
            started=self._clock(),
            platform=self.settings.platform,
        ).render()
        self._store_call(self.store.update_system_prompt, child_id, prompt)
        self._store_call(self.store.append_message, child_id, "user", task)
        try:
            answer = self.client.chat(
                [{"role": "system", "content": prompt}, {"role": "user", "content": task}]
            )
        except LLMError:
            self._store_call(self.store.end_session, child_id, "delegation_failed")
            raise
        content = scrub_context_spans(answer.content)
        self._store_call(self.store.append_message, child_id, "assistant", content)
        self._store_call(self.store.end_session, child_id, DELEGATION_END_REASON)
        self._guard.call(
            "on_delegation",
            self.manager.on_delegation,
            task,
            content,
            default=None,
            child_session_id=child_id,
        )
        return content

    # -- internals ---------------------------------------------------------------------
    def _ensure_started(self) -> None:
        if self._closed:
            raise SessionStoreError("This AgentSession is closed; open a new one.")
        if not self._session_id:
            self.start()

    def _store_call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """A store call whose failure is logged, not raised (bookkeeping, not content)."""
        try:
            return fn(*args, **kwargs)
        except (SessionStoreError, ValueError) as exc:
            logger.warning("Session store: %s", exc)
            return None

    def _create_row(
        self, session_id: str, *, title: str | None = None, parent_session_id: str | None = None
    ) -> None:
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

    def _load_tools(self) -> list[dict[str, Any]]:
        schemas = self._guard.call(
            "get_all_tool_schemas", self.manager.get_all_tool_schemas, default=[], expect=list
        )
        tools = []
        for schema in schemas:
            if isinstance(schema, Mapping) and isinstance(schema.get("name"), str):
                tools.append(dict(schema))
        return tools

    def _freeze_system_prompt(self) -> None:
        blocks = self._guard.call(
            "build_system_prompt", self.manager.build_system_prompt, default="", expect=str
        )
        self._system_prompt = PromptParts(
            identity=load_identity(self.hermes_home),
            guidance=tool_guidance(t["name"] for t in self._tools),
            system_message=self.settings.system_message,
            provider_blocks=blocks,
            context_files=context_files_block(
                self.settings.working_dir, self.settings.context_files
            ),
            started=self._clock(),
            platform=self.settings.platform,
        ).render()
        self._store_call(self.store.update_system_prompt, self._session_id, self._system_prompt)

    def _api_messages(self) -> list[dict[str, Any]]:
        """System prompt + transcript, with recalled memory on the API copies only."""
        api = [{"role": "system", "content": self._system_prompt}]
        for index, message in enumerate(self._messages):
            copy = {k: v for k, v in message.items() if k != "name"}
            block = self._api_content.get(index)
            if block:
                copy["content"] = f"{message['content']}\n\n{block}"
            api.append(copy)
        return api

    def _commit(
        self,
        messages: list[dict[str, Any]],
        *,
        api_content: str = "",
        finish_reason: str | None = None,
        defer: bool = False,
    ) -> None:
        """Store *messages* and add them to the transcript, as one Ctrl-C-proof step.

        Messages stored earlier but not written yet go first. With *defer* (what
        already happened: tool results, an answer the user has seen), a store that
        stays locked keeps the rows in memory for the next commit instead of
        raising; otherwise its error is raised and the transcript is unchanged.
        """
        rows = [_row(message) for message in messages]
        if finish_reason and rows:
            rows[-1]["finish_reason"] = finish_reason
        with deferred_interrupt():
            attempted_at = time.time()
            try:
                if defer and self._unsaved:  # wait out a lock once a turn, not once a step
                    raise SessionStoreError(self._unsaved_error)
                self._store_unsaved()
                self._append_rows(self._session_id, rows)
            except SessionStoreError as exc:
                if not defer:
                    raise
                for row in rows:
                    row.setdefault("timestamp", attempted_at)
                self._unsaved.append((self._session_id, rows))
                self._unsaved_error = str(exc)
                _HOLDING.add(self)
            start = len(self._messages)
            self._messages.extend(dict(m) for m in messages)
            if api_content:
                self._api_content[start] = api_content

    def _store_unsaved(self) -> None:
        """Write the messages a locked store kept back, oldest first; raises while it fails."""
        while self._unsaved:
            session_id, rows = self._unsaved[0]
            self._append_rows(session_id, rows)
            self._unsaved.pop(0)
        _HOLDING.discard(self)

    def _append_rows(self, session_id: str, rows: list[dict[str, Any]]) -> None:
        """Append *rows* to *session_id*; when its row was deleted meanwhile (``sessions
        delete`` from another process), the session is stored again from these rows on."""
        try:
            self.store.append_messages(session_id, rows)
        except SessionNotFoundError:
            logger.warning(
                "Session %s was deleted from %s while in use; it is stored again from "
                "this message on (the deleted messages stay deleted).",
                session_id,
                self.store.path,
            )
            self._create_row(
                session_id, title=self._title if session_id == self._session_id else None
            )
            self.store.append_messages(session_id, rows)

    def _store_held_at_exit(self) -> None:
        """:meth:`_store_unsaved` for an exit without :meth:`close` (logs what it cannot)."""
        if not self._busy.acquire(timeout=self.settings.session_end_timeout):
            logger.error(
                "A turn of session %s still runs at exit; its messages are not stored.",
                self._session_id,
            )
            return
        try:
            if not self._closed and self._unsaved:
                self._store_unsaved()
        except SessionStoreError as exc:
            count = sum(len(rows) for _, rows in self._unsaved)
            logger.error(
                "%d message(s) of session %s could not be stored in %s at exit: %s",
                count,
                self._session_id,
                self.store.path,
                exc,
            )
        finally:
            self._busy.release()

    def _call_model(
        self,
        *,
        tools: list[dict[str, Any]] | None,
        scrubber: StreamingContextScrubber,
        on_text: Callable[[str], None] | None,
    ) -> ChatResponse:
        assert self.client is not None
        api_messages = self._api_messages()
        if not self.settings.stream:
            response = self.client.chat(api_messages, tools=tools or None)
            response.content = scrub_context_spans(response.content)
            if on_text is not None and response.content:
                on_text(response.content)
        else:
            scrubber.reset()
            stream = self.client.stream(api_messages, tools=tools or None)
            visible: list[str] = []
            iterator = iter(stream)
            try:
                for delta in iterator:
                    text = scrubber.feed(delta)
                    if text:
                        visible.append(text)
                        if on_text is not None:
                            on_text(text)
            finally:
                close = getattr(iterator, "close", None)
                if close is not None:
                    close()
            tail = scrubber.flush()
            if tail:
                visible.append(tail)
                if on_text is not None:
                    on_text(tail)
            if stream.response is None:
                raise LLMError("The model stream ended before it was complete; retry the turn.")
            response = replace(stream.response, content="".join(visible))
        if response.usage is not None and response.usage.prompt_tokens > 0:
            self._reported_tokens = response.usage.prompt_tokens + response.usage.completion_tokens
        return response

    def _run_tool(self, call: ToolCall) -> ToolRun:
        try:
            arguments = call.parsed_arguments()
        except LLMError as exc:
            return ToolRun(call.name, {}, json.dumps({"error": f"{exc} Send a JSON object."}))
        if not self._has_tool(call.name):
            available = ", ".join(sorted(t["name"] for t in self._tools)) or "none"
            error = f"Unknown tool {call.name!r}. Available tools: {available}."
            return ToolRun(call.name, arguments, json.dumps({"error": error}))
        fallback = json.dumps(
            {"error": f"Tool {call.name!r} did not complete; try again or continue without it."}
        )
        output = self._guard.call(
            f"tool:{call.name}",
            self.manager.handle_tool_call,
            call.name,
            arguments,
            default=fallback,
            expect=str,
            timeout=self.settings.tool_timeout,
        )
        if call.name == "memory":
            self._guard.call(
                "notify_memory_tool_write",
                self.manager.notify_memory_tool_write,
                output,
                arguments,
                default=None,
                build_metadata=self._mirror_metadata(call.id),
            )
        return ToolRun(call.name, arguments, output)

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

    def _unique_call_ids(self, calls: list[ToolCall]) -> list[ToolCall]:
        """*calls* with ids unique in the transcript (some servers repeat ``call_0``)."""
        seen = {
            str(c.get("id"))
            for m in self._messages
            for c in m.get("tool_calls") or []
            if isinstance(c, Mapping)
        }
        unique = []
        for call in calls:
            if not call.id or call.id in seen:
                call = replace(call, id=f"call_{uuid.uuid4().hex[:12]}")
            seen.add(call.id)
            unique.append(call)
        return unique

    def _has_tool(self, name: str) -> bool:
        return any(t["name"] == name for t in self._tools)

    def _summarize(self, prompt: str) -> str:
        assert self.client is not None
        return self.client.chat([{"role": "user", "content": prompt}]).content
