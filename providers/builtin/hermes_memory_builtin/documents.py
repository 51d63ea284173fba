"""``MEMORY.md`` / ``USER.md`` kept in PostgreSQL instead of files (``memory.url``).

For gateway processes on several machines: each memory document is one row of
``memory_documents`` keyed by its owner (the user id, ``""`` for the
single-user documents) and target (``memory`` / ``user``). The store's safety
steps stay the same (:class:`~hermes_memory_builtin.store.MemoryStore`): a
change re-reads the document under its locks (an advisory lock per document and
``SELECT … FOR UPDATE``), is scanned and budget-checked, and is saved in the same
transaction, so two writers on any machines never lose each other's entries and a
batch is saved whole or not at all. The prompt snapshot is still taken once per
session. Held writes (:mod:`~hermes_memory_builtin.held_rows`) and the archive
tier (:mod:`~hermes_memory_builtin.archive_rows`) use this store's connection, so
an archive move commits with its document. The tables are
:mod:`~hermes_memory_builtin.memory_schema`'s.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from hermes_core.config import cfg_get
from hermes_core.errors import ConfigError, MemoryStoreError
from hermes_memory_builtin.files import FileRead
from hermes_memory_builtin.memory_schema import migrate

__all__ = ["MEMORY_URL_ENV", "PostgresDocuments", "lock_owner", "memory_url"]

MEMORY_URL_ENV = "HERMES_MEMORY_URL"
_LOCK_SPACE = 0x484D4C4B  # "HMLK": the advisory locks of :meth:`PostgresDocuments.exclusive`
_inherited: list[Any] = []
"""Connections a forked child inherited: never used, never closed by the child."""


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
            if conn is not None and self._pid != os.getpid():
                # Opened before a fork: the parent's. Dropping it here would let libpq end
                # the parent's session on the shared socket, so it is kept, unused.
                _inherited.append(conn)
                conn = None
            if conn is not None and conn.closed:
                conn = None
            if conn is not None:
                try:
                    if not conn.info.transaction_status:  # idle: check that it still works
                        conn.execute("SELECT 1")
                except self._psycopg.Error:
                    conn = None
            if conn is None:
                from hermes_core.sessions.postgres import connect_kwargs

                conn = self._psycopg.connect(
                    self._url, autocommit=True, **connect_kwargs(self._url, 10)
                )
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

    @contextmanager
    def exclusive(self, name: str) -> Iterator[None]:
        """Hold the lock *name* of this owner across processes and machines (a PostgreSQL
        advisory lock; released at the end of the block, or by the server if the process
        dies). Threads of this process using this store wait meanwhile."""
        key = _exclusive_key(self.owner, name)
        with self.guarded() as conn:
            conn.execute("SELECT pg_advisory_lock(%s, hashtext(%s))", (_LOCK_SPACE, key))
            try:
                yield
            finally:
                conn.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))", (_LOCK_SPACE, key))

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
        return FileRead(text=_text(row), exists=row is not None)

    def raw(self, target: str) -> str | None:
        """The document's exact text (a BOM kept), ``None`` when there is no row; inside
        :meth:`locked`, the locked row."""
        with self.guarded() as conn:
            row = conn.execute(
                "SELECT body FROM memory_documents WHERE owner = %s AND target = %s",
                (self.owner, target),
            ).fetchone()
        return None if row is None else str(row[0])

    @contextmanager
    def locked(self, target: str) -> Iterator[tuple[FileRead, Callable[[str], None]]]:
        """The document read under its lock, and a function saving a new text in the same
        transaction (committed when the block ends, rolled back if it raises).

        Writers of one document take one advisory transaction lock (so they queue even
        while the row does not exist yet) and the row lock (``FOR UPDATE``, which also
        waits for a person's own ``UPDATE``). A refused change writes nothing, not even
        an empty row."""
        try:
            with self.connection() as conn, conn.transaction():
                conn.execute(
                    "SELECT pg_advisory_xact_lock(%s, hashtext(%s))",
                    (_LOCK_SPACE, _document_key(self.owner, target)),
                )
                row = conn.execute(
                    "SELECT body FROM memory_documents WHERE owner = %s AND target = %s FOR UPDATE",
                    (self.owner, target),
                ).fetchone()

                def save(text: str) -> None:
                    conn.execute(
                        "INSERT INTO memory_documents (owner, target, body) VALUES (%s, %s, %s) "
                        "ON CONFLICT (owner, target) DO UPDATE SET body = excluded.body, "
                        "updated_at = now()",
                        (self.owner, target, text),
                    )

                yield FileRead(text=_text(row), exists=row is not None), save
        except self._psycopg.Error as exc:
            raise MemoryStoreError(
                f"The memory database {self.where} failed: {_first_line(exc)}. Nothing was "
                "changed; retry."
            ) from exc


def lock_owner(conn: Any, owner: str, exclusive: Sequence[str], documents: Sequence[str]) -> None:
    """Take, in *conn*'s open transaction, the locks that writers of *owner*'s memory take:
    each :meth:`PostgresDocuments.exclusive` lock named in *exclusive*, then each document
    lock of :meth:`PostgresDocuments.locked` named in *documents* (held until the
    transaction ends; writers wait meanwhile, and this waits for a writer in progress)."""
    keys = [_exclusive_key(owner, name) for name in exclusive]
    for key in keys + [_document_key(owner, name) for name in documents]:
        conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (_LOCK_SPACE, key))


def _exclusive_key(owner: str, name: str) -> str:
    return f"{owner}\x1f{name}"


def _document_key(owner: str, target: str) -> str:
    return f"{owner}\x1fdocument\x1f{target}"


def _text(row: tuple[Any, ...] | None) -> str:
    """A row's body as the file reader returns a file's text: a leading BOM dropped."""
    return str(row[0]).removeprefix("\ufeff") if row else ""


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else repr(exc)
