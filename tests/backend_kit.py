"""Helpers for suites run on both session-store backends (the ``session_backend`` fixture)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def is_postgres(target: object) -> bool:
    """Whether *target* (a ``session_backend`` value) is a PostgreSQL URL."""
    return str(target).startswith(("postgresql://", "postgres://"))


def raw_sql(target: object, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
    """Run *sql* (``?`` placeholders) on the store at *target* as another program would,
    outside the store's API, and commit; returns the rows it selected."""
    if is_postgres(target):
        import psycopg

        with psycopg.connect(str(target), autocommit=True) as conn:
            cursor = conn.execute(sql.replace("?", "%s"), params)  # type: ignore[arg-type]
            return cursor.fetchall() if cursor.description else []
    conn = sqlite3.connect(str(target), isolation_level=None)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def configured_store(session_backend: str, hermes_home: Path, monkeypatch: Any) -> str:
    """Where the CLI and the runtime find the store of *session_backend*: the PostgreSQL URL
    (set as ``HERMES_SESSIONS_URL``), else ``$HERMES_HOME/state.db``; returns it."""
    if is_postgres(session_backend):
        monkeypatch.setenv("HERMES_SESSIONS_URL", session_backend)
        return session_backend
    return str(hermes_home / "state.db")


def db_args(target: str | Path, monkeypatch: Any) -> tuple[str, ...]:
    """The CLI's way to *target*: ``--db PATH``, or a PostgreSQL URL set as the store."""
    if is_postgres(target):
        monkeypatch.setenv("HERMES_SESSIONS_URL", str(target))
        return ()
    return ("--db", str(target))
