"""Full-text search over messages: plan, route, rank, filter, snippet.

:func:`search_messages` is what the store, the CLI and the ``session_search``
tool call. It never raises for a query string: anything is sanitised
(:mod:`~hermes_core.sessions.query`), planned for recall
(:mod:`~hermes_core.sessions.question`) and routed per term
(:mod:`~hermes_core.sessions.routing`). Ranking is FTS5's BM25 (``rank``);
for questions, conversations that cover more of the question's rare words
come first.

Filters (role, source, time, sessions) are applied to the best ``k`` candidates
of the index; when they reject too many, ``k`` grows and the index is asked
again, so unfiltered searches cost what a hand-written ``MATCH … ORDER BY rank
LIMIT n`` costs.
"""

from __future__ import annotations

import json
import logging
import math
import re
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any, NamedTuple

from hermes_core.sessions.cjk import contains_cjk
from hermes_core.sessions.connection import is_busy, is_undecodable
from hermes_core.sessions.gramqueue import tool_calls_text
from hermes_core.sessions.layout import Layout
from hermes_core.sessions.listing import last_activity
from hermes_core.sessions.query import Clause, ParsedQuery, Term, parse_query
from hermes_core.sessions.question import Plan, names_a_topic, plan_query, stem, stem_regex
from hermes_core.sessions.routing import LIKE, Candidates, compile_query, fts_term, route_term
from hermes_core.sessions.sessioninfo import Fields, SessionInfo
from hermes_core.sessions.timespan import find_time_span_in_history
from hermes_core.sessions.transcript import describe_tool_calls
from hermes_core.sessions.wordforms import lemma, number_forms

__all__ = ["SearchFilters", "group_by_session", "search_messages", "searched_by_meaning"]

log = logging.getLogger(__name__)

BOOST_ALL_TERMS = 0.6
"""Score bonus for a question's hit that contains every content word."""
BOOST_NEAR_PAIR = 0.4
"""Score bonus for a question's hit where two consecutive content words sit together."""
QUESTION_CANDIDATES = 300
KEYWORD_TOP_UP_BELOW = 5
"""Keywords that all match fewer messages than this are topped up with partial matches."""
REPLY_LOOKUP_HITS = 10
"""A question's first this many hits that end by asking bring their reply ahead of them."""
SESSION_EVIDENCE_HITS = 3
"""A conversation's coverage of a question is read from its best this many hits."""
_COVERAGE_CHARS = 4_000
"""Characters of each candidate read to see which question words it covers."""
_GROWTH = 8
_MAX_BOUNDED_K = 50_000


@dataclass(frozen=True)
class SearchFilters:
    """Restrictions applied to search hits (all optional)."""

    roles: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    exclude_sources: tuple[str, ...] = ()
    since: float | None = None
    until: float | None = None
    session_ids: tuple[str, ...] = ()
    exclude_session_ids: tuple[str, ...] = ()

    @property
    def active(self) -> bool:
        """True when any filter is set."""
        return any(
            (
                self.roles,
                self.sources,
                self.exclude_sources,
                self.since is not None,
                self.until is not None,
                self.session_ids,
                self.exclude_session_ids,
            )
        )


def _in_list(column: str, values: Sequence[str], params: dict[str, Any], key: str) -> str:
    names = []
    for n, value in enumerate(values):
        name = f"{key}{n}"
        params[name] = value
        names.append(f":{name}")
    return f"{column} IN ({', '.join(names)})"


def _filter_sql(filters: SearchFilters, layout: Layout, params: dict[str, Any]) -> str:
    parts = [layout.visible_rows_sql("m")]
    if filters.roles:
        parts.append(_in_list("m.role", filters.roles, params, "f_role"))
    if filters.sources:
        parts.append(_in_list("s.source", filters.sources, params, "f_src"))
    if filters.exclude_sources:
        parts.append("NOT " + _in_list("s.source", filters.exclude_sources, params, "f_xsrc"))
    if filters.since is not None:
        params["f_since"] = float(filters.since)
        parts.append("m.timestamp >= :f_since")
    if filters.until is not None:
        params["f_until"] = float(filters.until)
        parts.append("m.timestamp < :f_until")
    if filters.session_ids:
        parts.append(_in_list("m.session_id", filters.session_ids, params, "f_sid"))
    if filters.exclude_session_ids:
        parts.append(
            "NOT " + _in_list("m.session_id", filters.exclude_session_ids, params, "f_xsid")
        )
    return " AND ".join(parts)


def _name(layout: Layout, alias: str = "m") -> str:
    return f"{alias}.name" if "name" in layout.message_columns else "NULL"


def _detail_columns(layout: Layout, text: bool, alias: str = "m") -> str:
    m = alias
    tool_calls = f"{m}.tool_calls" if "tool_calls" in layout.message_columns else "NULL"
    texts = f"{m}.content, {tool_calls}" if text else "NULL, NULL"
    return f"{m}.session_id, {m}.role, {m}.timestamp, {m}.tool_name, {texts}, {_name(layout, m)}"


