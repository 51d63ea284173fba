"""Where a memory write came from, and whether it must wait for the user's review.

The builtin provider learns the user's message at each turn start; a write
whose words mostly come from it is ``user``-stated. A host hands untrusted
tool output of the turn (web pages, files, e-mails, another agent) to
:meth:`~hermes_memory_builtin.store.MemoryStore.note_tool_output`; a write that
repeats it is ``tool``-derived (a host that knows so can pass
``origin="tool"``). Any other write is ``model``-written. The builtin's own
``session_search`` results are past conversation, not untrusted input, and do
not count. A write
is held for review when it is tool-derived, or when the learned detector
scores it in its review band; at or above the block threshold it is refused.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from hermes_memory_builtin.detector import Verdict, load_detector
from hermes_memory_builtin.quarantine import ORIGINS

__all__ = ["Screening", "origin_of", "screen"]

_WORD = re.compile(r"\w+")
MIN_HOLD_WORDS = 4
"""Fewer words than this carry no instruction the catalogue would miss: never held."""
USER_OVERLAP = 0.6
TOOL_OVERLAP = 0.5
"""Share of an entry's word 3-grams found in this turn's tool output for ``tool`` origin."""
"""Share of an entry's words that must occur in the user's message for ``user`` origin."""


def _shingles(words: list[str]) -> set[tuple[str, ...]]:
    return {tuple(words[i : i + 3]) for i in range(max(1, len(words) - 2))}


def origin_of(
    content: str, user_message: str | None, declared: str | None = None, tool_output: str = ""
) -> str:
    """Where *content* came from.

    ``"tool"`` when declared so; else ``"user"`` when most of its words are in
    *user_message*; else ``"tool"`` when half of its word 3-grams occur in
    *tool_output* (untrusted text seen this turn); else ``"model"``.
    """
    if declared == "tool":
        return "tool"
    words = _WORD.findall(content.lower())
    if user_message and words:
        said = set(_WORD.findall(user_message.lower()))
        if sum(word in said for word in words) >= USER_OVERLAP * len(words):
            return "user"
    if tool_output and len(words) >= 3:
        mine = _shingles(words)
        seen = _shingles(_WORD.findall(tool_output.lower()))
        if len(mine & seen) >= TOOL_OVERLAP * len(mine):
            return "tool"
    return "model"


@dataclass(frozen=True)
class Screening:
    """The decision on one write: ``"store"``, ``"hold"`` or ``"block"``, and why."""

    action: str
    score: float
    reason: str


@functools.lru_cache(maxsize=256)
def _verdict(text: str) -> Verdict:
    return load_detector().verdict(text)


def screen(content: str, origin: str) -> Screening:
    """What to do with *content* of *origin* (one of :data:`ORIGINS`)."""
    if origin not in ORIGINS:
        raise ValueError(f"Unknown origin {origin!r}; use one of {', '.join(ORIGINS)}.")
    verdict = _verdict(content)
    if verdict.action == "block":
        return Screening("block", verdict.score, "the injection detector's block threshold")
    if verdict.action == "review" and len(_WORD.findall(content)) >= MIN_HOLD_WORDS:
        return Screening("hold", verdict.score, "the injection detector's review band")
    if origin == "tool":
        return Screening("hold", verdict.score, "content derived from tool output")
    return Screening("store", verdict.score, "")
