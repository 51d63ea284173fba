"""Migration 4 on a PostgreSQL store of the build before stems: the messages are stemmed in
committed batches after a short migration, so writers go on meanwhile, and a run killed
half-way is finished by the next opening with nothing lost or stemmed twice.

A store the migrating process works on is made in a schema of its own (schemas 1-3 as that
build left them). The migrating process is a child that stops after its first batch, inside
its progress callback, until the test lets it go on; the test asks the server, not a
clock, whether anything waits for it. Migration 6's trigram index is built after the
backfill with ``CREATE INDEX CONCURRENTLY``: the tests hold that build with an open writing
transaction, append meanwhile, and end the build's backend to leave an invalid index.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_core.sessions import pgbackfill, pgtrigram
from hermes_core.sessions.pgschema import MIGRATIONS, PG_SCHEMA_VERSION
from hermes_core.sessions.pgtrigram import index_state
from hermes_core.sessions.porter import index_stems
from hermes_core.sessions.postgres import PostgresSessionStore

TEXTS = [f"Message {n}: it hurt painfully, the monthly report of week {n}." for n in range(30)]
BATCH = 10

_MIGRATOR = """
import sys
from hermes_core.sessions import pgbackfill
from hermes_core.sessions.postgres import PostgresSessionStore

pgbackfill.BATCH = int(sys.argv[2])
held = []

def progress(done, total):
    print(f"progress {done} {total}", flush=True)
    if done and not held:  # after the first committed batch: wait for the test
        held.append(done)
        sys.stdin.readline()

