"""Text shaping for mem0: trimming turns before they are stored, rendering recalled memories."""

from __future__ import annotations

import re
from collections.abc import Sequence

from hermes_memory_mem0.backend import MemoryHit

__all__ = [
    "MAX_MEMORY_CHARS",
    "RECALL_HEADING",
    "format_recall",
    "one_line",
    "truncate_at_sentence",
]

RECALL_HEADING = "## Mem0 Memory"
MAX_MEMORY_CHARS = 1000
"""A recalled memory longer than this is cut (with "…"), so one huge memory cannot flood a turn."""
_SENTENCE_END = re.compile(r"[.!?。！？](?=\s|$)")


def truncate_at_sentence(text: str, limit: int) -> str:
    """Cut *text* to at most *limit* characters, at the last sentence end when there is one.

    Sized for small embedders (about 512 tokens): a turn longer than that is
    mostly noise to a vector search. Falls back to the last space, then a hard cut.
    """
    text = text.strip()
    if len(text) <= limit:
        return text
    head = text[:limit]
    ends = list(_SENTENCE_END.finditer(head))
    if ends and ends[-1].end() >= limit // 3:
        return head[: ends[-1].end()].rstrip()
    space = head.rfind(" ")
    if space >= limit // 2:
        return head[:space].rstrip()
    return head.rstrip()


def one_line(text: str) -> str:
    """*text* on one line without NUL characters, cut at :data:`MAX_MEMORY_CHARS`."""
    flat = " ".join(text.replace("\x00", "").split())
    return flat if len(flat) <= MAX_MEMORY_CHARS else flat[: MAX_MEMORY_CHARS - 1].rstrip() + "…"


def format_recall(hits: Sequence[MemoryHit]) -> str:
    """The prefetch block: a heading and one bullet per distinct memory (``""`` if none)."""
    seen: set[str] = set()
    lines = []
    for hit in hits:
        memory = one_line(hit.memory)
        if memory and memory not in seen:
            seen.add(memory)
            lines.append(f"- {memory}")
    if not lines:
        return ""
    return "\n".join([RECALL_HEADING, *lines])