def _run(
    conn: sqlite3.Connection,
    candidates: Candidates,
    layout: Layout,
    filters: SearchFilters,
    need: int,
    text: bool,
) -> list[tuple[Any, ...]]:
    """The first *need* filtered hits of *candidates*, growing the candidate pool as needed.

    Rows are ``(id, score, snippet, session_id, role, timestamp, tool_name,
    content, tool_calls, name)``; the two text columns are ``None`` unless *text*.
    """
    columns = _detail_columns(layout, text)
    if layout.every_row_visible and not filters.active:
        # Nothing can be filtered out: one statement, and the index's top *need* are the hits.
        # CROSS JOIN keeps the candidates as the outer loop, so rows come out in the
        # index's order (ties included) and pages of different sizes agree.
        bound = {**candidates.params, "k": need}
        if candidates.bare and not text:
            # Python's sqlite3 spends as much on each value fetched as SQLite spends on the
            # row: the columns known to be NULL are added here instead.
            sql = (
                f"SELECT c.id, m.session_id, m.role, m.timestamp, m.tool_name, {_name(layout)} "
                f"FROM ({candidates.sql}) AS c CROSS JOIN messages AS m ON m.id = c.id"
            )
            return [
                (mid, None, None, sid, role, ts, tool, None, None, name)
                for mid, sid, role, ts, tool, name in conn.execute(sql, bound)
            ]
        sql = (
            f"SELECT c.id, c.score, c.snippet, {columns} FROM ({candidates.sql}) AS c "
            "CROSS JOIN messages AS m ON m.id = c.id"
        )
        return conn.execute(sql, bound).fetchall()
    params: dict[str, Any] = {}
    where = _filter_sql(filters, layout, params)
    join = (
        " JOIN sessions AS s ON s.id = m.session_id"
        if filters.sources or filters.exclude_sources
        else ""
    )
    detail_sql = (
        f"SELECT m.id, {columns} FROM messages AS m{join} "
        f"WHERE m.id IN (SELECT value FROM json_each(:ids)) AND {where}"
    )
    k = max(need, 1)
    while True:
        found = conn.execute(candidates.sql, {**candidates.params, "k": k}).fetchall()
        details = {
            row[0]: row[1:]
            for row in conn.execute(
                detail_sql, {**params, "ids": json.dumps([row[0] for row in found])}
            )
        }
        rows = [(mid, score, snip, *details[mid]) for mid, score, snip in found if mid in details]
        if len(rows) >= need or len(found) < k or k < 0:
            return rows[:need]
        k = k * _GROWTH if k * _GROWTH <= _MAX_BOUNDED_K else -1


_WORD_RE = re.compile(r"\w+", re.UNICODE)


def _needles(terms: Iterable[Term]) -> list[str]:
    needles = []
    for term in terms:
        text = term.text.lower()
        needles.append(text)
        for word in _WORD_RE.findall(text):
            cut = stem(word)  # 'deployed' still finds 'deploy'
            needles.extend(n for n in (word, cut) if n != text and n not in needles)
    return [n for n in needles if n]


def _text_snippet(text: str, needles: Sequence[str], width: int = 160) -> str:
    """A ``>>>match<<<`` window of *text* around the first occurrence of any needle."""
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
    return (
        ("..." if start > 0 else "")
        + text[start:pos]
        + ">>>"
        + text[pos : pos + size]
        + "<<<"
        + text[pos + size : end]
        + ("..." if end < len(text) else "")
    )


def _hits(
    rows: Sequence[tuple[Any, ...]],
    sessions: dict[str, Fields],
    terms: Sequence[Term],
    snippets: bool,
    offset: int,
) -> list[dict[str, Any]]:
    hits = []
    needles = _needles(terms) if snippets else []  # once per search, not per hit
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
            snippet = _text_snippet(text, needles)
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


def _context(conn: sqlite3.Connection, hit: dict[str, Any]) -> list[dict[str, str]]:
    # CAST: a row another program stored as bytes (a BLOB) is read as text, like the rest.
    columns = "CAST(role AS TEXT), substr(CAST(content AS TEXT), 1, 200)"
    rows = []
    before = conn.execute(
        f"SELECT {columns} FROM messages WHERE session_id = ? AND id < ? ORDER BY id DESC LIMIT 1",
        (hit["session_id"], hit["id"]),
    ).fetchone()
    current = conn.execute(f"SELECT {columns} FROM messages WHERE id = ?", (hit["id"],)).fetchone()
    after = conn.execute(
        f"SELECT {columns} FROM messages WHERE session_id = ? AND id > ? ORDER BY id LIMIT 1",
        (hit["session_id"], hit["id"]),
    ).fetchone()
    for row in (before, current, after):
        if row is not None:
            rows.append({"role": row[0], "content": row[1] or ""})
    return rows


def _worth_trigram_retry(query: ParsedQuery) -> bool:
    """True when a Latin word may hide inside CJK text and the trigram index can see it.

    Every term needs 3+ characters (the trigram index's minimum); a query of CJK
    terms only is already answered in full by the gram index.
    """
    terms = [term for clause in query.clauses for term in clause.include + clause.exclude]
    return all(len(term.text) >= 3 for term in terms) and not all(
        contains_cjk(term.text) for term in terms
    )


_TIME_HINT = re.compile(
    r"\d|ago|day|night|week|month|year|today|tonight|morning|afternoon|evening|since"
    r"|Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec|weekend|[\u4e00-\u9fff]"
)
"""Cheap pre-test: text without any of these names no time span."""

_CALENDAR = re.compile(r"\d|[A-Z][a-z]")
"""A time phrase naming a month or a year, not a relative one ("in March", "2023-05")."""

