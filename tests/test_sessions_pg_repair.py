"""``sessions repair`` on PostgreSQL builds the trigram index again as migration 6 does:
``CREATE INDEX CONCURRENTLY`` after the rewrite's transaction, so writers go on, with the
build's progress read from ``pg_stat_progress_create_index``; a build cut short leaves an
invalid index that the next repair or writable opening builds again.

The repairing process is a child that stops inside its first progress report (just before
the build) until the test lets it go on. Open writing transactions of the test hold the
build where PostgreSQL makes it wait for writers (before its scan, before its validation);
the test asks the server, not a clock, whether anything waits.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import CliRunner

from hermes_core.cli import cli
from hermes_core.sessions import pgtrigram
from hermes_core.sessions.pgtrigram import build_progress, index_left, index_state
from hermes_core.sessions.postgres import PostgresSessionStore
from tests.test_sessions_pg_backfill import backends, named, read_line, wait_until

MESSAGES = 300
GYM = "Renewed the FlexGym pass"
"""Found by *gym* only as a substring (``ILIKE``): what the trigram index serves."""
QUESTION = "Did I renew my gym membership?"

_REPAIR = """
import sys
from hermes_core.sessions.pgmaintenance import rebuild_search
from hermes_core.sessions.postgres import PostgresSessionStore

held = []

def progress(done, total):
    print(f"progress {done} {total}", flush=True)
    if not held:  # just before the concurrent build: wait for the test
        held.append(done)
        sys.stdin.readline()

with PostgresSessionStore(sys.argv[1], semantic="off") as store:
    counts = rebuild_search(store, progress)
print("finished", " ".join(sorted(counts)), flush=True)
"""


@pytest.fixture
def filled() -> Iterator[tuple[str, Any]]:
    """The URL of a current store of :data:`MESSAGES` messages, and an admin connection in
    its schema."""
    from hermes_core.testing.postgres import admin_connection, temporary_schema

    with temporary_schema() as url:
        with PostgresSessionStore(url, semantic="off") as store:
            store.create_session("old", source="cli")
            store.append_messages(
                "old",
                [
                    {"role": "user", "content": f"Message {n} about the weekly report."}
                    for n in range(MESSAGES)
                ],
            )
        admin = admin_connection()
        admin.execute(f"SET search_path = {url.rsplit('%3D', 1)[-1]}")
        assert index_state(admin) == "valid"
        try:
            yield url, admin
        finally:
            admin.close()


def repairer(url: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", _REPAIR, named(url, "hm-repair")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "HERMES_SEMANTIC_SEARCH": "off"},
    )


def progress_line(process: subprocess.Popen[str]) -> tuple[int, int]:
    words = read_line(process).split()
    assert words[0] == "progress", words
    return int(words[1]), int(words[2])


def writer_lock(url: str) -> tuple[Any, int]:
    """An open transaction holding a writer's lock on ``messages`` (as an append in flight
    does), and its backend's pid."""
    from hermes_core.testing.postgres import admin_connection

    holder = admin_connection()
    holder.autocommit = False
    holder.execute(f"LOCK TABLE {url.rsplit('%3D', 1)[-1]}.messages IN ROW EXCLUSIVE MODE")
    return holder, int(holder.execute("SELECT pg_backend_pid()").fetchone()[0])


def go_on(process: subprocess.Popen[str]) -> None:
    assert process.stdin is not None
    process.stdin.write("\n")
    process.stdin.flush()


def held_before_build(process: subprocess.Popen[str], url: str, admin: Any) -> tuple[Any, int]:
    """Let the paused repair build, held by an open writer before its scan; returns that
    writer's transaction and its pid. The old index is dropped by then; the new one is
    being built (invalid)."""
    holder, pid = writer_lock(url)
    go_on(process)
    wait_until(
        lambda: backends(admin, "hm-repair", f"AND {pid} = ANY(pg_blocking_pids(pid))"),
        "the repair's index build waiting for the open writer",
    )
    assert index_state(admin) == "invalid"
    return holder, pid


def finds_gym(store: PostgresSessionStore, admin: Any) -> bool:
    gym = admin.execute("SELECT max(id) FROM messages WHERE content = %s", (GYM,)).fetchone()[0]
    return gym in [hit["id"] for hit in store.search_messages(QUESTION, limit=5)]


