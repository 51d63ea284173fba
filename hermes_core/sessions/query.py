"""The search-query sanitiser: any string in, a small boolean query out, never an error.

FTS5 has its own query language, and most text people (or models) type is not
valid in it: ``C++``, ``TODO: fix``, ``"unterminated``, ``a AND OR b``, or any
question ending in ``?``. Instead of escaping characters and hoping, the input
is *parsed* into terms joined by the operators FTS5 understands
(``AND``/``OR``/``NOT`` in upper case, ``"phrases"``, ``prefix*``) and then
re-emitted with every term quoted (see :mod:`hermes_core.sessions.routing`), so
the text of a term can never be read as syntax.

Rules, in order:

* at most :data:`MAX_QUERY_CHARS` characters and :data:`MAX_TERMS` terms are kept;
  control, format and unpaired surrogate characters become spaces; typographic
  and full-width punctuation is folded to ASCII;
* balanced ``"…"`` are phrases; an unpaired ``"`` is dropped;
* outside phrases a term is a run of letters/digits (``_`` and combining marks
  included) joined by connectors ``- . _ / \\ : @ # + ' = & ~ %`` — so ``chat-send``,
  ``P2.2``, ``my-app.config.ts``, ``/etc/hosts``, ``100%`` and ``don't`` stay one term
  and match as a phrase; every other character separates terms;
* a ``*`` right after a term makes it a prefix; any other ``*`` is dropped;
* upper-case ``AND``/``OR``/``NOT`` are operators (lower-case ones are words);
  operator runs collapse (``NOT`` wins over ``OR`` over ``AND``); leading and
  trailing operators are dropped; a clause with only ``NOT`` terms is dropped;
* a query with no word at all is searched for its runs of symbols (``🔥``,
  ``€``; :attr:`Term.symbolic`), all of which must occur.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import NamedTuple

__all__ = ["MAX_QUERY_CHARS", "MAX_TERMS", "Clause", "ParsedQuery", "Term", "parse_query"]

MAX_QUERY_CHARS = 2048
MAX_TERMS = 64
"""Terms kept of a query. A long question (a pasted turn) is searched for all its content
words up to this cut, stop words included in the count: at 32, RealMem's dev half lost
0.7 points of session R@5 against 64, and 1.5 against no cut."""

_CONNECTORS = frozenset("-._/\\:@#+'=&~%")
_OPERATORS = frozenset({"AND", "OR", "NOT"})
_BLANKED = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
"""Unicode categories (controls, formats, surrogates, unassigned, line breaks) read as spaces."""
_FOLD = str.maketrans(
    {
        "“": '"',
        "”": '"',
        "„": '"',
        "‟": '"',
        "＂": '"',
        "‘": "'",
        "’": "'",
        "‚": "'",
        "‛": "'",
        "＇": "'",
        "？": "?",
        "！": "!",
        "，": ",",
        "：": ":",
        "；": ";",
        "（": "(",
        "）": ")",
        "＊": "*",
        "－": "-",
        "．": ".",
        "／": "/",
    }
)


class Term(NamedTuple):
    """One search term: a word, a compound (``chat-send``) or a quoted phrase."""

    text: str
    quoted: bool = False
    prefix: bool = False
    substring: bool = False
    """Match anywhere inside words (the trigram index), e.g. inside ``HorizontalPodAutoscaler``."""

    @property
    def symbolic(self) -> bool:
        """True for a run of symbols (``🔥``, ``€``), which the word indexes do not hold."""
        return not _searchable(self.text)

    @property
    def simple(self) -> bool:
        """True for a single plain word (no connectors, spaces or quotes)."""
        return not self.quoted and all(_is_word_char(c) for c in self.text)


class Clause(NamedTuple):
    """Terms that must all match (``include``) minus rows matching any ``exclude``."""

    include: tuple[Term, ...]
    exclude: tuple[Term, ...] = ()


class ParsedQuery(NamedTuple):
    """A sanitised query: an OR of clauses. Empty when nothing searchable was left."""

    clauses: tuple[Clause, ...]
    explicit: bool = False
    """The input used FTS syntax (quotes, upper-case operators or ``*``)."""
    text: str = ""
    """The cleaned input text."""
    question: bool = False
    """The input ended with a question mark."""
    terms: tuple[Term, ...] = ()
    """Every included term, in input order."""

    @property
    def empty(self) -> bool:
        """True when there is nothing to search for."""
        return not self.clauses


_ONE_WORD = re.compile(r"\s*(\w+)\s*")
"""A query that is a single run of letters, digits and ``_`` (the commonest kind)."""


def _is_word_char(char: str) -> bool:
    if char.isalnum() or char == "_":
        return True
    return unicodedata.category(char)[0] == "M"


def _clean(raw: object) -> str:
    if raw is None:
        return ""
    text = raw if isinstance(raw, str) else str(raw)
    text = text[: MAX_QUERY_CHARS * 2]
    # isprintable() is false for every character blanked here (and for spaces
    # other than " ", which are kept), so most queries skip the per-character pass.
    if not text.isprintable():
        text = "".join(" " if unicodedata.category(char) in _BLANKED else char for char in text)
    if not text.isascii():
        text = unicodedata.normalize("NFC", text).translate(_FOLD)
    return text[:MAX_QUERY_CHARS]


def _split_chunks(text: str) -> list[tuple[str, str]]:
    """(kind, text) pieces: 'phrase' for balanced quotes, 'chunk' for the rest."""
    pieces: list[tuple[str, str]] = []
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char == '"':
            end = text.find('"', i + 1)
            if end == -1:
                i += 1
                continue
            pieces.append(("phrase", text[i + 1 : end]))
            i = end + 1
            continue
        if char.isspace():
            i += 1
            continue
        j = i
        while j < n and not text[j].isspace() and text[j] != '"':
            j += 1
        pieces.append(("chunk", text[i:j]))
        i = j
    return pieces


def _chunk_terms(chunk: str) -> list[Term]:
    """Terms inside one whitespace-free chunk."""
    if chunk.isalnum():
        return [Term(chunk)]
    terms: list[Term] = []
    i, n = 0, len(chunk)
    while i < n:
        if not _is_word_char(chunk[i]):
            i += 1
            continue
        start = i
        end = i
        while i < n:
            if _is_word_char(chunk[i]):
                i += 1
                end = i
                continue
            j = i
            while j < n and chunk[j] in _CONNECTORS:
                j += 1
            if j > i and j < n and _is_word_char(chunk[j]):
                i = j
                continue
            break
        prefix = i < n and chunk[i] == "*"
        terms.append(Term(chunk[start:end], prefix=prefix))
    return terms


def _searchable(text: str) -> bool:
    return any(char.isalnum() for char in text)


def _symbol_terms(text: str) -> list[Term]:
    """The runs of symbols in *text* (with their marks: ``❤️``), for a query with no words."""
    runs: list[str] = []
    run = ""
    for char in text:
        kind = unicodedata.category(char)[0]
        if kind == "S" or (kind == "M" and run):
            run += char
        elif run:
            runs.append(run)
            run = ""
    runs.append(run)
    return [Term(run) for run in runs if run][:MAX_TERMS]


def parse_query(raw: object) -> ParsedQuery:
    """Sanitise *raw* (any object; ``None`` and non-strings are accepted) into a query.

    The result is immutable; the last few hundred query strings of ordinary
    length are remembered, so asking again (a tool's retry, the next page, the
    semantic check of the same question) does not parse again.
    """
    if type(raw) is str and len(raw) <= MAX_QUERY_CHARS:
        return _parse_remembered(raw)
    return _parse(raw)


@functools.lru_cache(maxsize=512)
def _parse_remembered(raw: str) -> ParsedQuery:
    return _parse(raw)


def _parse(raw: object) -> ParsedQuery:
    text = _clean(raw)
    one_word = _ONE_WORD.fullmatch(text)
    if one_word is not None:
        word = one_word[1]
        if word not in _OPERATORS and _searchable(word):
            term = Term(word)
            return ParsedQuery((Clause((term,)),), text=text, terms=(term,))
    explicit = False
    clauses: list[Clause] = []
    include: list[Term] = []
    exclude: list[Term] = []
    pending: str | None = None
    count = 0

    def close() -> None:
        nonlocal include, exclude
        if include:
            clauses.append(Clause(tuple(include), tuple(exclude)))
        include, exclude = [], []

    for kind, piece in _split_chunks(text):
        if kind == "chunk" and piece in _OPERATORS:
            explicit = True
            if piece == "NOT" or pending == "NOT":
                pending = "NOT"
            elif piece == "OR" or pending == "OR":
                pending = "OR"
            else:
                pending = "AND"
            continue
        if kind == "phrase":
            explicit = True
            phrase = " ".join(piece.split())
            new_terms = [Term(phrase, quoted=True)] if _searchable(phrase) else []
        else:
            new_terms = [t for t in _chunk_terms(piece) if _searchable(t.text)]
            if "*" in piece:
                explicit = True
        for term in new_terms:
            if count >= MAX_TERMS:
                break
            count += 1
            if pending == "OR" and include:
                close()
            if pending == "NOT":
                exclude.append(term)
            else:
                include.append(term)
            pending = None
    close()
    if not clauses and (symbols := _symbol_terms(text)):
        clauses.append(Clause(tuple(symbols)))
    terms = tuple(term for clause in clauses for term in clause.include)
    return ParsedQuery(
        clauses=tuple(clauses),
        explicit=explicit,
        text=text,
        question=text.rstrip().endswith("?"),
        terms=terms,
    )
