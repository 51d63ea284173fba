"""Migration 4's backfill: the Porter stems of the messages stored before it, a batch at a time.

Migration 4 itself is short (a column added, a trigger in place of two generated columns,
:mod:`~hermes_core.sessions.pgschema`), so the table is locked for moments, not for the
whole store. It leaves a marker in ``state_meta`` (:data:`MARKER`: the last id stemmed and
the last id to stem); the writable store that opens next stems the rows after it,
:data:`BATCH` per transaction, each batch locking only its own rows and moving the marker in
the same commit. Appends, searches and other processes opening the store go on meanwhile
(a row not stemmed yet is found by its Snowball stems, as an older build's row); a killed
run leaves the marker where its last commit put it, and the next opening goes on from
there, so no row is stemmed twice or skipped. One process stems at a time (a session
advisory lock per store); another opening meanwhile leaves the work to it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from hermes_core.sessions.opening import UpgradeProgress
from hermes_core.sessions.porter import index_stems

__all__ = ["BATCH", "MARKER", "backfill_stems", "queue_backfill", "rows_left", "store_lock"]

log = logging.getLogger(__name__)

BATCH = 5_000
"""Messages stemmed per transaction."""
MARKER = "stems_backfill"
"""The ``state_meta`` key of a backfill not finished: ``"<last id stemmed> <last id to stem>"``."""

_LOCK_KEY = 0x5354454D  # "STEM", with the messages table's oid: one finisher per store
_LOCK_ARGS = "%s, ('messages'::regclass::oid::bigint - 2147483648)::int"


@contextmanager
def store_lock(conn: Any) -> Iterator[bool]:
    """The store's session advisory lock for what migrations leave to do (this backfill,
    :mod:`~hermes_core.sessions.pgtrigram`'s index), if free: yields whether it was had; *conn*
    is outside a transaction before and after."""
    got = bool(
        conn.execute(f"SELECT pg_try_advisory_lock({_LOCK_ARGS})", (_LOCK_KEY,)).fetchone()[0]
    )
    conn.commit()
    try:
        yield got
    finally:
        if got and not conn.broken:  # a lost connection has released the lock already
            conn.rollback()  # what failed, if anything did
            conn.execute(f"SELECT pg_advisory_unlock({_LOCK_ARGS})", (_LOCK_KEY,))
            conn.commit()


def queue_backfill(conn: Any) -> None:
    """Mark every message stored so far as to be stemmed (migration 4, in its transaction)."""
    last = conn.execute("SELECT max(id) FROM messages").fetchone()[0]
    if last is not None:
        conn.execute(
            "INSERT INTO state_meta(key, value) VALUES (%s, %s) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (MARKER, f"0 {int(last)}"),
        )


def _marker(conn: Any, *, lock: bool = False) -> tuple[int, int] | None:
    row = conn.execute(
        "SELECT value FROM state_meta WHERE key = %s" + (" FOR UPDATE" if lock else ""),
        (MARKER,),
    ).fetchone()
    if row is None:
        return None
    done, last = row[0].split()
    return int(done), int(last)


def rows_left(conn: Any) -> int:
    """Messages migration 4 has still to stem (0: none, or the backfill is done)."""
    mark = _marker(conn)
    if mark is None:
        return 0
    return int(
        conn.execute(
            "SELECT count(*) FROM messages WHERE id > %s AND id <= %s AND stems IS NULL", mark
        ).fetchone()[0]
    )


def backfill_stems(conn: Any, progress: UpgradeProgress | None = None, *, where: str = "") -> int:
    """Stem the messages migration 4 left, :data:`BATCH` per committed transaction, on
    *conn* (outside a transaction); returns the rows this call stemmed.

    *progress* gets (rows stemmed, rows to stem): ``0`` before the first batch, then after
    each, as for ``state.db``'s upgrade. Does nothing when no backfill is left, or when
    another process is running it (that one finishes it). *where* names the store in logs.
    """
    if _marker(conn) is None:
        conn.commit()
        return 0
    with store_lock(conn) as got:
        if not got:
            log.info(
                "Another process is stemming the messages of %s; leaving it to that one", where
            )
            return 0
        total = rows_left(conn)
        conn.commit()
        if progress is not None and total:
            progress(0, total)
        done = 0
        while True:
            with conn.transaction():
                taken = _batch(conn)
            if taken is None:
                break
            done += taken
            total = max(total, done)
            if progress is not None:
                progress(done, total)
            if total > BATCH:
                log.info("Stemming the messages of %s for search: %d of %d", where, done, total)
        if progress is not None and total != done:  # rows deleted meanwhile
            progress(done, done)
        with conn.transaction():
            conn.execute("ANALYZE messages")
        return done


def _batch(conn: Any) -> int | None:
    """Stem the next batch and move the marker past it (inside a transaction); ``None``
    when nothing was left (the marker is then removed)."""
    mark = _marker(conn, lock=True)
    if mark is None:
        return None
    done, last = mark
    rows = conn.execute(
        "SELECT id, COALESCE(search_text, '') FROM messages "
        "WHERE id > %s AND id <= %s AND stems IS NULL ORDER BY id LIMIT %s FOR UPDATE",
        (done, last, BATCH),
    ).fetchall()
    if not rows:
        conn.execute("DELETE FROM state_meta WHERE key = %s", (MARKER,))
        return None
    conn.execute(
        "UPDATE messages AS m SET stems = u.stems "
        "FROM unnest(%s::bigint[], %s::text[]) AS u(id, stems) WHERE m.id = u.id",
        ([row[0] for row in rows], index_stems([row[1] for row in rows])),
    )
    conn.execute(
        "UPDATE state_meta SET value = %s WHERE key = %s", (f"{rows[-1][0]} {last}", MARKER)
    )
    return len(rows)
