"""The archive tier: entries that left ``MEMORY.md`` / ``USER.md``, kept and searchable.

The archive is ``archive.db``, an SQLite file beside the memory files in
``$HERMES_HOME/memories/``. It lives there, not in ``state.db``, because it
belongs with the files it backs up: a profile's memory folder can be copied,
synced or reset as one unit, a symlinked folder shared by two profiles shares
its archive too, and curation never contends with the session store's writers.

It holds three tables:

- ``archived``: every entry moved out of the prompt tier, with why
  (``overflow``, ``merged``, ``superseded``, ``stale``, ``episodic``,
  ``working``, ``budget``), its category and the change that moved it; an
  FTS5 index over the text serves search and recall;
- ``changes``: the append-only curation log. Each row says what changed,
  why, and the exact file text before and after, so ``undo`` restores the
  file byte for byte. Rows are never deleted; only their ``state`` moves
  from ``pending`` to ``committed`` or ``aborted`` (and ``undone_by`` is set);
- ``usage``: when a prompt-tier entry was first seen, and how often it was
  used (matched by recall), for the curator's staleness rule;
- ``judgements``: the curator model's verdicts on pairs of entries, so a
  pair is never asked about twice.

**One change, one commit point.** A change to a memory file is written to the
database first (a ``pending`` log row and its archived entries, in one SQLite
transaction), then the file is replaced atomically, then the row is marked
``committed``. The file replacement is the commit point: a pending change
whose file still has its *before* text has not happened (its archived rows
are invisible, and the next writer under the lock aborts it); a pending
change whose file moved on has happened (its rows are visible, and the next
writer marks it committed). So a process killed at any instant leaves a
target in its old or its new state, never a mix, and no entry is ever both
gone from the file and missing from the archive.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from hermes_core.errors import MemoryStoreError
from hermes_memory_builtin.archive_tier import (
    ArchivedEntry,
    ArchiveTier,
    Change,
    ChangeRecord,
    Moved,
    digest,
)
from hermes_memory_builtin.similarity import content_words
from hermes_memory_builtin.targets import TARGETS

ARCHIVE_FILENAME = "archive.db"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS changes (
    id INTEGER PRIMARY KEY,
    at REAL NOT NULL,
    kind TEXT NOT NULL,
    state TEXT NOT NULL,
    target TEXT NOT NULL,
    reason TEXT NOT NULL,
    before_text TEXT,
    after_text TEXT,
    before_digest TEXT NOT NULL,
    details TEXT NOT NULL DEFAULT '{}',
    undoes INTEGER,
    undone_by INTEGER
);
CREATE TABLE IF NOT EXISTS archived (
    id INTEGER PRIMARY KEY,
    target TEXT NOT NULL,
    text TEXT NOT NULL,
    reason TEXT NOT NULL,
    category TEXT NOT NULL,
    related TEXT,
    change_id INTEGER NOT NULL REFERENCES changes(id),
    archived_at REAL NOT NULL,
    recall_count INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS archived_change ON archived(change_id);
CREATE TABLE IF NOT EXISTS superseded (
    archived_id INTEGER NOT NULL REFERENCES archived(id),
    change_id INTEGER NOT NULL REFERENCES changes(id),
    related TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS judgements (
    target TEXT NOT NULL,
    first_digest TEXT NOT NULL,
    second_digest TEXT NOT NULL,
    verdict TEXT NOT NULL,
    at REAL NOT NULL,
    PRIMARY KEY (target, first_digest, second_digest)
);
CREATE TABLE IF NOT EXISTS usage (
    target TEXT NOT NULL,
    digest TEXT NOT NULL,
    first_seen REAL NOT NULL,
    last_used REAL,
    uses INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (target, digest)
);
"""
_FTS_SCHEMA = """
CREATE VIRTUAL TABLE IF NOT EXISTS archived_fts USING fts5(
    text, content='archived', content_rowid='id', tokenize='unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS archived_ai AFTER INSERT ON archived BEGIN
    INSERT INTO archived_fts(rowid, text) VALUES (new.id, new.text);
END;
"""
_COLUMNS = (
    "a.id, a.target, a.text, a.reason, a.category, a.related, a.change_id, a.archived_at,"
    " a.recall_count"
)


