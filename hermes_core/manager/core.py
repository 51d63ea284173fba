"""The :class:`MemoryManager`: registration, tool routing and the lifecycle fan-out.

See the package docstring (:mod:`hermes_core.manager`) for what it guarantees.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import json
import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from hermes_core.config import get_hermes_home
from hermes_core.errors import PreCompressCheckpointError, contain, describe_exception
from hermes_core.fencing import clean_text
from hermes_core.manager.background import BackgroundWork
from hermes_core.manager.intake import (
    MAX_PROMPT_BLOCK_CHARS,
    MAX_RECALL_CHARS,
    MAX_TOOL_RESULT_CHARS,
    bounded_text,
    tool_error,
)
from hermes_core.manager.mirror import committed_writes
from hermes_core.manager.registration import SKIPPABLE_HOOKS, Registration
from hermes_core.provider import (
    BUILTIN_PROVIDER_NAME,
    PRE_COMPRESS_CHECKPOINT_API_VERSION,
    MemoryPrefetchResult,
    MemoryProvider,
)
from hermes_core.redaction import redact_egress
from hermes_core.signatures import only_accepted
from hermes_core.toolschema import RESERVED_TOOL_NAMES, normalize_tool_schema, schema_problem
from hermes_core.workers import SKIPPED, TIMED_OUT, call_with_timeout

__all__ = [
    "BUILTIN_PROVIDER_NAME",
    "DEFAULT_DRAIN_TIMEOUT",
    "DEFAULT_PREFETCH_TIMEOUT",
    "MAX_PROMPT_BLOCK_CHARS",
    "MAX_RECALL_CHARS",
    "MAX_TOOL_RESULT_CHARS",
    "RESERVED_TOOL_NAMES",
    "MemoryManager",
    "normalize_tool_schema",
]

logger = logging.getLogger(__name__)

DEFAULT_PREFETCH_TIMEOUT = 8.0
"""Seconds an external provider's ``prefetch`` may take before the turn goes on without it."""

DEFAULT_DRAIN_TIMEOUT = 5.0
"""Seconds ``shutdown_all`` waits for queued background work before abandoning it."""

_REFUSED = object()  # a hand-off that could not be redacted


def _not_json(value: Any) -> Any:
    """``json.dumps`` default: refuse what JSON has no type for (a set is not a list)."""
    raise TypeError(
        f"type {type(value).__name__!r} is not a JSON type; return str, dict, list, int, "
        "float, bool or None"
    )


