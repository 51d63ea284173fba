"""A PostgreSQL schema per test, for suites that run on both backends (SQLite and PostgreSQL).

:func:`temporary_schema` creates a schema and drops it afterwards. :class:`SchemaPool`
hands each test an *empty* schema the store migrated once per test session: the
store's tables are emptied after each test (a ``DELETE``, far cheaper than creating
and migrating a schema or ``TRUNCATE``), and a schema a test changed (a table
added, dropped or altered, a migration recorded) is dropped and replaced.

The server is ``$HERMES_TEST_POSTGRES_URL`` (default: the machine's PostgreSQL 15 at
127.0.0.1:5432, database ``test``). Without a reachable server the PostgreSQL
cases skip, saying why, unless ``CI=true`` or ``HERMES_REQUIRE_POSTGRES=1``: then they fail.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any, NoReturn
from urllib.parse import quote

import pytest

from hermes_core.errors import first_line

__all__ = [
    "POSTGRES_URL",
    "SchemaPool",
    "admin_connection",
    "migrated_to",
    "postgres_required",
    "schema_url",
    "temporary_schema",
]

POSTGRES_URL = os.environ.get(
    "HERMES_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test"
)


def postgres_required() -> bool:
    """Whether a missing server is a failure (CI on this machine kind), not a skip."""
    return os.environ.get("CI", "").lower() == "true" or os.environ.get(
        "HERMES_REQUIRE_POSTGRES", ""
    ) in ("1", "true")


def _unavailable(reason: str) -> NoReturn:
    message = f"PostgreSQL is not available at {POSTGRES_URL}: {reason}"
    if postgres_required():
        pytest.fail(message + " (CI=true / HERMES_REQUIRE_POSTGRES=1 require it)")
    raise pytest.skip.Exception(message + " (set HERMES_TEST_POSTGRES_URL to run these tests)")


def admin_connection() -> Any:
    """An autocommit connection to the test server, or a skip/fail saying why not."""
    try:
        import psycopg
    except ImportError:
        _unavailable("psycopg is not installed (pip install 'hermes-memory-core[postgres]')")
    try:
        return psycopg.connect(POSTGRES_URL, autocommit=True, connect_timeout=3)
    except psycopg.Error as exc:
        _unavailable(first_line(exc))


def schema_url(schema: str) -> str:
    """The test server's URL with *schema* as the search path."""
    joiner = "&" if "?" in POSTGRES_URL else "?"
    return f"{POSTGRES_URL}{joiner}options={quote(f'-csearch_path={schema}')}"


def migrated_to(conn: Any, version: int) -> None:
    """Apply the session store's migrations 1 to *version* on *conn* (its search path), each
    recorded in ``hermes_schema_migrations``: a store an older build left, to migrate in a test
    (versions 1-3 are what those builds wrote; later ones, this build's)."""
    from hermes_core.sessions.pgschema import MIGRATIONS

    conn.execute(
        "CREATE TABLE IF NOT EXISTS hermes_schema_migrations (version INTEGER PRIMARY KEY, "
        "applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
    )
    for number in range(1, version + 1):
        step = MIGRATIONS[number]
        if isinstance(step, str):
            conn.execute(step)
        else:
            step(conn)
        conn.execute("INSERT INTO hermes_schema_migrations(version) VALUES (%s)", (number,))


def _new_schema_name() -> str:
    return "hm_test_" + uuid.uuid4().hex[:12]


@contextmanager
def temporary_schema() -> Iterator[str]:
    """A URL whose tables land in a new schema, dropped afterwards."""
    admin = admin_connection()
    schema = _new_schema_name()
    admin.execute(f"CREATE SCHEMA {schema}")
    try:
        yield schema_url(schema)
    finally:
        admin.execute(f"DROP SCHEMA {schema} CASCADE")
        admin.close()


_SHAPE = """
SELECT c.relname, c.relkind::text, count(a.attnum)::int
FROM pg_class AS c LEFT JOIN pg_attribute AS a ON a.attrelid = c.oid AND a.attnum > 0
    AND NOT a.attisdropped
WHERE c.relnamespace = %s::regnamespace
GROUP BY c.relname, c.relkind ORDER BY c.relname
"""
"""Every relation of a schema with its kind and column count: what a test must not change."""

