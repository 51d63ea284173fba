"""Migration 6's trigram index of ``search_text`` (``pg_trgm``), built without holding writers.

The index only speeds substring searches (``ILIKE``): without it they read every message
and find the same rows. A plain ``CREATE INDEX`` takes a SHARE lock until its transaction
commits, so writers would wait for the whole build (seconds per ten thousand messages).
Migration 6 therefore builds it in place only while ``messages`` is empty (a new store); in
a store holding messages it creates the extension and leaves a marker in ``state_meta``
(:data:`MARKER`), and the writable store that opens next builds the index with
``CREATE INDEX CONCURRENTLY`` outside any transaction, after migration 4's backfill and
under the same advisory lock (:func:`~hermes_core.sessions.pgbackfill.store_lock`): appends
and searches go on meanwhile. A build killed half-way leaves an INVALID index
(``pg_index.indisvalid``) that the planner ignores but writes still maintain; the next
writable opening drops it (concurrently too) and builds it again. ``sessions repair`` takes
the same path (:func:`build_trigram_index` with ``again``): it marks the index to build in its
rewrite's transaction and then drops and builds it concurrently, so a repair cut short leaves
the marker (or an invalid index) for the next repair or writable opening.

A build reports its progress as PostgreSQL's ``pg_stat_progress_create_index`` shows it
(:mod:`~hermes_core.sessions.pgprogress`): (blocks done, blocks in all).
"""

from __future__ import annotations

import logging
from typing import Any

from hermes_core.errors import first_line
from hermes_core.sessions.opening import UpgradeProgress
from hermes_core.sessions.pgbackfill import store_lock
from hermes_core.sessions.pgprogress import run_watched

__all__ = [
    "MARKER",
    "TRIGRAM_INDEX",
    "build_trigram_index",
    "index_left",
    "index_state",
    "mark_for_rebuild",
    "queue_trigram_index",
    "trigram_index",
]

log = logging.getLogger(__name__)

TRIGRAM_INDEX = "messages_trgm"
"""The trigram index of ``search_text`` (``pg_trgm``): substring searches (``ILIKE``) look it up."""
MARKER = "trigram_index"
"""The ``state_meta`` key saying the trigram index is still to build (concurrently)."""

_TRGM_SCHEMA = (
    "SELECT n.nspname FROM pg_extension AS e JOIN pg_namespace AS n ON n.oid = e.extnamespace "
    "WHERE e.extname = 'pg_trgm'"
)


