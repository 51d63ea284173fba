"""The one PostgreSQL migration runner of the session store and the builtin memory store."""

from __future__ import annotations

import threading

import pytest
from hermes_memory_builtin.documents import PostgresDocuments
from hermes_memory_builtin.memory_schema import MEMORY_SCHEMA_VERSION

from hermes_core.errors import MemoryStoreError, SessionStoreError
from hermes_core.pgmigrate import apply_migrations
from hermes_core.sessions.backends import open_session_store
from hermes_core.sessions.pgschema import PG_SCHEMA_VERSION
from hermes_core.testing.postgres import temporary_schema

STEPS = {1: "CREATE TABLE t (a INTEGER)", 2: "ALTER TABLE t ADD COLUMN b INTEGER"}


def _connect(url: str):  # type: ignore[no-untyped-def]
    import psycopg

    return psycopg.connect(url, autocommit=True)


def test_each_migration_is_applied_once_in_order_even_by_racing_processes() -> None:
    with temporary_schema() as url:
        results: list[int] = []

        def run() -> None:
            with _connect(url) as conn:
                results.append(
                    apply_migrations(conn, STEPS, table="m", lock_key=0x5445_5354, what="test")
                )

        threads = [threading.Thread(target=run) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        with _connect(url) as conn:
            assert conn.execute("SELECT version FROM m ORDER BY version").fetchall() == [(1,), (2,)]
            assert [c[0] for c in conn.execute("SELECT * FROM t").description] == ["a", "b"]
        assert results == [2, 2, 2, 2]


def test_a_later_migration_applies_only_what_is_missing() -> None:
    with temporary_schema() as url, _connect(url) as conn:
        assert apply_migrations(conn, {1: STEPS[1]}, table="m", lock_key=1, what="test") == 1
        assert apply_migrations(conn, STEPS, table="m", lock_key=1, what="test") == 2
        assert conn.execute("SELECT count(*) FROM m").fetchone() == (2,)


def test_a_failing_migration_leaves_the_schema_as_it_was() -> None:
    with temporary_schema() as url, _connect(url) as conn:
        apply_migrations(conn, {1: STEPS[1]}, table="m", lock_key=1, what="test")
        broken = {**STEPS, 3: "ALTER TABLE nowhere ADD COLUMN c INTEGER"}
        with pytest.raises(Exception, match="nowhere"):
            apply_migrations(conn, broken, table="m", lock_key=1, what="test")
        assert conn.execute("SELECT max(version) FROM m").fetchone() == (1,)
        assert [c[0] for c in conn.execute("SELECT * FROM t").description] == ["a"]


@pytest.mark.parametrize("store", ["sessions", "memory"])
def test_both_stores_refuse_a_schema_written_by_a_newer_build(store: str) -> None:
    table, known, error = {
        "sessions": ("hermes_schema_migrations", PG_SCHEMA_VERSION, SessionStoreError),
        "memory": ("memory_schema_migrations", MEMORY_SCHEMA_VERSION, MemoryStoreError),
    }[store]
    with temporary_schema() as url:
        with _connect(url) as conn:
            conn.execute(f"CREATE TABLE {table} (version INTEGER PRIMARY KEY, applied_at TEXT)")
            conn.execute(f"INSERT INTO {table}(version) VALUES (%s)", (known + 1,))
        with pytest.raises(error, match=f"version {known + 1} was written by a newer"):
            if store == "sessions":
                open_session_store(url).close()
            else:
                PostgresDocuments(url).close()
