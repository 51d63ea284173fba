"""The maintenance commands on both backends: backup/restore, doctor, sessions repair, index,
recover and check, with state.db and with a PostgreSQL store (sessions.url).

The PostgreSQL cases use a schema of their own on the real server (skipped
without one, unless CI=true or HERMES_REQUIRE_POSTGRES=1).
"""

from __future__ import annotations

import io
import json
import tarfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from history_kit import history

from hermes_core.cli import cli
from hermes_core.sessions.backends import open_session_store
from hermes_core.sessions.migration import migrate_store
from hermes_core.sessions.pgschema import PG_SCHEMA_VERSION
from hermes_core.sessions.semantic import semantic_available
from hermes_core.sessions.spool import SessionSpool, spool_path

PASSWORD_URL = "postgresql://hermes:s3cret@127.0.0.1:1/nowhere"


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.output


def _conversations(target: str | Path) -> list[tuple[str, list[tuple[str, Any]]]]:
    with open_session_store(target, read_only=True) as store:
        ids = sorted(r["id"] for r in store.list_sessions(limit=1000, collapse_lineage=False))
        return [(i, [(m["role"], m["content"]) for m in store.get_messages(i)]) for i in ids]


@pytest.fixture
def store_target(session_backend: str, hermes_home: Path) -> str:
    """The home's session store, filled with every kind of session, on each backend."""
    if session_backend.startswith("postgresql"):
        source = hermes_home.parent / "seed.db"
        history(source)
        migrate_store(source, session_backend)
        (hermes_home / "config.yaml").write_text(f"sessions:\n  url: '{session_backend}'\n")
        return session_backend
    history(hermes_home / "state.db")
    return str(hermes_home / "state.db")


@pytest.fixture
def empty_pg() -> Iterator[str]:
    from hermes_core.testing.postgres import temporary_schema

    with temporary_schema() as url:
        yield url


def _pg_only(target: str) -> None:
    if not target.startswith("postgresql"):
        pytest.skip("PostgreSQL only")


# -- backup and restore -----------------------------------------------------------------------


def test_backup_then_restore_brings_the_sessions_back(
    store_target: str, hermes_home: Path, tmp_path: Path, empty_pg: str
) -> None:
    before = _conversations(store_target)
    archive = tmp_path / "b.tar.gz"
    code, out = run("backup", str(archive), "--home", str(hermes_home))
    assert code == 0, out
    assert f"{len(before)} session(s)" in out
    with tarfile.open(archive) as tar:
        names = set(tar.getnames())
        manifest = json.load(tar.extractfile("manifest.json"))  # type: ignore[arg-type]
    postgres = store_target.startswith("postgresql")
    assert ("sessions.postgresql.db" in names) is postgres
    assert manifest["sessions_backend"] == ("postgresql" if postgres else "sqlite")
    new_home = tmp_path / "new"
    extra = ["--sessions-url", empty_pg] if postgres else []
    code, out = run("restore", str(archive), "--home", str(new_home), *extra)
    assert code == 0, out
    restored = empty_pg if postgres else str(new_home / "state.db")
    assert _conversations(restored) == before


