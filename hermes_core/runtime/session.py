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
  messages persisted; ``on_turn_end`` (at once); ``sync_all`` and
  ``queue_prefetch_all`` (background);
* **compression** — at a share of the context window: ``on_pre_compress``, a
  checkpoint, the old session ended with ``end_reason='compression'``, a child
  with ``parent_session_id``, a numbered title, ``on_session_switch(new,
  parent_session_id=old, reset=False, reason='compression')``, a rebuilt prompt;
* **end** — ``on_session_end(messages)``, ``shutdown_all()``.

The memory side of that lifecycle (start, the frozen block, recall, tool
routing, the turn's hand-off, the end) is :class:`~hermes_core.runtime.host.Memory`,
the host API; this class runs on it and adds the model calls, the tool loop,
deferred writes under a locked store, compression and delegation.

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

from hermes_core.config import get_hermes_home, load_config
from hermes_core.errors import (
    LLMError,
    LLMNotConfiguredError,
    MessageTooLongError,
    SessionStoreError,
)
from hermes_core.fencing import StreamingContextScrubber, clean_text, scrub_context_spans
from hermes_core.llm import ChatClient, ChatResponse, ToolCall, Usage
from hermes_core.redaction import redact_egress
from hermes_core.runtime.compression import CompressionSettings, ContextCompressor
from hermes_core.runtime.host import Memory, open_parts, store_row
from hermes_core.runtime.interrupts import deferred_interrupt
from hermes_core.runtime.prompt import (
    PromptParts,
    context_files_block,
    load_identity,
    tool_guidance,
)
from hermes_core.runtime.settings import RuntimeSettings, new_session_id
from hermes_core.runtime.tokens import (
    estimate_messages_tokens,
    estimate_text_tokens,
    estimate_tools_tokens,
)

if TYPE_CHECKING:
    from hermes_core.manager import MemoryManager
    from hermes_core.sessions import SessionStore

__all__ = [
    "DELEGATE_TOOL",
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
DELEGATE_TOOL = "delegate"
"""The tool name a subagent's answer reaches the providers' ``on_tool_result`` under."""

_UNSET: Any = object()


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
        self.model_name = model_name or (client.model if client is not None else None)
        self.memory = Memory(
            manager,
            store,
            hermes_home=self.hermes_home,
            settings=self.settings,
            title=title,
            model_name=self.model_name,
            clock=clock,
        )
        """The memory lifecycle this session's turns run on (the host API)."""
        self.compressor = ContextCompressor(
            compression or CompressionSettings(),
            summarizer=self._summarize if client is not None else None,
        )
        self._clock = clock
        self._guard = self.memory.guard
        self._session_id = ""
        self._system_prompt = ""
        self._tools: list[dict[str, Any]] = []
        self._messages: list[dict[str, Any]] = []
        self._api_content: dict[int, str] = {}
        self._unsaved: list[tuple[str, list[dict[str, Any]]]] = []
        self._unsaved_error = ""
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
        home = Path(hermes_home) if hermes_home is not None else get_hermes_home()
        cfg = dict(load_config(home) if config is None else config)
        runtime = RuntimeSettings.from_config(cfg, **settings)
        compression = CompressionSettings.from_config(cfg)
        if client is _UNSET:
            client = ChatClient.from_config(cfg, hermes_home=home)
        manager, store = open_parts(home, cfg, runtime)
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
        session_id = self.memory.start(record_prompt=False)
        self._session_id = session_id
        self._tools = self.memory.tool_schemas()
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
            # A turn still running may hold the memory session too: don't wait twice.
            self._close(end_reason, wait=wait if idle else 0.0)
        finally:
            if idle:
                self._busy.release()

    def _close(self, end_reason: str, *, wait: float) -> None:
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
            self.memory.close(end_reason, messages=self.messages, wait=wait)
        finally:
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
            self.memory.create_row(new_id, title=title)
            self._store_call(self.store.end_session, old_id, "new_session")
            self._session_id = new_id
            self.memory.continue_in(new_id, title=title, new_conversation=True)
            self._messages, self._api_content = [], {}
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
            self._freeze_system_prompt(refresh=True)
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

        recall = self.memory.begin_turn(
            user_message,
            remaining_tokens=max(
                0, self.compressor.settings.context_window - self.context_tokens(user_message)
            ),
        )
        block = result.recalled = recall.block
        result.recall_status = recall.status
        self._commit([{"role": "user", "content": user_message}], api_content=block)
        if self.memory.turn == 1:
            self.memory.name_untitled(user_message)

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

        self.memory.finish_turn(user_message, result.content, messages=self.messages)
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
        self._freeze_system_prompt(refresh=True)
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
                self.memory.create_row(new_id, parent_session_id=old_id)
                title = None
                if old_title:
                    title = self._store_call(self.store.next_title_in_lineage, old_title)
                    if title:
                        self._store_call(self.store.set_session_title, new_id, title)
                self.store.append_messages(new_id, [store_row(m) for m in messages])
            except SessionStoreError:
                self._store_call(self.store.delete_session, new_id)
                self._store_call(self.store.reopen_session, old_id)
                raise
            self._session_id = new_id
            self.memory.continue_in(new_id, title=title)
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
        Providers get ``on_delegation(task, result, child_session_id=…)``, and the
        answer as an untrusted tool result (``on_tool_result``, tool
        :data:`DELEGATE_TOOL`) of this turn and of the next: a memory write of the
        parent that repeats it is tool-derived (the builtin holds it for review).
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
        self.memory.note_tool_result(DELEGATE_TOOL, content, next_turn=True)
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

    def _freeze_system_prompt(self, *, refresh: bool = False) -> None:
        """Render the session's prompt around the memory block (read again with *refresh*)."""
        blocks = self.memory.refresh_system_prompt() if refresh else self.memory.system_prompt()
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
        self.memory.record_system_prompt(self._system_prompt)

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
        rows = [store_row(message) for message in messages]
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
        self.memory.store_rows(rows, session_id)

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
        output = self.memory.call_tool(call.name, arguments, call_id=call.id)
        return ToolRun(call.name, arguments, output)

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

    def _summarize(self, prompt: str) -> str:
        assert self.client is not None
        return self.client.chat([{"role": "user", "content": prompt}]).content
