"""Routing each query term to the index that can answer it, and emitting the SQL.

Per term (not per query, which is what broke mixed and OR-ed CJK queries in
the original):

* a term without CJK → ``messages_fts`` (words, stemmed);
* a term of CJK letters only, any length (``记``, ``通信``, ``记忆断裂``) →
  ``messages_cjk_grams``: one token (up to three characters), or the phrase of
  the term's overlapping trigrams (bigrams in a file older than version 7);
* CJK glued to other letters (``Agent通信``) → ``messages_fts_trigram`` (substring);
* CJK in a Hermes Agent file, which has no gram index → trigram when the term
  has 3+ characters, else a ``LIKE`` scan;
* a run of symbols (``🔥``, ``€``), searched when a query has no words, likewise:
  the word indexes drop symbols.

When every term lands on one index the whole query is one FTS5 ``MATCH``
(the fast path, equal to a hand-written query). Otherwise each clause becomes a
join of per-index matches (AND), minus ``NOT`` matches, and clauses are unioned
(OR); a row's score is the sum of its BM25 ranks over the clauses it matches.
``LIKE`` patterns escape ``%``, ``_`` and ``\\`` so ``100%完成`` means a literal
percent sign.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from hermes_core.sessions.cjk import cjk_runs, contains_cjk, only_cjk, query_grams
from hermes_core.sessions.layout import Layout
from hermes_core.sessions.query import Clause, ParsedQuery, Term
from hermes_core.sessions.schema import TEXT_COLUMNS

__all__ = [
    "LIKE",
    "RANKED_CANDIDATES",
    "Candidates",
    "compile_query",
    "fts_term",
    "route_term",
    "single_grams",
    "single_index",
]

LIKE = "like"
SNIPPET_TOKENS = 24
FTS_SNIPPET_MAX_CHARS = 10_000
"""Texts longer than this get a text snippet (first match) instead of FTS5's best window."""
COMPILED_QUERIES = 256
"""Compiled queries remembered per layout; past this many the memory starts afresh."""
RANKED_CANDIDATES = 2_000
"""A bounded query ranks (BM25) only the newest this many of its matches, or of ``:k`` when
more are asked for: finding the matches is cheap, scoring each is not (a word of a large
history matches tens of thousands of messages, and BM25 would score every one)."""


@dataclass(frozen=True)
class Candidates:
    """SQL yielding ``(id, score, snippet)`` best first; ``:k`` bounds the row count.

    ``score`` may be NULL: the order of the rows is the ranking. *bare* says both
    are NULL in every row, so a reader need not fetch them.
    """

    sql: str
    params: Mapping[str, Any]
    bare: bool = False


def route_term(term: Term, layout: Layout) -> str:
    """The FTS table name that answers *term* in *layout*, or :data:`LIKE`."""
    if term.symbolic:
        return layout.trigram.name if layout.trigram is not None and len(term.text) >= 3 else LIKE
    if term.substring and layout.trigram is not None and len(term.text) >= 3:
        return layout.trigram.name
    if not contains_cjk(term.text):
        if layout.word is not None:
            return layout.word.name
        if layout.trigram is not None and len(term.text) >= 3:
            return layout.trigram.name
        return LIKE
    if layout.grams is not None and only_cjk(term.text):
        return layout.grams.name
    if len(term.text) >= 3 and layout.trigram is not None:
        return layout.trigram.name
    return LIKE


def _gram_expression(text: str, longest: int) -> str:
    parts = ['"' + " ".join(query_grams(run, longest)) + '"' for run in cjk_runs(text)]
    return parts[0] if len(parts) == 1 else "(" + " AND ".join(parts) + ")"


def single_grams(query: ParsedQuery, longest: int = 2) -> bool:
    """True when each CJK run of *query*'s terms is one gram (at most *longest* characters),
    so its gram-index expression has no phrase of several grams."""
    return all(
        len(query_grams(run, longest)) == 1
        for clause in query.clauses
        for term in (*clause.include, *clause.exclude)
        for run in cjk_runs(term.text)
    )


def fts_term(term: Term, index: str, layout: Layout) -> str:
    """*term* as an FTS5 query string for *index*, quoted so it is never syntax."""
    if layout.grams is not None and index == layout.grams.name:
        return _gram_expression(term.text, layout.longest_gram)
    text = '"' + term.text.replace('"', " ") + '"'
    if term.prefix and layout.word is not None and index == layout.word.name:
        text += "*"
    return text


