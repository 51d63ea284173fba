"""Text the model sees: the per-turn recall block and the profile summary."""

from __future__ import annotations

from collections.abc import Sequence

from hermes_memory_supermemory.records import Profile, Recall

MAX_FACT_CHARS = 1000
"""A recalled fact longer than this is cut (with "…"), so one huge memory cannot flood a turn."""
MAX_PROFILE_FACTS = 100
"""Facts of one profile section the ``supermemory_profile`` tool shows; the rest are counted."""


def _key(text: str) -> str:
    return " ".join(text.replace("\x00", "").lower().split())


def one_line(text: str) -> str:
    """*text* on one line (a memory's own line breaks cannot start new list items or
    headings), without NUL characters, cut at :data:`MAX_FACT_CHARS`."""
    flat = " ".join(text.replace("\x00", "").split())
    return flat if len(flat) <= MAX_FACT_CHARS else flat[: MAX_FACT_CHARS - 1].rstrip() + "…"


def render_recall(recall: Recall, *, limit: int) -> tuple[str, int]:
    """Markdown for the turn and the number of distinct memories in it.

    Facts are de-duplicated across the profile and search sections, and at most
    *limit* lines are emitted in total (profile facts first).
    """
    seen: set[str] = set()
    sections: list[tuple[str, list[str]]] = []
    budget = limit

    def take(title: str, items: Sequence[tuple[str, str]]) -> None:
        nonlocal budget
        kept = []
        for text, line in items:
            key = _key(text)
            if budget <= 0 or not key or key in seen:
                continue
            seen.add(key)
            kept.append(line)
            budget -= 1
        if kept:
            sections.append((title, kept))

    if recall.profile is not None:
        take("User profile", [(f, one_line(f)) for f in recall.profile.static])
        take("Recent context", [(f, one_line(f)) for f in recall.profile.dynamic])
    take(
        "Relevant memories",
        [(m.text, f"{one_line(m.text)} ({round(m.similarity * 100)}%)") for m in recall.memories],
    )
    if not sections:
        return "", 0
    out = ["## Supermemory"]
    for title, lines in sections:
        out.append(f"### {title}")
        out.extend(f"- {line}" for line in lines)
    return "\n".join(out), sum(len(lines) for _, lines in sections)


def _section(title: str, facts: Sequence[str]) -> str:
    lines = [f"- {one_line(f)}" for f in facts[:MAX_PROFILE_FACTS]]
    if len(facts) > MAX_PROFILE_FACTS:
        lines.append(f"- … and {len(facts) - MAX_PROFILE_FACTS} more")
    return f"## {title}\n" + "\n".join(lines)


def render_profile(profile: Profile) -> str:
    """The profile as markdown for the ``supermemory_profile`` tool (bounded per section)."""
    parts = []
    if profile.static:
        parts.append(_section("Durable facts", profile.static))
    if profile.dynamic:
        parts.append(_section("Recent context", profile.dynamic))
    return "\n\n".join(parts)
