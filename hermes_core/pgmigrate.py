"""Versioned PostgreSQL migrations: the one runner the session store and the memory store share.

Each store keeps its numbered migrations (``{version: SQL}``, or a function of the connection
when Python computes what a migration writes) and a table of its own that
records the ones applied. :func:`apply_migrations` applies the missing ones in one
transaction under an advisory lock, so several processes starting at once, on one
machine or many, never apply one twice.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["Migration", "applied_migrations", "apply_migrations"]

Migration = str | Callable[[Any], None]
"""SQL, or a function run on the migrating connection (inside the one transaction)."""


def apply_migrations(
    conn: Any, migrations: Mapping[int, Migration], *, table: str, lock_key: int, what: str
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
                step = migrations[version]
                if isinstance(step, str):
                    conn.execute(step)
                else:
                    step(conn)
                conn.execute(f"INSERT INTO {table}(version) VALUES (%s)", (version,))
        return newest


def applied_migrations(conn: Any, table: str) -> tuple[int, ...]:
    """The versions *table* records, in order (empty when it does not exist); reads only."""
    if conn.execute("SELECT to_regclass(%s)", (table,)).fetchone()[0] is None:
        return ()
    rows = conn.execute(f"SELECT version FROM {table} ORDER BY version").fetchall()
    return tuple(int(row[0]) for row in rows)
