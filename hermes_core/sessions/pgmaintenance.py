"""Looking after a PostgreSQL session store: its schema's state, a rebuilt search index,
and a consistent copy into a ``state.db`` file (what ``hermes-memory backup`` archives).

PostgreSQL keeps its own integrity (no ``sessions recover`` there); what can go
stale is derived data: ``search_text``, ``cjk_grams`` and ``stems`` (what the
``tsvector`` is made of), written by the store at append time. :func:`rebuild_search` makes
them again from each message with this build's code in one transaction, then rebuilds the
GIN index with ``REINDEX INDEX CONCURRENTLY`` and the trigram index as migration 6 builds it
(:mod:`~hermes_core.sessions.pgtrigram`; creating it where ``pg_trgm`` can now be had), both
outside any transaction, so writers go on.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from hermes_core.errors import SessionStoreError, SessionStoreUnavailableError, first_line
from hermes_core.pgmigrate import applied_migrations
from hermes_core.sessions.opening import UpgradeProgress
from hermes_core.sessions.pgbackfill import rows_left
from hermes_core.sessions.pgindexes import IndexFinding, index_findings
from hermes_core.sessions.pgprogress import run_watched

__all__ = [
    "IndexProgress",
    "SchemaStatus",
    "copy_to_sqlite",
    "open_connection",
    "rebuild_search",
    "schema_status",
]

log = logging.getLogger(__name__)

BATCH = 2_000
_TSV_INDEX = "CREATE INDEX CONCURRENTLY IF NOT EXISTS messages_tsv ON messages USING GIN (tsv)"


@dataclass(frozen=True)
class SchemaStatus:
    """What a PostgreSQL database holds of the session store's schema."""

    url: str
    """The database, password masked."""
    applied: tuple[int, ...]
    """The migrations ``hermes_schema_migrations`` records, in order (empty: none yet)."""
    known: int
    """The newest schema version this build knows."""
    tables: bool
    """Whether ``sessions`` and ``messages`` exist."""
    indexes: tuple[IndexFinding, ...] = ()
    """What is wrong with the search indexes (:mod:`~hermes_core.sessions.pgindexes`)."""
    stems_left: int = 0
    """Messages migration 4 has still to stem (:mod:`~hermes_core.sessions.pgbackfill`)."""

    @property
    def version(self) -> int:
        """The schema version the database is at (0: not created yet)."""
        return max(self.applied, default=0)


def open_connection(
    url: str,
    *,
    connect_timeout: float = 5.0,
    what: str = "the session database",
    setting: str = "sessions.url / HERMES_SESSIONS_URL",
) -> Any:
    """A connection to *url* for looking at a store; a refusal is one
    :class:`SessionStoreUnavailableError` naming *what* at the URL (password masked) and
    the *setting* to fix."""
    from hermes_core.sessions.postgres import _load_psycopg, connect_kwargs, masked_url

    psycopg, _ = _load_psycopg()
    try:
        return psycopg.connect(url, **connect_kwargs(url, connect_timeout))
    except psycopg.Error as exc:
        first = first_line(exc)
        raise SessionStoreUnavailableError(
            f"Cannot connect to {what} {masked_url(url)}: {first}. Check that "
            f"the server runs and accepts this user, or fix {setting}."
        ) from exc


def schema_status(url: str, *, connect_timeout: float = 5.0) -> SchemaStatus:
    """Read the schema's state of the database at *url* (nothing is created or changed)."""
    from hermes_core.sessions.pgschema import PG_SCHEMA_VERSION
    from hermes_core.sessions.postgres import masked_url

    conn = open_connection(url, connect_timeout=connect_timeout)
    try:
        conn.read_only = True

        def exists(name: str) -> bool:
            return conn.execute("SELECT to_regclass(%s)", (name,)).fetchone()[0] is not None

        return SchemaStatus(
            url=masked_url(url),
            applied=applied_migrations(conn, "hermes_schema_migrations"),
            known=PG_SCHEMA_VERSION,
            tables=exists("sessions") and exists("messages"),
            indexes=tuple(index_findings(conn)),
            stems_left=rows_left(conn) if exists("state_meta") and exists("messages") else 0,
        )
    finally:
        conn.close()


