"""A PostgreSQL schema per test, for suites that run on both backends (SQLite and PostgreSQL).

The server is ``$HERMES_TEST_POSTGRES_URL`` (default: the machine's PostgreSQL 15 at
127.0.0.1:5432, database ``test``). Without a reachable server the PostgreSQL
cases skip, saying why, unless ``CI=true`` or ``HERMES_REQUIRE_POSTGRES=1``: then they fail.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NoReturn
from urllib.parse import quote

import pytest

__all__ = [
    "POSTGRES_URL",
    "admin_connection",
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
        _unavailable(str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc))


def schema_url(schema: str) -> str:
    """The test server's URL with *schema* as the search path."""
    joiner = "&" if "?" in POSTGRES_URL else "?"
    return f"{POSTGRES_URL}{joiner}options={quote(f'-csearch_path={schema}')}"


@contextmanager
def temporary_schema() -> Iterator[str]:
    """A URL whose tables land in a new schema, dropped afterwards."""
    admin = admin_connection()
    schema = "hm_test_" + uuid.uuid4().hex[:12]
    admin.execute(f"CREATE SCHEMA {schema}")
    try:
        yield schema_url(schema)
    finally:
        admin.execute(f"DROP SCHEMA {schema} CASCADE")
        admin.close()