def like_pattern(text: str) -> str:
    """A ``LIKE … ESCAPE '\\'`` pattern matching *text* literally anywhere."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


class _Builder:
    def __init__(self, layout: Layout, pending_grams: bool) -> None:
        self.layout = layout
        self.pending_grams = pending_grams
        self.params: dict[str, Any] = {}

    def param(self, value: Any) -> str:
        name = f"p{len(self.params)}"
        self.params[name] = value
        return f":{name}"

    def like_sql(self, terms: list[Term], joiner: str, where: str = "") -> str:
        columns = [c for c in TEXT_COLUMNS if c in self.layout.message_columns]
        parts = []
        for term in terms:
            pattern = self.param(like_pattern(term.text))
            any_column = " OR ".join(f"m.{c} LIKE {pattern} ESCAPE '\\'" for c in columns)
            parts.append(f"({any_column})")
        condition = f" {joiner} ".join(parts) or "0"
        return f"SELECT m.id AS id, 0.0 AS r FROM messages AS m {where}WHERE ({condition})"

    def match_sql(self, index: str, terms: list[Term], joiner: str) -> str:
        expression = f" {joiner} ".join(fts_term(t, index, self.layout) for t in terms)
        match = self.param(expression)
        sql = f"SELECT rowid AS id, rank AS r FROM {index} WHERE {index} MATCH {match}"
        grams = self.layout.grams
        if self.pending_grams and grams is not None and index == grams.name:
            # Rows queued for the gram index but not tokenised yet (read-only reader).
            sql += " UNION ALL " + self.like_sql(
                terms, joiner, "JOIN messages_cjk_pending AS q ON q.id = m.id "
            )
        return sql

    def terms_sql(self, index: str, terms: list[Term], joiner: str) -> str:
        if index == LIKE:
            return self.like_sql(terms, joiner)
        return self.match_sql(index, terms, joiner)

    def clause_sql(self, clause: Clause) -> str:
        positive: dict[str, list[Term]] = {}
        for term in clause.include:
            positive.setdefault(route_term(term, self.layout), []).append(term)
        negative: dict[str, list[Term]] = {}
        for term in clause.exclude:
            negative.setdefault(route_term(term, self.layout), []).append(term)
        groups = list(positive.items())
        first_index, first_terms = groups[0]
        sql = "SELECT g0.id AS id, (g0.r"
        joins = ""
        for n, (index, terms) in enumerate(groups[1:], start=1):
            sql += f" + g{n}.r"
            joins += f" JOIN ({self.terms_sql(index, terms, 'AND')}) AS g{n} ON g{n}.id = g0.id"
        sql += f") AS r FROM ({self.terms_sql(first_index, first_terms, 'AND')}) AS g0{joins}"
        excluded = [
            f"g0.id NOT IN (SELECT id FROM ({self.terms_sql(index, terms, 'OR')}))"
            for index, terms in negative.items()
        ]
        if excluded:
            sql += " WHERE " + " AND ".join(excluded)
        return sql


def single_index(query: ParsedQuery, layout: Layout, pending_grams: bool) -> str | None:
    """The one index that answers every term of *query*, else None (several, or a scan)."""
    indexes = {
        route_term(term, layout)
        for clause in query.clauses
        for term in clause.include + clause.exclude
    }
    if len(indexes) != 1:
        return None
    (index,) = indexes
    if index == LIKE:
        return None
    if pending_grams and layout.grams is not None and index == layout.grams.name:
        return None
    return index


def match_expression(query: ParsedQuery, index: str, layout: Layout) -> str:
    """The whole *query* as one FTS5 expression for *index* (all terms quoted)."""
    clauses = []
    for clause in query.clauses:
        text = " AND ".join(fts_term(t, index, layout) for t in clause.include)
        if clause.exclude:
            text = f"({text})" + "".join(
                f" NOT {fts_term(t, index, layout)}" for t in clause.exclude
            )
        clauses.append(f"({text})" if len(query.clauses) > 1 else text)
    return " OR ".join(clauses)


def compile_query(
    query: ParsedQuery,
    layout: Layout,
    *,
    pending_grams: bool = False,
    boosts: tuple[tuple[ParsedQuery, float], ...] = (),
    snippets: bool = True,
    bounded: bool = False,
) -> Candidates:
    """SQL for the candidate rows of *query*, best first.

    *boosts* multiply the BM25 score of rows that also match another query on
    the same index (``1 + weight`` per boost matched). *bounded*: a query answered
    by the word or trigram index, or by single grams of the CJK gram index (up to
    :attr:`~hermes_core.sessions.layout.Layout.longest_gram` characters), ranks only its
    newest :data:`RANKED_CANDIDATES` matches (a phrase of grams, or a query on several
    indexes, has all its matches ranked). The result is remembered
    on *layout* (queries and their parameters are immutable).
    """
    key = (query, pending_grams, boosts, snippets, bounded)
    compiled = layout.compiled.get(key)
    if isinstance(compiled, Candidates):
        return compiled
    if len(layout.compiled) >= COMPILED_QUERIES:
        layout.compiled.clear()
    compiled = _compile(query, layout, pending_grams, boosts, snippets, bounded)
    layout.compiled[key] = compiled
    return compiled


def _compile(
    query: ParsedQuery,
    layout: Layout,
    pending_grams: bool,
    boosts: tuple[tuple[ParsedQuery, float], ...],
    snippets: bool,
    bounded: bool,
) -> Candidates:
    index = single_index(query, layout, pending_grams)
    builder = _Builder(layout, pending_grams)
    if index is not None:
        match = builder.param(match_expression(query, index, layout))
        # FTS5 snippets are word-based; trigram and gram hits get text snippets later.
        use_snippet = snippets and layout.word is not None and index == layout.word.name
        snippet = "NULL"
        if use_snippet and layout.word is not None:
            # FTS5 weighs every match of a text to place its snippet: a pasted log saying the
            # word 40,000 times took seconds. Long texts get a text snippet later instead.
            longest = f"length({layout.word.columns[0]}) > {FTS_SNIPPET_MAX_CHARS}"
            snippet = (
                f"CASE WHEN {longest} THEN NULL "
                f"ELSE snippet({index}, -1, '>>>', '<<<', '...', {SNIPPET_TOKENS}) END"
            )
        factors = []
        for boost, weight in boosts:
            if boost.empty or single_index(boost, layout, pending_grams) != index:
                continue
            other = builder.param(match_expression(boost, index, layout))
            factors.append(
                f"{builder.param(float(weight))} * "
                f"(c.id IN (SELECT rowid FROM {index} WHERE {index} MATCH {other}))"
            )
        # Reading FTS5's rank column costs as much again as ranking; only boosts need it.
        score = "rank" if factors else "NULL"
        newest = ""
        # The gram index holds only the rows with CJK (a few in a hundred), and its phrases
        # (four or more characters) match few of them: finding the bound, which checks every
        # match's positions again, would cost more than ranking them all. A single gram (up
        # to three characters) can match thousands and is found without positions, so it is
        # bounded.
        on_grams = layout.grams is not None and index == layout.grams.name
        if bounded and (not on_grams or single_grams(query, layout.longest_gram)):
            # The rowid of the RANKED_CANDIDATES-th newest match (FTS5 walks its doclist
            # backwards without scoring); an unbounded :k (-1) ranks every match.
            newest = (
                f" AND rowid >= CASE WHEN :k < 0 THEN 0 ELSE COALESCE((SELECT rowid "
                f"FROM {index} WHERE {index} MATCH {match} ORDER BY rowid DESC LIMIT 1 "
                f"OFFSET max(:k, {RANKED_CANDIDATES}) - 1), 0) END"
            )
        inner = (
            f"SELECT rowid AS id, {score} AS score, {snippet} AS snippet FROM {index} "
            f"WHERE {index} MATCH {match}{newest} ORDER BY rank LIMIT :k"
        )
        if not factors:
            return Candidates(inner, MappingProxyType(builder.params), bare=snippet == "NULL")
        sql = (
            f"SELECT c.id, c.score * (1.0 + {' + '.join(factors)}) AS score, c.snippet "
            f"FROM ({inner}) AS c ORDER BY score, c.id DESC"
        )
        return Candidates(sql, MappingProxyType(builder.params))
    branches = [builder.clause_sql(clause) for clause in query.clauses]
    union = " UNION ALL ".join(branches)
    sql = (
        f"SELECT id, SUM(r) AS score, NULL AS snippet FROM ({union}) "
        "GROUP BY id ORDER BY score, id DESC LIMIT :k"
    )
    return Candidates(sql, MappingProxyType(builder.params))
