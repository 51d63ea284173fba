"""Text the model sees: the per-turn recall block and the profile summary."""

from __future__ import annotations

from collections.abc import Sequence

from hermes_memory_supermemory.records import Profile, Recall


def _key(text: str) -> str:
    return " ".join(text.lower().split())


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
        take("User profile", [(f, f) for f in recall.profile.static])
        take("Recent context", [(f, f) for f in recall.profile.dynamic])
    take(
        "Relevant memories",
        [(m.text, f"{m.text} ({round(m.similarity * 100)}%)") for m in recall.memories],
    )
    if not sections:
        return "", 0
    out = ["## Supermemory"]
    for title, lines in sections:
        out.append(f"### {title}")
        out.extend(f"- {line}" for line in lines)
    return "\n".join(out), sum(len(lines) for _, lines in sections)


def render_profile(profile: Profile) -> str:
    """The profile as markdown for the ``supermemory_profile`` tool."""
    parts = []
    if profile.static:
        parts.append("## Durable facts\n" + "\n".join(f"- {f}" for f in profile.static))
    if profile.dynamic:
        parts.append("## Recent context\n" + "\n".join(f"- {f}" for f in profile.dynamic))
    return "\n\n".join(parts)