_DF_CAP = 20_000
"""Document frequencies are counted up to this; commoner words all weigh the same."""


def _weight(
    conn: sqlite3.Connection, layout: Layout, forms: Sequence[Term], rows: float
) -> tuple[float, int]:
    """The inverse document frequency of a word given as its *forms* (matches counted up to
    a cap): of the messages holding any of the forms; and that count.

    The forms of one word (*trip*, *travel*, *vacation*) are one word to a
    conversation; a question that says *journey* where the history says *trip*
    should not weigh the match as if it were the rare *journey*.
    """
    by_index: dict[str, list[Term]] = {}
    for form in forms:
        by_index.setdefault(route_term(form, layout), []).append(form)
    if LIKE in by_index:
        return 1.0, _DF_CAP
    found = 0
    for index, same in by_index.items():  # forms on two indexes: their counts add up
        found += conn.execute(
            f"SELECT count(*) FROM (SELECT 1 FROM {index} WHERE {index} MATCH ? LIMIT {_DF_CAP})",
            (" OR ".join(fts_term(form, index, layout) for form in same),),
        ).fetchone()[0]
    return math.log(1.0 + rows / max(1, found)), found


def _coverage_pattern(term: Term) -> re.Pattern[str]:
    """What a text must contain to cover *term*: a word starting with its stem, or the term."""
    if term.simple and not term.substring and not contains_cjk(term.text):
        return re.compile(r"(?<!\w)" + stem_regex(stem(term.text)))
    # A compound's hyphen may be a space in the text: forty-five, forty five.
    return re.compile(re.escape(term.text.lower()).replace("\\-", "[-\\s]"))


def _word_groups(terms: Sequence[Term]) -> dict[str, list[Term]]:
    """*terms* grouped by the word they are forms of (*buy*, *bought*; *trip*, *vacation*)."""
    groups: dict[str, list[Term]] = {}
    for term in terms:
        key = lemma(term.text) if term.simple or number_forms(term.text) else term.text.lower()
        groups.setdefault(key, []).append(term)
    return groups


def _group_pattern(forms: Sequence[Term]) -> re.Pattern[str]:
    """What a lower-cased text must contain to hold any of *forms*."""
    return re.compile("|".join(_coverage_pattern(term).pattern for term in forms))


def _rerank_by_session(
    conn: sqlite3.Connection,
    layout: Layout,
    rows: list[tuple[Any, ...]],
    terms: Sequence[Term],
    prefer_recent: bool = False,
    span: tuple[float, float] | None = None,
    glued: Glued | None = None,
    typed: frozenset[str] = frozenset(),
) -> _Ranked:
    """Rank hits by how much of the question their whole conversation covers.

    An answer is usually spread over a few turns (the question, the fix, the
    confirmation), each matching some of the words. A conversation scores the
    summed inverse document frequency of the question's words it contains: more
    of the question's rare words counts, repeating one common word in many
    messages does not. Conversations in which a person the question names
    speaks come first ("Where does Ben work?"), then those with a hit within
    the question's time *span* ("What did Tom bake in February?": the
    conversation of February, which may not say so), then hits rank by that
    score, then (when *prefer_recent*) by their conversation's latest hit,
    then by their own BM25 score. The sessions of the first two tiers come back
    too, so that hits fused in later keep behind them.
    """
    if not rows or (len(terms) < 2 and not prefer_recent and span is None):
        return _Ranked(rows)
    score: dict[str, float] = {}
    named: dict[str, set[str]] = {}
    if len(terms) >= 2:
        try:
            named = _with_named_speaker(conn, layout, rows, terms)
            score, extra = _coverage(conn, layout, rows, terms, named, glued, typed)
            seen = {row[0] for row in rows}
            for row in extra:
                if row[0] not in seen:
                    seen.add(row[0])
                    rows = [*rows, row]
        except sqlite3.OperationalError as exc:
            if is_busy(exc):
                raise
            log.warning("ranking by conversation failed in SQLite (%s); keeping BM25 order", exc)
            return _Ranked(rows)
    latest: dict[str, float] = {}
    if prefer_recent:
        for row in rows:
            latest[row[3]] = max(latest.get(row[3], 0.0), float(row[5] or 0.0))
    dated: set[str] = set()
    if span is not None:
        dated = {
            row[3]
            for row in rows
            if isinstance(row[5], (int, float)) and span[0] <= row[5] < span[1]
        }
    bm25_order = {row[0]: n for n, row in enumerate(rows)}  # rows arrive best first
    ranked = sorted(
        rows,
        key=lambda row: (
            row[3] not in named,
            row[3] not in dated,
            -score.get(row[3], 0.0),
            -latest.get(row[3], 0.0),
            bm25_order[row[0]],
        ),
    )
    return _Ranked(ranked, frozenset(named), frozenset(dated))


class _Ranked(NamedTuple):
    """Hits ranked by conversation, and the sessions ranked first for a reason of their own."""

    rows: list[tuple[Any, ...]]
    named: frozenset[str] = frozenset()
    """Sessions where a person the question names speaks."""
    dated: frozenset[str] = frozenset()
    """Sessions with a hit within the question's time span."""


_SENTENCE_END = re.compile(r"[.!?。！？…](?=[\s\"')]|$)")