_REFERENCES = """
SELECT c.conrelid::regclass::text, c.confrelid::regclass::text FROM pg_constraint AS c
WHERE c.contype = 'f' AND c.connamespace = %s::regnamespace AND c.conrelid <> c.confrelid
"""

_KEPT = "hermes_schema_migrations"
"""The one table the pool does not empty: the schema's version is part of its shape."""


class SchemaPool:
    """Empty, migrated schemas for one test session; see the module docstring.

    *prepare* migrates a new schema, given its URL (the session store opens itself once,
    so the store's own migrations make it). :meth:`lease` yields a URL whose schema is
    empty; :meth:`close` drops what is left.
    """

    def __init__(self, prepare: Any) -> None:
        self._prepare = prepare
        self._admin: Any = None
        self._schema: str | None = None
        self._shape: list[tuple[Any, ...]] = []
        """The schema as migrated: relations, kinds, columns, then the versions applied."""
        self._order: list[str] = []

    @contextmanager
    def lease(self) -> Iterator[str]:
        """A URL of an empty migrated schema for one test."""
        if self._admin is None:
            self._admin = admin_connection()
            self._admin.execute("SET lock_timeout = '5s'")
        if self._schema is None:
            self._create()
        assert self._schema is not None
        try:
            yield schema_url(self._schema)
        finally:
            self._empty()

    def _create(self) -> None:
        schema = _new_schema_name()
        self._admin.execute(f"CREATE SCHEMA {schema}")
        self._schema = schema
        self._prepare(schema_url(schema))
        self._shape = self._state(schema)
        tables = [name for name, kind, _ in self._shape if kind in ("r", "p") and name != _KEPT]
        references = self._admin.execute(_REFERENCES, (schema,)).fetchall()
        self._order = _referencing_first(tables, references, schema)

    def _empty(self) -> None:
        schema = self._schema
        if schema is None:
            return
        try:
            if self._state(schema) != self._shape:
                raise LookupError(f"a test changed schema {schema}")
            with self._admin.transaction():
                for table in self._order:
                    self._admin.execute(f"DELETE FROM {schema}.{table}")
                self._admin.execute(
                    "SELECT setval(c.oid::regclass, 1, false) FROM pg_class AS c "
                    "WHERE c.relkind = 'S' AND c.relnamespace = %s::regnamespace",
                    (schema,),
                )
        except Exception:  # changed, or locked by a store left open: start a new one
            self._schema = None
            with suppress(Exception):
                self._admin.execute(f"DROP SCHEMA {schema} CASCADE")

    def _state(self, schema: str) -> list[tuple[Any, ...]]:
        shape = self._admin.execute(_SHAPE, (schema,)).fetchall()
        if any(name == _KEPT for name, _, _ in shape):
            shape += self._admin.execute(f"SELECT version, 0, 0 FROM {schema}.{_KEPT}").fetchall()
        return shape

    def close(self) -> None:
        """Drop the pool's schema and close its connection."""
        if self._admin is None:
            return
        if self._schema is not None:
            with suppress(Exception):
                self._admin.execute(f"DROP SCHEMA {self._schema} CASCADE")
            self._schema = None
        self._admin.close()
        self._admin = None


def _referencing_first(
    tables: list[str], references: list[tuple[str, str]], schema: str
) -> list[str]:
    """*tables* ordered so that a table comes before the tables it references."""
    needs: dict[str, set[str]] = {table: set() for table in tables}  # table -> its referrers
    for referencing, referenced in references:
        needs.setdefault(referenced.removeprefix(f"{schema}."), set()).add(
            referencing.removeprefix(f"{schema}.")
        )
    order: list[str] = []
    remaining = list(tables)
    while remaining:
        ready = [t for t in remaining if not (needs.get(t, set()) - set(order))]
        if not ready:  # a cycle: delete in any order, the constraints are checked per statement
            ready = remaining[:1]
        for table in ready:
            order.append(table)
            remaining.remove(table)
    return order
