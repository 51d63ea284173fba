"""Chinese, Japanese and Korean text: detection and the short-term gram index.

``unicode61`` glues a run of CJK characters into one token and ``trigram``
cannot match fewer than three characters, so neither finds a one- or
two-character CJK word. The session store therefore keeps a small third index,
``messages_cjk_grams``, holding every CJK character (unigram) and every adjacent
pair (bigram) of the rows that contain CJK; a one- or two-character query term
is then a single indexed token lookup.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

__all__ = [
    "CJK_CLASS",
    "cjk_grams",
    "cjk_runs",
    "contains_cjk",
    "is_cjk_char",
    "only_cjk",
    "query_gram",
]

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


def cjk_grams(texts: Iterable[str | None]) -> str:
    """The unigram + bigram token text indexed for *texts* ('' when there is no CJK).

    ``"记忆断裂"`` becomes ``"记 忆 断 裂 记忆 忆断 断裂"``: every character and
    every adjacent pair, separated by spaces so ``unicode61`` keeps each apart.
    Occurrences repeat, so BM25 still sees term frequency.
    """
    tokens: list[str] = []
    for text in texts:
        for run in cjk_runs(text or ""):
            run = _fold(run)
            tokens.extend(run)
            tokens.extend(run[i : i + 2] for i in range(len(run) - 1))
    return " ".join(tokens)


def query_gram(term: str) -> str:
    """The indexed token for a one- or two-letter CJK query *term*."""
    return _fold(term)