def _tells_more_than_it_asks(content: Any, patterns: Sequence[re.Pattern[str]]) -> bool:
    """True when the question's words sit more in what a turn states than in its last question.

    "My sister gave me a ukulele for my birthday! What should I learn first?"
    answers "what did I get for my birthday?" by itself; "What did you make?"
    only points at the reply.
    """
    if not isinstance(content, str) or not patterns:
        return False
    text = content.rstrip(" \t\r\n\"')").lower()
    ends = [m.end() for m in _SENTENCE_END.finditer(text, 0, max(0, len(text) - 1))]
    if not ends:
        return False
    stated, asked = text[: ends[-1]], text[ends[-1] :]
    in_stated = sum(1 for pattern in patterns if pattern.search(stated))
    in_asked = sum(1 for pattern in patterns if pattern.search(asked))
    return in_stated > in_asked


def _with_replies(
    conn: sqlite3.Connection,
    layout: Layout,
    rows: list[tuple[Any, ...]],
    need: int,
    text: bool,
    filters: SearchFilters,
    terms: Sequence[Term] = (),
) -> list[tuple[Any, ...]]:
    """*rows* with the reply to each of the first asking turns placed next to it.

    In a conversation a question is answered by the next turn, which rarely
    repeats its words: "What did you make?" matches "What did Ana make in her
    first pottery lesson?", "A very lopsided bowl." does not. So each of the
    first :data:`REPLY_LOOKUP_HITS` hits that ends by asking something (its
    last character is ``?``) brings the next message of its session, when
    someone else says it, ahead of itself: the asking turn points at the
    answer. A user's message to an assistant, though, usually states its
    context before asking for help: when it states more of the question's
    *terms* than its last question asks ("We adopted a kitten and called her
    Miso! What food is best?" for "what did we name the cat?"), the turn
    answers by itself and the reply follows it. Between named speakers (a
    transcript of two friends) the asking turn always points at its reply
    ("That's a real mug! Are you keeping it?"). A question in the middle of a turn is
    usually rhetorical. A reply is in its question's session, so it passes the
    session and source filters; the time filters apply to it too.
    """
    asking = [row[0] for row in rows[:REPLY_LOOKUP_HITS]]
    if not asking:
        return rows
    params: dict[str, Any] = {"ids": json.dumps(asking)}
    within = ""
    if filters.since is not None:
        params["since"] = float(filters.since)
        within += " AND n.timestamp >= :since"
    if filters.until is not None:
        params["until"] = float(filters.until)
        within += " AND n.timestamp < :until"
    other_speaker = "r.role <> m.role"
    if "name" in layout.message_columns:
        other_speaker += " OR COALESCE(r.name, '') <> COALESCE(m.name, '')"
    # Between named people (a transcript of friends) a question is put to the other;
    # a user's unnamed message to an assistant states its context, then asks for help.
    to_assistant = "m.role = 'user' AND r.role = 'assistant'"
    if "name" in layout.message_columns:
        to_assistant += " AND m.name IS NULL"
    sql = (
        f"SELECT m.id, CASE WHEN {to_assistant} THEN substr(m.content, 1, {_COVERAGE_CHARS}) "
        "END, "
        f"r.id, NULL, NULL, {_detail_columns(layout, text, 'r')} "
        "FROM messages AS m JOIN messages AS r ON r.id = ("
        "SELECT n.id FROM messages AS n WHERE n.session_id = m.session_id AND n.id > m.id "
        f"AND n.role IN ('user', 'assistant') AND {layout.visible_rows_sql('n')}{within} "
        "ORDER BY n.id LIMIT 1) "
        "WHERE m.id IN (SELECT value FROM json_each(:ids)) "
        "AND substr(rtrim(m.content, char(9, 10, 13, 32, 34, 39, 41)), -1) IN ('?', '？') "
        f"AND ({other_speaker})"
    )
    try:
        found = conn.execute(sql, params).fetchall()
    except sqlite3.OperationalError as exc:
        if is_busy(exc):
            raise
        log.warning("looking up replies failed in SQLite (%s); keeping the hits", exc)
        return rows
    patterns = [_group_pattern(forms) for forms in _word_groups(terms).values()]
    replies: dict[Any, tuple[Any, ...]] = {}
    after: set[Any] = set()
    for row in found:
        replies[row[0]] = row[2:]
        if _tells_more_than_it_asks(row[1], patterns):
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


def _with_named_speaker(
    conn: sqlite3.Connection, layout: Layout, rows: list[tuple[Any, ...]], terms: Sequence[Term]
) -> dict[str, set[str]]:
    """The sessions of *rows* where someone speaks whose name is one of the words of *terms*,
    each with those words (lower-case).

    Read from the partial index of speaker names, so sessions without named
    speakers (the usual one-user history) cost nothing.
    """
    if "name" not in layout.message_columns:
        return {}
    words = {term.text.lower() for term in terms if term.simple}
    found = conn.execute(
        "SELECT DISTINCT session_id, name FROM messages "
        "WHERE session_id IN (SELECT value FROM json_each(?)) AND name IS NOT NULL",
        (json.dumps(list(dict.fromkeys(row[3] for row in rows))),),
    )
    named: dict[str, set[str]] = {}
    for session_id, name in found:
        said = words & set(_WORD_RE.findall(name.lower())) if isinstance(name, str) else set()
        if said:
            named.setdefault(session_id, set()).update(said)
    return named


