"""The memory provider contract.

:class:`MemoryProvider` keeps the hook names and signatures of Hermes Agent's
``agent/memory_provider.py`` so a provider written for Hermes works here
unchanged. Only ``name``, ``is_available``, ``initialize`` and
``get_tool_schemas`` are abstract; every other hook has a safe default.
"""

from __future__ import annotations

import contextvars
import functools
import re
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

__all__ = [
    "BUILTIN_PROVIDER_NAME",
    "CORE_MEMORY_PROVIDER_SENTINELS",
    "INDICATOR_GLYPH",
    "MAX_MEMORY_OBSERVATIONS",
    "PRE_COMPRESS_CHECKPOINT_API_VERSION",
    "TOOL_NAME_PATTERN",
    "MemoryObservation",
    "MemoryPrefetchResult",
    "MemoryProvider",
    "RecallStatus",
    "ctx_bound",
    "is_core_memory_provider",
    "is_trivial_prompt",
    "spawn_context_thread",
]

BUILTIN_PROVIDER_NAME = "builtin"
"""The name of the always-on builtin provider, reserved for it (no plugin may take it)."""

PRE_COMPRESS_CHECKPOINT_API_VERSION = 2
"""Version of the opt-in, fail-closed ``on_pre_compress`` checkpoint contract."""

INDICATOR_GLYPH = "🧠"
"""Default glyph of a recall indicator line."""

TOOL_NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
"""Tool names every major model API accepts (what ``get_tool_schemas`` names must match)."""


CORE_MEMORY_PROVIDER_SENTINELS = frozenset({"", "default", "builtin", "built-in", "none"})
"""``memory.provider`` values that select the builtin store alone (as in Hermes Agent)."""

MAX_MEMORY_OBSERVATIONS = 16
"""Observations a :class:`MemoryPrefetchResult` keeps; more are dropped."""


def is_core_memory_provider(name: str | None) -> bool:
    """Whether a ``memory.provider`` value means the builtin store, not an external plugin."""
    return str(name or "").strip().lower() in CORE_MEMORY_PROVIDER_SENTINELS


@dataclass(frozen=True)
class MemoryObservation:
    """Structured data a provider attaches to its recall (newer Hermes' prefetch API).

    hermes-memory carries it but has no observers: only the text of a
    :class:`MemoryPrefetchResult` reaches the turn.
    """

    source_kind: str
    schema: str
    version: int
    payload: Any
    provider: str = ""


@dataclass(frozen=True)
class MemoryPrefetchResult:
    """What ``prefetch`` may return instead of a str: the recall text plus observations."""

    context: str = ""
    observations: tuple[MemoryObservation, ...] = ()

    def __post_init__(self) -> None:
        observations = () if self.observations is None else self.observations
        if not isinstance(observations, (list, tuple)):
            raise TypeError(
                f"observations must be a list or tuple, not {type(observations).__name__}"
            )
        object.__setattr__(self, "observations", tuple(observations[:MAX_MEMORY_OBSERVATIONS]))


@dataclass(frozen=True)
class RecallStatus:
    """What the last ``prefetch`` of a provider injected.

    ``count`` is the number of discrete memories; ``0`` means content was
    injected without a discrete count.
    """

    provider_label: str
    count: int
    glyph: str = INDICATOR_GLYPH


_TRIVIAL_WORDS = (
    "yes|no|ok|okay|sure|thanks|thank you|y|n|yep|nope|yeah|nah|hi|hey|hello|yo|sup|"
    "continue|go ahead|do it|proceed|got it|cool|nice|great|done|next|lgtm|k"
)
# Whole prompt = one trivial word, then only whitespace / punctuation (incl. typographic).
TRIVIAL_PROMPT_RE = re.compile(
    r"^(?:" + _TRIVIAL_WORDS + r")"
    r"[\s\u00a0\u2000-\u200a\u3000.,;:!?~*&^%$#@+=`'\"()\[\]{}<>\-\u2010-\u2015\u2018-\u201f\u2026]*$",
    re.IGNORECASE,
)


def is_trivial_prompt(text: str | None) -> bool:
    """True when a user prompt does not deserve memory recall.

    Empty or whitespace-only text, slash commands, and acknowledgements such as
    ``ok``, ``thanks :)`` or ``lgtm`` are trivial; ``k8s`` or ``note`` are not.
    """
    if text is None:
        return True
    stripped = text.strip()
    if not stripped or stripped.startswith("/"):
        return True
    return TRIVIAL_PROMPT_RE.match(stripped) is not None


_F = TypeVar("_F", bound=Callable[..., Any])


def ctx_bound(fn: _F) -> _F:
    """Wrap *fn* to run under a snapshot of the caller's ``contextvars``."""
    context = contextvars.copy_context()

    @functools.wraps(fn)
    def runner(*args: Any, **kwargs: Any) -> Any:
        return context.copy().run(fn, *args, **kwargs)

    return runner  # type: ignore[return-value]


