"""Chinese, Japanese and Korean text: detection and the short-term gram index.

``unicode61`` glues a run of CJK characters into one token and ``trigram``
cannot match fewer than three characters, so neither finds a one- or
two-character CJK word. The session store therefore keeps a small third index,
``messages_cjk_grams``, holding every CJK character (unigram), every adjacent
pair (bigram) and, since schema version 7, every three adjacent characters
(trigram) of the rows that contain CJK. A query term of one to three characters
is then a single indexed token; a longer one is the phrase of its overlapping
trigrams, as in FTS5's own ``trigram`` tokenizer (four characters: two tokens
whose positions must line up, not three bigrams, and trigrams are rarer).
PostgreSQL's ``cjk_grams`` column keeps unigrams and bigrams (*longest* 2).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

__all__ = [
    "CJK_CLASS",
    "LONGEST_GRAM",
    "cjk_grams",
    "cjk_runs",
    "contains_cjk",
    "is_cjk_char",
    "only_cjk",
    "query_gram",
    "query_grams",
]

LONGEST_GRAM = 3
"""The longest gram SQLite's gram index holds (schema version 7; 2 before)."""

# Letters of the CJK scripts (ideographs, kana, hangul). Punctuation blocks such
# as U+3000-303F are deliberately absent: they are separators, not words.
_CJK_RANGES: tuple[tuple[int, int], ...] = (
    (0x3041, 0x30FA),  # Hiragana, Katakana (without the middle dot U+30FB)
    (0x30FC, 0x30FF),  # Katakana prolonged sound mark and iteration marks
    (0x3400, 0x4DBF),  # CJK Unified Ideographs Extension A
    (0x4E00, 0x9FFF),  # CJK Unified Ideographs
    (0xAC00, 0xD7AF),  # Hangul syllables
    (0xF900, 0xFAFF),  # CJK Compatibility Ideographs
    (0x20000, 0x2A6DF),  # CJK Unified Ideographs Extension B
)

CJK_CLASS = "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in _CJK_RANGES)
"""The CJK letters as the inside of a regular-expression character class (Python's and
PostgreSQL's)."""
_RUN_RE = re.compile(f"[{CJK_CLASS}]+")
_ANY_RE = re.compile(f"[{CJK_CLASS}]")
_ONLY_RE = re.compile(f"[\\s{CJK_CLASS}]+")


def is_cjk_char(char: str) -> bool:
    """True for one CJK ideograph, kana or hangul syllable."""
    return bool(_ANY_RE.fullmatch(char))


def contains_cjk(text: str) -> bool:
    """True when *text* holds at least one CJK letter."""
    return bool(text) and _ANY_RE.search(text) is not None


def only_cjk(text: str) -> bool:
    """True when *text* is CJK letters and whitespace, with at least one letter."""
    return _ONLY_RE.fullmatch(text) is not None and _ANY_RE.search(text) is not None


def cjk_runs(text: str) -> list[str]:
    """The maximal runs of consecutive CJK letters in *text*, in order."""
    return _RUN_RE.findall(text) if text else []


def _fold(run: str) -> str:
    # NFKC folds half-width katakana and compatibility ideographs onto their
    # canonical letters, so the index and the query agree on one spelling.
    return unicodedata.normalize("NFKC", run)


def cjk_grams(texts: Iterable[str | None], longest: int = 2) -> str:
    """The gram token text indexed for *texts* ('' when there is no CJK).

    With *longest* 2, ``"记忆断裂"`` becomes ``"记 忆 断 裂 记忆 忆断 断裂"``: every
    character and every adjacent pair; with 3, ``"记忆断 忆断裂"`` follows. Tokens are
    separated by spaces so ``unicode61`` keeps each apart; the grams of one length
    follow each other, so a query's overlapping grams are a phrase. Occurrences
    repeat, so BM25 still sees term frequency.
    """
    tokens: list[str] = []
    for text in texts:
        for run in cjk_runs(text or ""):
            run = _fold(run)
            for size in range(1, longest + 1):
                tokens.extend(run[i : i + size] for i in range(len(run) - size + 1))
    return " ".join(tokens)


def query_gram(term: str) -> str:
    """The indexed token for a CJK query *term* of at most the longest gram's length."""
    return _fold(term)


def query_grams(run: str, longest: int = 2) -> list[str]:
    """The indexed tokens a CJK *run* is searched as, in order (a phrase when several).

    A run no longer than *longest* is one token; a longer one is its overlapping
    grams of *longest* characters (``记忆断裂``: ``记忆断 忆断裂`` with 3).
    """
    run = _fold(run)
    if len(run) <= longest:
        return [run]
    return [run[i : i + longest] for i in range(len(run) - longest + 1)]