PostgresSessionStore(sys.argv[1], semantic="off", upgrade_progress=progress).close()
print("finished", flush=True)
"""


@pytest.fixture
def old_store() -> Iterator[tuple[str, Any]]:
    """The URL of a schema-3 store holding :data:`TEXTS`, and an admin connection in it."""
    from hermes_core.testing.postgres import admin_connection, migrated_to, temporary_schema

    with temporary_schema() as url:
        schema = url.rsplit("%3D", 1)[-1]
        admin = admin_connection()
        admin.execute(f"SET search_path = {schema}")
        migrated_to(admin, 3)
        admin.execute("INSERT INTO sessions(id, source, started_at) VALUES ('old', 'cli', 1)")
        for n, text in enumerate(TEXTS):
            admin.execute(
                "INSERT INTO messages(session_id, role, timestamp, content, search_text) "
                "VALUES ('old', 'user', %s, %s, %s)",
                (n, text, text),
            )
        try:
            yield url, admin
        finally:
            admin.close()


def named(url: str, application: str) -> str:
    """*url* with its connections named *application* (``pg_stat_activity`` shows it)."""
    return f"{url}&application_name={application}"


def migrator(url: str) -> subprocess.Popen[str]:
    """A child opening *url* with batches of :data:`BATCH`, stopped after the first one."""
    return subprocess.Popen(
        [sys.executable, "-c", _MIGRATOR, named(url, "hm-migrator"), str(BATCH)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "HERMES_SEMANTIC_SEARCH": "off"},
    )


def read_line(process: subprocess.Popen[str]) -> str:
    """The child's next line; a child silent for 120 s is killed and the test fails (a hang
    guard like :func:`wait_until`, not a measure of speed)."""
    stdout = process.stdout
    assert stdout is not None
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.append(stdout.readline()), daemon=True)
    reader.start()
    reader.join(120)
    if reader.is_alive():
        process.kill()
        pytest.fail("the migrator was silent for 120 s: it waits on what the test does not hold")
    return lines[0].strip()


def wait_until(condition: Any, what: str) -> None:
    """Poll the server until *condition*() holds (the state waited for, not a delay)."""
    deadline = time.monotonic() + 120
    while not condition():
        assert time.monotonic() < deadline, f"never saw {what}"
        time.sleep(0.02)


def resume_until_held(
    process: subprocess.Popen[str],
    url: str,
    holder: Any,
    admin: Any,
    lock: tuple[str, tuple[Any, ...]],
    what: str,
) -> None:
    """Take *lock* (a statement on ``{schema}.messages`` and its parameters) in an open
    transaction of *holder*, let the paused migrator of *url* go on, and wait until it
    waits for that transaction."""
    holder.autocommit = False
    schema = url.rsplit("%3D", 1)[-1]
    statement, params = lock
    holder.execute(statement.format(schema=schema), params)
    assert process.stdin is not None
    process.stdin.write("\n")
    process.stdin.flush()
    held_by = holder.execute("SELECT pg_backend_pid()").fetchone()[0]
    wait_until(
        lambda: backends(admin, "hm-migrator", f"AND {held_by} = ANY(pg_blocking_pids(pid))"),
        what,
    )


def stems_by_id(admin: Any) -> dict[int, str | None]:
    return dict(admin.execute("SELECT id, stems FROM messages ORDER BY id").fetchall())


def backends(admin: Any, application: str, extra: str = "") -> int:
    return int(
        admin.execute(
            f"SELECT count(*) FROM pg_stat_activity WHERE application_name = %s {extra}",
            (application,),
        ).fetchone()[0]
    )


def assert_fully_stemmed(admin: Any, ids: list[int]) -> None:
    rows = admin.execute("SELECT id, search_text, stems FROM messages ORDER BY id").fetchall()
    assert [row[0] for row in rows] == ids  # nothing lost, nothing added twice
    assert [row[2] for row in rows] == index_stems([row[1] for row in rows])
    marker = admin.execute("SELECT value FROM state_meta WHERE key = %s", (pgbackfill.MARKER,))
    assert marker.fetchone() is None
    versions = admin.execute("SELECT version FROM hermes_schema_migrations ORDER BY 1")
    assert [row[0] for row in versions] == list(range(1, PG_SCHEMA_VERSION + 1))


def test_a_writer_appends_while_another_process_stems_the_store(
    old_store: tuple[str, Any],
) -> None:
    url, admin = old_store
    process = migrator(url)
    try:
        assert read_line(process) == f"progress 0 {len(TEXTS)}"
        assert read_line(process) == f"progress {BATCH} {len(TEXTS)}"
        # The migrator is between its first and second batch: the append must not wait for it.
        appended: list[int] = []

        def append() -> None:
            with PostgresSessionStore(named(url, "hm-writer"), semantic="off") as store:
                appended.append(store.append_message("old", "user", "It hurt painfully again."))

        writer = threading.Thread(target=append)
        writer.start()
        migrator_pids = "ARRAY(SELECT pid FROM pg_stat_activity WHERE application_name = "
        waiting = f"AND pg_blocking_pids(pid) && {migrator_pids}'hm-migrator')"
        while writer.is_alive():
            assert not backends(admin, "hm-writer", waiting), "the append waits for the backfill"
            writer.join(0.02)
        assert appended, "the append failed"
        assert process.poll() is None  # the backfill has not finished
        stems = stems_by_id(admin)
        assert sum(value is None for value in stems.values()) == len(TEXTS) - BATCH
        assert stems[appended[0]] == index_stems(["It hurt painfully again."])[0]
        assert process.stdin is not None
        process.stdin.write("\n")
        process.stdin.flush()
        rest = [read_line(process) for _ in range(3)]
        assert rest == [f"progress {n} {len(TEXTS)}" for n in (20, 30)] + ["finished"]
        assert process.wait() == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    ids = sorted(stems_by_id(admin))
    assert_fully_stemmed(admin, ids)
    with PostgresSessionStore(url, semantic="off") as store:
        hits = store.search_messages("painfully", snippets=False, limit=50)
    assert sorted(hit["id"] for hit in hits) == ids  # every row by its Porter stem


def test_a_backfill_killed_mid_batch_is_finished_by_the_next_opening(
    old_store: tuple[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from hermes_core.testing.postgres import admin_connection

    url, admin = old_store
    ids = [row[0] for row in admin.execute("SELECT id FROM messages ORDER BY id")]

    holder = admin_connection()
    process = migrator(url)
    try:
        assert read_line(process) == f"progress 0 {len(TEXTS)}"
        assert read_line(process) == f"progress {BATCH} {len(TEXTS)}"
        # A row of the second batch is locked, so the migrator stops inside that batch's
        # transaction (holding the marker and the rows before it), where it is killed.
        resume_until_held(
            process,
            url,
            holder,
            admin,
            ("SELECT 1 FROM {schema}.messages WHERE id = %s FOR UPDATE", (ids[15],)),
            "the migrator waiting inside its second batch",
        )
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        holder.rollback()
        wait_until(lambda: not backends(admin, "hm-migrator"), "the killed migrator's end")
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        holder.close()
    stems = stems_by_id(admin)
    assert [stems[i] is not None for i in ids] == [n < BATCH for n in range(len(TEXTS))]
    marker = admin.execute("SELECT value FROM state_meta WHERE key = %s", (pgbackfill.MARKER,))
    assert marker.fetchone()[0] == f"{ids[BATCH - 1]} {ids[-1]}"

    monkeypatch.setattr(pgbackfill, "BATCH", BATCH)
    seen: list[tuple[int, int]] = []
    left = len(TEXTS) - BATCH
    PostgresSessionStore(url, semantic="off", upgrade_progress=lambda d, t: seen.append((d, t)))
    assert seen == [(0, left), (BATCH, left), (left, left)]
    assert_fully_stemmed(admin, ids)


def test_a_store_without_messages_needs_no_backfill_and_a_new_one_has_the_trigger_and_index() -> (
    None
):
    from hermes_core.testing.postgres import admin_connection, temporary_schema

    with temporary_schema() as url:
        seen: list[tuple[int, int]] = []
        with PostgresSessionStore(url, semantic="off", upgrade_progress=lambda *a: seen.append(a)):
            pass
        assert seen == []
        schema = url.rsplit("%3D", 1)[-1]
        admin = admin_connection()
        try:
            generated = admin.execute(
                "SELECT attname, attgenerated FROM pg_attribute WHERE attrelid = %s::regclass "
                "AND attname IN ('tsv', 'words') ORDER BY attname",
                (f"{schema}.messages",),
            ).fetchall()
            assert generated == [("tsv", ""), ("words", "")]  # kept by the trigger
            admin.execute(f"SET search_path = {schema}")
            assert index_state(admin) == "valid"  # built in the migration: no rows to wait for
            for marker in (pgbackfill.MARKER, pgtrigram.MARKER):
                assert admin.execute(
                    f"SELECT count(*) FROM {schema}.state_meta WHERE key = %s", (marker,)
                ).fetchone() == (0,)
        finally:
            admin.close()


_OLD_4 = r"""
ALTER TABLE messages DROP COLUMN tsv, DROP COLUMN words;
ALTER TABLE messages ADD COLUMN stems TEXT;
ALTER TABLE messages
ADD COLUMN words INTEGER GENERATED ALWAYS AS (CASE WHEN stems IS NULL
    THEN regexp_count(COALESCE(search_text, ''), '\w+')
    ELSE COALESCE(array_length(string_to_array(NULLIF(stems, ''), ' '), 1), 0) END) STORED,
