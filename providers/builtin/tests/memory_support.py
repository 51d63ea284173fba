"""Helpers shared by the builtin provider's tests."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from hermes_memory_builtin.archive import Archive
from hermes_memory_builtin.archive_rows import AnyArchive, PostgresArchive
from hermes_memory_builtin.documents import PostgresDocuments
from hermes_memory_builtin.entries import ENTRY_DELIMITER
from hermes_memory_builtin.memory_schema import migrate
from hermes_memory_builtin.store import MemoryStore, memory_dir_for
from hermes_memory_builtin.targets import TARGETS


def write_file(path: Path, content: str | bytes) -> None:
    """Put *content* on disk the way a person or another program would."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)


def write_entries(path: Path, entries: list[str]) -> None:
    """Write *entries* in the file format."""
    write_file(path, ENTRY_DELIMITER.join(entries))


def read_entries(path: Path) -> list[str]:
    """The entries on disk, split exactly as written."""
    text = path.read_text(encoding="utf-8")
    return text.split(ENTRY_DELIMITER) if text else []


def as_dict(result: str | dict[str, Any]) -> dict[str, Any]:
    """A tool result (JSON text or dict) as a dict."""
    return json.loads(result) if isinstance(result, str) else result


class MemoryBackend:
    """Where one test's memory documents live: files under ``<home>/memories`` or rows in
    the PostgreSQL schema of *url*. Tests seed and inspect the documents through it the
    way a person or another program would (a file written, a row updated)."""

    def __init__(self, kind: str, home: Path, url: str | None = None) -> None:
        self.kind = kind
        self.home = home
        self.url = url
        self._conn: Any = None
        self._pid = 0
        self._inherited: list[Any] = []

    def _connection(self) -> Any:
        """The inspection connection of this process (a forked child opens its own)."""
        import psycopg

        if self._conn is not None and self._pid != os.getpid():
            self._inherited.append(self._conn)  # the parent's: closing it here would end it
            self._conn = None
        if self._conn is None or self._conn.closed:
            self._conn = psycopg.connect(self.url, autocommit=True)
            self._pid = os.getpid()
            migrate(self._conn)  # the tables, as the first store would create them
        return self._conn

    def close(self) -> None:
        """Close the inspection connection (before the schema is dropped)."""
        if self._conn is not None and self._pid == os.getpid():
            self._conn.close()
        self._conn = None

    @property
    def in_postgres(self) -> bool:
        return self.url is not None

    def memory_dir(self, user_id: str | None = None) -> Path:
        """The memory folder of *user_id* (on PostgreSQL it holds only side files)."""
        return memory_dir_for(self.home, user_id)

    def documents(self, user_id: str | None = None) -> PostgresDocuments | None:
        """The row store of *user_id*, or ``None`` on the file backend."""
        return PostgresDocuments(self.url, user_id or "") if self.url else None

    def store(self, user_id: str | None = None, **kwargs: Any) -> MemoryStore:
        """A new, unloaded store of *user_id* on this backend."""
        return MemoryStore(self.memory_dir(user_id), documents=self.documents(user_id), **kwargs)

    def _path(self, target: str, user_id: str | None) -> Path:
        return self.memory_dir(user_id) / TARGETS[target].filename

    def raw(self, target: str, user_id: str | None = None) -> str | None:
        """The document's exact text now, ``None`` when there is none."""
        if self.url is None:
            path = self._path(target, user_id)
            return path.read_bytes().decode("utf-8") if path.exists() else None
        row = (
            self._connection()
            .execute(
                "SELECT body FROM memory_documents WHERE owner = %s AND target = %s",
                (user_id or "", target),
            )
            .fetchone()
        )
        return None if row is None else str(row[0])

    def put(self, target: str, text: str, user_id: str | None = None) -> None:
        """Replace the document's text from outside the store (an editor, another tool)."""
        if self.url is None:
            write_file(self._path(target, user_id), text)
            return
        self._connection().execute(
            "INSERT INTO memory_documents (owner, target, body) VALUES (%s, %s, %s) "
            "ON CONFLICT (owner, target) DO UPDATE SET body = excluded.body",
            (user_id or "", target, text),
        )

    def put_entries(self, target: str, entries: list[str], user_id: str | None = None) -> None:
        """Write *entries* in the file format."""
        self.put(target, ENTRY_DELIMITER.join(entries), user_id)

    def entries(self, target: str, user_id: str | None = None) -> list[str]:
        """The stored entries, split exactly as written."""
        text = self.raw(target, user_id)
        return text.split(ENTRY_DELIMITER) if text else []

    def clear(self) -> None:
        """Delete every document of every user."""
        if self.url is None:
            for path in self.memory_dir().rglob("*.md"):
                path.unlink()
            return
        self._connection().execute("DELETE FROM memory_documents")

    def archive(self, user_id: str | None = None, **kwargs: Any) -> AnyArchive:
        """The archive tier of *user_id* on this backend (``clock=`` is passed on)."""
        documents = self.documents(user_id)
        if documents is not None:
            return PostgresArchive(documents, **kwargs)
        return Archive(self.memory_dir(user_id), **kwargs)