_CALLS_READ = 4 * _COVERAGE_CHARS
"""Characters of a candidate's tool calls read; longer ones are read as written."""


def _calls_text(calls: Any) -> str | None:
    """A candidate's tool calls for coverage: decoded when whole within the read, else raw."""
    if not isinstance(calls, str) or not calls:
        return None
    if len(calls) > _CALLS_READ:  # cut: not JSON any more, and decoding it all is costly
        return calls[:_COVERAGE_CHARS]
    return tool_calls_text(calls)[:_COVERAGE_CHARS]


Glued = Callable[[str], list[tuple[Any, ...]]]
"""Rows (with text) where a stem is glued to letters before it, from the trigram index."""


def _coverage(
    conn: sqlite3.Connection,
    layout: Layout,
    rows: list[tuple[Any, ...]],
    terms: Sequence[Term],
    named: dict[str, set[str]] | None = None,
    glued: Glued | None = None,
    typed: frozenset[str] = frozenset(),
) -> tuple[dict[str, float], list[tuple[Any, ...]]]:
    """Each conversation's summed weight of the *terms* its best hits contain.

    A person's name is covered by a conversation they speak in (*named*: session ->
    the question's words that name a speaker there), said or not: between two
    friends nobody says their own name, and whether the other does is chance.

    A rare word the question typed (*typed*) is also looked for as the head of a
    glued compound (*gym* in "FlexGym", *plants* in "houseplants"): see
    :func:`_glued_matches`. Such a match covers the word at half its weight, and
    its rows are returned to join the hits (after them).
    """
    evidence: dict[str, list[int]] = {}
    for row in rows:  # best BM25 first; a long conversation does not cover more by volume
        hits = evidence.setdefault(row[3], [])
        if len(hits) < SESSION_EVIDENCE_HITS:
            hits.append(row[0])
    tool_calls = "tool_calls" if "tool_calls" in layout.message_columns else "NULL"
    texts = {
        mid: " ".join(
            part for part in (content, name, _calls_text(calls)) if isinstance(part, str)
        ).lower()
        for mid, content, name, calls in conn.execute(
            f"SELECT id, substr(content, 1, {_COVERAGE_CHARS}), tool_name, "
            f"substr({tool_calls}, 1, {_CALLS_READ + 1}) "
            "FROM messages WHERE id IN (SELECT value FROM json_each(?))",
            (json.dumps([mid for hits in evidence.values() for mid in hits]),),
        )
    }
    total = float(conn.execute("SELECT max(id) FROM messages").fetchone()[0] or 1)
    # The forms of one word (buy, bought) are one word to cover, weighed by the
    # messages holding any of them.
    groups = _word_groups(terms)
    counted = [_weight(conn, layout, forms, total) for forms in groups.values()]
    weights = [weight for weight, _ in counted]
    patterns = [_group_pattern(forms) for forms in groups.values()]
    keys = list(groups)
    speaking = set().union(*named.values()) if named else set()
    glued_rows: list[tuple[Any, ...]] = []
    compound: dict[str, set[int]] = {}
    if glued is not None:
        rare = sorted(
            (
                (found, n)
                for n, (_, found) in enumerate(counted)
                if found <= max(_GLUED_MAX_DF, total / _GLUED_MAX_SHARE) and keys[n] not in speaking
            ),
        )
        for _, n in rare[:_GLUED_WORDS]:
            for form in groups[keys[n]]:
                if form.text.lower() not in typed:
                    continue
                for row in _glued_matches(conn, layout, glued, form.text):
                    compound.setdefault(row[3], set()).add(n)
                    glued_rows.append(row)
    scores = {}
    for session_id, hits in evidence.items():
        covered = {
            n
            for mid in hits
            for n, pattern in enumerate(patterns)
            if pattern.search(texts.get(mid, ""))
        }
        speakers = named.get(session_id) if named else None
        if speakers:
            covered.update(n for n, key in enumerate(keys) if key in speakers)
        halves = compound.get(session_id, set()) - covered
        scores[session_id] = sum(weights[n] for n in covered) + sum(
            _GLUED_WEIGHT * weights[n] for n in halves
        )
    for session_id, halves in compound.items():  # a conversation found only by a compound
        if session_id not in evidence:
            scores[session_id] = sum(_GLUED_WEIGHT * weights[n] for n in halves)
    return scores, glued_rows


_GLUED_MAX_DF = 50
_GLUED_MAX_SHARE = 200
"""A word is looked for inside compounds when at most this many messages (or this
share of them, 1 in N) hold it as a word: a common word is found without it, and
its compounds are mostly other words (*work* in "network", "homework")."""
_GLUED_WORDS = 3
"""At most this many of a question's rarest words are looked for inside compounds."""
_GLUED_ROWS = 20
"""Messages read per word looked for inside compounds (the newest)."""
_GLUED_WEIGHT = 0.5
"""A compound covers its head word at this share of the word's weight."""
_GLUED_PREFIX = 3
_GLUED_TAIL = 4
_LETTERS = re.compile(r"[A-Za-z]+")
"""ASCII words (the stems looked for are ASCII; lower-casing keeps their length)."""