ADD COLUMN tsv TSVECTOR GENERATED ALWAYS AS (
    setweight(CASE WHEN stems IS NULL THEN to_tsvector('english', COALESCE(search_text, ''))
        ELSE to_tsvector('simple', stems) END, 'A')
    || to_tsvector('simple', COALESCE(cjk_grams, ''))
) STORED;
CREATE INDEX messages_tsv ON messages USING GIN (tsv);
"""
"""What migration 4 of the build before left (generated columns; the CJK-split part is left
out here, as it changes nothing this test reads)."""


def test_migration_7_gives_a_store_the_build_before_migrated_the_trigger(
    old_store: tuple[str, Any],
) -> None:
    url, admin = old_store
    admin.execute(_OLD_4)
    admin.execute("UPDATE messages SET stems = 'old stems'")
    for version in (4, 5, 6):
        step = MIGRATIONS[version]
        if version == 4:
            pass  # done above, as the build before did it
        elif isinstance(step, str):
            admin.execute(step)
        else:
            step(admin)
        admin.execute("INSERT INTO hermes_schema_migrations(version) VALUES (%s)", (version,))
    with PostgresSessionStore(url, semantic="off") as store:
        new = store.append_message("old", "user", "A monthly review.")
        hits = store.search_messages("monthly review", snippets=False)
    assert [hit["id"] for hit in hits] == [new]
    words = admin.execute("SELECT words FROM messages WHERE id = %s", (new,)).fetchone()[0]
    assert words == len(index_stems(["A monthly review."])[0].split())
    versions = admin.execute("SELECT version FROM hermes_schema_migrations ORDER BY 1")
    assert [row[0] for row in versions] == list(range(1, PG_SCHEMA_VERSION + 1))


def test_doctor_counts_the_messages_left_to_stem(
    old_store: tuple[str, Any], tmp_path: Path
) -> None:
    from hermes_core.cli.doctor_cmd import check_session_database

    url, admin = old_store
    step = MIGRATIONS[4]
    assert callable(step)
    step(admin)  # migration 4 as the store applies it, its backfill not run yet
    admin.execute("INSERT INTO hermes_schema_migrations(version) VALUES (4)")
    findings = check_session_database(tmp_path, {"sessions": {"url": url}})
    (left,) = [f for f in findings if "still to stem" in f.message]
    assert f"{len(TEXTS)} messages still to stem" in left.message and left.level == "warn"
    PostgresSessionStore(url, semantic="off").close()
    findings = check_session_database(tmp_path, {"sessions": {"url": url}})
    assert not [f for f in findings if "still to stem" in f.message]


def test_chat_shows_the_stemming_before_its_first_prompt(
    old_store: tuple[str, Any], hermes_home: Path
) -> None:
    from terminal_kit import run_on_a_terminal

    from hermes_core.sessions.opening import GRAM_BATCH
    from hermes_core.testing.openai_fake import FakeOpenAIServer

    url, admin = old_store
    more = GRAM_BATCH + 100 - len(TEXTS)  # more than one batch: a bar is drawn
    admin.execute(
        "INSERT INTO messages(session_id, role, timestamp, content, search_text) "
        "SELECT 'old', 'user', n, 'more ' || n, 'more ' || n FROM generate_series(1, %s) AS n",
        (more,),
    )
    total = len(TEXTS) + more
    (hermes_home / "config.yaml").write_text(f"sessions:\n  url: '{url}'\n", "utf-8")
    cli = [sys.executable, "-c", "from hermes_core.cli import main; main()"]
    with FakeOpenAIServer() as server:
        chat = [*cli, "chat", "--base-url", server.base_url, "--model", "fake-model"]
        code, _, err = run_on_a_terminal(chat, typed="/exit\n")
    assert code == 0, err
    assert "\rStemming the stored messages for search" in err
    assert f"100% {total:,}/{total:,} messages" in err
    assert err.index("Stemming the stored") < err.index("hermes-memory chat — session")
    assert admin.execute("SELECT count(*) FROM messages WHERE stems IS NULL").fetchone() == (0,)


GYM = "Renewed the FlexGym pass"
"""A message *gym* is in only as a substring: the question below finds it by ``ILIKE``."""
QUESTION = "Did I renew my gym membership?"


def finds_gym(store: PostgresSessionStore, admin: Any) -> bool:
    """Whether the store's search of :data:`QUESTION` finds :data:`GYM`."""
    (gym,) = admin.execute("SELECT id FROM messages WHERE content = %s", (GYM,)).fetchone()
    return gym in [hit["id"] for hit in store.search_messages(QUESTION, limit=5)]