class MemoryManager:
    """Registers memory providers and fans the agent's lifecycle out to them.

    *external_prefetch_timeout* bounds each external provider's ``prefetch``
    (default :data:`DEFAULT_PREFETCH_TIMEOUT`); *drain_timeout* bounds how long
    :meth:`shutdown_all` waits for background work (default
    :data:`DEFAULT_DRAIN_TIMEOUT`).
    """

    def __init__(
        self,
        *,
        external_prefetch_timeout: float | None = None,
        drain_timeout: float | None = None,
    ) -> None:
        if external_prefetch_timeout is None:
            external_prefetch_timeout = DEFAULT_PREFETCH_TIMEOUT
        if external_prefetch_timeout <= 0:
            raise ValueError("external_prefetch_timeout must be positive")
        if drain_timeout is None:
            drain_timeout = DEFAULT_DRAIN_TIMEOUT
        if drain_timeout < 0:
            raise ValueError("drain_timeout must be zero or positive")
        self._prefetch_timeout = float(external_prefetch_timeout)
        self._background = BackgroundWork(float(drain_timeout))
        self._lock = threading.Lock()
        self._entries: tuple[Registration, ...] = ()
        self._routes: dict[str, Registration] = {}
        self._tool_schemas: tuple[dict[str, Any], ...] = ()
        self._targets: dict[str, tuple[Registration, ...]] = {}
        self._warned: set[tuple[str, str, str]] = set()
        self._write_failures: dict[str, int] = {}
        self._last_recalled: tuple[Registration, ...] = ()
        self._text_memo: tuple[str, str] = ("", "")

    @property
    def external_prefetch_timeout(self) -> float:
        """Seconds each external ``prefetch`` may take before the turn goes on without it."""
        return self._prefetch_timeout

    # ------------------------------------------------------------------ registration

    def add_provider(self, provider: MemoryProvider) -> bool:
        """Register *provider*; return False when it is refused.

        The builtin provider is always accepted and kept ahead of the external
        one. A second external provider is refused with a warning. Tool schemas
        are read before anything changes, so a provider whose
        ``get_tool_schemas`` raises leaves the manager untouched (the error
        propagates to the caller; a ``BaseException`` other than
        ``KeyboardInterrupt`` as :class:`~hermes_core.errors.PluginCrash`).
        """
        name = provider.name
        if name != BUILTIN_PROVIDER_NAME and self._refuse_second_external(name):
            return False
        schemas = self._normalized_schemas(name, contain(provider.get_tool_schemas))
        registration = Registration.build(provider, name, schemas)
        with self._lock:
            if not registration.builtin and self._refuse_second_external(name):
                return False
            entries = list(self._entries)
            if registration.builtin:
                entries.insert(sum(entry.builtin for entry in entries), registration)
            else:
                entries.append(registration)
            self._install(entries)
        logger.info("Memory provider '%s' registered (%d tools)", name, len(schemas))
        return True

    def _refuse_second_external(self, name: str) -> bool:
        existing = next((entry.name for entry in self._entries if not entry.builtin), None)
        if existing is None:
            return False
        logger.warning(
            "Rejected memory provider '%s' — external provider '%s' is already registered. "
            "Only one external memory provider is allowed at a time. Configure which one via "
            "memory.provider in config.yaml.",
            name,
            existing,
        )
        return True

    def _normalized_schemas(self, name: str, schemas: Iterable[Any]) -> tuple[dict[str, Any], ...]:
        normalized = []
        for schema in list(schemas):
            tool, problem = schema_problem(schema)
            if tool is None:
                self._warn_once(
                    name,
                    problem,
                    "Memory provider '%s' declared %s; it is ignored. "
                    "Fix the schema in the provider's get_tool_schemas().",
                    name,
                    problem,
                )
                continue
            normalized.append(tool)
        return tuple(normalized)

    def _install(self, entries: list[Registration]) -> None:
        """Publish a new provider list with its routing table (caller holds the lock)."""
        routes: dict[str, Registration] = {}
        schemas: list[dict[str, Any]] = []
        for entry in entries:
            for schema in entry.schemas:
                tool = schema["name"]
                if not entry.builtin and tool in RESERVED_TOOL_NAMES:
                    self._warn_once(
                        entry.name,
                        tool,
                        "Memory provider '%s' tool '%s' shadows a reserved core tool name; "
                        "registration ignored. Rename the tool in the provider.",
                        entry.name,
                        tool,
                    )
                elif tool in routes:
                    self._warn_once(
                        entry.name,
                        tool,
                        "Memory tool name conflict: '%s' already registered by %s, "
                        "ignoring from %s",
                        tool,
                        routes[tool].name,
                        entry.name,
                    )
                else:
                    routes[tool] = entry
                    schemas.append(schema)
        self._targets = {
            hook: tuple(entry for entry in entries if hook in entry.hooks)
            for hook in SKIPPABLE_HOOKS
        }
        self._targets["external"] = tuple(entry for entry in entries if not entry.builtin)
        self._routes = routes
        self._tool_schemas = tuple(schemas)
        self._entries = tuple(entries)

    def _warn_once(self, provider: str, tool: str, message: str, *args: Any) -> None:
        key = (provider, tool, message)
        if key not in self._warned:
            self._warned.add(key)
            logger.warning(message, *args)

    def _refresh_tool_schemas(self) -> None:
        """Re-read tool schemas after initialization (providers may discover tools then)."""
        refreshed = []
        for entry in self._entries:
            try:
                schemas = self._normalized_schemas(
                    entry.name, contain(entry.provider.get_tool_schemas)
                )
            except Exception as exc:
                logger.warning(
                    "Memory provider '%s' get_tool_schemas failed after initialize; "
                    "keeping its registration-time tools: %s",
                    entry.name,
                    exc,
                )
                schemas = entry.schemas
            refreshed.append(dataclasses.replace(entry, schemas=schemas))
        with self._lock:
            if len(refreshed) == len(self._entries):
                self._install(refreshed)

    @property
    def providers(self) -> list[MemoryProvider]:
        """Registered providers, builtin first (a copy)."""
        return [entry.provider for entry in self._entries]

    @property
    def provider_names(self) -> list[str]:
        """Names of the registered providers, in order."""
        return [entry.name for entry in self._entries]

    def get_provider(self, name: str) -> MemoryProvider | None:
        """The first registered provider called *name*, or ``None``."""
        return next((entry.provider for entry in self._entries if entry.name == name), None)

    # ------------------------------------------------------------------ tools

    def get_all_tool_schemas(self) -> list[dict[str, Any]]:
        """Schemas of every routed tool (``{"name", "description", "parameters"}``), in order.

        Exactly the tools :meth:`handle_tool_call` can route: duplicates, nameless
        schemas and reserved names claimed by an external provider are left out.
        """
        return copy.deepcopy(list(self._tool_schemas))

    def get_all_tool_names(self) -> set[str]:
        """Names of every routed tool."""
        return set(self._routes)

    def has_tool(self, tool_name: str) -> bool:
        """Whether some provider handles *tool_name* (``False`` for anything but text)."""
        return isinstance(tool_name, str) and tool_name in self._routes

    def handle_tool_call(self, tool_name: str, args: Any, **kwargs: Any) -> str:
        """Route a tool call to the provider that owns *tool_name*; always returns JSON.

        Unknown tools and provider exceptions become ``{"error": ...}``; the
        arguments are redacted before the provider sees them.
        """
        entry = self._routes.get(tool_name) if isinstance(tool_name, str) else None
        if entry is None:
            return tool_error(self._unknown_tool(tool_name))
        try:
            result = contain(
                entry.provider.handle_tool_call, tool_name, redact_egress(args), **kwargs
            )
        except Exception as exc:
            logger.error("Memory provider '%s' tool '%s' failed: %s", entry.name, tool_name, exc)
            return tool_error(f"Memory tool '{tool_name}' failed: {exc}")
        if isinstance(result, bytes | bytearray):
            result = bytes(result).decode("utf-8", errors="replace")
        elif not isinstance(result, str):
            try:
                # str() of an object in the result runs the provider's code.
                result = contain(json.dumps, result, ensure_ascii=False, default=_not_json)
            except Exception as exc:  # e.g. tuple keys, a cycle, a failing __str__
                logger.error(
                    "Memory provider '%s' tool '%s' returned %s that is not JSON: %s",
                    entry.name,
                    tool_name,
                    type(result).__name__,
                    exc,
                )
                return tool_error(
                    f"Memory tool '{tool_name}' returned a result that cannot be encoded as "
                    f"JSON ({exc})."
                )
        result = clean_text(result)
        if len(result) > MAX_TOOL_RESULT_CHARS:
            logger.warning(
                "Memory provider '%s' tool '%s' returned %s characters; replaced by an error",
                entry.name,
                tool_name,
                f"{len(result):,}",
            )
            return tool_error(
                f"Tool '{tool_name}' returned {len(result):,} characters, more than the "
                f"{MAX_TOOL_RESULT_CHARS:,} a result may have; it was dropped. Ask for less "
                f"(a narrower query, fewer items). It began: {result[:2_000]}"
            )
        return result

    def _unknown_tool(self, tool_name: Any) -> str:
        """Why *tool_name* is routed nowhere, echoing it briefly (a near miss is named)."""
        if not isinstance(tool_name, str):
            return (
                f"A tool name must be text, got {type(tool_name).__name__}; no memory provider "
                "handles it."
            )
        shown = clean_text(tool_name)
        if len(shown) > 100:
            shown = f"{shown[:100]}… ({len(tool_name):,} characters)"
        message = f"No memory provider handles tool '{shown}'"
        folded = tool_name.strip().lower()
        near = [name for name in self._routes if name.lower() == folded]
        if near:
            message += f"; did you mean '{near[0]}'? Tool names are exact"
        return message

    # ------------------------------------------------------------------ redaction

    def _redacted(self, value: Any, hand_off: str) -> Any:
        """*value* scrubbed for egress, or ``_REFUSED`` when it cannot be scrubbed."""
        if isinstance(value, str):
            # on_turn_start and prefetch_all usually receive the same text.
            memo = self._text_memo
            if memo[0] == value:
                return memo[1]
        try:
            clean = redact_egress(value)
        except Exception as exc:
            logger.warning(
                "Not handing %s to memory providers: redaction failed: %s", hand_off, exc
            )
            return _REFUSED
        if isinstance(value, str):
            self._text_memo = (value, clean)
        return clean

    # ------------------------------------------------------------------ per turn

    def _bounded(self, entry: Registration, hook: str, fn: Callable[..., Any], *args: Any) -> Any:
        """*fn* of *entry*: inline for the builtin, else bounded by the external timeout.

        Returns :data:`~hermes_core.workers.TIMED_OUT` when an external call
        outlives ``external_prefetch_timeout``.
        """
        if entry.name == BUILTIN_PROVIDER_NAME:
            return contain(fn, *args)
        return call_with_timeout(
            contain, fn, *args, timeout=self._prefetch_timeout, name=f"memory-{hook}-{entry.name}"
        )

    def build_system_prompt(self) -> str:
        """Every provider's ``system_prompt_block``, non-empty ones joined by a blank line."""
        blocks = []
        for entry in self._entries:
            try:
                block = self._bounded(
                    entry, "system_prompt_block", entry.provider.system_prompt_block
                )
            except Exception as exc:
                logger.warning("Memory provider '%s' system_prompt_block: %s", entry.name, exc)
                continue
            if block is TIMED_OUT:
                logger.warning(
                    "Memory provider '%s' system_prompt_block did not return within %gs; "
                    "the prompt is built without its block (the other providers' blocks stay)",
                    entry.name,
                    self._prefetch_timeout,
                )
                continue
            if block is not None and not isinstance(block, str):
                logger.warning(
                    "Memory provider '%s' system_prompt_block returned %s, not str; ignored",
                    entry.name,
                    type(block).__name__,
                )
                continue
            if block and block.strip():
                text = bounded_text(
                    entry.name, "system_prompt_block", block.strip(), MAX_PROMPT_BLOCK_CHARS
                )
                blocks.append(text)
        return "\n\n".join(blocks)

    def on_turn_start(self, turn_number: int, message: str, **kwargs: Any) -> None:
        """Tell providers a user turn begins (before :meth:`prefetch_all`).

        Each provider receives only the keyword arguments its hook declares
        (all of them when it takes ``**kwargs``).
        """
        targets = self._targets.get("on_turn_start", ())
        if not targets:
            return
        clean = self._redacted(message, "the turn message")
        if clean is _REFUSED:
            return
        for entry in targets:
            accepted = entry.turn_start_keywords
            call_kwargs = (
                kwargs if accepted is None else {k: v for k, v in kwargs.items() if k in accepted}
            )
            try:
                contain(entry.provider.on_turn_start, turn_number, clean, **call_kwargs)
            except Exception as exc:
                logger.debug("Memory provider '%s' on_turn_start: %s", entry.name, exc)

    def on_turn_end(self, turn_number: int, **kwargs: Any) -> None:
        """Tell providers the turn *turn_number* was handed over (before :meth:`sync_all`).

        Each provider receives only the keyword arguments its hook declares. The
        builtin runs inline, first; each external provider within
        ``external_prefetch_timeout``. A failure or timeout is logged at WARNING,
        naming the provider, and costs only that provider's hook.
        """
        for entry in self._targets.get("on_turn_end", ()):
            hook = functools.partial(
                entry.provider.on_turn_end, **only_accepted(entry.turn_end_keywords, kwargs)
            )
            try:
                outcome = self._bounded(entry, "on_turn_end", hook, turn_number)
                if outcome is TIMED_OUT:
                    raise TimeoutError(f"did not return within {self._prefetch_timeout:g}s")
            except Exception as exc:
                logger.warning("Memory provider '%s' on_turn_end: %s", entry.name, exc)

    def prefetch_all(self, query: str, *, session_id: str = "") -> str:
        """Recall for this turn: every provider's ``prefetch``, joined by a blank line.

        The builtin provider runs inline. Each external provider runs on its own
        thread and is waited for at most ``external_prefetch_timeout`` seconds;
        a provider whose previous call has not returned yet is skipped.
        """
        targets = self._targets.get("prefetch", ())
        self._last_recalled = ()
        if not targets or not query:
            return ""
        clean = self._redacted(query, "the prefetch query")
        if clean is _REFUSED:
            return ""
        parts = []
        recalled = []
        for entry in targets:
            try:
                if entry.lane is None:
                    result = contain(entry.prefetch, clean, session_id)
                else:
                    result = contain(entry.lane.run, clean, session_id, self._prefetch_timeout)
            except Exception as exc:
                logger.warning("Memory provider '%s' prefetch: %s", entry.name, exc)
                continue
            if result is SKIPPED:
                logger.debug(
                    "Memory provider '%s' prefetch skipped: its previous call is still running",
                    entry.name,
                )
                continue
            if result is TIMED_OUT:
                logger.warning(
                    "Memory provider '%s' prefetch timed out after %gs; skipping it until "
                    "the stuck call returns",
                    entry.name,
                    self._prefetch_timeout,
                )
                continue
            if isinstance(result, MemoryPrefetchResult):  # newer Hermes' structured recall
                result = result.context
            if isinstance(result, (int, float)) and not isinstance(result, bool):
                result = str(result)
            if result is not None and not isinstance(result, str):
                logger.warning(
                    "Memory provider '%s' prefetch returned %s, not str; ignored",
                    entry.name,
                    type(result).__name__,
                )
                continue
            text = (result or "").strip()
            if text:
                parts.append(bounded_text(entry.name, "prefetch", text, MAX_RECALL_CHARS))
                recalled.append(entry)
        self._last_recalled = tuple(recalled)
        return "\n\n".join(parts)

    @property
    def stuck_prefetches(self) -> list[str]:
        """External providers whose timed-out ``prefetch`` or ``queue_prefetch`` still runs."""
        return [
            entry.name
            for entry in self._entries
            if any(lane is not None and lane.stuck for lane in (entry.lane, entry.warm_lane))
        ]

    def describe_recall(self) -> str:
        """One status segment per provider that contributed to the last :meth:`prefetch_all`.

        ``"🧠 <label> — recalled 3 memories"``; segments are joined by two
        spaces; ``""`` when nothing was recalled.
        """
        segments = []
        for entry in self._last_recalled:
            if "recall_status" not in entry.hooks:
                continue
            try:
                status = contain(entry.provider.recall_status)
                if status is not None:  # anything but a RecallStatus fails on the way
                    segments.append(_recall_segment(status))
            except Exception as exc:
                logger.debug("Memory provider '%s' recall_status: %s", entry.name, exc)
        return "  ".join(segments)

    def _warm(self, entry: Registration, query: Any, session_id: str) -> Any:
        if entry.warm_lane is None:
            return contain(entry.queue_prefetch, query, session_id)
        return contain(entry.warm_lane.run, query, session_id, self._prefetch_timeout)

    def queue_prefetch_all(self, query: str, *, session_id: str = "") -> None:
        """Let providers warm the next turn's recall, on the background worker."""
        targets = self._targets.get("queue_prefetch", ())
        if not targets or not query:
            return

        def warm() -> None:
            clean = self._redacted(query, "the prefetch query")
            if clean is _REFUSED:
                return
            for entry in targets:
                try:
                    with self._background.running(entry.name, "queue_prefetch"):
                        warmed = self._warm(entry, clean, session_id)
                    if warmed is TIMED_OUT:
                        logger.warning(
                            "Memory provider '%s' queue_prefetch did not return within %.1fs; "
                            "background writes go on without it, and its warm-ups are "
                            "skipped until it returns.",
                            entry.name,
                            self._prefetch_timeout,
                        )
                except Exception as exc:
                    logger.warning("Memory provider '%s' queue_prefetch: %s", entry.name, exc)

        self._background.submit("prefetch", warm)

    def sync_all(
        self,
        user_content: str,
        assistant_content: str,
        *,
        session_id: str = "",
        messages: Sequence[dict[str, Any]] | None = None,
        turn_author: Any = None,
    ) -> None:
        """Hand a completed turn to every provider's ``sync_turn``, on the background worker.

        ``session_id``, ``messages`` and ``turn_author`` only reach providers
        whose ``sync_turn`` accepts them, so a legacy
        ``sync_turn(user, assistant, *, session_id="")`` keeps working.
        """
        targets = self._targets.get("sync_turn", ())
        if not targets or not user_content:
            return
        transcript = list(messages) if messages is not None else None

        def write() -> None:
            clean = self._redacted(
                (user_content, assistant_content, transcript, turn_author), "a completed turn"
            )
            if clean is _REFUSED:
                return
            user, assistant, clean_messages, author = clean
            for entry in targets:
                kwargs: dict[str, Any] = {}
                if "session_id" in entry.sync_keywords:
                    kwargs["session_id"] = session_id
                if clean_messages is not None and "messages" in entry.sync_keywords:
                    kwargs["messages"] = clean_messages
                if author is not None and "turn_author" in entry.sync_keywords:
                    kwargs["turn_author"] = author
                try:
                    with self._background.running(entry.name, "sync_turn"):
                        contain(entry.provider.sync_turn, user, assistant, **kwargs)
                except Exception as exc:
                    logger.warning("Memory provider '%s' sync_turn: %s", entry.name, exc)

        self._background.submit("write", write)

    # ------------------------------------------------------------------ lifecycle

    def initialize_all(self, session_id: str, **kwargs: Any) -> None:
        """Call every provider's ``initialize(session_id=..., **kwargs)``.

        ``hermes_home`` is added when absent and ``None`` values are dropped
        (providers never receive ``None`` for an absent value). Tool schemas are
        read again afterwards, so tools a provider discovers while initializing
        are routed.
        """
        self._initialize("initialize", session_id, kwargs)

    def initialize_all_for_inspection(self, session_id: str, **kwargs: Any) -> None:
        """Like :meth:`initialize_all` for read-only agents (``initialize_for_inspection``)."""
        self._initialize("initialize_for_inspection", session_id, kwargs)

    def _initialize(self, hook: str, session_id: str, kwargs: dict[str, Any]) -> None:
        call_kwargs = {key: value for key, value in kwargs.items() if value is not None}
        call_kwargs.setdefault("hermes_home", str(get_hermes_home()))
        failed = []
        for entry in self._entries:
            try:
                contain(getattr(entry.provider, hook), session_id=session_id, **call_kwargs)
            except Exception as exc:
                cause = exc.__cause__ or exc.__context__
                logger.warning(
                    "Memory provider '%s' %s: %s%s",
                    entry.name,
                    hook,
                    exc,
                    f" (caused by {cause!r})" if cause is not None else "",
                )
                if not entry.builtin:
                    failed.append(entry)
        dropped = [entry for entry in failed if not self._still_available(entry)]
        if dropped:
            with self._lock:
                self._install([entry for entry in self._entries if entry not in dropped])
        self._refresh_tool_schemas()

    def _still_available(self, entry: Registration) -> bool:
        """After a failed ``initialize``: whether the provider still says it can run.

        One that now reports itself unavailable (it shut itself down) is dropped
        for this manager's life; one that still says yes stays, as in Hermes.
        """
        try:
            available = bool(contain(entry.provider.is_available))
        except Exception as exc:
            available = False
            logger.debug("Memory provider '%s' is_available raised %s", entry.name, exc)
        if not available:
            logger.warning(
                "Memory provider '%s' is not used for the rest of this session: it failed to "
                "initialize and now reports itself unavailable",
                entry.name,
            )
        return available

    def on_session_end(self, messages: Sequence[dict[str, Any]] | None) -> None:
        """A real session boundary: hand each provider a redacted copy of the transcript.

        Background work queued before it (the last turn's ``sync_turn``) runs
        first (bounded by ``drain_timeout``).
        """
        self._background.settle("on_session_end")
        clean = self._redacted(list(messages or []), "the session transcript")
        if clean is not _REFUSED:
            self._end_session(clean)

    def _end_session(self, messages: list[dict[str, Any]]) -> None:
        for entry in self._entries:
            try:
                contain(entry.provider.on_session_end, messages)
            except Exception as exc:
                logger.warning(
                    "Memory provider '%s' on_session_end: %s", entry.name, describe_exception(exc)
                )
                logger.debug("on_session_end of '%s' failed", entry.name, exc_info=True)

    def on_session_switch(
        self,
        new_session_id: str,
        *,
        parent_session_id: str = "",
        reset: bool = False,
        rewound: bool = False,
        **kwargs: Any,
    ) -> None:
        """The session id rotated (resume, branch, reset, compression, undo)."""
        if new_session_id:
            self._background.settle("on_session_switch")
        self._switch_session(
            new_session_id, parent_session_id, reset, rewound, kwargs, log=logger.debug
        )

    def _switch_session(
        self,
        new_session_id: str,
        parent_session_id: str,
        reset: bool,
        rewound: bool,
        kwargs: dict[str, Any],
        *,
        log: Callable[..., None],
    ) -> None:
        if not new_session_id:
            return
        if rewound:  # forwarded only when true, so providers' **kwargs stay clean
            kwargs = {**kwargs, "rewound": True}
        for entry in self._entries:
            try:
                contain(
                    entry.provider.on_session_switch,
                    new_session_id,
                    parent_session_id=parent_session_id,
                    reset=reset,
                    **kwargs,
                )
            except Exception as exc:
                log("Memory provider '%s' on_session_switch: %s", entry.name, exc)

    def commit_session_boundary_async(
        self,
        messages: Sequence[dict[str, Any]] | None,
        *,
        new_session_id: str,
        parent_session_id: str = "",
        reason: str = "new_session",
    ) -> bool:
        """End the session and switch to *new_session_id* on the background worker.

        One task runs ``on_session_end`` on every provider and then
        ``on_session_switch(..., reset=True, reason=reason)``, so ``/new`` does
        not wait for slow extraction and the old transcript is never attributed
        to the new session. Returns whether the task was accepted.
        """
        if not self._entries:
            return False
        snapshot = list(messages or [])

        def commit() -> None:
            clean = self._redacted(snapshot, "the session transcript")
            if clean is not _REFUSED:
                self._end_session(clean)
            self._switch_session(
                new_session_id,
                parent_session_id,
                True,
                False,
                {"reason": reason},
                log=logger.warning,
            )

        return self._background.submit("write", commit)

    def on_pre_compress(
        self,
        messages: Sequence[dict[str, Any]] | None,
        *,
        evidence_messages: Sequence[dict[str, Any]] | None = None,
        require_checkpoint: bool = False,
        checkpoint_api_version: int = PRE_COMPRESS_CHECKPOINT_API_VERSION,
    ) -> str:
        """Collect what providers want kept before *messages* are compressed away.

        Providers advertising ``pre_compress_checkpoint_api_version >=
        checkpoint_api_version`` are checkpoint providers: they receive
        *evidence_messages* (when given) and, if their hook accepts it,
        ``require_checkpoint``. With ``require_checkpoint=True`` a failing
        checkpoint provider's exception propagates, and
        :class:`~hermes_core.errors.PreCompressCheckpointError` is raised when no
        checkpoint provider completed; the caller then keeps the transcript.
        """
        self._background.settle("on_pre_compress")
        evidence = list(evidence_messages) if evidence_messages is not None else None
        clean = self._redacted((list(messages or []), evidence), "the transcript to compress")
        if clean is _REFUSED:
            if require_checkpoint:
                raise PreCompressCheckpointError(
                    "The transcript could not be redacted, so no provider could checkpoint it; "
                    "keep the uncompressed transcript."
                )
            return ""
        clean_messages, clean_evidence = clean
        parts = []
        checkpointed = False
        for entry in self._entries:
            checkpoint = (entry.checkpoint_version or 1) >= checkpoint_api_version
            payload = (
                clean_evidence if checkpoint and clean_evidence is not None else clean_messages
            )
            try:
                if checkpoint and entry.pre_compress_takes_require:
                    text = contain(
                        entry.provider.on_pre_compress,
                        payload,
                        require_checkpoint=require_checkpoint,
                    )
                else:
                    text = contain(entry.provider.on_pre_compress, payload)
            except Exception as exc:
                logger.debug("Memory provider '%s' on_pre_compress: %s", entry.name, exc)
                if require_checkpoint and checkpoint:
                    raise
                continue
            checkpointed = checkpointed or checkpoint
            if isinstance(text, str) and text.strip():
                parts.append(
                    bounded_text(
                        entry.name, "on_pre_compress", text.strip(), MAX_PROMPT_BLOCK_CHARS
                    )
                )
        if require_checkpoint and not checkpointed:
            raise PreCompressCheckpointError(
                "No active memory provider completed pre-compress checkpoint API "
                f"v{checkpoint_api_version}; keep the uncompressed transcript."
            )
        return "\n\n".join(parts)

    def supports_pre_compress_checkpoint(
        self, api_version: int = PRE_COMPRESS_CHECKPOINT_API_VERSION
    ) -> bool:
        """Whether some provider advertises the checkpoint contract *api_version* or newer."""
        return any(
            entry.checkpoint_version is not None and entry.checkpoint_version >= api_version
            for entry in self._entries
        )

    def on_delegation(
        self, task: str, result: str, *, child_session_id: str = "", **kwargs: Any
    ) -> None:
        """A subagent finished *task* with *result*; tell every provider."""
        clean = self._redacted((task, result), "a delegation result")
        if clean is _REFUSED:
            return
        clean_task, clean_result = clean
        for entry in self._entries:
            try:
                contain(
                    entry.provider.on_delegation,
                    clean_task,
                    clean_result,
                    child_session_id=child_session_id,
                    **kwargs,
                )
            except Exception as exc:
                logger.debug("Memory provider '%s' on_delegation: %s", entry.name, exc)

    def on_tool_result(self, tool_name: str, result: str) -> None:
        """A tool's *result* entered the model's context this turn; tell the providers that
        implement ``on_tool_result`` (untrusted text, for provenance), with the name of the
        provider owning the tool (``""``: a host tool).

        The result is redacted first. The builtin runs inline, each external provider
        within ``external_prefetch_timeout``; a failure or timeout is logged at WARNING.
        """
        targets = self._targets.get("on_tool_result", ())
        if not targets or not isinstance(result, str) or not result.strip():
            return
        clean = self._redacted(result, "a tool result")
        if clean is _REFUSED:
            return
        route = self._routes.get(tool_name) if isinstance(tool_name, str) else None
        owner = route.name if route is not None else ""
        for entry in targets:
            hook = functools.partial(entry.provider.on_tool_result, provider=owner)
            try:
                outcome = self._bounded(entry, "on_tool_result", hook, str(tool_name), clean)
                if outcome is TIMED_OUT:
                    raise TimeoutError(f"did not return within {self._prefetch_timeout:g}s")
            except Exception as exc:
                logger.warning(
                    "Memory provider '%s' on_tool_result (tool '%s'): %s",
                    entry.name,
                    tool_name,
                    exc,
                )

    # ------------------------------------------------------------------ memory writes

    def on_memory_write(
        self,
        action: str,
        target: str,
        content: str,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        """Mirror a committed builtin memory write to every external provider.

        Each provider is called in the ``on_memory_write`` shape it was written
        for (see :mod:`hermes_core.writeshim`). A failure is logged at WARNING
        and counted in :attr:`write_mirror_failures`.
        """
        targets = self._targets.get("external", ())
        if not targets:
            return
        clean = self._redacted((content, dict(metadata or {})), "a memory write")
        if clean is _REFUSED:
            return
        clean_content, clean_metadata = clean
        for entry in targets:
            try:
                outcome = self._bounded(
                    entry,
                    "on_memory_write",
                    entry.write,
                    action,
                    target,
                    clean_content,
                    clean_metadata,
                )
                if outcome is TIMED_OUT:
                    raise TimeoutError(
                        f"on_memory_write did not return within {self._prefetch_timeout:g}s"
                    )
            except Exception as exc:
                with self._lock:
                    self._write_failures[entry.name] = self._write_failures.get(entry.name, 0) + 1
                logger.warning(
                    "Memory provider '%s' did not receive memory write (%s on %s): %s",
                    entry.name,
                    action,
                    target,
                    exc,
                )

    @property
    def write_mirror_failures(self) -> dict[str, int]:
        """How many mirrored memory writes each external provider failed to take."""
        with self._lock:
            return dict(self._write_failures)

    def notify_memory_tool_write(
        self,
        tool_result: Any,
        tool_args: Mapping[str, Any] | None,
        *,
        build_metadata: Callable[[], Mapping[str, Any]] | None = None,
    ) -> int:
        """Mirror what the builtin ``memory`` tool committed; return the writes mirrored.

        Only a result that parses to ``{"success": true, ...}`` and is not
        staged for approval is mirrored; each ``add``/``replace``/``remove``
        operation (one, or each of ``operations``) becomes an
        :meth:`on_memory_write`. ``previous_content`` comes only from the
        committed result (``replaced_entry``/``removed_entry``, or the
        ``replaced_entries``/``removed_entries`` of a batch keyed by 1-based
        operation index), never from arguments or *build_metadata*.
        """
        writes = committed_writes(tool_result, tool_args, build_metadata)
        for write in writes:
            self.on_memory_write(write.action, write.target, write.content, write.metadata)
        return len(writes)

    # ------------------------------------------------------------------ background work

    def flush_pending(self, timeout: float | None = None) -> bool:
        """Wait until all background work queued so far has run; False on timeout."""
        return self._background.flush(timeout)

    @property
    def shutdown_drain_state(self) -> dict[str, Any]:
        """How the last shutdown drain went.

        ``{"status": "not_started" | "draining" | "drained" | "timed_out",
        "abandoned_writes": int, "abandoned_prefetches": int, "active_tasks": int}``
        """
        return self._background.drain_state

    def shutdown_all(self) -> None:
        """Drain background work (bounded), then shut providers down in reverse order.

        Queued work still waiting after ``drain_timeout`` seconds is cancelled and
        counted in :attr:`shutdown_drain_state`; a task that is still running is
        left to finish on its daemon thread. Later submissions are rejected.
        Calling it again does nothing.
        """
        if not self._background.close():
            return
        for entry in self._entries:
            for lane in (entry.lane, entry.warm_lane):
                if lane is not None:
                    lane.stop()
        for entry in reversed(self._entries):
            try:
                contain(entry.provider.shutdown)
            except Exception as exc:
                logger.warning("Memory provider '%s' shutdown: %s", entry.name, exc)


def _recall_segment(status: Any) -> str:
    """``"🧠 Honcho — recalled 3 memories"`` for a :class:`RecallStatus`."""
    count = status.count
    if count == 1:
        detail = "recalled 1 memory"
    elif count > 1:
        detail = f"recalled {count} memories"
    else:
        detail = "recalled relevant memory"
    return f"{status.glyph} {status.provider_label} — {detail}"