def _glued_matches(
    conn: sqlite3.Connection, layout: Layout, glued: Glued, word: str
) -> list[tuple[Any, ...]]:
    """Rows where *word* (its stem) ends a glued compound: "FlexGym", "houseplants".

    English compounds put the head last, and a person asks about the head
    (*which gym*, *how many plants*); the word index sees "flexgym" as one
    word. The trigram index finds the stem right after a letter; a match counts
    when at least three letters come before it and at most four after it (a
    plural, *-ing*), and the part before is itself a word of the index or the
    stem starts with a capital inside the word (camel case: "PureGym"). So
    *art* is not in "start" (two letters before) nor in "depart" (*dep* is no
    word); "restart" still passes, which is why such a match weighs half.
    """
    cut = stem(word)
    if not (cut.isascii() and cut.isalpha() and len(cut) >= _GLUED_PREFIX):
        return []
    if len(cut) >= 4 and cut.endswith("e") and cut[-2] not in "aeiouy":
        cut = cut[:-1]  # practise: practising
    pattern = re.compile(
        rf"(?<=[a-z]{{{_GLUED_PREFIX}}}){stem_regex(cut)}[a-z]{{0,{_GLUED_TAIL}}}$"
    )
    found = []
    known: dict[str, bool] = {}
    for row in glued(" OR ".join(f'"{letter}{cut}"' for letter in "abcdefghijklmnopqrstuvwxyz")):
        text = row[7] if isinstance(row[7], str) else ""
        for token in _LETTERS.findall(text):
            lowered = token.lower()
            match = pattern.search(lowered) if len(lowered) > len(cut) else None
            if match is None:
                continue
            prefix = lowered[: match.start()]
            if token[match.start()].isupper() or _is_word(conn, layout, prefix, known):
                found.append(row)
                break
    return found


_COMPOUND_MODIFIER = 3
_COMPOUND_HEAD = 4


def _compound_head(
    conn: sqlite3.Connection, layout: Layout, word: str, known: dict[str, bool]
) -> str | None:
    """The head of *word* read as a closed compound of two words the index holds, else None.

    A question may glue what the history says apart or says shorter: "how many
    houseplants" against "down to nine plants", "my bookshelf" against "the
    shelf". English puts a compound's head last, so the longest tail of at
    least four letters that is a word of the index, after a part of at least
    three letters that is one too, stands for the compound.
    """
    text = word.lower()
    if not (text.isascii() and text.isalpha()):
        return None
    for cut in range(_COMPOUND_MODIFIER, len(text) - _COMPOUND_HEAD + 1):
        modifier, head = text[:cut], text[cut:]
        if _is_word(conn, layout, head, known) and _is_word(conn, layout, modifier, known):
            return head
    return None


def _is_word(conn: sqlite3.Connection, layout: Layout, text: str, known: dict[str, bool]) -> bool:
    if text not in known:
        word = layout.word
        known[text] = word is not None and (
            conn.execute(
                f"SELECT 1 FROM {word.name} WHERE {word.name} MATCH ? LIMIT 1", (f'"{text}"',)
            ).fetchone()
            is not None
        )
    return known[text]


def _typed_words(query: ParsedQuery, plan: Plan) -> frozenset[str]:
    """The words of a question's query that were typed (not added forms nor substrings)."""
    return frozenset(term.text.lower() for term in query.terms if not term.substring) - plan.extras


