"""Many rows into a ``state.db`` table with full-text triggers, in one statement.

FTS5 writes the terms it has gathered to disk at every statement's savepoint, so
``executemany`` of N messages writes N one-row index segments and then merges them.
Copied from a temporary table by one ``INSERT … SELECT``, the same rows fill the
indexes as one batch (for a 20,000-message import, 2.7x less CPU; docs/benchmarks.md).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

__all__ = ["insert_rows"]

_STAGE = "hermes_staged_rows"


def insert_rows(
    conn: sqlite3.Connection, table: str, columns: Sequence[str], rows: Sequence[tuple[Any, ...]]
) -> None:
    """Insert *rows* (values of *columns*, in order) into *table* by one statement.

    Runs inside the caller's write transaction; the rows get consecutive ids in the
    order given, as ``executemany`` would give them.
    """
    names = ", ".join(columns)
    # Columns without a type keep every value exactly as bound (no affinity).
    conn.execute(f"CREATE TEMP TABLE {_STAGE}({names})")
    try:
        marks = ", ".join("?" for _ in columns)
        conn.executemany(f"INSERT INTO temp.{_STAGE} VALUES ({marks})", rows)
        conn.execute(
            f"INSERT INTO {table}({names}) SELECT {names} FROM temp.{_STAGE} ORDER BY rowid"
        )
    finally:
        conn.execute(f"DROP TABLE temp.{_STAGE}")