IndexProgress = Callable[[str, int, int], None]
"""Called with (index, blocks done, blocks in all) while :func:`rebuild_search` builds an
index concurrently (:func:`~hermes_core.sessions.pgprogress.run_watched`): ``messages_tsv``
first, then ``messages_trgm``, each from ``0``."""

_LEFTOVERS = r"""
SELECT c.relname FROM pg_index AS i JOIN pg_class AS c ON c.oid = i.indexrelid
WHERE i.indrelid = 'messages'::regclass AND NOT i.indisvalid
    AND (c.relname = 'messages_tsv' OR c.relname LIKE 'messages\_tsv\_cc%'
        OR c.relname LIKE 'messages\_trgm\_cc%')
"""
"""The invalid indexes a concurrent rebuild of ``messages_tsv`` cut short leaves (the new copy
``messages_tsv_ccnew``, the old one ``_ccold`` during the swap, or the index itself), and the
copies a ``REINDEX CONCURRENTLY`` of ``messages_trgm`` by hand left (the trigram index itself
its own build drops)."""


def rebuild_search(store: Any, progress: IndexProgress | None = None) -> dict[str, int]:
    """Write every message's search text, CJK grams and stems of the PostgreSQL *store* again, in
    one transaction (all or nothing; appends go on, as they touch other rows), then rebuild its
    full-text index with ``REINDEX INDEX CONCURRENTLY`` and its trigram index with ``CREATE
    INDEX CONCURRENTLY`` (writers go on; *progress* sees each build). Returns
    ``{"messages_tsv": rows}``, with ``"messages_trgm": rows`` when the trigram index was
    built (not when ``pg_trgm`` cannot be had, its build failed, or another process holding
    the store's lock builds it: warnings say which). A rebuild cut short leaves an invalid
    index: the next repair drops it and builds again (the trigram index, the next writable
    opening too)."""
    from hermes_core.sessions.pgtrigram import TRIGRAM_INDEX, build_trigram_index

    if store.read_only:
        raise SessionStoreError(f"{store.path} is open read-only; its index is not rebuilt.")
    counts: dict[str, int] = store._write(_rebuild)
    with closing(open_connection(store.url)) as conn:  # a build's end may end its connection
        _reindex(conn, None if progress is None else partial(progress, "messages_tsv"), store.path)
    trigrams = None if progress is None else partial(progress, TRIGRAM_INDEX)
    with closing(open_connection(store.url)) as conn:
        if build_trigram_index(conn, trigrams, where=store.path, again=True):
            counts[TRIGRAM_INDEX] = counts["messages_tsv"]
    return counts


def _reindex(conn: Any, progress: UpgradeProgress | None, where: str) -> None:
    """Rebuild ``messages_tsv`` concurrently on *conn* (outside a transaction), after dropping
    what a rebuild cut short left; creates it (concurrently too) where it is missing. A failure
    is a warning: searches use the index as it was."""
    import psycopg

    conn.commit()
    autocommit = conn.autocommit
    conn.autocommit = True  # CONCURRENTLY runs outside a transaction block
    try:
        conn.execute("SET statement_timeout = 0")
        conn.execute("SET lock_timeout = 0")
        for (name,) in conn.execute(_LEFTOVERS).fetchall():
            conn.execute(f'DROP INDEX CONCURRENTLY IF EXISTS "{name}"')
        missing = conn.execute("SELECT to_regclass('messages_tsv')").fetchone()[0] is None
        statement = _TSV_INDEX if missing else "REINDEX INDEX CONCURRENTLY messages_tsv"
        if progress is None:
            conn.execute(statement)
        else:
            run_watched(conn, statement, progress)
    except psycopg.Error as exc:
        log.warning(
            "Could not rebuild the full-text index of %s: %s. Searches use it as it was; run "
            "`hermes-memory sessions repair` again.",
            where,
            first_line(exc),
        )
    finally:
        if not conn.broken:
            conn.execute("RESET statement_timeout")
            conn.execute("RESET lock_timeout")
            conn.autocommit = autocommit