class _Search:
    def __init__(
        self,
        conn: sqlite3.Connection,
        layout: Layout,
        filters: SearchFilters,
        pending_grams: bool,
        snippets: bool,
    ) -> None:
        self.conn = conn
        self.layout = layout
        self.filters = filters
        self.pending_grams = pending_grams
        self.snippets = snippets
        self.first: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset())
        """The sessions a question's ranking put first: a named person speaks there; a hit
        is within its time span (see :func:`_rerank_by_session`)."""

    def rows(
        self,
        query: ParsedQuery,
        need: int,
        boosts: tuple[tuple[ParsedQuery, float], ...] = (),
        by_session: bool = False,
        prefer_recent: bool = False,
        span: tuple[float, float] | None = None,
        typed: frozenset[str] = frozenset(),
    ) -> list[tuple[Any, ...]]:
        if query.empty or need <= 0:
            return []
        # FTS5 computes a snippet for every candidate it returns, so it is only
        # asked when the candidates are the hits; otherwise text snippets follow.
        candidates = compile_query(
            query,
            self.layout,
            pending_grams=self.pending_grams,
            boosts=boosts,
            snippets=self.snippets and not boosts and not by_session and not self.filters.active,
        )
        pool = max(need, QUESTION_CANDIDATES) if boosts or by_session else need
        rows = _run(self.conn, candidates, self.layout, self.filters, pool, self.snippets)
        if by_session:
            ranked = _rerank_by_session(
                self.conn,
                self.layout,
                rows,
                query.terms,
                prefer_recent,
                span,
                self._glued if self.layout.trigram is not None else None,
                typed,
            )
            rows, self.first = ranked.rows, (ranked.named, ranked.dated)
        return rows[:need]

    def nearest_rows(self, nearest: Nearest, text: str, need: int) -> list[tuple[Any, ...]]:
        """The semantic neighbours of *text* that pass the filters, as hit rows."""
        ids = [int(mid) for mid in nearest(text, max(need, NEAREST_CANDIDATES))]
        if not ids:
            return []
        candidates = Candidates(
            "SELECT value AS id, NULL AS score, NULL AS snippet FROM json_each(:ids) "
            "ORDER BY key LIMIT :k",
            {"ids": json.dumps(ids)},
            bare=True,
        )
        return _run(self.conn, candidates, self.layout, self.filters, len(ids), self.snippets)

    def _glued(self, expression: str) -> list[tuple[Any, ...]]:
        """The newest rows (with text) of the trigram index matching *expression*."""
        trigram = self.layout.trigram
        if trigram is None:
            return []
        candidates = Candidates(
            f"SELECT rowid AS id, NULL AS score, NULL AS snippet FROM {trigram.name} "
            f"WHERE {trigram.name} MATCH :glued ORDER BY rowid DESC LIMIT :k",
            {"glued": expression},
            bare=True,
        )
        return _run(self.conn, candidates, self.layout, self.filters, _GLUED_ROWS, True)

    def _unknown_words_as_substrings(
        self, query: ParsedQuery, extras: frozenset[str] = frozenset()
    ) -> ParsedQuery:
        """Words the word index has never seen are looked up inside other words.

        ``autoscaler`` is not a token of ``HorizontalPodAutoscaler`` (nor ``youer``
        of ``修改youer服务端``), but the trigram index finds it as a substring.
        A compound the history never wrote is also looked up by its head
        (``houseplants``: ``plants``), see :func:`_compound_head`.
        A word the plan added (*extras*: ``rentalin`` from "rental in") is
        dropped instead: it was a guess, and as a substring it matches text the
        question never meant.
        """
        word, trigram = self.layout.word, self.layout.trigram
        if word is None or trigram is None:
            return query
        clauses = []
        heads = []
        changed = False
        known: dict[str, bool] = {}
        for clause in query.clauses:
            terms = []
            for term in clause.include:
                if (
                    term.simple
                    and len(term.text) >= 4
                    and not contains_cjk(term.text)
                    and not _is_word(self.conn, self.layout, term.text, known)
                ):
                    changed = True
                    if term.text.lower() in extras:
                        continue
                    head = _compound_head(self.conn, self.layout, term.text, known)
                    if head is not None:
                        heads.append(Clause((Term(head),), clause.exclude))
                    term = Term(term.text, substring=True)
                terms.append(term)
            if terms:
                clauses.append(Clause(tuple(terms), clause.exclude))
        clauses += heads  # an alternative to the compound, never required beside it
        if not changed:
            return query
        return query._replace(
            clauses=tuple(clauses),
            terms=tuple(t for c in clauses for t in c.include),
        )

    def plan_rows(
        self, plan: Plan, need: int, span: tuple[float, float] | None = None
    ) -> list[tuple[Any, ...]]:
        boosts = tuple(
            (boost, BOOST_ALL_TERMS if n == 0 else BOOST_NEAR_PAIR)
            for n, boost in enumerate(plan.boosts)
        )
        primary = plan.primary
        if plan.mode == "question":
            primary = self._unknown_words_as_substrings(primary, plan.extras)
        rows = self.rows(
            primary,
            need,
            boosts,
            by_session=plan.mode == "question",
            prefer_recent=plan.prefer_recent,
            span=span,
            typed=_typed_words(primary, plan) if plan.mode == "question" else frozenset(),
        )
        fallback = plan.fallback if len(rows) < min(need, KEYWORD_TOP_UP_BELOW) else None
        if fallback is not None:
            seen = {row[0] for row in rows}
            extra = self.rows(fallback, need + len(seen))
            rows += [row for row in extra if row[0] not in seen][: need - len(rows)]
        if plan.mode == "question" and rows and not self.filters.roles:
            rows = _with_replies(
                self.conn, self.layout, rows, need, self.snippets, self.filters, primary.terms
            )
        if not rows and self.layout.trigram is not None and self.layout.word is not None:
            # A Latin word glued to CJK text ('修改youer服务端') is one unicode61
            # token; the trigram index still finds it as a substring.
            retry = fallback or plan.primary
            if _worth_trigram_retry(retry):
                trigram_layout = Layout(
                    ours=self.layout.ours,
                    version=self.layout.version,
                    message_columns=self.layout.message_columns,
                    session_columns=self.layout.session_columns,
                    indexes={self.layout.trigram.name: self.layout.trigram},
                    has_pending_grams=False,
                )
                rows = _Search(self.conn, trigram_layout, self.filters, False, self.snippets).rows(
                    retry, need
                )
        return rows


Nearest = Callable[[str, int], Sequence[int]]
"""Semantic neighbours: (question, k) → the ids of the k nearest messages, best first."""
NEAREST_CANDIDATES = 50
"""Semantic neighbours fused with a question's full-text hits (at least)."""
FUSION_K = 60
"""Reciprocal rank fusion's constant: a hit at rank r scores 1 / (FUSION_K + r)."""


def searched_by_meaning(parsed: ParsedQuery, plan: Plan) -> bool:
    """Whether semantic neighbours join the hits of *parsed*: a question, or two or more
    keywords (a topic described, as a model's tool call often does); one word, quotes,
    operators and prefixes stay literal."""
    if plan.mode == "question":
        return True
    return plan.mode == "keywords" and len(plan.keywords) >= 2