def index_building(url: str, admin: Any) -> tuple[subprocess.Popen[str], Any]:
    """A migrator of the ``old_store`` at *url* held inside its concurrent trigram index build
    (waiting for a transaction of the returned connection, which holds a writer's lock)."""
    from hermes_core.testing.postgres import admin_connection

    admin.execute(
        "INSERT INTO messages(session_id, role, timestamp, content, search_text) "
        "VALUES ('old', 'user', 99, %s, %s)",
        (GYM, GYM),
    )
    holder = admin_connection()
    process = migrator(url)
    assert read_line(process) == f"progress 0 {len(TEXTS) + 1}"
    assert read_line(process) == f"progress {BATCH} {len(TEXTS) + 1}"
    # Migration 4's lock is long gone: an open writing transaction now holds a build that
    # starts after the backfill, as an agent's append does for a moment.
    resume_until_held(
        process,
        url,
        holder,
        admin,
        ("LOCK TABLE {schema}.messages IN ROW EXCLUSIVE MODE", ()),
        "the migrator's index build waiting for the open writer",
    )
    assert stems_by_id(admin) and None not in stems_by_id(admin).values()  # backfill done
    assert index_state(admin) == "invalid"  # being built: not used yet
    return process, holder


def test_a_writer_appends_while_the_trigram_index_is_built_concurrently(
    old_store: tuple[str, Any],
) -> None:
    url, admin = old_store
    process, holder = index_building(url, admin)
    try:
        with PostgresSessionStore(named(url, "hm-writer"), semantic="off") as store:
            appended = store.append_message("old", "user", "It hurt painfully again.")
            assert finds_gym(store, admin)  # found without the index
        assert appended
        # The append returned while the build still waits for the open writer: it did not wait.
        assert process.poll() is None and index_state(admin) == "invalid"
        holder.rollback()
        total = len(TEXTS) + 1
        rest = [read_line(process) for _ in range(4)]
        assert rest == [f"progress {n} {total}" for n in (20, 30, total)] + ["finished"]
        assert process.wait() == 0
    finally:
        holder.close()
        if process.poll() is None:
            process.kill()
            process.wait()
    assert index_state(admin) == "valid"
    marker = admin.execute("SELECT value FROM state_meta WHERE key = %s", (pgtrigram.MARKER,))
    assert marker.fetchone() is None


