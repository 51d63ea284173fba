"""Held memory writes in PostgreSQL (``memory.url``): ``HELD.json`` as rows of ``memory_held``.

The same contract as :class:`~hermes_memory_builtin.quarantine.Quarantine`: a held
write is staged with its target, origin and score, never read by the snapshot, and
stored only when the user accepts it (``hermes-memory memory review``). Each user's
held writes are theirs alone (the ``owner`` column).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hermes_core.errors import MemoryStoreError
from hermes_memory_builtin.quarantine import HeldStore, HeldWrite

if TYPE_CHECKING:
    from hermes_memory_builtin.documents import PostgresDocuments

__all__ = ["HeldRows", "insert_held", "select_held"]

_COLUMNS = "id, target, content, origin, score, reason, held_at, replaces, operations"
_FIELDS = ("id", "target", "content", "origin", "score", "reason", "held_at", "replaces")


def _write(row: Sequence[Any]) -> HeldWrite:
    """A row of ``memory_held`` as a :class:`HeldWrite` (its operations from JSON)."""
    *fields, operations = row
    return dataclasses.replace(HeldWrite(*fields), operations=json.loads(operations or "[]"))


def insert_held(conn: Any, owner: str, write: HeldWrite) -> None:
    """Add *write* to *owner*'s held rows on *conn*, as it is (an id held already stays)."""
    values = [getattr(write, name) for name in _FIELDS]
    conn.execute(
        f"INSERT INTO memory_held (owner, {_COLUMNS}) VALUES "
        "(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (owner, id) DO NOTHING",
        (owner, *values, json.dumps(write.operations, ensure_ascii=False)),
    )


def select_held(conn: Any, owner: str) -> list[HeldWrite]:
    """*owner*'s held writes on *conn*, oldest first."""
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM memory_held WHERE owner = %s ORDER BY position", (owner,)
    ).fetchall()
    return [_write(row) for row in rows]


class HeldRows(HeldStore):
    """The held writes of one owner of a PostgreSQL memory store."""

    def __init__(self, documents: PostgresDocuments) -> None:
        self._documents = documents

    def held(self) -> list[HeldWrite]:
        """Held writes, oldest first."""
        with self._documents.guarded() as conn:
            return select_held(conn, self._documents.owner)

    def _stage(self, write: HeldWrite) -> HeldWrite:
        with self._documents.guarded() as conn:
            insert_held(conn, self._documents.owner, write)
            row = conn.execute(
                f"SELECT {_COLUMNS} FROM memory_held WHERE owner = %s AND id = %s",
                (self._documents.owner, write.id),
            ).fetchone()
        return _write(row)

    def take(self, write_id: str) -> HeldWrite:
        """Remove and return the held write *write_id* (raises when there is none)."""
        with self._documents.guarded() as conn:
            row = conn.execute(
                f"DELETE FROM memory_held WHERE owner = %s AND id = %s RETURNING {_COLUMNS}",
                (self._documents.owner, write_id),
            ).fetchone()
        if row is None:
            raise MemoryStoreError(
                f"No held memory write has id {write_id!r}; `hermes-memory memory review` "
                "lists them."
            )
        return _write(row)
