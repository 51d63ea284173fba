"""``MEMORY.md`` / ``USER.md`` kept in PostgreSQL instead of files (``memory.url``).

For gateway processes on several machines: each memory document is one row of
``memory_documents`` keyed by its owner (the user id, ``""`` for the
single-user documents) and target (``memory`` / ``user``). The store's safety
steps stay the same (:class:`~hermes_memory_builtin.store.MemoryStore`): a
change re-reads the document under a row lock (``SELECT … FOR UPDATE``), is
scanned and budget-checked, and is saved in the same transaction, so two
writers on any machines never lose each other's entries and a batch is saved
whole or not at all. The prompt snapshot is still taken once per session.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from hermes_core.config import cfg_get
from hermes_core.errors import ConfigError, MemoryStoreError
from hermes_memory_builtin.files import FileRead
from hermes_memory_builtin.memory_schema import migrate

__all__ = ["MEMORY_URL_ENV", "PostgresDocuments", "memory_url"]

MEMORY_URL_ENV = "HERMES_MEMORY_URL"


def memory_url(config: Mapping[str, Any] | None) -> str | None:
    """``$HERMES_MEMORY_URL``, else ``memory.url`` in config.yaml: where the documents live
    (``None``: the files under ``memories/``)."""
    value = os.environ.get(MEMORY_URL_ENV) or cfg_get(config, "memory.url")
    if value in (None, ""):
        return None
    from hermes_core.sessions.postgres import is_postgres_url, masked_url

    if not is_postgres_url(value):
        shown = masked_url(value) if isinstance(value, str) else repr(value)
        raise ConfigError(
            f"memory.url (or {MEMORY_URL_ENV}) is {shown[:80]}, not a PostgreSQL URL; give "
            "postgresql://user:password@host:5432/database, or remove it to keep the files."
        )
    return str(value)


class PostgresDocuments:
    """The memory documents of *owner* in the database at *url*."""

    def __init__(self, url: str, owner: str = "") -> None:
        from hermes_core.sessions.postgres import masked_url

        try:
            import psycopg
        except ImportError as exc:
            raise ConfigError(
                "memory.url needs psycopg 3: pip install 'hermes-memory-core[postgres]'."
            ) from exc
        self._psycopg = psycopg
        self._url = url
        self.where = masked_url(url)
        self.owner = owner
        self._mutex = threading.RLock()
        self._conn: Any = None
        self._pid = os.getpid()
        try:
            with self.connection() as conn:
                migrate(conn)
        except RuntimeError as exc:
            raise MemoryStoreError(f"Cannot use the memory database {self.where}: {exc}.") from exc
        except psycopg.Error as exc:
            raise MemoryStoreError(
                f"Cannot use the memory database {self.where}: {_first_line(exc)}. Check that "
                "the server runs, or fix memory.url / HERMES_MEMORY_URL."
            ) from exc

    @contextmanager
    def connection(self) -> Iterator[Any]:
        """This store's one connection (autocommit; opened on first use, again after a
        fork or a failure), held by one thread at a time; re-entrant, so a read inside
        :meth:`locked` sees the locked row."""
        with self._mutex:
            conn = self._conn
            if conn is not None and (conn.closed or self._pid != os.getpid()):
                conn = None
            if conn is not None:
                try:
                    if not conn.info.transaction_status:  # idle: check that it still works
                        conn.execute("SELECT 1")
                except self._psycopg.Error:
                    conn = None
            if conn is None:
                conn = self._psycopg.connect(self._url, connect_timeout=10, autocommit=True)
                self._conn, self._pid = conn, os.getpid()
            try:
                yield conn
            except self._psycopg.OperationalError:
                self.close()  # the next use connects again
                raise

    @contextmanager
    def guarded(self) -> Iterator[Any]:
        """:meth:`connection`, with a database failure raised as a MemoryStoreError that
        names the database (password masked)."""
        try:
            with self.connection() as conn:
                yield conn
        except self._psycopg.Error as exc:
            raise MemoryStoreError(
                f"The memory database {self.where} failed: {_first_line(exc)}. Retry in a moment."
            ) from exc

    def close(self) -> None:
        """Close the connection (the next use opens a new one)."""
        with self._mutex:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None

    def read(self, target: str) -> FileRead:
        """The document as it is now (an absent one reads as empty)."""
        try:
            with self.connection() as conn:
                row = conn.execute(
                    "SELECT body FROM memory_documents WHERE owner = %s AND target = %s",
                    (self.owner, target),
                ).fetchone()
        except self._psycopg.Error as exc:
            return FileRead(text="", exists=True, error=f"the memory database failed: {exc}")
        return FileRead(text=row[0] if row else "", exists=row is not None)

    @contextmanager
    def locked(self, target: str) -> Iterator[tuple[FileRead, Callable[[str], None]]]:
        """The document read under its row lock, and a function saving a new text in the same
        transaction (committed when the block ends, rolled back if it raises or saved
        nothing, so a refused change leaves no trace, not even an empty row)."""
        saved = False
        try:
            with self.connection() as conn, conn.transaction():
                conn.execute(
                    "INSERT INTO memory_documents(owner, target) VALUES (%s, %s) "
                    "ON CONFLICT DO NOTHING",
                    (self.owner, target),
                )
                body = conn.execute(
                    "SELECT body FROM memory_documents WHERE owner = %s AND target = %s FOR UPDATE",
                    (self.owner, target),
                ).fetchone()[0]

                def save(text: str) -> None:
                    nonlocal saved
                    saved = True
                    conn.execute(
                        "UPDATE memory_documents SET body = %s, updated_at = now() "
                        "WHERE owner = %s AND target = %s",
                        (text, self.owner, target),
                    )

                yield FileRead(text=body, exists=True), save
                if not saved:
                    raise self._psycopg.Rollback()
        except self._psycopg.Error as exc:
            raise MemoryStoreError(
                f"The memory database {self.where} failed: {exc}. Nothing was changed; retry."
            ) from exc


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else repr(exc)