def spawn_context_thread(
    target: Callable[..., Any],
    *,
    name: str,
    daemon: bool = True,
    args: tuple[Any, ...] = (),
    kwargs: Mapping[str, Any] | None = None,
) -> threading.Thread:
    """Return an unstarted thread running *target* in a copy of the caller's context."""
    context = contextvars.copy_context()
    call_kwargs = dict(kwargs or {})

    def run() -> None:
        context.run(target, *args, **call_kwargs)

    return threading.Thread(target=run, name=name, daemon=daemon)


class MemoryProvider(ABC):
    """Base class of every memory provider (builtin and external).

    The host calls the hooks below; see ``docs/provider-contract.md`` for when
    each one runs. Hooks must not raise into the turn: the manager isolates
    them, but a well-behaved provider degrades to empty results itself.
    """

    pre_compress_checkpoint_api_version: int = 1
    """Set to 2 to opt into the fail-closed pre-compress checkpoint contract."""

    @property
    @abstractmethod
    def name(self) -> str:
        """Unique provider name; ``"builtin"`` is reserved for the builtin store."""

    @abstractmethod
    def is_available(self) -> bool:
        """Whether the provider can run: configuration and imports only, no network."""

    @abstractmethod
    def initialize(self, session_id: str, **kwargs: Any) -> None:
        """Start a session.

        kwargs always carry ``hermes_home`` and ``platform``; they may carry
        ``agent_context`` (skip writes unless ``"primary"``), ``user_id``,
        ``agent_identity``, ``parent_session_id`` and chat details. Absent
        values are omitted, never passed as ``None``.
        """

    def initialize_for_inspection(self, session_id: str, **kwargs: Any) -> None:
        """Initialize for read-only inspection; override to avoid network or workers."""
        self.initialize(session_id=session_id, **kwargs)

    def unavailable_reason(self) -> str:
        """When ``is_available()`` is False: what the user must install or set."""
        return ""

    def system_prompt_block(self) -> str:
        """Static text for the system prompt (instructions, status), built once per session."""
        return ""

    def prefetch(self, query: str, *, session_id: str = "") -> str | MemoryPrefetchResult:
        """Recall for this turn's user message; must be fast (serve background results).

        Text, or a :class:`MemoryPrefetchResult` whose ``context`` is that text.
        """
        return ""

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        """Warm the cache that the next turn's ``prefetch`` reads."""

    def recall_status(self) -> RecallStatus | None:
        """Describe what the last ``prefetch`` injected, or ``None``."""
        return None

    def sync_turn(
        self,
        user_content: str,
        assistant_content: str,
        *,
        session_id: str = "",
        messages: list[dict[str, Any]] | None = None,
    ) -> None:
        """Persist a completed turn; the host runs this on a background worker."""

    @abstractmethod
    def get_tool_schemas(self) -> list[dict[str, Any]]:
        """Tools this provider exposes: ``{"name", "description", "parameters"}`` each."""

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        """Run one of this provider's tools and return a JSON string."""
        raise NotImplementedError(f"Provider {self.name} does not handle tool {tool_name}")

    def shutdown(self) -> None:
        """Release resources; called once, in reverse registration order."""

    def on_turn_start(self, turn_number: int, message: str, **kwargs: Any) -> None:
        """A user turn begins (before ``prefetch``); kwargs may carry model and token info."""

    def on_turn_end(self, turn_number: int, **kwargs: Any) -> None:
        """The turn that ``on_turn_start`` began has been handed over (the host recorded it),
        before its ``sync_turn`` is queued; kwargs may carry ``session_id``."""

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        """A real session boundary (exit, reset, expiry) with the whole transcript."""

    def on_session_switch(
        self,
        new_session_id: str,
        *,
        parent_session_id: str = "",
        reset: bool = False,
        rewound: bool = False,
        **kwargs: Any,
    ) -> None:
        """The session id rotated without teardown (resume, branch, reset, compression)."""

    def on_pre_compress(self, messages: list[dict[str, Any]]) -> str:
        """Messages are about to be compressed away; return text to keep in the summary."""
        return ""

    def on_delegation(
        self, task: str, result: str, *, child_session_id: str = "", **kwargs: Any
    ) -> None:
        """A subagent finished *task* with *result* (called on the parent only)."""

    def on_memory_write(
        self,
        action: str,
        target: str,
        content: str,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        """The builtin ``memory`` tool committed an add, replace or remove."""

    def on_tool_result(self, tool_name: str, result: str, **kwargs: Any) -> None:
        """A tool's *result* entered the model's context this turn: untrusted text (a web
        page, a file, an e-mail, another agent's answer). kwargs carry ``provider``: the
        name of the memory provider that owns the tool (``""`` for the host's own tools).
        A provider may use it to tell where a later write came from (the builtin holds
        writes that repeat it for review)."""

    def get_config_schema(self) -> list[dict[str, Any]]:
        """Fields for a setup wizard: ``key, description, secret, required, default, env_var``…"""
        return []

    def save_config(self, values: dict[str, Any], hermes_home: str) -> None:
        """Persist non-secret configuration values under *hermes_home*."""

    def backup_paths(self) -> list[str]:
        """Absolute paths outside ``HERMES_HOME`` that a backup should include."""
        return []
