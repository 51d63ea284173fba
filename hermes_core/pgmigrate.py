"""Versioned PostgreSQL migrations: the one runner the session store and the memory store share.

Each store keeps its numbered migrations (``{version: SQL}``) and a table of its own that
records the ones applied. :func:`apply_migrations` applies the missing ones in one
transaction under an advisory lock, so several processes starting at once, on one
machine or many, never apply one twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["applied_migrations", "apply_migrations"]


def apply_migrations(
    conn: Any, migrations: Mapping[int, str], *, table: str, lock_key: int, what: str
) -> int:
    """Apply every migration of *migrations* that *table* does not record; returns the newest.

    *what* names the schema in the error (``schema``, ``memory schema``). Raises
    ``RuntimeError`` for a schema written by a newer build (the caller names its store).
    """
    newest = max(migrations)
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock_key,))
        conn.execute(
            f"CREATE TABLE IF NOT EXISTS {table} ("
            "version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
        )
        row = conn.execute(f"SELECT MAX(version) FROM {table}").fetchone()
        current = int(row[0] or 0)
        if current > newest:
            raise RuntimeError(
                f"{what} version {current} was written by a newer hermes-memory (this one "
                f"knows up to {newest}); upgrade hermes-memory to use it"
            )
        for version in sorted(migrations):
            if version > current:
                conn.execute(migrations[version])
                conn.execute(f"INSERT INTO {table}(version) VALUES (%s)", (version,))
        return newest


def applied_migrations(conn: Any, table: str) -> tuple[int, ...]:
    """The versions *table* records, in order (empty when it does not exist); reads only."""
    if conn.execute("SELECT to_regclass(%s)", (table,)).fetchone()[0] is None:
        return ()
    rows = conn.execute(f"SELECT version FROM {table} ORDER BY version").fetchall()
    return tuple(int(row[0]) for row in rows)
