"""Question ranking for the PostgreSQL store: SQLite's tiers (``rerank.py``) on PostgreSQL reads.

The ranking itself is :mod:`~hermes_core.sessions.rerank`'s: the same word
groups, coverage patterns, weights, tiers and :func:`~hermes_core.sessions.rerank.spread`.
What differs is where the facts come from; this module reads them from the
``messages`` table of the PostgreSQL store:

* :func:`rerank_by_session` — conversations where a person the question names
  speaks first, then those holding a phrase it quotes, then those with a hit
  within its time span, then by the summed weight (IDF) of the question's
  words their best hits cover (a rare word inside a glued compound at half its
  weight, :func:`~hermes_core.sessions.compounds.glued_cover`), then (when asked)
  the most recent; a hit found through a speaker's name alone drops behind its
  conversation's others;
* :func:`with_replies` — the reply to a hit that asks something comes next to it.

Hit rows have the SQLite shape ``(id, score, snippet, session_id, role,
timestamp, tool_name, content, tool_calls, name)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from hermes_core.sessions.compounds import Glued, Words, covered_scores, glued_cover
from hermes_core.sessions.convbm25 import Conversations, conversation_scores
from hermes_core.sessions.query import Term
from hermes_core.sessions.rerank import (
    CALLS_READ,
    COVERAGE_CHARS,
    DF_CAP,
    REPLY_LOOKUP_HITS,
    WORD_RE,
    Ranked,
    asks_briefly,
    calls_text,
    covered_groups,
    evidence_hits,
    group_pattern,
    order_by_conversation,
    pooled_scores,
    tells_more_than_it_asks,
    word_groups,
)

__all__ = ["Compounds", "Counter", "rerank_by_session", "with_replies"]

Counter = Callable[[Sequence[Term], int], int]
"""(forms of a word, cap) → how many messages hold any of them, counted up to the cap
(see :meth:`~hermes_core.sessions.pgsearch.PgSearch.count_forms`)."""


class Compounds(NamedTuple):
    """What the glued-compound tier reads: the store's lookups and the question's typed words."""

    glued: Glued
    is_word: Words
    typed: frozenset[str]


_ENDS = " \t\r\n\"')"


def _weight(count: Counter, forms: Sequence[Term], rows: float) -> tuple[float, int]:
    """As SQLite's: the IDF of a word given as its *forms* (messages holding any, capped),
    and that count."""
    if any(form.symbolic for form in forms):
        return 1.0, DF_CAP
    found = count(forms, DF_CAP)
    return math.log(1.0 + rows / max(1, found)), found


def _with_named_speaker(
    conn: Any, rows: Sequence[tuple[Any, ...]], terms: Sequence[Term]
) -> dict[str, set[str]]:
    """The sessions of *rows* where someone speaks whose name is one of the words of *terms*."""
    words = {term.text.lower() for term in terms if term.simple}
    if not words:
        return {}
    found = conn.execute(
        "SELECT DISTINCT session_id, name FROM messages "
        "WHERE session_id = ANY(%s) AND name IS NOT NULL",
        (list(dict.fromkeys(row[3] for row in rows)),),
    ).fetchall()
    named: dict[str, set[str]] = {}
    for session_id, name in found:
        said = words & set(WORD_RE.findall(name.lower())) if isinstance(name, str) else set()
        if said:
            named.setdefault(session_id, set()).update(said)
    return named


def _coverage(
    conn: Any,
    count: Counter,
    rows: Sequence[tuple[Any, ...]],
    terms: Sequence[Term],
    named: dict[str, set[str]],
    compounds: Compounds | None = None,
) -> tuple[dict[str, float], list[tuple[Any, ...]], float, dict[str, float]]:
    """Each conversation's summed weight of the *terms* its best hits contain (a named
    speaker covers their own name), the rows found inside glued compounds (when
    *compounds*, as SQLite's: :func:`~hermes_core.sessions.compounds.glued_cover`), the
    summed weight of all the terms, and each conversation's BM25 over its candidates
    (:func:`~hermes_core.sessions.rerank.pooled_scores`)."""
    evidence: dict[str, list[int]] = {}
    read = evidence_hits(terms)
    for row in rows:
        hits = evidence.setdefault(row[3], [])
        if len(hits) < read:
            hits.append(row[0])
    texts = {
        mid: " ".join(
            part for part in (content, name, calls_text(calls)) if isinstance(part, str)
        ).lower()
        for mid, content, name, calls in conn.execute(
            f"SELECT id, left(content, {COVERAGE_CHARS}), tool_name, "
            f"left(tool_calls, {CALLS_READ + 1}) FROM messages WHERE id = ANY(%s)",
            ([row[0] for row in rows],),  # every candidate: see pooled_scores
        )
    }
    total = float(conn.execute("SELECT max(id) FROM messages").fetchone()[0] or 1)
    groups = word_groups(terms)
    counted = [_weight(count, forms, total) for forms in groups.values()]
    weights = [weight for weight, _ in counted]
    patterns = [group_pattern(forms) for forms in groups.values()]
    compound: dict[str, set[int]] = {}
    glued_rows: list[tuple[Any, ...]] = []
    if compounds is not None:
        compound, glued_rows = glued_cover(
            compounds.glued,
            compounds.is_word,
            groups,
            [found for _, found in counted],
            total,
            set().union(*named.values()) if named else set(),
            compounds.typed,
        )
    covered = covered_groups(evidence, texts, patterns, list(groups), named)
    speaking = set().union(*named.values()) if named else set()
    names = [key in speaking for key in groups]
    pooled = pooled_scores(rows, texts, patterns, weights, names, compound)
    return covered_scores(covered, compound, weights), glued_rows, sum(weights), pooled


def _matched_by_name_only(
    conn: Any,
    rows: Sequence[tuple[Any, ...]],
    terms: Sequence[Term],
    named: dict[str, set[str]],
) -> set[Any]:
    """The hits of sessions with a named speaker whose text holds none of the question's other
    words: the index matched them through the speaker's name alone."""
    ids = [row[0] for row in rows if row[3] in named]
    if not ids:
        return set()
    texts = dict(
        conn.execute(
            f"SELECT id, lower(left(COALESCE(content, ''), {COVERAGE_CHARS})) FROM messages "
            "WHERE id = ANY(%s)",
            (ids,),
        ).fetchall()
    )
    session_of = {row[0]: row[3] for row in rows}
    patterns = {key: group_pattern(forms) for key, forms in word_groups(terms).items()}
    found = set()
    for mid in ids:
        speakers = named.get(session_of[mid], set())
        text = texts.get(mid) or ""
        if not any(p.search(text) for key, p in patterns.items() if key not in speakers):
            found.add(mid)
    return found


def rerank_by_session(
    conn: Any,
    count: Counter,
    rows: list[tuple[Any, ...]],
    terms: Sequence[Term],
    prefer_recent: bool = False,
    span: tuple[float, float] | None = None,
    quoted: frozenset[str] = frozenset(),
    compounds: Compounds | None = None,
    conversations: Conversations | None = None,
) -> Ranked:
    """Hits ranked by how much of the question their conversation covers, in SQLite's tiers
    (:func:`hermes_core.sessions.rerank.rerank_by_session`), glued compounds included when
    *compounds* are given, and the conversations' BM25 over all their messages fused in when
    *conversations* says where to read it."""
    if not rows or (len(terms) < 2 and not prefer_recent and span is None and not quoted):
        return Ranked(rows)
    score: dict[str, float] = {}
    pooled: dict[str, float] = {}
    named: dict[str, set[str]] = {}
    total = 0.0
    if len(terms) >= 2:
        named = _with_named_speaker(conn, rows, terms)
        score, extra, total, pooled = _coverage(conn, count, rows, terms, named, compounds)
        seen = {row[0] for row in rows}
        rows = [*rows, *{row[0]: row for row in extra if row[0] not in seen}.values()]
    name_only = _matched_by_name_only(conn, rows, terms, named) if named else set()
    conversation: dict[str, float] = {}
    if len(terms) >= 2 and conversations is not None:
        conversation = conversation_scores(conversations, rows, word_groups(terms), named)
    return order_by_conversation(
        rows,
        score,
        total,
        named,
        name_only,
        terms,
        prefer_recent,
        span,
        quoted,
        pooled,
        conversation,
    )


def with_replies(
    conn: Any,
    rows: list[tuple[Any, ...]],
    terms: Sequence[Term],
    need: int,
    window: tuple[float | None, float | None] = (None, None),
) -> list[tuple[Any, ...]]:
    """*rows* with the reply to each of the first asking hits placed next to it (before it,
    unless the asking turn states more of the question than it asks), as in SQLite."""
    asking = [
        row[0]
        for row in rows[:REPLY_LOOKUP_HITS]
        if isinstance(row[7], str) and row[7].rstrip(_ENDS)[-1:] in ("?", "？")
    ]
    if not asking:
        return rows
    since, until = window
    within, params = "", []
    if since is not None:
        within += " AND n.timestamp >= %s"
        params.append(since)
    if until is not None:
        within += " AND n.timestamp < %s"
        params.append(until)
    # As in SQLite: a short question reads every asking turn's statement, a long one only
    # a user's unnamed message to an assistant.
    stating = (
        "TRUE"
        if asks_briefly(terms)
        else ("m.role = 'user' AND r.role = 'assistant' AND m.name IS NULL")
    )
    found = conn.execute(
        f"SELECT m.id, CASE WHEN {stating} "
        f"THEN left(m.content, {COVERAGE_CHARS}) END, "
        "r.id, NULL, NULL, r.session_id, r.role, r.timestamp, r.tool_name, r.content, "
        "r.tool_calls, r.name FROM messages AS m CROSS JOIN LATERAL ("
        "SELECT n.* FROM messages AS n WHERE n.session_id = m.session_id AND n.id > m.id "
        f"AND n.role IN ('user', 'assistant'){within} ORDER BY n.id LIMIT 1) AS r "
        "WHERE m.id = ANY(%s) AND (r.role <> m.role "
        "OR COALESCE(r.name, '') <> COALESCE(m.name, ''))",
        [*params, asking],
    ).fetchall()
    patterns = [group_pattern(forms) for forms in word_groups(terms).values()]
    replies: dict[Any, tuple[Any, ...]] = {}
    after: set[Any] = set()
    for row in found:
        replies[row[0]] = tuple(row[2:])
        if tells_more_than_it_asks(row[1], patterns):
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