def _fused(
    lexical: Sequence[tuple[Any, ...]],
    semantic: Sequence[tuple[Any, ...]],
    need: int,
    first: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset()),
) -> list[tuple[Any, ...]]:
    """*lexical* and *semantic* hits in one ranking (reciprocal rank fusion).

    A message both rankings put high comes first; one found only by meaning
    ("a rescue tabby" for "the cat we adopted") ranks by its place among the
    neighbours. Ties keep the full-text order. The sessions the full-text
    ranking put *first* (a named person speaks there, then a hit within the
    question's time span) stay first: meaning knows neither.
    """
    named, dated = first
    if not semantic:
        return list(lexical)
    score: dict[Any, float] = {}
    rows: dict[Any, tuple[Any, ...]] = {}
    for ranking in (lexical, semantic):
        for rank, row in enumerate(ranking):
            score[row[0]] = score.get(row[0], 0.0) + 1.0 / (FUSION_K + rank + 1)
            rows.setdefault(row[0], row)
    order = {mid: n for n, mid in enumerate(rows)}  # full-text hits first on ties
    ranked = sorted(
        rows,
        key=lambda mid: (
            rows[mid][3] not in named,
            rows[mid][3] not in dated,
            -score[mid],
            order[mid],
        ),
    )
    return [rows[mid] for mid in ranked[:need]]


def _dated_plan(
    conn: sqlite3.Connection, layout: Layout, parsed: ParsedQuery, plan: Plan
) -> tuple[Plan, tuple[float, float] | None]:
    """A question's plan without its relative time phrase, and the span the phrase names.

    "What did Tom bake in February?" asks about the conversation of February,
    which may not say *February*: conversations within the span rank first
    (:func:`_rerank_by_session`). The words of a calendar date stay searched (a
    turn may say "on 16 March"); those of a relative phrase (*this year*, *last
    week*) do not, since a turn's *last week* is relative to its own day;
    nothing is filtered out, so a span that holds nothing changes nothing. The
    span is read against the stored history's dates when that ended before it
    (an imported benchmark): see :func:`find_time_span_in_history`.
    """
    if not _TIME_HINT.search(parsed.text):  # most questions name no time: no regexes, no SQL
        return plan, None
    span, rest, _ = find_time_span_in_history(parsed.text, None)
    if span is None:
        return plan, None
    span, rest, _ = find_time_span_in_history(parsed.text, last_activity(conn, layout))
    if span is None:
        return plan, None
    if names_a_topic(rest) and not _CALENDAR.search(span.phrase):
        dated = plan_query(parse_query(rest), question=True)
        if dated.mode == "question":
            plan = dated
    return plan, (span.since, span.until)


def search_messages(
    conn: sqlite3.Connection,
    layout: Layout,
    query: object,
    *,
    filters: SearchFilters | None = None,
    limit: int = 20,
    offset: int = 0,
    context: bool = False,
    snippets: bool = True,
    pending_grams: bool = False,
    session_info: SessionInfo | None = None,
    nearest: Nearest | None = None,
) -> list[dict[str, Any]]:
    """Messages matching *query*, best first; ``[]`` for an empty or unusable query.

    Each hit has ``id``, ``session_id``, ``role``, ``name`` (who spoke, when
    stored), ``snippet`` (matches marked
    ``>>>…<<<``), ``timestamp``, ``tool_name``, ``source``, ``model``,
    ``session_started``, ``session_title`` and ``rank`` (0 for the best hit), plus
    ``context`` (the previous message, the hit, the next message of the same
    session, 200 characters each) when *context* is true. *session_info* caches
    the session fields across calls on the same connection; call its
    :meth:`~hermes_core.sessions.sessioninfo.SessionInfo.sync` before each search.
    *nearest* (text, k → message ids, best first) adds semantic recall to
    questions: its messages are fused with the full-text hits (see
    :mod:`~hermes_core.sessions.semantic`).
    """
    parsed = parse_query(query)
    if parsed.empty or limit <= 0:
        return []
    plan = plan_query(parsed)
    need = max(0, int(offset)) + int(limit)
    search = _Search(conn, layout, filters or SearchFilters(), pending_grams, snippets)
    try:
        span = None
        if plan.mode == "question":
            plan, span = _dated_plan(conn, layout, parsed, plan)
        rows = search.plan_rows(plan, need, span)
        if nearest is not None and searched_by_meaning(parsed, plan):
            rows = _fused(rows, search.nearest_rows(nearest, parsed.text, need), need, search.first)
    except sqlite3.OperationalError as exc:
        if "locked" in str(exc).lower() or is_undecodable(exc):
            raise  # the store retries, or reads the bad text leniently
        log.warning("search for %r failed in SQLite (%s); returning no hits", parsed.text, exc)
        return []
    rows = rows[offset:need]
    info = session_info or SessionInfo(layout)
    sessions = info.fields(conn, map(itemgetter(3), rows)) if rows else {}
    hits = _hits(rows, sessions, plan.primary.terms, snippets, offset)
    if context:
        for hit in hits:
            hit["context"] = _context(conn, hit)
    return hits


def group_by_session(hits: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Hits grouped by session, sessions in the order of their best hit.

    Each group is the session's best hit plus ``matches`` (how many of the hits
    are in that session) and ``message_ids`` (their ids, best first).
    """
    groups: dict[str, dict[str, Any]] = {}
    for hit in hits:
        group = groups.get(hit["session_id"])
        if group is None:
            groups[hit["session_id"]] = {**hit, "matches": 1, "message_ids": [hit["id"]]}
        else:
            group["matches"] += 1
            group["message_ids"].append(hit["id"])
    return list(groups.values())
