"""Closed compounds: a question's word glued inside the history's words, or glued from two.

The word index sees "FlexGym" and "houseplants" as one word each.
:func:`glued_matches` finds a word (its stem) as the head of such a compound
through the trigram index; :func:`compound_head` reads a word the index has
never seen as two words it holds; :func:`is_word` asks the word index.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from typing import Any

from hermes_core.sessions.layout import Layout
from hermes_core.sessions.question import stem, stem_regex

__all__ = ["Glued", "compound_head", "glued_matches", "is_word"]

Glued = Callable[[str], list[tuple[Any, ...]]]
"""Rows (with text) where a stem is glued to letters before it, from the trigram index."""

_GLUED_PREFIX = 3
_GLUED_TAIL = 4
_LETTERS = re.compile(r"[A-Za-z]+")
"""ASCII words (the stems looked for are ASCII; lower-casing keeps their length)."""


def glued_matches(
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
            if token[match.start()].isupper() or is_word(conn, layout, prefix, known):
                found.append(row)
                break
    return found


_COMPOUND_MODIFIER = 3
_COMPOUND_HEAD = 4


def compound_head(
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
        if is_word(conn, layout, head, known) and is_word(conn, layout, modifier, known):
            return head
    return None


def is_word(conn: sqlite3.Connection, layout: Layout, text: str, known: dict[str, bool]) -> bool:
    """Whether the word index holds *text* as a word; answers are kept in *known*."""
    if text not in known:
        word = layout.word
        known[text] = word is not None and (
            conn.execute(
                f"SELECT 1 FROM {word.name} WHERE {word.name} MATCH ? LIMIT 1", (f'"{text}"',)
            ).fetchone()
            is not None
        )
    return known[text]
