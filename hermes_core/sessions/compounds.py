"""Closed compounds: a question's word glued inside the history's words, or glued from two.

The word index sees "FlexGym" and "houseplants" as one word each.
:func:`glued_matches` finds a word (its stem) as the head of such a compound
among the rows a :data:`Glued` lookup returns; :func:`compound_head` reads a word
the index has never seen as two words it holds; :func:`as_substrings` turns a
question's unknown words into substrings (and their heads); :func:`glued_cover`
is what compounds add to a conversation's coverage. Both backends use them: each
gives its own :data:`Glued` and :data:`Words` lookups (SQLite: the trigram and word
indexes, :func:`sqlite_words`; PostgreSQL: ``pgcompounds``).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hermes_core.sessions.cjk import contains_cjk
from hermes_core.sessions.layout import Layout
from hermes_core.sessions.query import Clause, ParsedQuery, Term
from hermes_core.sessions.question import stem, stem_regex

__all__ = [
    "GLUED_WEIGHT",
    "Glued",
    "Words",
    "as_substrings",
    "compound_head",
    "covered_scores",
    "glued_cover",
    "glued_matches",
    "sqlite_words",
]

Glued = Callable[[str], list[tuple[Any, ...]]]
"""Hit rows (with text) where a stem (ASCII letters) follows a letter: "flexgym" for "gym"."""

Words = Callable[[str], bool]
"""Whether the word index holds a word (its stem), answers kept by the lookup."""

_GLUED_PREFIX = 3
_GLUED_TAIL = 4
_LETTERS = re.compile(r"[A-Za-z]+")
"""ASCII words (the stems looked for are ASCII; lower-casing keeps their length)."""


def glued_matches(glued: Glued, is_word: Words, word: str) -> list[tuple[Any, ...]]:
    """Rows where *word* (its stem) ends a glued compound: "FlexGym", "houseplants".

    English compounds put the head last, and a person asks about the head
    (*which gym*, *how many plants*); the word index sees "flexgym" as one
    word. *glued* finds the stem right after a letter; a match counts
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
    for row in glued(cut):
        text = row[7] if isinstance(row[7], str) else ""
        for token in _LETTERS.findall(text):
            lowered = token.lower()
            match = pattern.search(lowered) if len(lowered) > len(cut) else None
            if match is None:
                continue
            prefix = lowered[: match.start()]
            if token[match.start()].isupper() or is_word(prefix):
                found.append(row)
                break
    return found


_COMPOUND_MODIFIER = 3
_COMPOUND_HEAD = 4


def compound_head(is_word: Words, word: str) -> str | None:
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
        if is_word(head) and is_word(modifier):
            return head
    return None


def as_substrings(query: ParsedQuery, is_word: Words, extras: frozenset[str]) -> ParsedQuery:
    """*query* with the words the word index has never seen looked up inside other words.

    ``autoscaler`` is not a token of ``HorizontalPodAutoscaler`` (nor ``youer``
    of ``修改youer服务端``), but a substring search finds it. A compound the
    history never wrote is also looked up by its head (``houseplants``:
    ``plants``), see :func:`compound_head`. A word the plan added (*extras*:
    ``rentalin`` from "rental in") is dropped instead: it was a guess, and as a
    substring it matches text the question never meant.
    """
    clauses = []
    heads = []
    changed = False
    for clause in query.clauses:
        terms = []
        for term in clause.include:
            if (
                term.simple
                and not term.substring
                and len(term.text) >= 4
                and not contains_cjk(term.text)
                and not is_word(term.text)
            ):
                changed = True
                if term.text.lower() in extras:
                    continue
                head = compound_head(is_word, term.text)
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


_GLUED_MAX_DF = 50
_GLUED_MAX_SHARE = 200
"""A word is looked for inside compounds when at most this many messages (or this
share of them, 1 in N) hold it as a word: a common word is found without it, and
its compounds are mostly other words (*work* in "network", "homework")."""
_GLUED_WORDS = 3
"""At most this many of a question's rarest words are looked for inside compounds."""
GLUED_WEIGHT = 0.5
"""A compound covers its head word at this share of the word's weight."""


def glued_cover(
    glued: Glued,
    is_word: Words,
    groups: Mapping[str, Sequence[Term]],
    found: Sequence[int],
    total: float,
    speaking: set[str],
    typed: frozenset[str],
) -> tuple[dict[str, set[int]], list[tuple[Any, ...]]]:
    """For a question's word *groups* (key → forms; *found*: messages holding each), the
    sessions whose rows hold one of its rarest typed words inside a glued compound (session
    → the groups' positions), and those rows.

    Only the rarest words a person did not name as a speaker (*speaking*) are looked for,
    and only in the forms the question typed (*typed*).
    """
    keys = list(groups)
    rare = sorted(
        (count, n)
        for n, count in enumerate(found)
        if count <= max(_GLUED_MAX_DF, total / _GLUED_MAX_SHARE) and keys[n] not in speaking
    )
    compound: dict[str, set[int]] = {}
    rows: list[tuple[Any, ...]] = []
    for _, n in rare[:_GLUED_WORDS]:
        for form in groups[keys[n]]:
            if form.text.lower() not in typed:
                continue
            for row in glued_matches(glued, is_word, form.text):
                compound.setdefault(row[3], set()).add(n)
                rows.append(row)
    return compound, rows


def sqlite_words(conn: sqlite3.Connection, layout: Layout) -> Words:
    """:data:`Words` on a ``state.db``'s word index (no word index: it holds nothing)."""
    known: dict[str, bool] = {}
    index = layout.word

    def is_word(text: str) -> bool:
        if text not in known:
            known[text] = index is not None and (
                conn.execute(
                    f"SELECT 1 FROM {index.name} WHERE {index.name} MATCH ? LIMIT 1",
                    (f'"{text}"',),
                ).fetchone()
                is not None
            )
        return known[text]

    return is_word


def covered_scores(
    covered: Mapping[str, set[int]],
    compound: Mapping[str, set[int]],
    weights: Sequence[float],
) -> dict[str, float]:
    """Each session's summed weight of the word groups its hits cover (*covered*), plus
    :data:`GLUED_WEIGHT` of each one only a compound of it covers (*compound*, from
    :func:`glued_cover`); a session found only by a compound scores those halves."""
    scores = {}
    for session_id in [*covered, *(s for s in compound if s not in covered)]:
        have = covered.get(session_id, set())
        halves = compound.get(session_id, set()) - have
        scores[session_id] = sum(weights[n] for n in have) + sum(
            GLUED_WEIGHT * weights[n] for n in halves
        )
    return scores