def test_a_writer_appends_while_repair_builds_the_trigram_index_and_progress_only_grows(
    filled: tuple[str, Any],
) -> None:
    url, admin = filled
    process = repairer(url)
    first, second = None, None
    try:
        seen = [progress_line(process)]  # the rewrite committed, the build about to start
        blocks = admin.execute(  # the table's blocks after the rewrite (a new copy of each row)
            "SELECT pg_relation_size('messages') / current_setting('block_size')::bigint"
        ).fetchone()[0]
        assert seen[0] == (0, 2 * blocks)
        first, _ = held_before_build(process, url, admin)
        # A second writer comes while the build waits for the first: it holds the build
        # again before its validation, once the scan is done.
        second, _ = writer_lock(url)
        appended: list[int] = []
        with PostgresSessionStore(named(url, "hm-writer"), semantic="off") as store:
            for n in range(10):
                appended.append(store.append_message("old", "user", f"Appended {n} meanwhile."))
            appended.append(store.append_message("old", "user", GYM))
            assert finds_gym(store, admin)  # found without the index, by reading every row
            assert process.poll() is None and index_state(admin) == "invalid"
            first.rollback()
            while seen[-1][0] * 2 != seen[-1][1]:  # until the scan is reported done
                seen.append(progress_line(process))
            assert process.poll() is None and index_state(admin) == "invalid"
            for n in range(10, 20):  # the writer goes on while the build waits to validate
                appended.append(store.append_message("old", "user", f"Appended {n} meanwhile."))
            second.rollback()
            while True:
                line = read_line(process)
                if line.startswith("finished"):
                    break
                done, total = line.split()[1:]
                seen.append((int(done), int(total)))
            assert line == "finished messages_trgm messages_tsv"
            assert process.wait() == 0
            assert index_state(admin) == "valid" and not index_left(admin)
            assert finds_gym(store, admin)
    finally:
        for holder in (first, second):
            if holder is not None:
                holder.close()
        if process.poll() is None:
            process.kill()
            process.wait()
    assert len(appended) == 21 and len(set(appended)) == 21
    count = admin.execute("SELECT count(*) FROM messages WHERE id = ANY(%s)", (appended,))
    assert count.fetchone()[0] == 21  # every append landed
    assert admin.execute("SELECT count(*) FROM messages").fetchone()[0] == MESSAGES + 21
    dones = [done for done, _ in seen]
    assert dones == sorted(dones) and len(set(dones)) == len(dones)  # each report further on
    total = seen[-1][1]
    assert seen[-1] == (total, total) and total >= 2 * blocks
    assert any(0 < done < total for done in dones)  # the scan done, the validation to come


@pytest.mark.parametrize("then", ["repair", "opening"])
def test_a_repair_cut_short_leaves_an_invalid_index_the_next_one_builds_again(
    filled: tuple[str, Any], then: str
) -> None:
    url, admin = filled
    process = repairer(url)
    holder = None
    try:
        progress_line(process)
        holder, pid = held_before_build(process, url, admin)
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            f"WHERE application_name = 'hm-repair' AND {pid} = ANY(pg_blocking_pids(pid))"
        )
        holder.rollback()
        # The build's end is a warning: the repair finishes without the trigram index.
        assert read_line(process) == "finished messages_tsv"
        assert process.wait() == 0
    finally:
        if holder is not None:
            holder.close()
        if process.poll() is None:
            process.kill()
            process.wait()
    assert index_state(admin) == "invalid" and index_left(admin)
    if then == "repair":
        result = CliRunner().invoke(cli, ["sessions", "repair", "--db", url])
        assert result.exit_code == 0, result.output
        assert "the trigram index messages_trgm (built concurrently)" in result.output
    else:
        seen: list[tuple[int, int]] = []
        PostgresSessionStore(
            url, semantic="off", index_progress=lambda d, t: seen.append((d, t))
        ).close()
        assert seen[0][0] == 0 and seen[-1][0] == seen[-1][1] > 0
    assert index_state(admin) == "valid" and not index_left(admin)
    marker = admin.execute("SELECT 1 FROM state_meta WHERE key = %s", (pgtrigram.MARKER,))
    assert marker.fetchone() is None


def test_repair_draws_the_trigram_build_on_a_terminal(filled: tuple[str, Any]) -> None:
    from terminal_kit import run_on_a_terminal

    url, admin = filled
    cli_command = [sys.executable, "-c", "from hermes_core.cli import main; main()"]
    code, out, err = run_on_a_terminal([*cli_command, "sessions", "repair", "--db", url])
    assert code == 0, err
    assert "\rBuilding the trigram index for substring search" in err and " blocks" in err
    assert "messages_trgm (built concurrently)" in out
    assert index_state(admin) == "valid"


@pytest.mark.parametrize(
    ("phase", "done", "total", "expected"),
    [
        ("initializing", 0, 0, 0),
        ("waiting for writers before build", 0, 0, 0),
        ("building index: scanning table", 4, 10, 4),
        ("building index: scanning table", 12, 12, 10),  # never past the scan's half
        ("waiting for writers before validation", 10, 10, 10),
        ("index validation: scanning index", 50, 300, 10),
        ("index validation: sorting tuples", 0, 0, 10),
        ("index validation: scanning table", 3, 10, 13),
        ("waiting for old snapshots", 0, 0, 20),
    ],
)
def test_each_phase_of_a_concurrent_build_counts_the_blocks_done(
    phase: str, done: int, total: int, expected: int
) -> None:
    assert build_progress(phase, done, total, blocks=10) == expected
