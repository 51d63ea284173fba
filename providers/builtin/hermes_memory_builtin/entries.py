"""The entry format of ``MEMORY.md`` / ``USER.md`` and how entries are located.

A memory file is a list of entries separated by a line that holds only the
section sign ``§``; entries may span several lines. Entries have no ids: the
``memory`` tool finds the one to change by a short unique substring.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

ENTRY_DELIMITER = "\n§\n"
"""What is written between two entries."""

SECTION_SIGN = "§"


def normalize_newlines(text: str) -> str:
    """Turn Windows (CRLF) and old Mac (CR) line endings into ``\\n``."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def is_delimiter_line(line: str) -> bool:
    """True for a line that separates entries: ``§`` with optional spaces or tabs around it."""
    return line.strip(" \t") == SECTION_SIGN


# A delimiter line, matched from the newline before it up to (not including) the one after.
_DELIMITER_LINE = re.compile(r"\n[ \t]*§[ \t]*(?=\n)")


def parse_entries(text: str) -> list[str]:
    """Split file text into entries: stripped, without empties, duplicates kept.

    Line endings are normalised first, and a delimiter line may carry spaces
    or tabs, so a file saved by a Windows editor or with cosmetic spacing
    parses exactly like the one this package writes. A ``§`` inside a line of
    text is ordinary content.
    """
    pieces = _DELIMITER_LINE.split("\n" + normalize_newlines(text) + "\n")
    return [piece.strip() for piece in pieces if piece.strip()]


def dedupe(entries: Iterable[str]) -> list[str]:
    """Drop repeated entries, keeping the first occurrence and the order."""
    return list(dict.fromkeys(entries))


def join_entries(entries: Sequence[str]) -> str:
    """The file text for *entries* (empty list → empty text)."""
    return ENTRY_DELIMITER.join(entries)


def total_chars(entries: Sequence[str]) -> int:
    """Size of *entries* as stored, in characters (code points)."""
    return len(join_entries(entries))


@dataclass(frozen=True)
class Match:
    """Where ``old_text`` points in a list of entries.

    ``index`` is the entry to change when the match is unique; ``candidates``
    holds the distinct entries that matched when it is ambiguous.
    """

    index: int | None
    candidates: tuple[str, ...] = ()

    @property
    def found(self) -> bool:
        """Exactly one entry (or several identical copies of it) matched."""
        return self.index is not None

    @property
    def ambiguous(self) -> bool:
        """Several different entries matched."""
        return len(self.candidates) > 1


def find_unique_match(entries: Sequence[str], old_text: str) -> Match:
    """Locate the entry *old_text* refers to.

    An entry equal to *old_text* wins over entries that merely contain it, so
    ``"test"`` removes the entry ``test`` and not ``tests pass in CI``.
    Otherwise every entry containing *old_text* is a candidate; identical
    copies count once (the first is used).
    """
    hits = [i for i, entry in enumerate(entries) if entry == old_text]
    if not hits:
        hits = [i for i, entry in enumerate(entries) if old_text in entry]
    if not hits:
        return Match(None)
    distinct = tuple(dict.fromkeys(entries[i] for i in hits))
    if len(distinct) > 1:
        return Match(None, distinct)
    return Match(hits[0], distinct)
