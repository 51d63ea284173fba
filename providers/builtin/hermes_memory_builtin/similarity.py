"""Deterministic text comparisons the curator decides with: duplicates and fact slots.

Two entries are **near-duplicates** when, after normalisation (case folded,
punctuation dropped, filler words such as "note" or "the" removed), their
content words overlap by a Jaccard index of at least
:data:`TOKEN_JACCARD_THRESHOLD`, or their character trigrams by at least
:data:`TRIGRAM_JACCARD_THRESHOLD` (which catches inflections and typos the
word sets miss). The thresholds were set on ``bench/bench_curator.py``: its
paraphrases score ≥ 0.8 on words, while two different facts about the same
subject ("billing's port is 8081" / "billing's database is postgres15")
score ≤ 0.5, and two values of the same fact are told apart by the slot
rule below before the duplicate rule is asked.

A **slot** is what a fact is about, without its value: "The user's home city
is Berlin" and "The user's home city changed to Lisbon" share the slot
``city home user`` (a slot is a set of words, so "Home city of the user:
Berlin" has it too); "The user lives in Berlin" and "The user moved to
Lisbon" share ``lives-in user``. The value follows a marker (``is``, ``is
now``, ``changed to``, ``moved to``, ``:`` …); a slot needs at least two
content words, so "The project is open source" and "The project is written
in Go" (slot ``project``) are never taken for one fact with two values. A
later entry with the same slot and another value **supersedes** the earlier.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

TOKEN_JACCARD_THRESHOLD = 0.8
TRIGRAM_JACCARD_THRESHOLD = 0.85

STOP_WORDS_TEXT = (
    "a an and are as at be by did do does for from has have how i in is it its me my of on or "
    "our so that the their them they this to was we were what when where which who why with "
    "you your note noted confirmed fyi remember"
)
STOP_WORDS = frozenset(STOP_WORDS_TEXT.split())

_WORD = re.compile(r"[\w/#.+-]+", re.UNICODE)
_EDGE_PUNCTUATION = ".,;:!?()[]\"'`"

# Marker → the attribute family it names (None: the attribute is the text before it).
_VALUE_MARKERS: tuple[tuple[re.Pattern[str], str | None], ...] = (
    (re.compile(r"\s+(?:lives|lived|is living|is based|resides) in\s+"), "lives-in"),
    (re.compile(r"\s+(?:moved|relocated|has moved) to\s+"), "lives-in"),
    (re.compile(r"\s+(?:works|worked|is working) (?:at|for)\s+"), "works-at"),
    (re.compile(r"\s+(?:joined|now works at|now works for)\s+"), "works-at"),
    (re.compile(r"\s+(?:changed|switched|was changed|has changed|moved) to\s+"), None),
    (re.compile(r"\s+(?:is|are) now\s+"), None),
    (re.compile(r"\s+(?:is|are|was|were|=)\s+"), None),
    (re.compile(r"\s*:\s+"), None),
)
_POSSESSIVE = re.compile(r"'s\b|’s\b")


def words(text: str) -> list[str]:
    """The lower-cased words of *text*, edge punctuation stripped."""
    found = (w.strip(_EDGE_PUNCTUATION) for w in _WORD.findall(_POSSESSIVE.sub("", text.lower())))
    return [w for w in found if w]


def content_words(text: str) -> list[str]:
    """:func:`words` without stop and filler words."""
    return list(_content_words(text))


@functools.lru_cache(maxsize=4096)
def _content_words(text: str) -> tuple[str, ...]:
    return tuple(w for w in words(text) if w not in STOP_WORDS)


def normalise(text: str) -> str:
    """*text* as compared for exact duplicates: content words joined by spaces."""
    return " ".join(content_words(text))


def jaccard(a: Iterable[str], b: Iterable[str]) -> float:
    """|a ∩ b| / |a ∪ b| of two collections (1.0 for two empty ones)."""
    left, right = set(a), set(b)
    if not left and not right:
        return 1.0
    return len(left & right) / len(left | right)


@functools.lru_cache(maxsize=4096)
def trigrams(text: str) -> frozenset[str]:
    """Character trigrams of the normalised *text*."""
    flat = f"  {normalise(text)}  "
    return frozenset(flat[i : i + 3] for i in range(len(flat) - 2))


def near_duplicates(a: str, b: str) -> bool:
    """Whether *a* and *b* say the same thing (see the module docstring)."""
    if normalise(a) == normalise(b):
        return True
    if jaccard(content_words(a), content_words(b)) >= TOKEN_JACCARD_THRESHOLD:
        return True
    return jaccard(trigrams(a), trigrams(b)) >= TRIGRAM_JACCARD_THRESHOLD


@functools.lru_cache(maxsize=4096)
def slot_and_value(text: str) -> tuple[str, str] | None:
    """``(slot, value)`` of a one-line fact, or ``None`` when it states no single value."""
    if "\n" in text.strip():
        return None
    lowered = _POSSESSIVE.sub("", text.strip().lower()).rstrip(".")
    for prefix in ("note: ", "fyi: ", "update: "):
        lowered = lowered.removeprefix(prefix)
    for marker, family in _VALUE_MARKERS:
        found = marker.search(lowered)
        if found is None:
            continue
        subject, value = lowered[: found.start()], lowered[found.end() :]
        key = [w for w in words(subject) if w not in STOP_WORDS and w not in {"now", "currently"}]
        if family is not None:
            key.append(family)
        value_words = content_words(re.sub(r"\(.*?\)", "", value))
        if len(set(key)) < 2 or not value_words:
            return None
        return " ".join(sorted(set(key))), " ".join(value_words)
    return None


def different_values(a: str, b: str) -> bool:
    """Whether *a* and *b* state two values of one fact (so they are never duplicates)."""
    left, right = slot_and_value(a), slot_and_value(b)
    return left is not None and right is not None and left[0] == right[0] and left[1] != right[1]
