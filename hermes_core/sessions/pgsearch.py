"""Search in PostgreSQL: the same sanitised query and plan as SQLite, run on a ``tsvector``.

The query goes through :func:`~hermes_core.sessions.query.parse_query` and
:func:`~hermes_core.sessions.question.plan_query` exactly as for ``state.db``,
so operators, phrases, prefixes and question handling behave the same. Each
term becomes a ``tsquery`` bound as a parameter (its text is never SQL):

* a word, compound or phrase matches its stems (the word index's Porter stems,
  :func:`~hermes_core.sessions.porter.text_stems`, the vector's weight A), as in
  SQLite's word index;
* ``prefix*`` matches any stem the stem of its text starts (FTS5 stems a prefix too);
* a CJK term matches its unigram (one letter), bigram (two) or chain of bigrams
  (three or more) in the gram part of the vector;
* a run of symbols (``🔥``) matches as a substring of the text.

Hits are ranked by the plan's boosts (how many it matches), then BM25 computed from
each term's document frequency (:func:`bm25_sql`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from hermes_core.sessions import pgrerank
from hermes_core.sessions.cjk import CJK_CLASS, cjk_grams, cjk_runs, contains_cjk, query_gram
from hermes_core.sessions.compounds import as_substrings
from hermes_core.sessions.convbm25 import Conversations, conversation_scores
from hermes_core.sessions.fetch import SearchFilters
from hermes_core.sessions.layout import GRAM_INDEX, TRIGRAM_INDEX, WORD_INDEX, FtsIndex, Layout
from hermes_core.sessions.pgrerank import Compounds
from hermes_core.sessions.porter import text_stems
from hermes_core.sessions.query import Clause, ParsedQuery, Term, parse_query
from hermes_core.sessions.question import (
    Plan,
    message_first,
    names_a_topic,
    plan_query,
    top_up,
)
from hermes_core.sessions.rerank import by_conversation_hits, mostly_cjk, word_groups
from hermes_core.sessions.routing import RANKED_CANDIDATES, single_grams, single_index
from hermes_core.sessions.schema import SCHEMA_VERSION, WORD_TOKENIZER
from hermes_core.sessions.search import (
    BEST_MESSAGES_KEPT,
    BOOST_QUOTED,
    CALENDAR,
    KEYWORD_TOP_UP_BELOW,
    NEAREST_CANDIDATES,
    QUESTION_CANDIDATES,
    TIME_HINT,
    Nearest,
    keep_best_messages,
    meaning_depth,
    plan_boosts,
    typed_words,
    with_meaning,
)
from hermes_core.sessions.ties import break_ties
from hermes_core.sessions.timespan import find_time_span_in_history

__all__ = [
    "PgSearch",
    "Predicate",
    "Row",
    "Statistics",
    "bm25_sql",
    "filter_sql",
    "idf",
    "query_predicate",
    "ranked_terms",
    "search_rows",
    "statistics",
]

Predicate = tuple[str, list[Any]]
"""SQL over the ``messages`` row ``m`` and its parameters."""

_CJK_RUN = re.compile(f"[{CJK_CLASS}]+")


def _lexeme(text: str) -> str:
    """*text* as one quoted tsquery lexeme."""
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"


def _like(text: str) -> str:
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _cjk(text: str) -> Predicate:
    """A run of CJK letters: its unigram, bigram or chain of bigrams."""
    grams = cjk_grams([text]).split()
    letters = [gram for gram in grams if len(gram) == 1]
    if len(letters) <= 2:
        token = query_gram("".join(letters))
        return "m.tsv @@ to_tsquery('simple', %s)", [_lexeme(token)]
    pairs = [gram for gram in grams if len(gram) == 2]
    return "m.tsv @@ to_tsquery('simple', %s)", [" <-> ".join(map(_lexeme, pairs))]


def _term(term: Term) -> Predicate:
    text = term.text
    if term.symbolic or term.substring:
        return "m.search_text ILIKE %s", [_like(text)]
    if contains_cjk(text):
        if not any(ch.isascii() and ch.isalnum() for ch in text):
            return _cjk(text)
        # Latin glued to CJK (Agent通信): each part indexed, then the text as written.
        parts = [_cjk(run) for run in cjk_runs(text)]
        parts += [
            ("m.tsv @@ phraseto_tsquery('simple', %s)", [word])
            for word in _CJK_RUN.split(text)
            if any(ch.isalnum() for ch in word)
        ]
        parts.append(("m.search_text ILIKE %s", [_like(text)]))
        return "(" + " AND ".join(sql for sql, _ in parts) + ")", [
            value for _, values in parts for value in values
        ]
    stems = text_stems(text)
    if not stems:
        return "FALSE", []
    # The stemmed part of the vector (weight A) holds the word index's tokens: a word is its
    # stem, a phrase its stems in a row, a prefix the stem of what was typed (as FTS5 reads
    # ``deploy*``: ``deploi*``). A plain word is also a word as written beside CJK text
    # (``修改youer服务端``), which SQLite finds in its trigram index.
    return _stemmed(stems, term.prefix, text if term.simple and not term.prefix else None)


def _stemmed(stems: Sequence[str], prefix: bool, written: str | None = None) -> Predicate:
    """The row ``m`` holds *stems* in a row in its stemmed part (the last one a *prefix*), or
    the word *written* as written.

    GIN keeps neither weights nor positions, so the server tests each candidate's vector
    again. For a phrase that meant reading every vector holding all its words from TOAST
    (a phrase of common words at a million messages: 115,000 vectors, 5.6x the buffers of
    the messages themselves). So a phrase asks the index for its stems in any part and
    order, then reads the ``stems`` column (the stemmed part as text, one space between
    tokens) for them in a row; a row without stems (an older build's) is tested on the
    vector, as before. One stem is tested on the vector: most of its candidates match, and
    the vector is read anyway where the plan reads the newest messages first.
    """
    weighted = " <-> ".join(
        [*(_lexeme(s) + ":A" for s in stems[:-1]), _lexeme(stems[-1]) + (":*A" if prefix else ":A")]
    )
    if written is not None:
        weighted = f"{weighted} | {_lexeme(written)}:D"
    if len(stems) == 1:
        return "m.tsv @@ to_tsquery('simple', %s)", [weighted]
    anywhere = " & ".join(
        [*map(_lexeme, stems[:-1]), _lexeme(stems[-1]) + (":*" if prefix else "")]
    )
    held = "strpos(' ' || m.stems || ' ', %s) > 0"
    params: list[Any] = [" " + " ".join(stems) + ("" if prefix else " ")]
    if written is not None:  # a word the index splits (file.txt): also as written, beside CJK
        anywhere = f"({anywhere}) | {_lexeme(written)}"
        held = f"({held} OR m.tsv @@ to_tsquery('simple', %s))"
        params.append(f"{_lexeme(written)}:D")
    return (
        "(m.tsv @@ to_tsquery('simple', %s) AND CASE WHEN m.stems IS NULL "
        f"THEN m.tsv @@ to_tsquery('simple', %s) ELSE {held} END)",
        [anywhere, weighted, *params],
    )


def _positional(term: Term) -> bool:
    """Whether *term* is a phrase of stems (its words in a row, checked by position)."""
    if term.symbolic or term.substring or contains_cjk(term.text):
        return False
    return len(text_stems(term.text)) > 1


def _clause(clause: Clause) -> Predicate:
    parts: list[str] = []
    params: list[Any] = []
    for term in clause.include:
        sql, values = _term(term)
        parts.append(sql)
        params += values
    for term in clause.exclude:
        sql, values = _term(term)
        parts.append(f"NOT ({sql})")
        params += values
    return "(" + " AND ".join(parts) + ")", params


def query_predicate(parsed: ParsedQuery) -> Predicate:
    """SQL true for the messages *parsed* matches."""
    parts: list[str] = []
    params: list[Any] = []
    for clause in parsed.clauses:
        sql, values = _clause(clause)
        parts.append(sql)
        params += values
    return "(" + " OR ".join(parts or ["FALSE"]) + ")", params


DF_CAP = 5_000
"""Matches counted for a term's document frequency; a term matching more is common anyway."""
K1, B = 1.2, 0.75
"""BM25's parameters (SQLite FTS5's too)."""


def ranked_terms(parsed: ParsedQuery) -> list[Term]:
    """The distinct terms of *parsed* that score a hit (its included ones)."""
    seen: dict[Term, None] = {}
    for clause in parsed.clauses:
        for term in clause.include:
            seen.setdefault(term, None)
    return list(seen)


def idf(df: int, total: int) -> float:
    """BM25's inverse document frequency of a term found in *df* of *total* messages, as
    FTS5's ``bm25()`` computes it (a term in half the messages or more weighs almost
    nothing)."""
    return max(math.log((total - df + 0.5) / (df + 0.5)), 1e-6)


class Statistics(NamedTuple):
    """What BM25 and the conversation ranking read of the whole table, refreshed now and then."""

    total: int
    """Messages (exact up to :data:`_COUNTED`, then the planner's estimate)."""
    words: float
    """Mean words per message (of the newest 2,000)."""
    common: Mapping[str, float] = {}
    """In a large table: the share of messages holding each of the commonest words, from the
    planner's statistics of the vector (``ANALYZE``), so that a common word's document
    frequency is not counted row by row on every search (rare words still are)."""


def statistics(conn: Any) -> Statistics:
    """The :class:`Statistics` of the ``messages`` table."""
    estimate = conn.execute(
        "SELECT reltuples FROM pg_class WHERE oid = to_regclass('messages')"
    ).fetchone()
    total = int(estimate[0]) if estimate and estimate[0] and estimate[0] > _COUNTED else 0
    common: dict[str, float] = {}
    if total:
        for word, share in conn.execute(
            "SELECT e.word, e.share FROM pg_stats AS s, unnest(s.most_common_elems::text::text[], "
            "s.most_common_elem_freqs) AS e(word, share) WHERE s.schemaname = current_schema() "
            "AND s.tablename = 'messages' AND s.attname = 'tsv'"
        ):
            if word is not None and share is not None:
                common[word] = float(share)
    else:
        total = conn.execute(
            f"SELECT count(*) FROM (SELECT 1 FROM messages LIMIT {_COUNTED}) AS c"
        ).fetchone()[0]
    words = conn.execute(
        "SELECT avg(words) FROM (SELECT words FROM messages ORDER BY id DESC LIMIT 2000) AS r"
    ).fetchone()[0]
    return Statistics(int(total), float(words or 1.0), common)


_COUNTED = 50_000


def _frequency_sql(term: Term) -> Predicate | None:
    """How often the row ``m`` says *term* (its stemmed word), read from the vector's
    positions; ``None`` for a term counted once (a phrase, prefix, CJK or symbol term)."""
    if not term.simple or term.prefix or term.substring or contains_cjk(term.text):
        return None
    return (
        "(SELECT count(*) FROM unnest(ts_filter(m.tsv, '{a}')) AS u, unnest(u.positions) "
        "WHERE u.lexeme = ANY(%s))",
        [list(text_stems(term.text))],
    )


def bm25_sql(
    terms: Sequence[Term],
    dfs: Sequence[int],
    total: int,
    avgdl: float,
    counted: bool = False,
    matched: bool = False,
) -> Predicate:
    """A BM25 score of the row ``m``, as SQLite's ``bm25()`` ranks: each matched term's IDF,
    saturated by how often the message says it (when *counted*, else once: cheaper) and
    normalised by the message's length in words (*avgdl*: the mean). *matched* says every
    row scored holds every term (a query of one clause): then the terms are not tested
    again, and a message's vector is read only to count frequencies."""
    if not terms:
        return "0", []
    norm = f"({K1} * ({1 - B} + {B} * m.words / %s))"
    pieces: list[str] = []
    params: list[Any] = []
    for term, df in zip(terms, dfs, strict=True):
        frequency = _frequency_sql(term) if counted else None
        if frequency is None:
            piece, values = f"%s / (1 + {norm})", [idf(df, total), max(avgdl, 1.0)]
        else:
            # OFFSET 0 keeps the subquery whole: flattened, the count (it unnests the
            # message's vector) ran once for each of the two mentions of f.
            piece = (
                f"%s * (SELECT GREATEST(f, 1) / (GREATEST(f, 1) + {norm}) "
                f"FROM (SELECT {frequency[0]} AS f OFFSET 0) AS tf)"
            )
            values = [idf(df, total), max(avgdl, 1.0), *frequency[1]]
        if matched:
            pieces.append(f"({piece})")
            params += values
        else:
            sql, tested = _term(term)
            pieces.append(f"(CASE WHEN {sql} THEN {piece} ELSE 0 END)")
            params += [*tested, *values]
    return f"(({' + '.join(pieces)}) * {K1 + 1})", params


RANKED_BY_FREQUENCY = 1_000
"""Matches (the best by BM25 counting each term once) re-ranked with term frequencies."""


Row = tuple[Any, ...]
"""A hit row, SQLite's shape: ``(id, score, snippet, session_id, role, timestamp, tool_name,
content, tool_calls, name)``."""

_DETAILS = "m.session_id, m.role, m.timestamp, m.tool_name, m.content, m.tool_calls, m.name"


def filter_sql(filters: SearchFilters) -> Predicate:
    """SQL over the row ``m`` true for the messages *filters* let through."""
    parts: list[str] = []
    params: list[Any] = []
    for column, values, negate in (
        ("m.role", filters.roles, False),
        ("m.session_id", filters.session_ids, False),
        ("m.session_id", filters.exclude_session_ids, True),
    ):
        if values:
            parts.append(f"{'NOT ' if negate else ''}{column} = ANY(%s)")
            params.append(list(values))
    for value, op in ((filters.since, ">="), (filters.until, "<")):
        if value is not None:
            parts.append(f"m.timestamp {op} %s")
            params.append(float(value))
    sessions = []
    for values, negate in ((filters.sources, False), (filters.exclude_sources, True)):
        if values:
            sessions.append(f"{'NOT ' if negate else ''}s.source = ANY(%s)")
            params.append(list(values))
    if filters.user_id is not None:
        sessions.append("s.user_id = %s")
        params.append(filters.user_id)
    if sessions:
        parts.append(
            "m.session_id IN (SELECT s.id FROM sessions AS s WHERE " + " AND ".join(sessions) + ")"
        )
    return " AND ".join(parts) or "TRUE", params


def _any_term(query: ParsedQuery, terms: tuple[Term, ...]) -> ParsedQuery | None:
    """A query for any of *terms*, shaped like *query*; ``None`` when there are none."""
    if not terms:
        return None
    clauses = tuple(Clause((term,)) for term in terms)
    return query._replace(clauses=clauses, terms=terms)


def _common_share(term: Term, common: Mapping[str, float]) -> float | None:
    """The share of messages holding *term*, when it is a plain word the statistics list."""
    if not term.simple or term.prefix or term.substring:
        return None
    stems = text_stems(term.text)
    return common.get(stems[0]) if len(stems) == 1 else None


_STATE_DB = Layout(
    ours=True,
    version=SCHEMA_VERSION,
    message_columns=frozenset(),
    session_columns=frozenset(),
    indexes={
        name: FtsIndex(name, ("content",), tokenizer)
        for name, tokenizer in (
            (WORD_INDEX, WORD_TOKENIZER),
            (TRIGRAM_INDEX, "trigram"),
            (GRAM_INDEX, "unicode61"),
        )
    },
)
"""The indexes of a ``state.db`` this build writes: which one would answer a term there."""

GLUED_ROWS = 20
"""Rows a glued-compound lookup returns (SQLite's trigram lookup returns as many)."""
GLUED_SCANNED = 10_000
"""Messages a glued-compound lookup reads, newest first: PostgreSQL has no trigram index, so
a stem inside a compound is a regular expression over the text (SQLite's trigram index
reads them all). Measured at 50,000 messages under a load average of 20: 1.7 s per word
looked up, so the bound keeps a question's (up to three) lookups to a fraction of a
second."""


class PgSearch:
    """One search on a PostgreSQL connection, step for step as SQLite's (``search.py``).

    *statistics* gives the table's :class:`Statistics` (cached by the store).
    """

    def __init__(
        self,
        conn: Any,
        filters: SearchFilters,
        statistics: Callable[[Any], Statistics],
    ) -> None:
        self.conn = conn
        self.filters = filters
        self.where = filter_sql(filters)
        self.statistics = statistics
        self.first: tuple[frozenset[str], ...] = ()
        self.share = 0.0
        """How much of a question its best conversation covers (``Ranked.share``)."""
        self.known: dict[str, bool] = {}

    def _bm25(self, parsed: ParsedQuery) -> tuple[list[Term], list[int], int, float]:
        """The terms of *parsed* that score, their document frequencies, the messages and
        their mean words, for BM25.

        The document frequencies are counted in one statement; a query of one term needs
        none (its IDF scales every score alike).
        """
        terms = ranked_terms(parsed)
        stats = self.statistics(self.conn)
        dfs = [0] * len(terms)
        if len(terms) > 1:
            dfs = self._counts([(term,) for term in terms], DF_CAP)
        return terms, dfs, max(stats.total, max(dfs, default=0)), stats.words

    def _counts(self, groups: Sequence[Sequence[Term]], cap: int) -> list[int]:
        """For each group of terms, how many messages hold any of them (up to *cap*), in one
        statement. In a large table a common word's share is read from
        :attr:`Statistics.common` and the others are counted one by one (a group's count is
        then the sum, an upper bound); otherwise each group is counted as a whole."""
        common = self.statistics(self.conn).common
        total = self.statistics(self.conn).total
        parts: list[str] = []
        params: list[Any] = []
        for group in groups:
            known = [_common_share(term, common) for term in group]
            if common and any(share is not None for share in known):
                pieces = [f"{int(share * total)}" for share in known if share is not None]
                rare = [term for term, share in zip(group, known, strict=True) if share is None]
            else:
                pieces, rare = [], list(group)
            if rare:
                sql = " OR ".join(_term(term)[0] for term in rare)
                pieces.append(
                    f"(SELECT count(*) FROM (SELECT 1 FROM messages AS m WHERE {sql} "
                    f"LIMIT {int(cap)}) AS c)"
                )
                params += [value for term in rare for value in _term(term)[1]]
            parts.append(f"LEAST({int(cap)}, {' + '.join(pieces)})")
        row = self.conn.execute("SELECT " + ", ".join(parts), params).fetchone()
        return [int(value) for value in row]

    def session_counts(self, forms: Sequence[Term], cap: int) -> dict[str, int] | None:
        """Messages holding any of *forms* per session, ``None`` above *cap* of them (see
        :data:`~hermes_core.sessions.convbm25.Counts`; every user's, as :meth:`count_forms`)."""
        if any(form.symbolic for form in forms):
            return None
        parts = [_term(form) for form in forms]
        found = self.conn.execute(
            "SELECT c.session_id, count(*) FROM (SELECT m.session_id FROM messages AS m "
            f"WHERE {' OR '.join(sql for sql, _ in parts)} LIMIT {int(cap) + 1}) AS c "
            "GROUP BY c.session_id",
            [value for _, values in parts for value in values],
        ).fetchall()
        counts = {str(sid): int(n) for sid, n in found}
        return None if sum(counts.values()) > cap else counts

    def session_sizes(self, sessions: Sequence[str]) -> tuple[dict[str, int], int, int]:
        """The messages of each of *sessions*, and the store's sessions and highest message id
        (see :data:`~hermes_core.sessions.convbm25.Sizes`)."""
        found = self.conn.execute(
            "SELECT session_id, count(*) FROM messages WHERE session_id = ANY(%s) "
            "GROUP BY session_id",
            (list(sessions),),
        ).fetchall()
        total = self.conn.execute(
            "SELECT (SELECT count(*) FROM sessions), (SELECT max(id) FROM messages)"
        ).fetchone()
        return {str(sid): int(n) for sid, n in found}, int(total[0]), int(total[1] or 0)

    def is_word(self, text: str) -> bool:
        """Whether any message holds *text* as a stemmed word (as SQLite's word index does:
        every user's messages); see :data:`~hermes_core.sessions.compounds.Words`."""
        if text not in self.known:
            stems = text_stems(text)
            self.known[text] = (
                bool(stems)
                and self.conn.execute(
                    "SELECT EXISTS (SELECT 1 FROM messages AS m "
                    "WHERE m.tsv @@ to_tsquery('simple', %s))",
                    (" <-> ".join(_lexeme(part) + ":A" for part in stems),),
                ).fetchone()[0]
            )
        return self.known[text]

    def glued(self, cut: str) -> list[Row]:
        """The newest rows passing the filters whose text holds *cut* (ASCII letters) after a
        letter, among the newest :data:`GLUED_SCANNED` that pass them; see
        :data:`~hermes_core.sessions.compounds.Glued`."""
        where, params = self.where
        sql = (
            f"SELECT m.id, NULL, NULL, {_DETAILS} FROM (SELECT m.* FROM messages AS m "
            f"WHERE {where} ORDER BY m.id DESC LIMIT %s) AS m "
            "WHERE m.search_text ~* %s ORDER BY m.id DESC LIMIT %s"
        )
        found = self.conn.execute(sql, [*params, GLUED_SCANNED, f"[a-z]{cut}", GLUED_ROWS])
        return [tuple(row) for row in found]

    def count_forms(self, forms: Sequence[Term], cap: int) -> int:
        """How many messages hold any of *forms*, up to *cap* (see :data:`pgrerank.Counter`)."""
        return self._counts([forms], cap)[0]

    def _first_ranking(
        self,
        query: ParsedQuery,
        bound: int,
        stats: tuple[list[Term], list[int], int, float],
        newest: int | None = None,
    ) -> Predicate:
        """SQL for the best *bound* matches of *query* as ``(id, score)``, by BM25 counting
        each term once.

        A query that is an OR of single terms (a question's words) is one index scan per
        term, summed: testing every term against every matching row would read each
        message's vector once per term.
        """
        terms, dfs, total, words = stats
        where, where_params = self.where
        single = all(len(c.include) == 1 and not c.exclude for c in query.clauses)
        if single and len(query.clauses) > 1 and newest is None:
            branches, params = [], []
            for term, df in zip(terms, dfs, strict=True):
                score, score_params = bm25_sql([term], [df], total, words, matched=True)
                sql, values = _term(term)
                branches.append(
                    f"SELECT m.id, {score} AS score FROM messages AS m WHERE {sql} AND {where}"
                )
                params += [*score_params, *values, *where_params]
            return (
                f"SELECT u.id, sum(u.score) AS score FROM ({' UNION ALL '.join(branches)}) AS u "
                "GROUP BY u.id ORDER BY score DESC, u.id LIMIT %s",
                [*params, bound],
            )
        predicate, params = query_predicate(query)
        matched = len(query.clauses) == 1
        score, score_params = bm25_sql(terms, dfs, total, words, matched=matched)
        source, source_params = "messages", []
        if newest is not None:
            matches = f"messages AS m WHERE {predicate} AND {where}"
            if any(_positional(term) for term in terms):
                # The planner prices a phrase as its words together (their shares multiplied)
                # and reads the messages newest first to find the newest matches: a phrase
                # rarer than that read every message's vector (1.8 s at 100,000 messages).
                # Behind OFFSET 0 the matches come from the index, then the newest are kept.
                matches = f"(SELECT m.* FROM {matches} OFFSET 0) AS m"
            source = f"(SELECT m.* FROM {matches} ORDER BY m.id DESC LIMIT %s)"
            source_params = [*params, *where_params, max(bound, newest)]
        return (
            f"SELECT m.id, {score} AS score FROM {source} AS m WHERE {predicate} AND {where} "
            "ORDER BY score DESC, m.id LIMIT %s",
            [*score_params, *source_params, *params, *where_params, bound],
        )

    def candidates(
        self,
        query: ParsedQuery,
        k: int,
        boosts: Sequence[tuple[ParsedQuery, float]] = (),
        bounded: bool = False,
    ) -> list[Row]:
        """The best *k* matches of *query* by BM25 (*bounded*: of its newest
        :data:`~hermes_core.sessions.routing.RANKED_CANDIDATES` matches, unless a phrase of
        CJK grams), then
        re-scored by *boosts* (each matched multiplies the score by 1 + its weight), as
        SQLite's candidates are."""
        # As SQLite's: a boost counts when the query and it are answered by one index of a
        # state.db (a question with a word read as a substring, or CJK beside Latin, has none).
        index = single_index(query, _STATE_DB, False)
        boosts = [
            (boost, weight)
            for boost, weight in boosts
            if index is not None and single_index(boost, _STATE_DB, False) == index
        ]
        stats = self._bm25(query)
        cjk = any(contains_cjk(term.text) for term in stats[0])
        newest = RANKED_CANDIDATES if bounded and (not cjk or single_grams(query)) else None
        first, first_params = self._first_ranking(query, max(k, RANKED_BY_FREQUENCY), stats, newest)
        terms, dfs, total, words = stats
        counted, counted_params = bm25_sql(
            terms, dfs, total, words, counted=True, matched=len(query.clauses) == 1
        )
        # Counting a term's frequency reads the message's vector: only the best matches by
        # the cheaper score are counted.
        inner = (
            f"SELECT m.id, {counted} AS score FROM ({first}) AS b JOIN messages AS m "
            "ON m.id = b.id ORDER BY score DESC, m.id LIMIT %s"
        )
        inner_params = [*counted_params, *first_params, k]
        factors, factor_params = [], []
        for boost, weight in boosts:
            if boost.empty:
                continue
            sql, values = query_predicate(boost)
            factors.append(f"(CASE WHEN {sql} THEN %s ELSE 0 END)")
            factor_params += [*values, float(weight)]
        boost_sql = "c.score * (1 + " + " + ".join(factors) + ")" if factors else "c.score"
        # As SQLite's store does today: its boosted order holds only when filters are set
        # (fetch.run); without them the hits come in the index's BM25 order, boosted
        # scores carried along. Kept identical so that both backends rank alike.
        order = "2 DESC, m.id DESC" if self.filters.active else "c.score DESC, m.id"
        sql = (
            f"SELECT m.id, {boost_sql} AS score, NULL, {_DETAILS} FROM ({inner}) AS c "
            f"JOIN messages AS m ON m.id = c.id ORDER BY {order}"
        )
        return [tuple(row) for row in self.conn.execute(sql, [*factor_params, *inner_params])]

    def rows(
        self,
        query: ParsedQuery,
        need: int,
        boosts: tuple[tuple[ParsedQuery, float], ...] = (),
        by_session: bool = False,
        prefer_recent: bool = False,
        span: tuple[float, float] | None = None,
        phrases: tuple[Term, ...] = (),
        bounded: bool = False,
        typed: frozenset[str] | None = None,
        by_hits: bool = False,
    ) -> list[Row]:
        """As ``search._Search.rows``: candidates, quoted phrases' conversations, the ranking
        by conversation (glued compounds of the *typed* words too) and the best messages kept
        near the top."""
        if query.empty or need <= 0:
            return []
        quoted = _any_term(query, phrases)
        if quoted is not None:
            boosts = (*boosts, (quoted, BOOST_QUOTED))
        pool = max(need, QUESTION_CANDIDATES) if boosts or by_session or by_hits else need
        rows = break_ties(self.candidates(query, pool, boosts, bounded))
        quoted_sessions: frozenset[str] = frozenset()
        if quoted is not None and by_session:
            found = self.rows(quoted, pool)
            seen = {row[0] for row in rows}
            rows += [row for row in found if row[0] not in seen]
            quoted_sessions = frozenset(row[3] for row in found)
        if by_session:
            compounds = None if typed is None else Compounds(self.glued, self.is_word, typed)
            ranked = pgrerank.rerank_by_session(
                self.conn,
                self.count_forms,
                rows,
                query.terms,
                prefer_recent,
                span,
                quoted_sessions,
                compounds,
                Conversations(self.session_counts, self.session_sizes),
            )
            best = [row for row in rows if row[0] not in ranked.name_only][:BEST_MESSAGES_KEPT]
            rows, self.first = ranked.rows, (ranked.named, quoted_sessions, ranked.dated)
            self.share = ranked.share
            rows = keep_best_messages(rows, best)
        elif by_hits:
            source = Conversations(self.session_counts, self.session_sizes)
            conversation = conversation_scores(source, rows, word_groups(query.terms))
            rows = by_conversation_hits(rows, query.terms, conversation)
        return rows[:need]

    def nearest_rows(self, nearest: Nearest, text: str, need: int) -> list[Row]:
        """The semantic neighbours of *text* that pass the filters, as hit rows, nearest
        first (as ``search._Search.nearest_rows``)."""
        ids = [int(mid) for mid in nearest(text, max(need, NEAREST_CANDIDATES))]
        if not ids:
            return []
        where, params = self.where
        found = {
            row[0]: tuple(row)
            for row in self.conn.execute(
                f"SELECT m.id, NULL, NULL, {_DETAILS} FROM messages AS m "
                f"WHERE m.id = ANY(%s) AND {where}",
                [ids, *params],
            )
        }
        return [found[mid] for mid in ids if mid in found]

    def plan_rows(
        self, plan: Plan, need: int, span: tuple[float, float] | None = None
    ) -> list[Row]:
        """As ``search._Search.plan_rows``: the primary query, its top-up, replies."""
        question = plan.mode == "question"
        by_session = question and not message_first(plan)
        primary = plan.primary
        if question:
            primary = as_substrings(primary, self.is_word, plan.extras)
        rows = self.rows(
            primary,
            need,
            plan_boosts(plan),
            by_session=by_session,
            prefer_recent=plan.prefer_recent,
            span=span,
            phrases=plan.phrases if by_session else (),
            bounded=not question,  # as SQLite's: a question's candidates are ranked in full
            typed=typed_words(primary, plan) if question else None,
            by_hits=question and not by_session and not mostly_cjk(primary.terms),
        )
        fallback = plan.fallback if len(rows) < min(need, KEYWORD_TOP_UP_BELOW) else None
        if fallback is not None:
            seen = {row[0] for row in rows}
            extra = self.rows(top_up(plan, fallback), need + len(seen), bounded=True)
            rows += [row for row in extra if row[0] not in seen][: need - len(rows)]
        if question and rows and not self.filters.roles:
            window = (self.filters.since, self.filters.until)
            rows = pgrerank.with_replies(self.conn, rows, primary.terms, need, window)
        return rows

    def last_activity(self) -> float | None:
        """When the searched history ends (the latest session start or activity)."""
        where, params = "TRUE", []
        if self.filters.user_id is not None:
            where, params = "user_id = %s", [self.filters.user_id]
        row = self.conn.execute(
            "SELECT MAX(GREATEST(started_at, COALESCE(last_activity_at, started_at))) "
            f"FROM sessions WHERE {where}",
            params,
        ).fetchone()
        return None if row is None or row[0] is None else float(row[0])

    def dated_plan(
        self, parsed: ParsedQuery, plan: Plan
    ) -> tuple[Plan, tuple[float, float] | None]:
        """As ``search._dated_plan``: a question's plan without its relative time phrase, and
        the span the phrase names (read against the stored history's end)."""
        if not TIME_HINT.search(parsed.text):
            return plan, None
        span, rest, _ = find_time_span_in_history(parsed.text, None)
        if span is None:
            return plan, None
        span, rest, _ = find_time_span_in_history(parsed.text, self.last_activity())
        if span is None:
            return plan, None
        if names_a_topic(rest) and not CALENDAR.search(span.phrase):
            dated = plan_query(parse_query(rest), question=True)
            if dated.mode == "question":
                plan = dated
        return plan, (span.since, span.until)


SEARCH_WORK_MEM = "32MB"
"""The search's ``work_mem``. The index's bitmap of a common word's (or a phrase's) matches
outgrew the default 4 MB at a million messages and went lossy: the server then read and
tested every message of those pages (a phrase of common words: 555,000 buffers, 3.1 s,
against 100,000 and 1.5 s exact). 32 MB keeps the bitmap exact to about 3 million messages."""


PLAN_CACHE_MODE = "force_custom_plan"
"""How the server plans the search's statements. psycopg prepares a statement it has run 5
times, and after 5 more the server may switch to one generic plan, made without the
``tsquery`` values: at a million messages a two-word search then took 2.2 s instead of
0.2 s, from its tenth run on, in every long-lived store. Each statement is planned for its
own terms instead (a millisecond or two)."""


def search_rows(
    conn: Any,
    parsed: ParsedQuery,
    need: int,
    filters: SearchFilters,
    statistics: Callable[[Any], Statistics],
    nearest: Nearest | None = None,
    passages: bool = False,
) -> tuple[Plan, list[Row]]:
    """The plan of *parsed* and its first *need* hit rows, best first; *nearest* takes
    meaning in as SQLite's search does (:func:`~hermes_core.sessions.search.with_meaning`;
    *passages*: the encoder reads passages)."""
    plan = plan_query(parsed)
    # The planner prices a scan that tests every row's vector below the index, not seeing
    # that each test reads a long vector from TOAST: a common word then took a second per
    # 100,000 messages where the index's bitmap takes a fraction of it. A disabled scan's
    # price (10^10) is then far above jit_above_cost, so the server would compile every
    # plan that still has to scan (a substring of a tiny table: half a second of JIT for
    # under a millisecond of work); JIT is off for the search's statements.
    conn.execute("SET LOCAL enable_seqscan = off")
    conn.execute("SET LOCAL jit = off")
    conn.execute(f"SET LOCAL work_mem = '{SEARCH_WORK_MEM}'")
    conn.execute(f"SET LOCAL plan_cache_mode = {PLAN_CACHE_MODE}")
    search = PgSearch(conn, filters, statistics)
    span = None
    if plan.mode == "question":
        plan, span = search.dated_plan(parsed, plan)
    depth = meaning_depth(nearest, parsed, plan, need, passages)
    rows = search.plan_rows(plan, depth, span)
    rows, _, _ = with_meaning(
        rows,
        parsed,
        plan,
        search.share,
        search.first,
        nearest,
        search.nearest_rows,
        depth,
        passages,
    )
    return plan, rows