def _trigram_schema(conn: Any) -> str | None:
    """The schema of the ``pg_trgm`` extension, created if the database lacks it (in
    ``public``, else in the store's own schema); ``None`` when it cannot be created."""
    import psycopg

    found = conn.execute(_TRGM_SCHEMA).fetchone()
    if found is not None:
        return str(found[0])
    reason = ""
    for create in (
        "CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public",
        "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    ):
        try:
            with conn.transaction():  # a savepoint: a refusal leaves the migration going
                conn.execute(create)
        except psycopg.Error as exc:  # the extension is missing, or this user may not add it
            reason = first_line(exc)
            continue
        found = conn.execute(_TRGM_SCHEMA).fetchone()
        return None if found is None else str(found[0])
    log.warning(
        "The session store has no trigram index: %s. Substring searches (a question's "
        "word no message holds) read every message. Install PostgreSQL's contrib package "
        "and run `CREATE EXTENSION pg_trgm` as a user allowed to, then "
        "`hermes-memory sessions repair`.",
        reason,
    )
    return None


def _create(schema: str, *, concurrently: bool) -> str:
    opclass = '"' + schema.replace('"', '""') + '".gin_trgm_ops'
    how = "CONCURRENTLY " if concurrently else ""
    return f"CREATE INDEX {how}{TRIGRAM_INDEX} ON messages USING GIN (search_text {opclass})"


def index_state(conn: Any) -> str | None:
    """``"valid"``, ``"invalid"`` (a concurrent build killed half-way, or one running now) or
    ``None`` (no such index) for the trigram index of *conn*'s store."""
    row = conn.execute(
        "SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass(%s)", (TRIGRAM_INDEX,)
    ).fetchone()
    return None if row is None else "valid" if row[0] else "invalid"


def _set_marker(conn: Any, wanted: bool) -> None:
    if wanted:
        conn.execute(
            "INSERT INTO state_meta(key, value) VALUES (%s, 'wanted') ON CONFLICT (key) DO NOTHING",
            (MARKER,),
        )
    else:
        conn.execute("DELETE FROM state_meta WHERE key = %s", (MARKER,))


def trigram_index(conn: Any) -> bool:
    """Create the trigram index of ``search_text`` in *conn*'s transaction when missing or
    invalid (migration 6 in a store without messages, where it takes no time); ``False`` when
    ``pg_trgm`` cannot be had (a warning says what to do: substring searches then read every
    message, as before)."""
    state = index_state(conn)
    if state == "valid":
        _set_marker(conn, False)
        return True
    if state == "invalid":
        conn.execute(f"DROP INDEX {TRIGRAM_INDEX}")
    schema = _trigram_schema(conn)
    if schema is not None:
        conn.execute(_create(schema, concurrently=False))
    _set_marker(conn, False)
    return schema is not None


def queue_trigram_index(conn: Any) -> None:
    """Migration 6 (in its transaction): the index at once in a store without messages, else
    ``pg_trgm`` created and the index left to :func:`build_trigram_index`."""
    if conn.execute("SELECT NOT EXISTS (SELECT 1 FROM messages)").fetchone()[0]:
        trigram_index(conn)
    elif _trigram_schema(conn) is not None:
        _set_marker(conn, True)


def index_left(conn: Any) -> bool:
    """Whether the trigram index is still to build by :func:`build_trigram_index` (migration 6's
    marker, or a killed build's invalid index)."""
    marked = conn.execute("SELECT 1 FROM state_meta WHERE key = %s", (MARKER,)).fetchone()
    return marked is not None or index_state(conn) == "invalid"


def mark_for_rebuild(conn: Any) -> None:
    """Mark the trigram index as to build again (``sessions repair``, in its transaction):
    :func:`build_trigram_index` with ``again`` then drops and builds it concurrently, and a
    repair cut short before that leaves it to the next writable opening."""
    _set_marker(conn, True)


def build_trigram_index(
    conn: Any, progress: UpgradeProgress | None = None, *, where: str = "", again: bool = False
) -> bool:
    """Build the trigram index migration 6 left (or a killed build's invalid one again) with
    ``CREATE INDEX CONCURRENTLY`` on *conn* (outside a transaction; writers go on); returns
    whether this call built it. With *again* (``sessions repair``), the index is dropped and
    built again whatever its state (an opening meanwhile may have taken the marker of
    :func:`mark_for_rebuild`, finding the old index valid). Otherwise it does nothing when
    nothing is left, or when another process holds the store's lock (that one builds it), and
    only warns when the build fails (the store works on without the index; the next writable
    opening tries again). *progress* gets (blocks done, blocks in all) while it builds
    (:func:`~hermes_core.sessions.pgprogress.run_watched`); *where* names the store in logs."""
    wanted = again or index_left(conn)
    conn.commit()
    if not wanted:
        return False
    with store_lock(conn) as got:
        if not got:
            log.info(
                "Another process is finishing the migration of %s; leaving it to that one", where
            )
            return False
        if not again and not index_left(conn):  # built meanwhile by the lock's last holder
            conn.commit()
            return False
        state = index_state(conn)
        schema = None if state == "valid" and not again else _trigram_schema(conn)
        conn.commit()
        if schema is not None:
            log.info("Building the trigram index of %s (writers go on meanwhile)", where)
            if not _build(conn, schema, drop=state is not None, where=where, progress=progress):
                return False
        with conn.transaction():
            _set_marker(conn, False)
        if schema is not None:
            with conn.transaction():
                conn.execute("ANALYZE messages")
        return schema is not None


def _build(
    conn: Any, schema: str, *, drop: bool, where: str, progress: UpgradeProgress | None
) -> bool:
    """``CREATE INDEX CONCURRENTLY`` (after dropping the index there is, a killed build's or
    the one a repair builds again, when *drop*), with no statement or lock timeout of the role
    cutting it short; ``False`` (and a warning) when it fails, leaving the marker for the next
    opening."""
    import psycopg

    autocommit = conn.autocommit
    conn.autocommit = True  # CONCURRENTLY runs outside a transaction block
    try:
        conn.execute("SET statement_timeout = 0")
        conn.execute("SET lock_timeout = 0")
        if drop:
            conn.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {TRIGRAM_INDEX}")
        if progress is None:
            conn.execute(_create(schema, concurrently=True))
        else:
            run_watched(conn, _create(schema, concurrently=True), progress)
        return True
    except psycopg.Error as exc:
        log.warning(
            "Could not build the trigram index of %s: %s. Substring searches read every "
            "message (finding the same ones) until a writable opening builds it.",
            where,
            first_line(exc),
        )
        return False
    finally:
        if not conn.broken:
            conn.execute("RESET statement_timeout")
            conn.execute("RESET lock_timeout")
            conn.autocommit = autocommit