def test_a_postgres_backup_restored_without_a_database_becomes_state_db(
    store_target: str, hermes_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _pg_only(store_target)
    before = _conversations(store_target)
    archive = tmp_path / "b.tar.gz"
    assert run("backup", str(archive), "--home", str(hermes_home))[0] == 0
    (hermes_home / "config.yaml").unlink()  # the restored home configures no database
    with tarfile.open(archive) as tar:
        members = [m for m in tar.getmembers() if m.name != "config.yaml"]
        manifest = json.load(tar.extractfile("manifest.json"))  # type: ignore[arg-type]
        del manifest["files"]["config.yaml"]
        rebuilt = tmp_path / "no-config.tar.gz"
        with tarfile.open(rebuilt, "w:gz") as out:
            for member in members:
                if member.name == "manifest.json":
                    data = json.dumps(manifest).encode()
                    member.size = len(data)
                    out.addfile(member, io.BytesIO(data))
                else:
                    out.addfile(member, tar.extractfile(member))
    new_home = tmp_path / "laptop"
    code, out = run("restore", str(rebuilt), "--home", str(new_home))
    assert code == 0, out
    assert str(new_home / "state.db") in out
    assert _conversations(new_home / "state.db") == before


def test_restoring_into_a_database_that_holds_sessions_is_refused(
    store_target: str, hermes_home: Path, tmp_path: Path
) -> None:
    _pg_only(store_target)
    archive = tmp_path / "b.tar.gz"
    assert run("backup", str(archive), "--home", str(hermes_home))[0] == 0
    before = _conversations(store_target)
    new_home = tmp_path / "new"
    code, out = run(
        "restore", str(archive), "--home", str(new_home), "--sessions-url", store_target
    )
    assert code == 1
    assert "already holds sessions" in out and "Nothing was changed" in out
    assert _conversations(store_target) == before
    assert not new_home.exists() or not (new_home / "config.yaml").exists()


def test_a_postgres_backup_is_one_instant_while_an_agent_writes(
    store_target: str, hermes_home: Path, tmp_path: Path, empty_pg: str
) -> None:
    _pg_only(store_target)
    stop = threading.Event()

    def write() -> None:
        with open_session_store(store_target) as store:
            store.create_session("busy")
            n = 0
            while not stop.is_set():
                store.append_messages(
                    "busy",
                    [
                        {"role": "user", "content": f"q{n}"},
                        {"role": "assistant", "content": f"a{n}"},
                    ],
                )
                n += 1

    writer = threading.Thread(target=write)
    writer.start()
    try:
        archive = tmp_path / "b.tar.gz"
        code, out = run("backup", str(archive), "--home", str(hermes_home))
    finally:
        stop.set()
        writer.join()
    assert code == 0, out
    code, out = run(
        "restore", str(archive), "--home", str(tmp_path / "new"), "--sessions-url", empty_pg
    )
    assert code == 0, out  # restore checks the copy's counts against the manifest
    with open_session_store(empty_pg, read_only=True) as copy:
        busy = [m["content"] for m in copy.get_messages("busy")] if copy.get_session("busy") else []
    assert len(busy) % 2 == 0  # whole appends only: a snapshot, never half of one
    assert busy == [f"{kind}{n}" for n in range(len(busy) // 2) for kind in ("q", "a")]


def test_backup_of_an_unreachable_database_names_it_masked(
    hermes_home: Path, tmp_path: Path
) -> None:
    (hermes_home / "config.yaml").write_text(f"sessions:\n  url: '{PASSWORD_URL}'\n")
    archive = tmp_path / "b.tar.gz"
    code, out = run("backup", str(archive), "--home", str(hermes_home))
    assert code == 1 and "Traceback" not in out
    assert "postgresql://hermes:***@127.0.0.1:1/nowhere" in out and "s3cret" not in out
    assert not archive.exists()


# -- doctor -----------------------------------------------------------------------------------


def test_doctor_checks_the_session_store(store_target: str, hermes_home: Path) -> None:
    code, out = run("doctor")
    assert code == 0, out
    if store_target.startswith("postgresql"):
        assert f"answers; schema version {PG_SCHEMA_VERSION}, every migration applied" in out
        assert "state.db" not in out
    else:
        assert f"{hermes_home / 'state.db'} opens" in out


def test_doctor_reports_a_refused_server_once_with_the_password_masked(
    hermes_home: Path,
) -> None:
    (hermes_home / "config.yaml").write_text(f"sessions:\n  url: '{PASSWORD_URL}'\n")
    code, out = run("doctor")
    assert code == 1
    lines = [line for line in out.splitlines() if "Cannot connect to the session database" in line]
    assert len(lines) == 1 and "postgresql://hermes:***@127.0.0.1:1/nowhere" in lines[0]
    assert "s3cret" not in out


def test_doctor_fails_a_schema_from_a_newer_build(store_target: str) -> None:
    _pg_only(store_target)
    from hermes_core.testing.postgres import admin_connection

    schema = store_target.rsplit("%3D", 1)[-1]
    admin = admin_connection()
    admin.execute(f"INSERT INTO {schema}.hermes_schema_migrations(version) VALUES (99)")
    admin.close()
    code, out = run("doctor")
    assert code == 1 and "schema version 99, written by a newer hermes-memory" in out


def test_doctor_warns_of_messages_waiting_in_the_spool(
    store_target: str, hermes_home: Path
) -> None:
    _pg_only(store_target)
    from hermes_core.sessions.postgres import masked_url

    spool = SessionSpool(spool_path(hermes_home, masked_url(store_target), None))
    spool.add("s", [{"role": "user", "content": "waiting"}], ["t1"])
    code, out = run("doctor")
    assert code == 0  # a warning, not a failure
    assert "1 append(s) kept in" in out and "are not stored yet" in out


# -- repair, index, recover, check ----------------------------------------------------------------


def _search(target: str, query: str) -> list[int]:
    with open_session_store(target, read_only=True) as store:
        return [hit["id"] for hit in store.search_messages(query, limit=50, snippets=False)]


def test_repair_rebuilds_the_search_of_either_backend(store_target: str) -> None:
    found = _search(store_target, "deploy")
    assert found
    if store_target.startswith("postgresql"):
        from hermes_core.testing.postgres import admin_connection

        schema = store_target.rsplit("%3D", 1)[-1]
        admin = admin_connection()
        admin.execute(
            f"UPDATE {schema}.messages SET search_text = NULL, cjk_grams = NULL, stems = NULL"
        )
        admin.execute(f"DROP INDEX {schema}.messages_tsv")
        admin.close()
        assert _search(store_target, "deploy") == []
        code, out = run("sessions", "check")
        assert code == 1 and "messages_tsv is missing" in out
    code, out = run("sessions", "repair")
    assert code == 0, out
    assert "Rebuilt the" in out
    assert _search(store_target, "deploy") == found
    assert run("sessions", "check")[0] == 0


@pytest.mark.skipif(not semantic_available(), reason="no encoder installed")
def test_index_on_postgres_embeds_into_the_database(store_target: str) -> None:
    _pg_only(store_target)
    code, out = run("sessions", "index")
    assert code == 0, out
    assert "Embedded" in out and "message_vectors" in out
    code, out = run("sessions", "index", "--db", store_target)
    assert code == 0 and "is embedded" in out
    with open_session_store(store_target, semantic="on") as store:
        assert store.messages_to_embed() == 0


def test_recover_on_postgres_says_it_is_for_state_db_files(store_target: str) -> None:
    _pg_only(store_target)
    code, out = run("sessions", "recover")
    assert code == 1 and "Traceback" not in out
    assert "damaged state.db file" in out and "hermes-memory backup" in out
    code, out = run("sessions", "recover", "--db", PASSWORD_URL)
    assert code == 1 and "postgresql://hermes:***@127.0.0.1:1/nowhere" in out
    assert "s3cret" not in out


def test_sessions_commands_on_a_refused_server_give_one_clear_error(hermes_home: Path) -> None:
    (hermes_home / "config.yaml").write_text(f"sessions:\n  url: '{PASSWORD_URL}'\n")
    for command in (["list"], ["search", "nginx"], ["check"], ["repair"]):
        code, out = run("sessions", *command)
        assert code == 1, (command, out)
        assert "Cannot connect to the session database postgresql://hermes:***@" in out
        assert "s3cret" not in out and "Traceback" not in out


def test_sessions_spool_writes_back_every_users_messages_once(
    store_target: str, hermes_home: Path
) -> None:
    _pg_only(store_target)
    from hermes_core.sessions.postgres import masked_url

    shown = masked_url(store_target)
    with open_session_store(store_target) as store:
        store.create_session("alice-1", user_id="alice")
        store.create_session("plain-1")
    for user, session_id in (("alice", "alice-1"), (None, "plain-1")):
        spool = SessionSpool(spool_path(hermes_home, shown, user), database=shown, user_id=user)
        spool.add(session_id, [{"role": "user", "content": f"kept for {session_id}"}], ["t1"])
        spool.add(session_id, [{"role": "user", "content": f"kept for {session_id}"}], ["t1"])
    other = "postgresql://postgres@127.0.0.1:5432/elsewhere"
    SessionSpool(spool_path(hermes_home, other, None), database=other).add(
        "x", [{"role": "user", "content": "not ours"}], ["t9"]
    )
    code, out = run("sessions", "spool")
    assert code == 0, out
    assert out.count("2 spooled message(s) written back") == 2
    assert "another database: left as they are" in out
    with open_session_store(store_target, read_only=True) as check:
        for session_id in ("alice-1", "plain-1"):
            assert [m["content"] for m in check.get_messages(session_id)] == [
                f"kept for {session_id}"
            ]
    code, out = run("sessions", "spool")
    assert code == 0 and "1 record(s) for postgresql://postgres@127.0.0.1:5432/elsewhere" in out


def test_a_long_lived_store_plans_each_search_for_its_own_terms(postgres_schemas: Any) -> None:
    """psycopg prepares a statement run five times, and the server may then switch it to one
    generic plan made without the query's terms (at a million messages a two-word search went
    from 0.2 s to 2.2 s from its tenth run on). A search statement is never planned so."""
    from hermes_core.sessions.postgres import PostgresSessionStore

    with postgres_schemas.lease() as url:
        store = PostgresSessionStore(url, pool_size=1)  # one connection: its statements
        try:
            store.create_session("s")
            text = "the deploy script failed on host {} with a timeout"
            store.append_messages(
                "s", [{"role": "user", "content": text.format(n)} for n in range(300)]
            )
            for _ in range(15):
                assert store.search_messages("deploy timeout", limit=5)
            plans = store._read(
                lambda conn: conn.execute(
                    "SELECT generic_plans, custom_plans FROM pg_prepared_statements "
                    "WHERE statement LIKE %s",
                    ("%to_tsquery%",),
                ).fetchall()
            )
        finally:
            store.close()
    assert plans  # the search's statements were prepared, as in any long-lived store
    assert all(generic == 0 and custom >= 10 for generic, custom in plans), plans