def test_a_killed_index_build_is_built_again_by_the_next_writable_opening(
    old_store: tuple[str, Any], tmp_path: Path
) -> None:
    from hermes_core.cli.doctor_cmd import check_session_database

    url, admin = old_store
    process, holder = index_building(url, admin)
    try:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE application_name = 'hm-migrator'"
        )
        holder.rollback()
        total = len(TEXTS) + 1
        rest = [read_line(process) for _ in range(4)]
        # The build's end is a warning: the store opens and works without the index.
        assert rest == [f"progress {n} {total}" for n in (20, 30, total)] + ["finished"]
        assert process.wait() == 0
        wait_until(lambda: not backends(admin, "hm-migrator"), "the killed migrator's end")
    finally:
        holder.close()
        if process.poll() is None:
            process.kill()
            process.wait()
    assert index_state(admin) == "invalid"
    with PostgresSessionStore(url, semantic="off", read_only=True) as reader:
        assert finds_gym(reader, admin)  # the invalid index is not used
    assert index_state(admin) == "invalid"  # a reader leaves it
    findings = check_session_database(tmp_path, {"sessions": {"url": url}})
    (left,) = [f for f in findings if "messages_trgm" in f.message]
    assert "still to build" in left.message and left.level == "warn"
    with PostgresSessionStore(url, semantic="off") as store:
        assert finds_gym(store, admin)
    assert index_state(admin) == "valid"
    marker = admin.execute("SELECT value FROM state_meta WHERE key = %s", (pgtrigram.MARKER,))
    assert marker.fetchone() is None
    findings = check_session_database(tmp_path, {"sessions": {"url": url}})
    assert not [f for f in findings if "messages_trgm" in f.message]
