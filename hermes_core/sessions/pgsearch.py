"""Search in PostgreSQL: the same sanitised query and plan as SQLite, run on a ``tsvector``.

The query goes through :func:`~hermes_core.sessions.query.parse_query` and
:func:`~hermes_core.sessions.question.plan_query` exactly as for ``state.db``,
so operators, phrases, prefixes and question handling behave the same. Each
term becomes a ``tsquery`` bound as a parameter (its text is never SQL):

* a word, compound or phrase matches stemmed (``english``) or as written (``simple``);
* ``prefix*`` matches any word it starts;
* a CJK term matches its unigram (one letter), bigram (two) or chain of bigrams
  (three or more) in the gram part of the vector;
* a run of symbols (``🔥``) matches as a substring of the text.

Hits are ranked by the plan's boosts (how many it matches), then BM25 computed from
each term's document frequency (:func:`bm25_sql`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from hermes_core.sessions.cjk import CJK_CLASS, cjk_grams, cjk_runs, contains_cjk, query_gram
from hermes_core.sessions.query import Clause, ParsedQuery, Term
from hermes_core.sessions.question import Plan

__all__ = [
    "Predicate",
    "bm25_sql",
    "df_sql",
    "idf",
    "plan_predicates",
    "query_predicate",
    "ranked_terms",
]

Predicate = tuple[str, list[Any]]
"""SQL over the ``messages`` row ``m`` and its parameters."""

_CONNECTORS = re.compile(r"[-._/\\:@#+=&~%]+")
"""What the index also reads as spaces (the class in :mod:`~hermes_core.sessions.pgschema`)."""

_CJK_RUN = re.compile(f"[{CJK_CLASS}]+")

FALLBACK_BELOW = 5
"""A keyword search whose AND finds fewer hits is topped up with OR matches (as in SQLite)."""


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
    if term.symbolic:
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
    if term.prefix:
        words = text.split()
        query = " <-> ".join(_lexeme(w) for w in words[:-1])
        query = (query + " <-> " if query else "") + _lexeme(words[-1]) + ":*"
        return "m.tsv @@ to_tsquery('simple', %s)", [query]
    split = _CONNECTORS.sub(" ", text).strip()
    if split and split != text:  # chat-send, deploy.sh: also as the words the index split off
        return (
            "m.tsv @@ (phraseto_tsquery('english', %s) || phraseto_tsquery('simple', %s) "
            "|| phraseto_tsquery('simple', %s))",
            [text, text, split],
        )
    return (
        "m.tsv @@ (phraseto_tsquery('english', %s) || phraseto_tsquery('simple', %s))",
        [text, text],
    )


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


def df_sql(term: Term) -> Predicate:
    """How many messages *term* matches, counted up to :data:`DF_CAP`."""
    sql, params = _term(term)
    return (
        f"SELECT count(*) FROM (SELECT 1 FROM messages AS m WHERE {sql} LIMIT {DF_CAP}) AS c",
        params,
    )


def idf(df: int, total: int) -> float:
    """BM25's inverse document frequency of a term found in *df* of *total* messages."""
    return math.log((total - df + 0.5) / (df + 0.5) + 1.0)


def bm25_sql(terms: Sequence[Term], dfs: Sequence[int], total: int, avgdl: float) -> Predicate:
    """A BM25 score of the row ``m``: each matched term's IDF, saturated and normalised by the
    message's length (term frequency taken as 1), as SQLite's ``bm25()`` ranks."""
    if not terms:
        return "0", []
    pieces: list[str] = []
    params: list[Any] = []
    for term, df in zip(terms, dfs, strict=True):
        sql, values = _term(term)
        pieces.append(f"(CASE WHEN {sql} THEN %s ELSE 0 END)")
        params += [*values, idf(df, total)]
    norm = f"(1 + {K1} * ({1 - B} + {B} * length(m.tsv) / %s))"
    params.append(max(avgdl, 1.0))
    return f"(({' + '.join(pieces)}) * {K1 + 1} / {norm})", params


def plan_predicates(plan: Plan) -> tuple[Predicate, Sequence[Predicate]]:
    """The primary query's predicate and one per boost."""
    return query_predicate(plan.primary), [query_predicate(boost) for boost in plan.boosts]
