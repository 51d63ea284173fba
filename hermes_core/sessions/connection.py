"""Opening ``state.db`` and running write transactions that survive contention.

Several processes (a CLI, a gateway, cron runs) append to one file. Each write
takes SQLite's WAL write lock up front with ``BEGIN IMMEDIATE``; a short busy
timeout lets SQLite absorb brief overlaps, and a bounded, jittered retry
(tenacity) absorbs longer ones without processes retrying in lockstep. Only
passive checkpoints run (SQLite's automatic one and one at close), so a writer
never waits for readers and never rewrites pages under them.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar
from urllib.parse import quote

from tenacity import (
    RetryError,
    Retrying,
    retry_if_exception,
    stop_after_delay,
    wait_random,
)

from hermes_core.errors import SessionStoreError

__all__ = [
    "WriteLock",
    "is_busy",
    "is_undecodable",
    "lenient_text",
    "not_a_regular_file",
    "open_connection",
]

T = TypeVar("T")

WRITE_BUSY_TIMEOUT_MS = 250
READ_BUSY_TIMEOUT_MS = 5000
PAGE_CACHE_KIB = 32 * 1024
"""Page cache per connection (SQLite's default is 2 MiB), so the full-text index pages of
recent searches stay cached beside the message rows they return; it fills only as used."""
DEFAULT_WRITE_PATIENCE = 30.0
"""Seconds a write keeps retrying while another process holds the write lock."""


def is_busy(exc: BaseException) -> bool:
    """True for SQLite's 'database is locked/busy' errors (worth retrying)."""
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def is_undecodable(exc: BaseException) -> bool:
    """True when a read met text that is not UTF-8 (stored by another program)."""
    return isinstance(exc, sqlite3.OperationalError) and "Could not decode to UTF-8" in str(exc)


def _lenient_decode(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


@contextmanager
def lenient_text(conn: sqlite3.Connection) -> Iterator[None]:
    """Within the block, *conn* reads text that is not UTF-8 with U+FFFD for the bad bytes.

    Python's ``sqlite3`` cannot store such text, but a C or Go program can; read
    strictly, one such row fails every query that returns it.
    """
    saved = conn.text_factory
    conn.text_factory = _lenient_decode
    try:
        yield
    finally:
        conn.text_factory = saved


def _uri(path: Path, *, read_only: bool, immutable: bool = False) -> str:
    query = "mode=ro" if read_only else "mode=rwc"
    if immutable:
        query += "&immutable=1"
    # The path's bytes, percent-encoded: a name that is not UTF-8 stays the same file.
    return f"file:{quote(os.fsencode(path.resolve()))}?{query}"


_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a named pipe"),
    (stat.S_ISSOCK, "a socket"),
)


def not_a_regular_file(path: Path) -> str | None:
    """What *path* is when it exists but is not a regular file (``"a directory"``), else None."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return None  # absent (or unreachable): opening it reports why
    if stat.S_ISREG(mode):
        return None
    return next((kind for test, kind in _KINDS if test(mode)), "not a regular file")


def open_connection(path: Path, *, read_only: bool) -> sqlite3.Connection:
    """A connection to *path* in autocommit mode with the store's pragmas.

    Read-only connections use a ``mode=ro`` URI and never write, not even a
    journal-mode change; if the directory is not writable and the WAL index
    cannot be created, the file is opened ``immutable`` instead.
    """
    timeout = (READ_BUSY_TIMEOUT_MS if read_only else WRITE_BUSY_TIMEOUT_MS) / 1000
    try:
        conn = sqlite3.connect(
            _uri(path, read_only=read_only),
            uri=True,
            timeout=timeout,
            isolation_level=None,
            check_same_thread=False,
        )
        conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
    except sqlite3.OperationalError as exc:
        if not read_only or "unable to open" not in str(exc).lower() or not path.exists():
            raise
        conn = sqlite3.connect(
            _uri(path, read_only=True, immutable=True),
            uri=True,
            timeout=timeout,
            isolation_level=None,
            check_same_thread=False,
        )
    if not read_only:
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA journal_size_limit = 67108864")
    conn.execute("PRAGMA temp_store = MEMORY")
    conn.execute(f"PRAGMA cache_size = -{PAGE_CACHE_KIB}")
    return conn


def enable_wal(conn: sqlite3.Connection) -> None:
    """Switch a writable file to WAL once; a file already in WAL is left alone."""
    mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
    if str(mode).lower() != "wal":
        conn.execute("PRAGMA journal_mode = WAL")


def restrict_permissions(path: Path) -> None:
    """Make the database and its sidecar files readable by the owner only."""
    for suffix in ("", "-wal", "-shm"):
        target = Path(f"{path}{suffix}")
        try:
            if target.exists():
                os.chmod(target, 0o600)
        except OSError:
            pass  # not our file to change (shared directory); reading still works


class WriteLock:
    """Runs callbacks in ``BEGIN IMMEDIATE`` transactions with bounded, jittered retry.

    One instance per connection; a thread lock serialises threads of this
    process, SQLite's write lock serialises processes. The callback may run more
    than once (after a lock timeout), so it must only touch the database.
    """

    def __init__(
        self, conn: sqlite3.Connection, path: Path, patience: float = DEFAULT_WRITE_PATIENCE
    ) -> None:
        self._conn = conn
        self._path = path
        self._patience = patience
        self.lock = threading.RLock()

    def run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run *fn(conn)* in one write transaction and return its result."""
        try:
            return self._once(fn)  # the usual case: no contention, no retry machinery
        except sqlite3.OperationalError as exc:
            if not is_busy(exc):
                raise
        retrying = Retrying(
            retry=retry_if_exception(is_busy),
            stop=stop_after_delay(self._patience),
            wait=wait_random(0.02, 0.15),
        )
        try:
            for attempt in retrying:
                with attempt:
                    return self._once(fn)
        except RetryError as exc:
            raise SessionStoreError(
                f"{self._path} stayed locked by another process for {self._patience:.0f} s; "
                "the write was not made. Retry when the other Hermes process is idle."
            ) from exc.last_attempt.exception()
        raise AssertionError("unreachable")  # pragma: no cover

    def _once(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        with self.lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                result = fn(self._conn)
                self._conn.execute("COMMIT")
            except BaseException:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise
            return result
