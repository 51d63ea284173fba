"""The archive tier in PostgreSQL (``memory.url``): ``archive.db`` as rows beside the documents.

The same contract as :class:`~hermes_memory_builtin.archive.Archive` (archived
entries, the curation log, use counts, the curator model's verdicts), so the
overflow path, the curator, recall, ``memory_search`` and ``undo`` run unchanged.
Every row carries its ``owner`` (the user id, ``""`` single-user).

**One change, one transaction.** The archive shares the documents' connection:
a change's log row and archived entries are written in the transaction that holds
the document's row lock and saves its new text, so they commit together or not at
all (the file store needs its pending/committed protocol only because a file
rename and an SQLite commit cannot be one step). Nothing is ever left pending.

Search ranks like FTS5's BM25 over the same tokens (letters and digits, accents
folded, lowercase), with a GIN index on the token array choosing the candidates.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import time
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from hermes_memory_builtin.archive import Archive
from hermes_memory_builtin.archive_tier import (
    ArchivedEntry,
    ArchiveTier,
    Change,
    ChangeRecord,
    Moved,
)
from hermes_memory_builtin.similarity import content_words

if TYPE_CHECKING:
    from hermes_memory_builtin.documents import PostgresDocuments

__all__ = ["AnyArchive", "PostgresArchive", "tokens"]

_TOKEN = re.compile(r"[^\W_]+")
_COLUMNS = (
    "a.id, a.target, a.text, a.reason, a.category, a.related, a.change_id, a.archived_at,"
    " a.recall_count"
)
_CHANGE_COLUMNS = (
    "id, at, kind, state, target, reason, before_text, after_text, details, undoes, undone_by"
)
_K1, _B = 1.2, 0.75  # FTS5's bm25() defaults


def tokens(text: str) -> list[str]:
    """*text* as FTS5's ``unicode61 remove_diacritics 2`` reads it: runs of letters and
    digits, lowercase, accents folded."""
    folded = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return _TOKEN.findall(folded.lower())


class PostgresArchive(ArchiveTier):
    """The archive of *documents*' owner, in the same database and transactions."""

    def __init__(
        self, documents: PostgresDocuments, *, clock: Callable[[], float] = time.time
    ) -> None:
        self.documents = documents
        self.owner = documents.owner
        self._clock = clock

    def close(self) -> None:
        """Nothing to close: the connection is the documents'."""

    def exists(self) -> bool:
        """Whether there can be archived entries (the tables always exist)."""
        return True

    @property
    def where(self) -> str:
        """The database, password masked."""
        return self.documents.where

    def _rows(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        with self.documents.guarded() as conn:
            return list(conn.execute(sql, params).fetchall())

    # -- changes ----------------------------------------------------------------------------

    @contextlib.contextmanager
    def _record_change(
        self, record: ChangeRecord, moved: Sequence[Moved], supersedes: Sequence[tuple[int, str]]
    ) -> Iterator[int]:
        """Record a change around the block that saves the document (call it inside
        :meth:`PostgresDocuments.locked`, so both commit together); when the block
        raises, none of it is kept."""
        target, now, undoes = record.target, record.at, record.undoes
        with self.documents.guarded() as conn, conn.transaction():
            change_id = conn.execute(
                "INSERT INTO memory_changes (owner, at, kind, target, reason, before_text,"
                " after_text, before_digest, details, undoes, state)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, 'pending') RETURNING id",
                (self.owner, *record.values()),
            ).fetchone()[0]
            for m in moved:
                conn.execute(
                    "INSERT INTO memory_archived (owner, target, text, reason, category,"
                    " related, change_id, archived_at, words)"
                    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                    (
                        self.owner,
                        target,
                        m.text,
                        m.reason,
                        m.category,
                        m.related,
                        change_id,
                        now,
                        tokens(m.text),
                    ),
                )
            for archived_id, related in supersedes:
                conn.execute(
                    "INSERT INTO memory_superseded (owner, archived_id, change_id, related)"
                    " VALUES (%s, %s, %s, %s)",
                    (self.owner, archived_id, change_id, related),
                )
            yield change_id
            conn.execute(
                "UPDATE memory_changes SET state = 'committed' WHERE id = %s", (change_id,)
            )
            if undoes is not None:
                conn.execute(
                    "UPDATE memory_changes SET undone_by = %s WHERE id = %s AND owner = %s",
                    (change_id, undoes, self.owner),
                )

    def settle(self, target: str) -> None:
        """Nothing to settle: a change commits with its document or not at all."""

    def visible_changes(self) -> set[int]:
        """Ids of the changes in effect now (committed, minus those an undo reverted)."""
        rows = self._rows(
            "SELECT id, undoes FROM memory_changes WHERE owner = %s AND state = 'committed'",
            (self.owner,),
        )
        undone = {undoes for _, undoes in rows if undoes is not None}
        return {change_id for change_id, _ in rows} - undone

    def record_proposal(self, target: str, reason: str, details: dict[str, Any]) -> int:
        """Log what the curator would change (``review``); a repeat of the target's last
        proposal is not logged again."""
        text = json.dumps(details, ensure_ascii=False)
        with self.documents.guarded() as conn, conn.transaction():
            last = conn.execute(
                "SELECT id, details FROM memory_changes WHERE owner = %s AND target = %s"
                " ORDER BY id DESC LIMIT 1",
                (self.owner, target),
            ).fetchone()
            if last is not None and last[1] == text:
                return int(last[0])
            return int(
                conn.execute(
                    "INSERT INTO memory_changes (owner, at, kind, state, target, reason,"
                    " before_digest, details) VALUES (%s, %s, 'proposal', 'proposed', %s, %s,"
                    " '-', %s) RETURNING id",
                    (self.owner, self._clock(), target, reason, text),
                ).fetchone()[0]
            )

    # -- reading -----------------------------------------------------------------------------

    def _entries(self, where: str, params: Sequence[Any]) -> list[ArchivedEntry]:
        visible = sorted(self.visible_changes())
        superseded = {
            archived_id
            for archived_id, change_id in self._rows(
                "SELECT archived_id, change_id FROM memory_superseded WHERE owner = %s",
                (self.owner,),
            )
            if change_id in visible
        }
        rows = self._rows(
            f"SELECT {_COLUMNS} FROM memory_archived a WHERE a.owner = %s"
            f" AND a.change_id = ANY(%s) AND {where} ORDER BY a.id",
            (self.owner, visible, *params),
        )
        return [_entry(row, row[0] in superseded or row[3] == "superseded") for row in rows]

    def entries(self, target: str | None = None) -> list[ArchivedEntry]:
        """Every archived entry in effect (of *target* when given), oldest first."""
        if target is None:
            return self._entries("TRUE", ())
        return self._entries("a.target = %s", (target,))

    def _matches(self, query: str, target: str | None) -> list[ArchivedEntry]:
        """Matches ranked by BM25 as FTS5 computes it (a word of several tokens must have
        them all)."""
        terms = [t for t in dict.fromkeys(tuple(tokens(w)) for w in content_words(query)) if t]
        if not terms:
            return []
        wanted = sorted({token for term in terms for token in term})
        where = "a.words && %s::text[]"
        params: list[Any] = [wanted]
        if target is not None:
            where, params = where + " AND a.target = %s", [wanted, target]
        found = self._entries(where, params)
        words = {
            entry_id: Counter(row_words)
            for entry_id, row_words in self._rows(
                "SELECT id, words FROM memory_archived WHERE owner = %s AND id = ANY(%s)",
                (self.owner, [e.id for e in found]),
            )
        }
        total, average = self._rows(
            "SELECT count(*), coalesce(avg(cardinality(words)), 0) FROM memory_archived"
            " WHERE owner = %s",
            (self.owner,),
        )[0]
        matching = {
            e.id: [term for term in terms if all(words[e.id][t] for t in term)] for e in found
        }
        frequency = Counter(term for hits in matching.values() for term in hits)
        length = {e.id: sum(words[e.id].values()) for e in found}

        def score(entry: ArchivedEntry) -> float:
            value = 0.0
            for term in matching[entry.id]:
                idf = max(math.log((total - frequency[term] + 0.5) / (frequency[term] + 0.5)), 1e-6)
                tf = min(words[entry.id][t] for t in term)
                norm = 1 - _B + _B * length[entry.id] / (float(average) or 1.0)
                value += idf * tf * (_K1 + 1) / (tf + _K1 * norm)
            return value

        return sorted((e for e in found if matching[e.id]), key=lambda e: (-score(e), -e.id))

    def record_recall(self, ids: Sequence[int]) -> None:
        """Count one recall of each archived entry in *ids*."""
        if ids:
            self._rows(
                "UPDATE memory_archived SET recall_count = recall_count + 1"
                " WHERE owner = %s AND id = ANY(%s) RETURNING id",
                (self.owner, list(ids)),
            )

    # -- the curation log ------------------------------------------------------------------

    def changes(self, limit: int | None = None) -> list[Change]:
        """The curation log, newest first."""
        sql = (
            f"SELECT {_CHANGE_COLUMNS} FROM memory_changes WHERE owner = %s"
            " AND state != 'aborted' ORDER BY id DESC"
        )
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [_change(row) for row in self._rows(sql, (self.owner,))]

    def get_change(self, change_id: int) -> Change | None:
        """One row of the log, or ``None``."""
        rows = self._rows(
            f"SELECT {_CHANGE_COLUMNS} FROM memory_changes WHERE owner = %s AND id = %s",
            (self.owner, change_id),
        )
        return _change(rows[0]) if rows else None

    def moved_by(self, change_id: int) -> list[ArchivedEntry]:
        """The entries *change_id* moved into the archive."""
        rows = self._rows(
            f"SELECT {_COLUMNS} FROM memory_archived a WHERE a.owner = %s AND a.change_id = %s"
            " ORDER BY a.id",
            (self.owner, change_id),
        )
        return [_entry(row) for row in rows]

    # -- use of prompt-tier entries ----------------------------------------------------------

    def _register_usage(
        self, target: str, keys: Sequence[str], now: float
    ) -> dict[str, tuple[float, int]]:
        with self.documents.guarded() as conn, conn.transaction():
            for key in sorted(set(keys)):  # one order: concurrent registrations
                conn.execute(
                    "INSERT INTO memory_usage (owner, target, digest, first_seen)"
                    " VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
                    (self.owner, target, key, now),
                )
            return {
                key: (first_seen, uses)
                for key, first_seen, uses in conn.execute(
                    "SELECT digest, first_seen, uses FROM memory_usage"
                    " WHERE owner = %s AND target = %s",
                    (self.owner, target),
                )
            }

    def _count_uses(self, target: str, keys: Sequence[str], now: float) -> None:
        with self.documents.guarded() as conn, conn.transaction():
            for key in sorted(set(keys)):
                conn.execute(
                    "INSERT INTO memory_usage (owner, target, digest, first_seen, last_used, uses)"
                    " VALUES (%s, %s, %s, %s, %s, 1) ON CONFLICT (owner, target, digest) DO"
                    " UPDATE SET uses = memory_usage.uses + 1, last_used = excluded.last_used",
                    (self.owner, target, key, now, now),
                )

    def _first_seen(self, target: str) -> list[tuple[str, float]]:
        return [
            (key, first_seen)
            for key, first_seen in self._rows(
                "SELECT digest, first_seen FROM memory_usage WHERE owner = %s AND target = %s",
                (self.owner, target),
            )
        ]

    def _judgements(self, target: str) -> list[tuple[str, str, str]]:
        return [
            (first, second, verdict)
            for first, second, verdict in self._rows(
                "SELECT first_digest, second_digest, verdict FROM memory_judgements"
                " WHERE owner = %s AND target = %s",
                (self.owner, target),
            )
        ]

    def _save_judgements(
        self, target: str, rows: Sequence[tuple[str, str, str]], now: float
    ) -> None:
        with self.documents.guarded() as conn, conn.transaction():
            for first, second, verdict in rows:
                conn.execute(
                    "INSERT INTO memory_judgements (owner, target, first_digest, second_digest,"
                    " verdict, at) VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (owner, target,"
                    " first_digest, second_digest) DO UPDATE SET verdict = excluded.verdict,"
                    " at = excluded.at",
                    (self.owner, target, first, second, verdict, now),
                )


AnyArchive = Archive | PostgresArchive
"""Either archive: the SQLite file beside the memory files, or the rows of ``memory.url``."""


def _entry(row: Sequence[Any], superseded: bool = False) -> ArchivedEntry:
    entry_id, target, text, reason, category, related, change_id, archived_at, recalls = row
    return ArchivedEntry(
        entry_id,
        target,
        text,
        reason,
        category,
        related,
        change_id,
        archived_at,
        recalls,
        superseded=superseded,
    )


def _change(row: Sequence[Any]) -> Change:
    values = dict(zip(_CHANGE_COLUMNS.split(", "), row, strict=True))
    values["details"] = json.loads(values["details"] or "{}")
    return Change(**values)
