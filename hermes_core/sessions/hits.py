"""Search hits as callers see them: the hit fields and the ``>>>match<<<`` snippet.

Both backends hand their ranked rows here (``(id, score, snippet, session_id, role,
timestamp, tool_name, content, tool_calls, name)``), so a hit looks the same
whichever store found it. A row without a snippet of its own (SQLite's FTS5
writes one for keyword hits) gets a text snippet around the first match.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from hermes_core.sessions.query import Term
from hermes_core.sessions.question import stem
from hermes_core.sessions.sessioninfo import Fields
from hermes_core.sessions.transcript import describe_tool_calls

__all__ = ["hit_dicts", "snippet_needles", "text_snippet"]

_WORD_RE = re.compile(r"\w+", re.UNICODE)
SNIPPET_WIDTH = 160
"""Characters of a text snippet."""


def snippet_needles(terms: Iterable[Term]) -> list[str]:
    """What a snippet marks for *terms*: each term, its words and their stems, lower case."""
    needles = []
    for term in terms:
        text = term.text.lower()
        needles.append(text)
        for word in _WORD_RE.findall(text):
            cut = stem(word)  # 'deployed' still finds 'deploy'
            needles.extend(n for n in (word, cut) if n != text and n not in needles)
    return [n for n in needles if n]


def text_snippet(
    text: str, needles: Sequence[str], width: int = SNIPPET_WIDTH, *, every: bool = False
) -> str:
    """A ``>>>match<<<`` window of *text* around the first occurrence of any needle.

    With *every*, each needle in the window is marked, whole words as words (as FTS5's
    ``snippet()`` marks every matched token of a keyword search).
    """
    if not text:
        return ""
    lowered = text.lower()
    best: tuple[int, int] | None = None
    for needle in needles:
        pos = lowered.find(needle)
        if pos >= 0 and (best is None or pos < best[0]):
            best = (pos, len(needle))
    if best is None:
        cut = text[:width]
        return cut + ("..." if len(text) > width else "")
    pos, size = best
    start = max(0, pos - width // 4)
    end = min(len(text), pos + size + (width * 3) // 4)
    head = "..." if start > 0 else ""
    tail = "..." if end < len(text) else ""
    if every:
        return head + _mark_every(text[start:end], needles) + tail
    return (
        head
        + text[start:pos]
        + ">>>"
        + text[pos : pos + size]
        + "<<<"
        + text[pos + size : end]
        + tail
    )


def _mark_every(window: str, needles: Sequence[str]) -> str:
    """*window* with every occurrence of a needle marked (a word needle: the whole word)."""
    alternatives = "|".join(
        (rf"\w*{re.escape(n)}\w*" if n.isascii() and _WORD_RE.fullmatch(n) else re.escape(n))
        for n in sorted(needles, key=len, reverse=True)
    )
    return re.sub(alternatives, lambda m: f">>>{m.group(0)}<<<", window, flags=re.IGNORECASE)


def hit_dicts(
    rows: Sequence[tuple[Any, ...]],
    sessions: dict[str, Fields],
    terms: Sequence[Term],
    snippets: bool,
    offset: int,
    *,
    mark_every: bool = False,
) -> list[dict[str, Any]]:
    """The hits for ranked *rows*, ``rank`` counted from *offset*; *sessions* maps each
    session id to its ``(source, model, started_at, title)``. *mark_every*: text
    snippets mark every match (see :func:`text_snippet`)."""
    hits = []
    needles = snippet_needles(terms) if snippets else []  # once per search, not per hit
    for rank, (
        mid,
        _score,
        snippet,
        session_id,
        role,
        timestamp,
        tool_name,
        content,
        tool_calls,
        name,
    ) in enumerate(rows, start=offset):
        if snippets and not snippet:
            text = content if isinstance(content, str) and content else ""
            if not any(n in text.lower() for n in needles):
                calls = describe_tool_calls(tool_calls) if tool_calls else ""
                text = " ".join(
                    part for part in (text, tool_name, calls) if isinstance(part, str) and part
                )
            snippet = text_snippet(text, needles, every=mark_every)
        source, model, started, title = sessions[session_id]
        hits.append(
            {
                "id": mid,
                "session_id": session_id,
                "role": role,
                "name": name,
                "snippet": snippet,
                "timestamp": timestamp,
                "tool_name": tool_name,
                "source": source,
                "model": model,
                "session_started": started,
                "session_title": title,
                "rank": rank,
            }
        )
    return hits
