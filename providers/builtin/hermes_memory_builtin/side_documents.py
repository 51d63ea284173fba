"""Where the builtin keeps a JSON record beside the two memory documents.

The held writes of the file store (:mod:`~hermes_memory_builtin.quarantine`)
and the origin ledger (:mod:`~hermes_memory_builtin.origins`) are small JSON
texts: a file beside ``MEMORY.md`` (changed under its own lock and replaced
atomically), or, for the ledger with ``memory.url``, one more row of the
PostgreSQL documents (changed under the row lock, in one transaction), so
every machine of a gateway sees the same records and nothing is written
locally. (Held writes in PostgreSQL are rows of their own table:
:mod:`~hermes_memory_builtin.held_rows`.)
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Protocol

from hermes_core.errors import MemoryStoreError
from hermes_memory_builtin.documents import PostgresDocuments
from hermes_memory_builtin.files import atomic_write_text
from hermes_memory_builtin.locking import exclusive_lock

__all__ = ["DatabaseDocument", "FileDocument", "SideDocument"]


class SideDocument(Protocol):
    """One JSON record text: read it, or change it under a lock."""

    where: str
    """Where it is kept, for messages."""

    def read(self) -> str | None:
        """The text (``None`` when there is none yet); raises :class:`MemoryStoreError`."""

    def locked(self) -> AbstractContextManager[tuple[str | None, Callable[[str], None]]]:
        """The text under the lock, and a function saving a new one before it is released."""


class FileDocument:
    """A record file beside the memory files, replaced atomically.

    *durable* (the held writes) fsyncs each new version; without it (the origin
    ledgers, rewritten on every write) a crash may lose the last version, never
    leave half of one.
    """

    def __init__(self, path: Path, *, durable: bool = True, own_lock: bool = True) -> None:
        self.path = path
        self.where = str(path)
        self.durable = durable
        self.own_lock = own_lock
        """Take the file's own lock to change it (``False``: the caller holds a lock that
        serializes every writer of it already, the memory file's)."""

    def read(self) -> str | None:
        try:
            return self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise MemoryStoreError(f"Cannot read {self.path}: {exc}") from exc

    @contextmanager
    def locked(self) -> Iterator[tuple[str | None, Callable[[str], None]]]:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise MemoryStoreError(f"Cannot create {self.path.parent}: {exc}") from exc
        if not self.own_lock:
            yield self.read(), self._save
            return
        with exclusive_lock(self.path):
            yield self.read(), self._save

    def _save(self, text: str) -> None:
        if self.durable:
            atomic_write_text(self.path, text)
            return
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        try:
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, self.path)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise MemoryStoreError(f"Cannot write {self.path}: {exc}") from exc


class DatabaseDocument:
    """A record row of the PostgreSQL memory documents (its own ``target`` name)."""

    def __init__(self, documents: PostgresDocuments, name: str) -> None:
        self._documents = documents
        self._name = name
        self.where = f"{documents.where} ({name})"

    def read(self) -> str | None:
        read = self._documents.read(self._name)
        if read.error:
            raise MemoryStoreError(f"Cannot read {self.where}: {read.error}")
        return read.text if read.exists else None

    @contextmanager
    def locked(self) -> Iterator[tuple[str | None, Callable[[str], None]]]:
        with self._documents.locked(self._name) as (read, save):
            yield (read.text or None), save
