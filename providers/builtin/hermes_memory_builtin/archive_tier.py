"""What the two archives share: the archive tier's records and its public methods.

The archive is ``archive.db`` beside the memory files
(:class:`~hermes_memory_builtin.archive.Archive`) or rows of ``memory.url``
(:class:`~hermes_memory_builtin.archive_rows.PostgresArchive`). Both subclass
:class:`ArchiveTier`, which shapes every call (the change's log row, digests,
the time, the filters of a search) once and leaves each backend only its reads
and writes.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Self

__all__ = [
    "RECALL_LIMIT",
    "ArchiveTier",
    "ArchivedEntry",
    "Change",
    "ChangeRecord",
    "Moved",
    "digest",
]

RECALL_LIMIT = 5
"""Archived entries one search returns by default."""


def digest(text: str | None) -> str:
    """A short fingerprint of a file's text or an entry (``-`` for no file)."""
    if text is None:
        return "-"
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


@dataclass(frozen=True)
class Moved:
    """An entry leaving the prompt tier: its text, why, its category, what replaced it."""

    text: str
    reason: str
    category: str
    related: str | None = None


@dataclass(frozen=True)
class ArchivedEntry:
    """An entry in the archive."""

    id: int
    target: str
    text: str
    reason: str
    category: str
    related: str | None
    change_id: int
    archived_at: float
    recall_count: int
    superseded: bool = False
    """A newer entry states another value of the same fact."""


@dataclass(frozen=True)
class Change:
    """One row of the curation log."""

    id: int
    at: float
    kind: str
    state: str
    target: str
    reason: str
    before_text: str | None
    after_text: str | None
    details: dict[str, Any]
    undoes: int | None
    undone_by: int | None


@dataclass(frozen=True)
class ChangeRecord:
    """A change's log row as both archives write it (before its id and state)."""

    at: float
    kind: str
    target: str
    reason: str
    before_text: str | None
    after_text: str | None
    before_digest: str
    details: str
    """The details as JSON text."""
    undoes: int | None

    def values(self) -> tuple[Any, ...]:
        """The columns ``at, kind, target, reason, before_text, after_text, before_digest,
        details, undoes`` in that order."""
        return (
            self.at,
            self.kind,
            self.target,
            self.reason,
            self.before_text,
            self.after_text,
            self.before_digest,
            self.details,
            self.undoes,
        )


class ArchiveTier(ABC):
    """The archive's public methods, on the reads and writes a backend provides."""

    _clock: Callable[[], float]

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @abstractmethod
    def close(self) -> None:
        """Release what the archive holds open."""

    @abstractmethod
    def entries(self, target: str | None = None) -> list[ArchivedEntry]:
        """Every archived entry in effect (of *target* when given), oldest first."""

    # -- changes ----------------------------------------------------------------------------

    @contextlib.contextmanager
    def change(
        self,
        *,
        kind: str,
        target: str,
        reason: str,
        before_text: str | None,
        after_text: str | None,
        moved: Sequence[Moved] = (),
        details: dict[str, Any] | None = None,
        undoes: int | None = None,
        supersedes: Sequence[tuple[int, str]] = (),
    ) -> Iterator[int]:
        """Record a change around the block that saves the document (with the target's
        lock held); when the block raises, the change is not in effect. *supersedes*
        marks archived entries (by id) as old values of the fact in the given text."""
        record = ChangeRecord(
            at=self._clock(),
            kind=kind,
            target=target,
            reason=reason,
            before_text=before_text,
            after_text=after_text,
            before_digest=digest(before_text),
            details=json.dumps(details or {}, ensure_ascii=False),
            undoes=undoes,
        )
        with self._record_change(record, moved, supersedes) as change_id:
            yield change_id

    @abstractmethod
    def _record_change(
        self, record: ChangeRecord, moved: Sequence[Moved], supersedes: Sequence[tuple[int, str]]
    ) -> contextlib.AbstractContextManager[int]:
        """Write *record* with its archived entries around the caller's block."""

    # -- reading ----------------------------------------------------------------------------

    def count(self) -> int:
        """How many archived entries are in effect."""
        return len(self.entries())

    def search(
        self,
        query: str,
        *,
        limit: int = RECALL_LIMIT,
        current_only: bool = False,
        target: str | None = None,
    ) -> list[ArchivedEntry]:
        """Archived entries matching any content word of *query*, best first (BM25).

        *current_only* (what recall uses) leaves out superseded entries (old
        values of a fact) and working state.
        """
        found = self._matches(query, target)
        if current_only:
            found = [e for e in found if not e.superseded and e.category != "working"]
        return found[:limit]

    @abstractmethod
    def _matches(self, query: str, target: str | None) -> list[ArchivedEntry]:
        """Every entry in effect matching *query* (of *target* when given), best first."""

    # -- use of prompt-tier entries ---------------------------------------------------------

    def usage(self, target: str, entries: Sequence[str]) -> dict[str, tuple[float, int]]:
        """``{entry: (first_seen, uses)}``, registering entries seen for the first time."""
        now = self._clock()
        keys = {entry: digest(entry) for entry in entries}
        rows = self._register_usage(target, list(keys.values()), now)
        return {entry: rows.get(key, (now, 0)) for entry, key in keys.items()}

    @abstractmethod
    def _register_usage(
        self, target: str, keys: Sequence[str], now: float
    ) -> dict[str, tuple[float, int]]:
        """Record *keys* not seen before at *now*; every key's ``(first_seen, uses)``."""

    def record_use(self, target: str, entries: Sequence[str]) -> None:
        """Count one use (a recall query matched it) of each prompt-tier entry."""
        if entries:
            self._count_uses(target, [digest(entry) for entry in entries], self._clock())

    @abstractmethod
    def _count_uses(self, target: str, keys: Sequence[str], now: float) -> None:
        """Add one use at *now* to each of *keys*."""

    def first_seen(self, target: str, texts: Sequence[str]) -> dict[str, float]:
        """When each of *texts* was first seen in the prompt tier (only those recorded)."""
        keys = {digest(text): text for text in texts}
        return {keys[key]: seen for key, seen in self._first_seen(target) if key in keys}

    @abstractmethod
    def _first_seen(self, target: str) -> Iterable[tuple[str, float]]:
        """``(digest, first_seen)`` of every entry of *target* on record."""

    def judgements(
        self, target: str, pairs: Sequence[tuple[str, str]]
    ) -> dict[tuple[str, str], str]:
        """The recorded model verdicts on *pairs* (``(older, newer)`` texts) of *target*."""
        wanted = {(digest(a), digest(b)): (a, b) for a, b in pairs}
        return {
            wanted[(first, second)]: verdict
            for first, second, verdict in self._judgements(target)
            if (first, second) in wanted
        }

    @abstractmethod
    def _judgements(self, target: str) -> Iterable[tuple[str, str, str]]:
        """``(first_digest, second_digest, verdict)`` of every verdict on *target*."""

    def record_judgements(self, target: str, verdicts: Mapping[tuple[str, str], str]) -> None:
        """Remember the model's *verdicts* on pairs of *target*."""
        rows = [(digest(a), digest(b), verdict) for (a, b), verdict in verdicts.items()]
        self._save_judgements(target, rows, self._clock())

    @abstractmethod
    def _save_judgements(
        self, target: str, rows: Sequence[tuple[str, str, str]], now: float
    ) -> None:
        """Store ``(first_digest, second_digest, verdict)`` *rows* of *target* at *now*."""
