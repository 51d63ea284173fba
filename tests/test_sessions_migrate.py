"""``sessions migrate``: a complete, verified, all-or-nothing copy between backends."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from hermes_core.cli import cli
from hermes_core.errors import SessionStoreError
from hermes_core.sessions import SessionStore
from hermes_core.sessions.backends import open_session_store
from hermes_core.sessions.migration import migrate_store


@pytest.fixture
def pg_url() -> Iterator[str]:
    from hermes_core.testing.postgres import temporary_schema

    with temporary_schema() as url:
        yield url


def _fill(path: Path) -> None:
    calls = [{"id": "c1", "type": "function", "function": {"name": "grep", "arguments": "{}"}}]
    with SessionStore(path) as store:
        store.create_session(
            "root",
            source="telegram",
            title="Kitchen",
            user_id="u1",
            model="m",
            system_prompt="Be brief.",
            cwd="/srv",
        )
        store.append_messages(
            "root",
            [
                {"role": "user", "content": "the refrigerator hums loudly", "name": "ana"},
                {"role": "assistant", "content": None, "tool_calls": calls},
                {"role": "tool", "tool_call_id": "c1", "content": "nothing found"},
                {"role": "assistant", "content": "冰箱的声音很大"},
            ],
        )
        store.update_token_counts("root", 12, 34)
        store.end_session("root", "compression")
        store.create_session("cont", parent_session_id="root", user_id="u1")
        store.append_message("cont", "user", "the compressor was replaced")
        store.create_session("other", source="cli")
        for n in range(60):
            store.append_message("other", "user", f"message number {n} about gardening")


def _snapshot(store: SessionStore) -> tuple[list[dict[str, object]], list[list[dict[str, object]]]]:
    ids = store.session_ids_starting_with("", limit=100)
    sessions = [store.get_session(sid) for sid in ids]
    return sessions, [store.get_messages(sid) for sid in ids]  # type: ignore[return-value]


def test_sqlite_to_postgres_and_back_is_the_same_store(tmp_path: Path, pg_url: str) -> None:
    first = tmp_path / "state.db"
    _fill(first)
    report = migrate_store(first, pg_url)
    assert (report.sessions, report.messages, report.searches_checked > 0) == (3, 65, True)
    assert "s3cret" not in report.target
    back = tmp_path / "back.db"
    migrate_store(pg_url, back)
    with SessionStore(first) as a, open_session_store(pg_url) as pg, SessionStore(back) as b:
        expected = _snapshot(a)
        assert _snapshot(b) == expected
        pg_sessions, pg_messages = _snapshot(pg)
        assert pg_messages == expected[1]
        assert [dict(s) for s in pg_sessions] == [  # type: ignore[arg-type]
            {key: row[key] for key in row if key in pg_sessions[0]}  # type: ignore[union-attr,index]
            for row in expected[0]
        ]
        for store in (pg, b):
            assert store.get_lineage("cont") == ["root", "cont"]
            assert [h["id"] for h in store.search_messages("冰箱")] == [4]
            assert [h["id"] for h in store.search_messages("refrigerator")] == [1]
        # new messages continue after the copied ids
        new = pg.append_message("other", "user", "after the move")
        assert new > 65


def test_a_copy_into_postgresql_has_the_planners_statistics(tmp_path: Path, pg_url: str) -> None:
    """The copy is analysed (a server may run without autovacuum): the planner knows its
    size and its commonest words, which the search reads for their frequencies."""
    import psycopg

    _fill(tmp_path / "state.db")
    migrate_store(tmp_path / "state.db", pg_url)
    with psycopg.connect(pg_url) as conn:
        rows = conn.execute("SELECT reltuples FROM pg_class WHERE oid = 'messages'::regclass")
        assert rows.fetchone() == (65,)
        words = conn.execute(
            "SELECT most_common_elems::text FROM pg_stats WHERE schemaname = current_schema() "
            "AND tablename = 'messages' AND attname = 'tsv'"
        ).fetchone()
        assert words is not None and "garden" in words[0]


def test_a_non_empty_target_is_refused_and_left_alone(tmp_path: Path, pg_url: str) -> None:
    source = tmp_path / "state.db"
    _fill(source)
    with open_session_store(pg_url) as pg:
        pg.create_session("already-here")
    with pytest.raises(SessionStoreError, match="already holds sessions"):
        migrate_store(source, pg_url)
    with open_session_store(pg_url) as pg:
        assert pg.session_count() == 1 and pg.message_count() == 0
    existing = tmp_path / "existing.db"
    existing.write_bytes(b"")
    with pytest.raises(SessionStoreError, match="already exists"):
        migrate_store(source, existing)
    assert existing.read_bytes() == b""


def test_a_failed_copy_leaves_nothing(tmp_path: Path, pg_url: str) -> None:
    source = tmp_path / "state.db"
    _fill(source)
    # A row PostgreSQL refuses (its session is not there), written by another program,
    # fails the whole copy.
    conn = sqlite3.connect(source, isolation_level=None)
    conn.execute(
        "INSERT INTO messages(session_id, role, timestamp, content) "
        "VALUES ('ghost', 'user', 1.0, 'orphan')"
    )
    conn.close()
    with pytest.raises(SessionStoreError):
        migrate_store(source, pg_url)
    with open_session_store(pg_url) as pg:
        assert (pg.session_count(), pg.message_count()) == (0, 0)


def test_the_migrate_command(tmp_path: Path, hermes_home: Path, pg_url: str) -> None:
    _fill(hermes_home / "state.db")
    result = CliRunner().invoke(cli, ["sessions", "migrate", "--to", pg_url])
    assert result.exit_code == 0, result.output
    assert "Copied 3 sessions and 65 messages" in result.output
    (hermes_home / "config.yaml").write_text(f"sessions:\n  url: {json.dumps(pg_url)}\n")
    listed = CliRunner().invoke(cli, ["sessions", "list", "--all", "--json"])
    assert listed.exit_code == 0, listed.output
    assert {row["id"] for row in json.loads(listed.output)} == {"root", "cont", "other"}
    found = CliRunner().invoke(cli, ["sessions", "search", "--user", "u1", "compressor", "--json"])
    assert found.exit_code == 0 and "replaced" in found.output
    checked = CliRunner().invoke(cli, ["sessions", "check"])
    assert checked.exit_code == 0 and "ok: postgresql://" in checked.output
    same = CliRunner().invoke(cli, ["sessions", "migrate", "--to", pg_url])  # the configured one
    assert same.exit_code != 0 and "same store" in same.output
    source = str(hermes_home / "state.db")
    again = CliRunner().invoke(cli, ["sessions", "migrate", "--from", source, "--to", pg_url])
    assert again.exit_code != 0 and "already holds sessions" in again.output


def test_a_word_common_to_hundreds_of_messages_does_not_fail_the_check(tmp_path: Path) -> None:
    # Every message shares its longest word; each sample search fills its 200 hits, so a
    # sampled message may rank below them. That sample proves nothing and is not a failure.
    source = tmp_path / "state.db"
    with SessionStore(source) as store:
        store.create_session("big")
        store.append_messages(
            "big",
            [{"role": "user", "content": f"kubernetes rollout note {n}"} for n in range(600)],
        )
    report = migrate_store(source, tmp_path / "copy.db")
    assert (report.sessions, report.messages) == (1, 600)
    with SessionStore(tmp_path / "copy.db") as copy:
        assert copy.message_count() == 600
