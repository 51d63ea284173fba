"""Question ranking for the PostgreSQL store, after the SQLite pipeline's (``rerank.py``).

Two steps of the SQLite ranking of questions, on the hit rows PostgreSQL returned
(``(id, boost, score, session_id, role, timestamp, tool_name, content, tool_calls, name)``):

* :func:`by_conversation` — conversations ranked by the summed weight (IDF) of the
  question's words their hits contain, then dealt out a few hits at a time
  (:func:`~hermes_core.sessions.rerank.spread`). SQLite reads the whole
  conversation; here only the candidate hits are read, which is cheaper and
  slightly less thorough;
* :func:`with_replies` — the reply to a hit that asks something comes next to it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hermes_core.sessions.query import Term
from hermes_core.sessions.rerank import (
    REPLY_LOOKUP_HITS,
    _group_pattern,
    _tells_more_than_it_asks,
    _word_groups,
    spread,
)

__all__ = ["by_conversation", "with_replies"]

_ENDS = " \t\r\n\"')"


def by_conversation(
    rows: list[tuple[Any, ...]], terms: Sequence[Term], weights: Mapping[Term, float]
) -> list[tuple[Any, ...]]:
    """*rows* grouped by conversation, the conversation covering most of the question first."""
    groups = [
        (_group_pattern(forms), max(weights.get(form, 0.0) for form in forms))
        for forms in _word_groups(terms).values()
    ]
    if len(groups) < 2 or not rows:
        return rows
    texts: dict[str, list[str]] = {}
    for row in rows:
        content = row[7] if isinstance(row[7], str) else ""
        texts.setdefault(row[3], []).append(content.lower())
    score = {
        sid: sum(weight for pattern, weight in groups if any(pattern.search(t) for t in parts))
        for sid, parts in texts.items()
    }
    order = {row[0]: n for n, row in enumerate(rows)}
    ranked = sorted(rows, key=lambda row: (-score[row[3]], order[row[0]]))
    return spread(ranked, score)


def with_replies(
    conn: Any,
    rows: list[tuple[Any, ...]],
    terms: Sequence[Term],
    need: int,
    window: tuple[float | None, float | None] = (None, None),
) -> list[tuple[Any, ...]]:
    """*rows* with the reply to each of the first asking hits placed next to it (before it,
    unless the asking turn states more of the question than it asks)."""
    asking = [
        row
        for row in rows[:REPLY_LOOKUP_HITS]
        if isinstance(row[7], str) and row[7].rstrip(_ENDS)[-1:] in ("?", "？")
    ]
    if not asking:
        return rows
    since, until = window
    within = ""
    params: list[Any] = [[row[0] for row in asking]]
    if since is not None:
        within += " AND n.timestamp >= %s"
        params.append(since)
    if until is not None:
        within += " AND n.timestamp < %s"
        params.append(until)
    found = conn.execute(
        "SELECT m.id, (m.role = 'user' AND r.role = 'assistant' AND m.name IS NULL), "
        "r.id, 0, 0, r.session_id, r.role, r.timestamp, r.tool_name, r.content, r.tool_calls, "
        "r.name FROM messages AS m CROSS JOIN LATERAL ("
        "SELECT n.* FROM messages AS n WHERE n.session_id = m.session_id AND n.id > m.id "
        f"AND n.role IN ('user', 'assistant'){within} ORDER BY n.id LIMIT 1) AS r "
        "WHERE m.id = ANY(%s) AND (r.role <> m.role "
        "OR COALESCE(r.name, '') <> COALESCE(m.name, ''))",
        [*params[1:], params[0]],
    ).fetchall()
    patterns = [_group_pattern(forms) for forms in _word_groups(terms).values()]
    content = {row[0]: row[7] for row in asking}
    replies: dict[Any, tuple[Any, ...]] = {}
    after: set[Any] = set()
    for row in found:
        replies[row[0]] = tuple(row[2:])
        if row[1] and _tells_more_than_it_asks(content.get(row[0]), patterns):
            after.add(row[0])
    merged: list[tuple[Any, ...]] = []
    seen: set[Any] = set()
    for row in rows:
        reply = replies.get(row[0])
        for item in (row, reply) if row[0] in after else (reply, row):
            if item is not None and item[0] not in seen:
                seen.add(item[0])
                merged.append(item)
    return merged[:need]