def read_raw(path: Path) -> str | None:
    """The exact text of *path* (a BOM kept), or ``None`` when there is no file."""
    try:
        return path.read_bytes().decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise MemoryStoreError(f"Cannot read {path}: {exc.strerror or exc}.") from exc


class Archive(ArchiveTier):
    """``archive.db`` in *memory_dir*; open it as a context manager or call :meth:`close`."""

    def __init__(self, memory_dir: str | Path, *, clock: Callable[[], float] = time.time) -> None:
        self.memory_dir = Path(memory_dir)
        self.path = self.memory_dir / ARCHIVE_FILENAME
        self._clock = clock
        self._db: sqlite3.Connection | None = None
        self._fts = True
        self._lock = threading.RLock()

    def close(self) -> None:
        """Close the database connection (it reopens on the next use)."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def exists(self) -> bool:
        """Whether anything was ever archived here (``archive.db`` exists)."""
        return self.path.exists()

    @property
    def db(self) -> sqlite3.Connection:
        """The open connection (opened and migrated on first use)."""
        with self._lock:
            return self._db or self._open()

    def _open(self) -> sqlite3.Connection:
        try:
            self.memory_dir.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(
                self.path, timeout=30, isolation_level=None, check_same_thread=False
            )
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")
            db.executescript(_SCHEMA)
            try:
                db.executescript(_FTS_SCHEMA)
            except sqlite3.OperationalError:  # SQLite built without FTS5
                self._fts = False
        except (OSError, sqlite3.Error) as exc:
            raise MemoryStoreError(
                f"Cannot open the memory archive {self.path}: {exc}. Check that the folder "
                "is writable and the file is an SQLite database (move it aside if not)."
            ) from exc
        db.row_factory = sqlite3.Row
        self._db = db
        return db

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            db = self.db
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        """All rows of one read (hooks run on several threads; one runs at a time)."""
        with self._lock:
            return self.db.execute(sql, params).fetchall()

    # -- changes: the one protocol every move out of the prompt tier follows ------------------

    @contextlib.contextmanager
    def _record_change(
        self, record: ChangeRecord, moved: Sequence[Moved], supersedes: Sequence[tuple[int, str]]
    ) -> Iterator[int]:
        """Record a change, let the caller replace the file, then mark it committed.

        The block must replace the file with the change's *after* text (the commit
        point); when it raises, the change is aborted (its rows stay, invisible).
        """
        target, now = record.target, record.at
        with self._transaction() as db:
            change_id = db.execute(
                "INSERT INTO changes (at, kind, target, reason, before_text, after_text,"
                " before_digest, details, undoes, state)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending')",
                record.values(),
            ).lastrowid
            assert change_id is not None
            db.executemany(
                "INSERT INTO archived (target, text, reason, category, related, change_id,"
                " archived_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(target, m.text, m.reason, m.category, m.related, change_id, now) for m in moved],
            )
            db.executemany(
                "INSERT INTO superseded (archived_id, change_id, related) VALUES (?, ?, ?)",
                [(archived_id, change_id, related) for archived_id, related in supersedes],
            )
        try:
            yield change_id
        except BaseException:
            self._abort(change_id)
            raise
        self._commit(change_id, record.undoes)

    def _commit(self, change_id: int, undoes: int | None) -> None:
        with self._transaction() as db:
            db.execute("UPDATE changes SET state = 'committed' WHERE id = ?", (change_id,))
            if undoes is not None:
                db.execute("UPDATE changes SET undone_by = ? WHERE id = ?", (change_id, undoes))

    def _abort(self, change_id: int) -> None:
        with self._transaction() as db:
            db.execute("UPDATE changes SET state = 'aborted' WHERE id = ?", (change_id,))

    def settle(self, target: str) -> None:
        """Finish the pending changes of *target* a killed process left (lock held).

        A change whose file still has its *before* text never happened and is
        aborted; one whose file moved on happened and is committed.
        """
        path = self.memory_dir / TARGETS[target].filename
        rows = self._query(
            "SELECT id, before_digest, undoes FROM changes WHERE state = 'pending' AND target = ?",
            (target,),
        )
        if not rows:
            return
        current = digest(read_raw(path))
        for row in rows:
            if row["before_digest"] == current:
                self._abort(row["id"])
                continue
            self._commit(row["id"], row["undoes"])

    def _happened(self, row: sqlite3.Row) -> bool:
        """Whether the pending change *row* reached its file (the rename was done)."""
        spec = TARGETS.get(row["target"])
        if spec is None:
            return False
        return digest(read_raw(self.memory_dir / spec.filename)) != row["before_digest"]

    def visible_changes(self) -> set[int]:
        """Ids of the changes in effect now.

        Committed changes and pending ones that reached their file (the
        process died before marking them), minus those an undo in effect
        reverted.
        """
        rows = self._query(
            "SELECT id, state, target, before_digest, undoes FROM changes"
            " WHERE state IN ('committed', 'pending')"
        )
        done = {r["id"]: r for r in rows if r["state"] == "committed" or self._happened(r)}
        undone = {r["undoes"] for r in done.values() if r["undoes"] is not None}
        return set(done) - undone

    def _visible(self) -> str:
        """An SQL condition: archived row ``a`` is in effect and not superseded-hidden."""
        ids = ", ".join(str(int(i)) for i in sorted(self.visible_changes())) or "NULL"
        return f"a.change_id IN ({ids})"

    def _superseded_ids(self) -> set[int]:
        visible = self.visible_changes()
        return {
            row[0]
            for row in self._query("SELECT archived_id, change_id FROM superseded", ())
            if row[1] in visible
        }

    def record_proposal(self, target: str, reason: str, details: dict[str, Any]) -> int:
        """Log what the curator would change (``review`` mode); nothing else is touched.

        The same proposal as the target's last one is not logged again (a
        review curator runs at every session end); its id is returned.
        """
        text = json.dumps(details, ensure_ascii=False)
        with self._transaction() as db:
            last = db.execute(
                "SELECT id, details FROM changes WHERE target = ? ORDER BY id DESC LIMIT 1",
                (target,),
            ).fetchone()
            if last is not None and last["details"] == text:
                return int(last["id"])
            change_id = db.execute(
                "INSERT INTO changes (at, kind, state, target, reason, before_digest, details)"
                " VALUES (?, 'proposal', 'proposed', ?, ?, '-', ?)",
                (self._clock(), target, reason, text),
            ).lastrowid
        assert change_id is not None
        return change_id

    # -- reading -------------------------------------------------------------------------------

    def _rows(self, sql: str, params: Sequence[Any]) -> list[ArchivedEntry]:
        superseded = self._superseded_ids()
        return [
            ArchivedEntry(
                id=row[0],
                target=row[1],
                text=row[2],
                reason=row[3],
                category=row[4],
                related=row[5],
                change_id=row[6],
                archived_at=row[7],
                recall_count=row[8],
                superseded=row[0] in superseded or row[3] == "superseded",
            )
            for row in self._query(sql, params)
        ]

    def entries(self, target: str | None = None) -> list[ArchivedEntry]:
        """Every archived entry in effect (of *target* when given), oldest first."""
        where, params = ("a.target = ?", [target]) if target is not None else ("1", [])
        return self._rows(
            f"SELECT {_COLUMNS} FROM archived a WHERE {self._visible()} AND {where} ORDER BY a.id",
            params,
        )

    def _matches(self, query: str, target: str | None) -> list[ArchivedEntry]:
        terms = list(dict.fromkeys(content_words(query)))
        if not terms:
            return []
        where, params = ("a.target = ?", [target]) if target is not None else ("1", [])
        if self._fts:
            match = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
            sql = (
                f"SELECT {_COLUMNS} FROM archived_fts f JOIN archived a ON a.id = f.rowid"
                f" WHERE archived_fts MATCH ? AND {self._visible()} AND {where}"
                " ORDER BY bm25(archived_fts), a.id DESC"
            )
            found = self._rows(sql, [match, *params])
        else:  # pragma: no cover - SQLite without FTS5
            likes = " OR ".join("lower(a.text) LIKE ?" for _ in terms)
            sql = (
                f"SELECT {_COLUMNS} FROM archived a WHERE {self._visible()} AND {where}"
                f" AND ({likes}) ORDER BY a.id DESC"
            )
            found = self._rows(sql, [*params, *(f"%{t}%" for t in terms)])
        return found

    def record_recall(self, ids: Sequence[int]) -> None:
        """Count one recall of each archived entry in *ids*."""
        if not ids:
            return
        with self._transaction() as db:
            db.executemany(
                "UPDATE archived SET recall_count = recall_count + 1 WHERE id = ?",
                [(i,) for i in ids],
            )

    # -- the curation log ---------------------------------------------------------------------

    def changes(self, limit: int | None = None) -> list[Change]:
        """The curation log, newest first."""
        sql = (
            "SELECT id, at, kind, state, target, reason, before_text, after_text, details,"
            " undoes, undone_by FROM changes WHERE state != 'aborted' ORDER BY id DESC"
        )
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [self._change(row) for row in self._query(sql, ())]

    def get_change(self, change_id: int) -> Change | None:
        """One row of the log, or ``None``."""
        rows = self._query(
            "SELECT id, at, kind, state, target, reason, before_text, after_text, details,"
            " undoes, undone_by FROM changes WHERE id = ?",
            (change_id,),
        )
        return self._change(rows[0]) if rows else None

    def moved_by(self, change_id: int) -> list[ArchivedEntry]:
        """The entries *change_id* moved into the archive (visible or not)."""
        return self._rows(
            f"SELECT {_COLUMNS} FROM archived a WHERE a.change_id = ? ORDER BY a.id",
            (change_id,),
        )

    @staticmethod
    def _change(row: sqlite3.Row) -> Change:
        values = dict(row)
        values["details"] = json.loads(values["details"] or "{}")
        return Change(**values)

    # -- use of prompt-tier entries ----------------------------------------------------------

    def _register_usage(
        self, target: str, keys: Sequence[str], now: float
    ) -> dict[str, tuple[float, int]]:
        with self._transaction() as db:
            db.executemany(
                "INSERT OR IGNORE INTO usage (target, digest, first_seen) VALUES (?, ?, ?)",
                [(target, key, now) for key in keys],
            )
            return {
                row["digest"]: (row["first_seen"], row["uses"])
                for row in db.execute(
                    "SELECT digest, first_seen, uses FROM usage WHERE target = ?", (target,)
                )
            }

    def _count_uses(self, target: str, keys: Sequence[str], now: float) -> None:
        with self._transaction() as db:
            for key in keys:
                db.execute(
                    "INSERT INTO usage (target, digest, first_seen, last_used, uses)"
                    " VALUES (?, ?, ?, ?, 1) ON CONFLICT (target, digest) DO UPDATE SET"
                    " uses = uses + 1, last_used = excluded.last_used",
                    (target, key, now, now),
                )

    def _first_seen(self, target: str) -> list[tuple[str, float]]:
        rows = self._query("SELECT digest, first_seen FROM usage WHERE target = ?", (target,))
        return [(row["digest"], row["first_seen"]) for row in rows]

    def _judgements(self, target: str) -> list[tuple[str, str, str]]:
        rows = self._query(
            "SELECT first_digest, second_digest, verdict FROM judgements WHERE target = ?",
            (target,),
        )
        return [(row["first_digest"], row["second_digest"], row["verdict"]) for row in rows]

    def _save_judgements(
        self, target: str, rows: Sequence[tuple[str, str, str]], now: float
    ) -> None:
        with self._transaction() as db:
            db.executemany(
                "INSERT OR REPLACE INTO judgements (target, first_digest, second_digest, verdict,"
                " at) VALUES (?, ?, ?, ?, ?)",
                [(target, first, second, verdict, now) for first, second, verdict in rows],
            )
