"""Opening ``state.db``: the checks and upgrades before the first read or write.

:func:`connect` refuses what cannot hold a database (a folder, a device, a missing
file opened read-only) and opens the connection; :func:`prepare` reads the
layout, refuses another program's database, a Hermes Agent file opened for
writing and a newer schema, and brings a writable file up to date.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from hermes_core.errors import SessionStoreError
from hermes_core.sessions.connection import (
    WriteLock,
    enable_wal,
    is_busy,
    not_a_regular_file,
    open_connection,
)
from hermes_core.sessions.gramqueue import drain_gram_queue, queued_gram_rows
from hermes_core.sessions.layout import Layout, inspect_layout
from hermes_core.sessions.schema import SCHEMA_VERSION, apply_schema

__all__ = [
    "GRAM_BATCH",
    "GRAM_PAUSE",
    "UpgradeProgress",
    "connect",
    "damage_hint",
    "drain_in_batches",
    "inspect",
    "prepare",
    "readable",
]

log = logging.getLogger(__name__)

T = TypeVar("T")

UpgradeProgress = Callable[[int, int], None]
"""Called with (rows upgraded, rows to upgrade in all): ``0`` before the first batch, then
after each. The rows are a ``state.db``'s queued CJK rows, or a PostgreSQL store's messages
stemmed by migration 4 (:mod:`~hermes_core.sessions.pgbackfill`)."""


def damage_hint(exc: sqlite3.DatabaseError) -> str:
    """What to do next when SQLite reports damage."""
    text = str(exc).lower()
    if "malformed" in text or "corrupt" in text:
        return (
            " The file may be damaged: `hermes-memory sessions check` says where, "
            "`hermes-memory sessions repair` rebuilds the search indexes from the messages, "
            "and `hermes-memory sessions recover` salvages the readable rows into a new file "
            "when more than the indexes is damaged."
        )
    return ""


def connect(path: Path, *, read_only: bool) -> tuple[sqlite3.Connection, bool]:
    """A connection to *path*, and whether the file was created by opening it."""
    kind = not_a_regular_file(path)
    if kind is not None:
        raise SessionStoreError(
            f"{path} is {kind}, not a regular file, so it cannot hold a session "
            "database. Point --db (or HERMES_HOME) at the path of a regular file."
        )
    if read_only and not path.is_file():
        raise SessionStoreError(
            f"No session database at {path}. Check the path (--db or HERMES_HOME)."
        )
    if not read_only:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SessionStoreError(
                f"Cannot create the folder for {path}: {exc}. "
                "Point HERMES_HOME (or --db) at a writable folder."
            ) from exc
    created = not path.exists()
    try:
        conn = open_connection(path, read_only=read_only)
    except sqlite3.Error as exc:
        text = str(exc).lower()
        if "not a database" in text or "malformed" in text:
            hint = (
                "It is not an intact SQLite database: check the path (--db or "
                "HERMES_HOME), or move the file aside and restore a backup."
            )
        elif read_only:
            hint = "Check the path (--db or HERMES_HOME)."
        else:
            hint = (
                "The database and its folder must be writable (SQLite also writes "
                "-wal and -shm files beside it); fix the permissions or point HERMES_HOME "
                "elsewhere."
            )
        raise SessionStoreError(f"Cannot open {path}: {exc}. {hint}") from exc
    return conn, created


def prepare(
    conn: sqlite3.Connection,
    path: Path,
    writer: WriteLock,
    read_only: bool,
    progress: UpgradeProgress | None = None,
) -> Layout:
    """The layout of the opened file, brought up to date when it is writable: refuses
    another program's database, a Hermes Agent file opened for writing, and a newer
    schema; applies the schema and drains the CJK queue (reporting to *progress*)."""
    try:
        names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    except sqlite3.DatabaseError as exc:
        raise SessionStoreError(
            f"{path} is not a readable SQLite database ({exc}). "
            "Point --db / HERMES_HOME at a state.db, or move this file aside."
        ) from exc
    if read_only:
        if not names:
            raise SessionStoreError(
                f"{path} is empty (no tables), not a session database. Check the "
                "path (--db or HERMES_HOME)."
            )
        if not {"sessions", "messages"} <= names:
            raise SessionStoreError(
                f"{path} is a SQLite database but holds no Hermes sessions "
                "(no 'sessions' and 'messages' tables)."
            )
        return readable(inspect(conn, path), path)
    layout = inspect(conn, path) if names else None
    if layout is not None and not layout.ours:
        if not {"sessions", "messages"} <= names:
            raise SessionStoreError(
                f"{path} is another application's SQLite database; refusing to add "
                "session tables to it. Choose a different path."
            )
        readable(layout, path)
        raise SessionStoreError(
            f"{path} was written by Hermes Agent (schema version {layout.version}); "
            "hermes-memory opens such files read-only (`hermes-memory sessions "
            "list/search/show --db`, or SessionStore(path, read_only=True)). To record "
            "sessions, point HERMES_HOME (or --db) at another folder."
        )
    if layout is not None:
        readable(layout, path)
    if layout is not None and layout.version > SCHEMA_VERSION:
        raise SessionStoreError(
            f"{path} was written by a newer hermes-memory (schema version "
            f"{layout.version}; this one knows up to {SCHEMA_VERSION}), so this version "
            "only reads it (read_only=True) and never downgrades it. Upgrade "
            "hermes-memory to write to it."
        )
    _with_busy_retry(path, lambda: enable_wal(conn))
    if layout is None or layout.version != SCHEMA_VERSION:
        try:
            writer.run(apply_schema)
        except sqlite3.DatabaseError as exc:
            raise SessionStoreError(f"Cannot prepare {path}: {exc}.{damage_hint(exc)}") from exc
        layout = inspect(conn, path)
    try:
        queued = layout.has_pending_grams and (
            conn.execute("SELECT 1 FROM messages_cjk_pending LIMIT 1").fetchone() is not None
        )
        if queued:  # rows another program wrote, or an upgrade queued; tokenise them now
            drain_in_batches(conn, path, writer, progress)
    except sqlite3.DatabaseError as exc:
        if is_busy(exc):
            raise SessionStoreError(f"Cannot prepare {path}: {exc}") from exc
        # Damage in the queue: the next write reports it, and check/repair still open.
        log.debug("Left the CJK queue of %s for later: %s", path, exc)
    return layout


GRAM_BATCH = 5_000
"""Queued rows tokenised per write transaction when a store opens (an upgrade queues all)."""
GRAM_PAUSE = 0.15
"""Seconds the write lock is left free between two batches: longer than a waiting
writer's longest sleep between tries (SQLite's busy handler: 100 ms), so an agent's
append waits one batch at most, not the whole upgrade."""


def drain_in_batches(
    conn: sqlite3.Connection,
    path: Path,
    writer: WriteLock,
    progress: UpgradeProgress | None = None,
) -> int:
    """Tokenise the CJK queue, :data:`GRAM_BATCH` rows per write transaction.

    Each batch commits on its own, so an interrupted run (a killed process, a crash)
    leaves the rest queued, still found by search, for the next opening to finish;
    another process opening the file meanwhile drains batches in turn under the same
    write lock, and a writer, let in between batches (:data:`GRAM_PAUSE`), takes only
    its own rows and a few more (:data:`~hermes_core.sessions.gramqueue.WRITE_BACKLOG`).
    *progress* gets (rows tokenised, rows queued) after each batch, counting every
    process's batches. A queue of several batches (version 7 re-tokenises every CJK
    row) logs its progress and ends by merging the gram index's segments. Returns the
    rows this call took off the queue.
    """
    total = queued_gram_rows(conn)
    done = 0
    if progress is not None and total:
        progress(0, total)

    def batch(c: sqlite3.Connection) -> tuple[int, int]:
        return drain_gram_queue(c, GRAM_BATCH), queued_gram_rows(c)

    while True:
        taken, left = writer.run(batch)
        if not taken:
            break
        done += taken
        total = max(total, done + left)  # rows queued meanwhile by another program
        if progress is not None:
            progress(total - left, total)
        if total > GRAM_BATCH:
            log.info(
                "Indexing the CJK text of %s for search: %d of %d messages",
                path,
                total - left,
                total,
            )
        if left:
            time.sleep(GRAM_PAUSE)  # a process waiting to write goes first
    if done > GRAM_BATCH:
        log.info("Merging the CJK index of %s", path)
        writer.run(
            lambda c: c.execute(
                "INSERT INTO messages_cjk_grams(messages_cjk_grams) VALUES ('optimize')"
            )
        )
    return done


def readable(layout: Layout, path: Path) -> Layout:
    """*layout*, unless the file lacks what every session reader needs."""
    if layout.problems:
        raise SessionStoreError(
            f"{path} is corrupt or not a session database: "
            f"{'; '.join(layout.problems)}. Check the path (--db or HERMES_HOME); if it is "
            "your state.db, restore it from a backup or move it aside to start afresh."
        )
    return layout


def _with_busy_retry(path: Path, fn: Callable[[], T]) -> T:
    deadline = time.monotonic() + 30.0
    while True:
        try:
            return fn()
        except sqlite3.OperationalError as exc:
            if not is_busy(exc) or time.monotonic() > deadline:
                raise SessionStoreError(f"Cannot prepare {path}: {exc}") from exc
            time.sleep(0.05)


def inspect(conn: sqlite3.Connection, path: Path) -> Layout:
    """The layout of *conn*'s file; damage that stops reading it raises SessionStoreError."""
    try:
        return inspect_layout(conn)
    except sqlite3.DatabaseError as exc:
        raise SessionStoreError(f"{path} is damaged or unreadable: {exc}") from exc
