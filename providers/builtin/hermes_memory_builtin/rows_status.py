"""What a PostgreSQL memory store (``memory.url``) holds, read without changing anything:
its schema's migrations, each document's size, held writes and archived entries
(what ``hermes-memory doctor`` reports)."""

from __future__ import annotations

from dataclasses import dataclass

from hermes_core.pgmigrate import applied_migrations
from hermes_memory_builtin.entries import dedupe, parse_entries, total_chars
from hermes_memory_builtin.memory_schema import MEMORY_SCHEMA_VERSION

__all__ = ["MIGRATIONS_TABLE", "DocumentSize", "MemoryRowsStatus", "memory_rows_status"]

MIGRATIONS_TABLE = "memory_schema_migrations"


@dataclass(frozen=True)
class DocumentSize:
    """One document's prompt-tier size, as the budgets count it (entries, duplicates once)."""

    owner: str
    """The user id (``""``: the single-user memory)."""
    target: str
    chars: int


@dataclass(frozen=True)
class MemoryRowsStatus:
    """The state of the memory tables of one database."""

    url: str
    """The database, password masked."""
    applied: tuple[int, ...]
    known: int
    documents: tuple[DocumentSize, ...]
    held: int
    archived: int

    @property
    def version(self) -> int:
        """The memory schema version the database is at (0: not created yet)."""
        return max(self.applied, default=0)


def memory_rows_status(url: str, *, connect_timeout: float = 5.0) -> MemoryRowsStatus:
    """Read the memory tables of the database at *url* in one read-only transaction.

    Raises :class:`~hermes_core.errors.SessionStoreUnavailableError` (naming the URL,
    password masked) when the server does not answer.
    """
    from hermes_core.sessions.pgmaintenance import open_connection
    from hermes_core.sessions.postgres import masked_url

    conn = open_connection(
        url,
        connect_timeout=connect_timeout,
        what="the memory database",
        setting="memory.url / HERMES_MEMORY_URL",
    )
    try:
        conn.read_only = True
        applied = applied_migrations(conn, MIGRATIONS_TABLE)
        documents: tuple[DocumentSize, ...] = ()
        held = archived = 0
        if applied:
            rows = conn.execute(
                "SELECT owner, target, body FROM memory_documents ORDER BY owner, target"
            ).fetchall()
            documents = tuple(
                DocumentSize(owner, target, total_chars(dedupe(parse_entries(body))))
                for owner, target, body in rows
            )
            if max(applied) >= 2:
                held = int(conn.execute("SELECT count(*) FROM memory_held").fetchone()[0])
            if max(applied) >= 3:
                archived = int(conn.execute("SELECT count(*) FROM memory_archived").fetchone()[0])
        return MemoryRowsStatus(
            url=masked_url(url),
            applied=applied,
            known=MEMORY_SCHEMA_VERSION,
            documents=documents,
            held=held,
            archived=archived,
        )
    finally:
        conn.close()
