"""``sessions check`` and ``doctor`` on PostgreSQL report each search index a concurrent build
cut short left invalid (``messages_tsv``: a problem, exit 1; ``messages_trgm``: a warning) or
left over (a reindex's ``messages_tsv_ccnew`` / ``_ccold``: a warning), naming it and what to
do, and a build under way as such; ``sessions repair`` leaves nothing to report.

Each state is made for real: a transaction of the test holds a concurrent build where
PostgreSQL makes it wait (a writer's lock: before its build; a reader's: after a reindex's
swap), and ``pg_cancel_backend`` cancels it there, as Ctrl-C or a killed client would.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from hermes_core.cli import cli
from hermes_core.cli.doctor_cmd import check_session_database
from hermes_core.sessions.postgres import PostgresSessionStore
from tests.test_sessions_pg_backfill import wait_until

_INDEXES = (
    "SELECT c.relname, i.indisvalid FROM pg_index AS i JOIN pg_class AS c "
    "ON c.oid = i.indexrelid WHERE i.indrelid = 'messages'::regclass "
    "AND c.relname LIKE 'messages\\_t%' ORDER BY 1"
)
_REINDEX = "REINDEX INDEX CONCURRENTLY messages_tsv"


@pytest.fixture
def store() -> Iterator[tuple[str, Any]]:
    """The URL of a current store of a few messages, and an admin connection in its schema."""
    from hermes_core.testing.postgres import admin_connection, temporary_schema

    with temporary_schema() as url:
        with PostgresSessionStore(url, semantic="off") as writer:
            writer.create_session("s1", source="cli")
            writer.append_messages(
                "s1",
                [{"role": "user", "content": f"Note {n} on the weekly report."} for n in range(40)],
            )
        admin = admin_connection()
        admin.execute(f"SET search_path = {url.rsplit('%3D', 1)[-1]}")
        try:
            yield url, admin
        finally:
            admin.close()


@contextmanager
def held_build(url: str, admin: Any, statement: str, lock: str) -> Iterator[int]:
    """*statement* (a concurrent build) running on its own connection, held where it waits
    for a transaction of the test holding *lock* on ``messages``; yields its backend's pid
    while it waits, then cancels it there (``pg_cancel_backend``) and lets the holder go."""
    import psycopg

    holder = psycopg.connect(url)
    builder = psycopg.connect(url, autocommit=True)
    outcome: list[BaseException | None] = []

    def build() -> None:
        try:
            builder.execute(statement)
            outcome.append(None)
        except psycopg.Error as exc:
            outcome.append(exc)

    thread = None
    try:
        holder.execute(f"LOCK TABLE messages IN {lock} MODE")
        thread = threading.Thread(target=build)
        thread.start()
        pids = (holder.info.backend_pid, builder.info.backend_pid)
        wait_until(
            lambda: admin.execute("SELECT %s = ANY(pg_blocking_pids(%s))", pids).fetchone()[0],
            "the build waiting for the test's transaction",
        )
        yield pids[1]
        assert admin.execute("SELECT pg_cancel_backend(%s)", (pids[1],)).fetchone()[0]
        thread.join()
        assert len(outcome) == 1 and isinstance(outcome[0], psycopg.errors.QueryCanceled)
    finally:
        holder.close()
        if thread is not None:
            thread.join()
        builder.close()


def check(url: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["sessions", "check", "--db", url])
    return result.exit_code, result.output


def _trigram_build(admin: Any) -> str:
    (schema,) = admin.execute(
        "SELECT extnamespace::regnamespace::text FROM pg_extension WHERE extname = 'pg_trgm'"
    ).fetchone()
    return (
        "CREATE INDEX CONCURRENTLY messages_trgm ON messages "
        f"USING GIN (search_text {schema}.gin_trgm_ops)"
    )


@pytest.mark.parametrize(
    ("case", "lock", "left", "code", "reported"),
    [
        (
            "messages_tsv",
            "ROW EXCLUSIVE",
            ("messages_tsv", False),
            1,
            "problem: the full-text index messages_tsv is invalid (a concurrent build cut "
            "short): searches read every message; run `hermes-memory sessions repair`",
        ),
        (
            "messages_tsv_ccnew",
            "ROW EXCLUSIVE",  # a writer holds the reindex before its build
            ("messages_tsv_ccnew", False),
            0,
            "warning: the index messages_tsv_ccnew is what a concurrent rebuild of "
            "messages_tsv cut short left (invalid, never used): it takes disk space and may "
            "slow every write; run `hermes-memory sessions repair` (it drops it)",
        ),
        (
            "messages_tsv_ccold",
            "ACCESS SHARE",  # a reader holds it after the swap, before the old index's drop
            ("messages_tsv_ccold", False),
            0,
            "warning: the index messages_tsv_ccold is what a concurrent rebuild of "
            "messages_tsv cut short left",
        ),
        (
            "messages_trgm",
            "ROW EXCLUSIVE",
            ("messages_trgm", False),
            0,
            "warning: the trigram index messages_trgm is invalid (a concurrent build cut "
            "short) and still to build again: substring searches read every message",
        ),
    ],
)
def test_check_reports_what_a_concurrent_build_cut_short_left_until_repair(
    store: tuple[str, Any],
    tmp_path: Path,
    case: str,
    lock: str,
    left: tuple[str, bool],
    code: int,
    reported: str,
) -> None:
    url, admin = store
    assert check(url)[0] == 0
    if case in ("messages_tsv", "messages_trgm"):
        admin.execute(f"DROP INDEX {case}")
    statement = {
        "messages_tsv": "CREATE INDEX CONCURRENTLY messages_tsv ON messages USING GIN (tsv)",
        "messages_trgm": _trigram_build(admin),
    }.get(case, _REINDEX)
    with held_build(url, admin, statement, lock) as pid:
        # While the build waits, it is one under way: a warning, whatever the index.
        running, out = check(url)
        assert running == 0, out
        assert f"warning: the index {case} is being built now (backend {pid}" in out, out
    assert left in admin.execute(_INDEXES).fetchall()
    exit_code, out = check(url)
    assert exit_code == code and reported in out, out
    assert ("ok:" in out) == (code == 0)
    report = json.loads(
        CliRunner().invoke(cli, ["sessions", "check", "--db", url, "--json"]).output
    )
    assert [f["index"] for f in report["indexes"]] == [case]
    assert bool(report["problems"]) == (code == 1) and bool(report["warnings"]) == (code == 0)
    (doctor,) = [
        f for f in check_session_database(tmp_path, {"sessions": {"url": url}}) if case in f.message
    ]
    assert doctor.level == ("fail" if code else "warn") and "sessions repair" in doctor.fix

    repaired = CliRunner().invoke(cli, ["sessions", "repair", "--db", url])
    assert repaired.exit_code == 0, repaired.output
    assert admin.execute(_INDEXES).fetchall() == [("messages_trgm", True), ("messages_tsv", True)]
    exit_code, out = check(url)
    assert exit_code == 0 and out.startswith("ok:") and "warning" not in out, out
    assert not [
        f
        for f in check_session_database(tmp_path, {"sessions": {"url": url}})
        if "messages_t" in f.message
    ]


def test_check_reports_a_missing_full_text_index_with_what_to_do(store: tuple[str, Any]) -> None:
    url, admin = store
    admin.execute("DROP INDEX messages_tsv")
    exit_code, out = check(url)
    assert exit_code == 1
    assert (
        "problem: the full-text index messages_tsv is missing: searches read every message; "
        "run `hermes-memory sessions repair`"
    ) in out