def _rebuild(conn: Any) -> dict[str, int]:
    from hermes_core.sessions.pgtrigram import mark_for_rebuild
    from hermes_core.sessions.postgres import _search_text, search_columns

    count = 0
    last = 0
    while True:
        rows = conn.execute(
            "SELECT id, content, tool_name, name, tool_calls FROM messages WHERE id > %s "
            "ORDER BY id LIMIT %s",
            (last, BATCH),
        ).fetchall()
        if not rows:
            break
        searches = [_search_text(*row[1:]) for row in rows]
        updates = [
            (*columns, row[0]) for row, columns in zip(rows, search_columns(searches), strict=True)
        ]
        with conn.cursor() as cur:
            cur.executemany(
                "UPDATE messages SET search_text = %s, cjk_grams = %s, stems = %s WHERE id = %s",
                updates,
            )
        count += len(rows)
        last = rows[-1][0]
    # The indexes are rebuilt after this commit, concurrently; the trigram index is marked
    # here, so a repair cut short leaves it to the next writable opening too.
    mark_for_rebuild(conn)
    return {"messages_tsv": count}


class _Snapshot:
    """A reader of one REPEATABLE READ transaction, shaped as the migration code reads a store."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn

    def _read(self, fn: Any) -> Any:
        return fn(self._conn)


@contextmanager
def _snapshot(url: str) -> Iterator[_Snapshot]:
    from hermes_core.sessions.postgres import _load_psycopg, masked_url

    psycopg, _ = _load_psycopg()
    conn = open_connection(url, connect_timeout=10.0)
    try:
        conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        conn.read_only = True
        with conn.transaction():
            if conn.execute("SELECT to_regclass('messages')").fetchone()[0] is None:
                raise SessionStoreError(f"{masked_url(url)} holds no session tables yet.")
            yield _Snapshot(conn)
    except psycopg.OperationalError as exc:
        raise SessionStoreUnavailableError(
            f"The session database {masked_url(url)} failed during the copy: {exc}"
        ) from exc
    finally:
        conn.close()


def copy_to_sqlite(url: str, path: str | os.PathLike[str]) -> tuple[int, int]:
    """Copy the whole PostgreSQL store at *url* into the new SQLite file *path*, as it was at
    one instant (one REPEATABLE READ transaction, while agents keep writing); returns
    (sessions, messages). The copy is verified: its counts are those read, and SQLite's
    check and each search index against the messages (``sessions check``) find nothing
    wrong. *path* must not exist."""
    from hermes_core.sessions.migration import _copy_to_sqlite
    from hermes_core.sessions.postgres import masked_url
    from hermes_core.sessions.store import SessionStore

    target = Path(path)
    if target.exists():
        raise SessionStoreError(f"{target} exists already; copy into a new file.")
    with _snapshot(url) as source, SessionStore(target, semantic="off") as copy:
        sessions, messages = _copy_to_sqlite(source, copy)
        counts = (copy.session_count(), copy.message_count())
        problems = copy.check()
        if counts != (sessions, messages) or problems:
            raise SessionStoreError(
                f"The copy of {masked_url(url)} does not verify: {counts[0]} sessions and "
                f"{counts[1]} messages of the {sessions} and {messages} read"
                + (f"; {'; '.join(problems)}" if problems else "")
                + ". Retry; report it if it happens again."
            )
        copy._truncate_wal()  # every page in the file itself
    return sessions, messages
