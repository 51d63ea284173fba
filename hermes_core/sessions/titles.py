"""Session titles: cleaning, and numbering across a compression lineage.

A title is shown in listings and must be unique among one user's sessions. When a long session is
compressed into a child, the child takes the next number of the title:
``X`` → ``X #2`` → ``X #3`` (the unnumbered original counts as #1).
"""

from __future__ import annotations

import re
import sqlite3
import unicodedata
from collections.abc import Iterable

from hermes_core.errors import SessionTitleError

__all__ = ["MAX_TITLE_CHARS", "next_title", "next_title_from", "sanitize_title", "split_number"]

MAX_TITLE_CHARS = 100

# Zero-width, bidi controls, BOM and the object-replacement character.
_INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff\ufffc]")
_NUMBERED = re.compile(r"^(.*?) #(\d+)$")


def sanitize_title(title: str | None) -> str | None:
    """*title* without control or invisible characters, whitespace collapsed.

    Returns ``None`` for an empty result; raises :class:`SessionTitleError` when
    longer than :data:`MAX_TITLE_CHARS` characters.
    """
    if title is None:
        return None
    kept = []
    for char in str(title):
        if char in "\t\n\r":
            kept.append(" ")
        elif unicodedata.category(char) in ("Cc", "Cs"):
            continue
        else:
            kept.append(char)
    cleaned = " ".join(_INVISIBLE.sub("", "".join(kept)).split())
    if not cleaned:
        return None
    if len(cleaned) > MAX_TITLE_CHARS:
        raise SessionTitleError(
            f"Title too long ({len(cleaned)} chars, max {MAX_TITLE_CHARS}); shorten it."
        )
    return cleaned


def split_number(title: str) -> tuple[str, int]:
    """``"X #3"`` → ``("X", 3)``; an unnumbered title is number 1."""
    match = _NUMBERED.match(title)
    if match:
        return match.group(1), int(match.group(2))
    return title, 1


def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def next_title(conn: sqlite3.Connection, title: str, *, user_id: str | None = None) -> str:
    """The next free title in *title*'s numbered series (``X`` → ``X #2`` → ``X #3``),
    among *user_id*'s sessions when given (titles are unique per user)."""
    base, _ = split_number(title)
    mine = "" if user_id is None else " AND user_id = ?"
    rows = conn.execute(
        f"SELECT title FROM sessions WHERE (title = ? OR title LIKE ? ESCAPE '\\'){mine}",
        (base, _like_escape(base) + " #%", *(() if user_id is None else (user_id,))),
    ).fetchall()
    return next_title_from(title, [row[0] for row in rows])


def next_title_from(title: str, existing: Iterable[str]) -> str:
    """The next free title in *title*'s series, given the *existing* titles of that series."""
    base, _ = split_number(title)
    numbers = []
    for existing_title in existing:
        if existing_title == base:
            numbers.append(1)
            continue
        stem, number = split_number(existing_title)
        if stem == base:
            numbers.append(number)
    if not numbers:
        return base
    return f"{base} #{max(numbers) + 1}"
