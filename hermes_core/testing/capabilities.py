"""What a memory provider can do, as the conformance suite understands it.

A provider (or its test class) declares capabilities; each standard test that
needs one is skipped, with the reason below, when it is not declared. Declaring
a capability is a promise the suite then checks.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import Any

__all__ = ["Capability", "declared_capabilities", "inferred_capabilities", "parse_capabilities"]


class Capability(StrEnum):
    """A feature some providers have and others do not (see docs/conformance.md)."""

    TOOLS = "tools"  # get_tool_schemas() returns at least one tool
    PREFETCH = "prefetch"  # prefetch() recalls stored memory
    SYNC = "sync"  # sync_turn() stores completed turns
    RECALL = "recall"  # the suite can remember() a fact and recall() it
    SESSION_END_EXTRACTION = "session_end_extraction"  # on_session_end stores a transcript
    CROSS_SESSION = "cross_session"  # one session's memory is recalled in the next
    SESSION_SCOPED = "session_scoped"  # recall never returns another session's memory
    MULTI_USER = "multi_user"  # initialize(user_id=...) keeps users apart
    CJK = "cjk"  # CJK text recalled by 1-, 2- and 3+-character queries
    PERSISTENCE = "persistence"  # memory survives shutdown() and a new instance
    MIRROR = "mirror"  # on_memory_write() mirrors builtin add / replace / remove
    FORGET = "forget"  # the suite can remove a fact with forget()


CAPABILITIES_ATTRIBUTE = "conformance_capabilities"
"""Optional provider class attribute naming its capabilities (used by ``hermes-memory
conformance`` when no test class declares them)."""


def parse_capabilities(values: str | Iterable[str | Capability]) -> frozenset[Capability]:
    """Capabilities from names; an unknown name raises ``ValueError`` listing the valid ones.

    Names may be separated by commas or spaces inside one string (``"tools, sync"``,
    ``-c tools,sync``); a string is never read as a sequence of one-letter names.
    ``cross_session`` with ``session_scoped`` raises ``ValueError`` too: no recall
    can keep both promises.
    """
    if isinstance(values, str):
        values = [values]
    elif not isinstance(values, Iterable):
        raise ValueError(
            "capabilities must be a collection of names such as {'tools', 'recall'}, "
            f"not {type(values).__name__}"
        )
    parsed = set()
    for value in values:
        for name in str(value).replace(",", " ").split():
            try:
                parsed.add(Capability(name.lower().replace("-", "_")))
            except ValueError:
                valid = ", ".join(c.value for c in Capability)
                raise ValueError(
                    f"unknown capability {name!r}; valid capabilities: {valid}"
                ) from None
    if {Capability.CROSS_SESSION, Capability.SESSION_SCOPED} <= parsed:
        raise ValueError(
            "cross_session and session_scoped contradict each other: the suite stores a fact "
            "with remember() and checks that a new session recalls it (cross_session) and "
            "that it does not (session_scoped); declare only the one your recall follows"
        )
    return frozenset(parsed)


def _overrides(provider: Any, hook: str) -> bool:
    from hermes_core.provider import MemoryProvider

    own = getattr(type(provider), hook, None)
    return own is not None and own is not getattr(MemoryProvider, hook, None)


def inferred_capabilities(provider: Any) -> frozenset[Capability]:
    """Hook-level capabilities visible from the provider itself (no round-trip promises).

    ``tools`` when it exposes tools, ``prefetch`` and ``sync`` when it overrides
    those hooks. Round-trip capabilities (``recall``, ``cjk``, ``multi_user``, …)
    are never inferred: only a declaration promises them.
    """
    found = set()
    try:
        if provider.get_tool_schemas():
            found.add(Capability.TOOLS)
    except Exception:  # the schema tests report this properly
        pass
    if _overrides(provider, "prefetch"):
        found.add(Capability.PREFETCH)
    if _overrides(provider, "sync_turn"):
        found.add(Capability.SYNC)
    return frozenset(found)


def declared_capabilities(provider: Any) -> frozenset[Capability] | None:
    """The provider's own ``conformance_capabilities`` declaration, or ``None``."""
    declared = getattr(provider, CAPABILITIES_ATTRIBUTE, None)
    if declared is None:
        return None
    try:
        return parse_capabilities(declared)
    except ValueError as exc:
        raise ValueError(f"{type(provider).__name__}.{CAPABILITIES_ATTRIBUTE}: {exc}") from None
