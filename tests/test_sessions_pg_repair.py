"""``sessions repair`` on PostgreSQL rebuilds its indexes after the rewrite's transaction,
concurrently: the full-text index with ``REINDEX INDEX CONCURRENTLY``, the trigram index as
migration 6 builds it (``CREATE INDEX CONCURRENTLY``), so writers go on, with each build's
progress read from ``pg_stat_progress_create_index``; a build cut short leaves an invalid
index that the next repair (for the trigram index, the next writable opening too) drops and
builds again.

The repairing process is a child that stops inside the first progress report of the index
a test holds (just before its build) until the test lets it go on. Open writing transactions
of the test hold the build where PostgreSQL makes it wait for writers (before its scan,
before its validation); the test asks the server, not a clock, whether anything waits.
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
from hermes_core.sessions.pgprogress import build_progress
from hermes_core.sessions.pgtrigram import TRIGRAM_INDEX, index_left, index_state
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

def progress(index, done, total):
    print(f"progress {index} {done} {total}", flush=True)
    if index == sys.argv[2] and not held:  # just before its concurrent build: wait
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


def repairer(url: str, index: str) -> subprocess.Popen[str]:
    """A child repairing *url*, stopped just before the concurrent build of *index*."""
    return subprocess.Popen(
        [sys.executable, "-c", _REPAIR, named(url, "hm-repair"), index],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "HERMES_SEMANTIC_SEARCH": "off"},
    )


def progress_line(process: subprocess.Popen[str], index: str) -> tuple[int, int]:
    """The next progress report of *index* (those of an index built before it skipped)."""
    while True:
        words = read_line(process).split()
        assert words and words[0] == "progress", words
        if words[1] == index:
            return int(words[2]), int(words[3])


def finished(process: subprocess.Popen[str]) -> str:
    """The child's last line, what its repair built (progress reports skipped)."""
    while (line := read_line(process)).startswith("progress"):
        pass
    assert line.startswith("finished"), line  # not the end of its output: it failed
    return line


_INVALID = (
    "SELECT c.relname FROM pg_index AS i JOIN pg_class AS c ON c.oid = i.indexrelid "
    "WHERE i.indrelid = 'messages'::regclass AND NOT i.indisvalid ORDER BY 1"
)


def being_built(admin: Any, index: str) -> bool:
    """Whether a concurrent build of *index* is under way or was cut short: an invalid index
    (``messages_trgm`` itself; a reindex's copy ``messages_tsv_ccnew``)."""
    invalid = [row[0] for row in admin.execute(_INVALID)]
    return invalid == [index if index == TRIGRAM_INDEX else f"{index}_ccnew"]


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


def held_before_build(
    process: subprocess.Popen[str], url: str, admin: Any, index: str
) -> tuple[Any, int]:
    """Let the paused repair build *index*, held by an open writer before its scan; returns
    that writer's transaction and its pid."""
    holder, pid = writer_lock(url)
    go_on(process)
    wait_until(
        lambda: backends(admin, "hm-repair", f"AND {pid} = ANY(pg_blocking_pids(pid))"),
        "the repair's index build waiting for the open writer",
    )
    assert being_built(admin, index)
    return holder, pid


def finds_gym(store: PostgresSessionStore, admin: Any) -> bool:
    gym = admin.execute("SELECT max(id) FROM messages WHERE content = %s", (GYM,)).fetchone()[0]
    return gym in [hit["id"] for hit in store.search_messages(QUESTION, limit=5)]


@pytest.mark.parametrize("index", ["messages_tsv", TRIGRAM_INDEX])
def test_a_writer_appends_while_repair_builds_an_index_and_progress_only_grows(
    filled: tuple[str, Any], index: str
) -> None:
    url, admin = filled
    process = repairer(url, index)
    first, second = None, None
    try:
        seen = [progress_line(process, index)]  # the rewrite committed, the build to start
        blocks = admin.execute(  # the table's blocks after the rewrite (a new copy of each row)
            "SELECT pg_relation_size('messages') / current_setting('block_size')::bigint"
        ).fetchone()[0]
        assert seen[0] == (0, 2 * blocks)
        first, _ = held_before_build(process, url, admin, index)
        # A second writer comes while the build waits for the first: it holds the build
        # again before its validation, once the scan is done.
        second, _ = writer_lock(url)
        appended: list[int] = []
        with PostgresSessionStore(named(url, "hm-writer"), semantic="off") as store:
            for n in range(10):
                appended.append(store.append_message("old", "user", f"Appended {n} meanwhile."))
            appended.append(store.append_message("old", "user", GYM))
            assert finds_gym(store, admin)
            assert process.poll() is None and being_built(admin, index)
            first.rollback()
            while seen[-1][0] * 2 != seen[-1][1]:  # until the scan is reported done
                seen.append(progress_line(process, index))
            assert process.poll() is None and being_built(admin, index)
            for n in range(10, 20):  # the writer goes on while the build waits to validate
                appended.append(store.append_message("old", "user", f"Appended {n} meanwhile."))
            second.rollback()
            while seen[-1][0] != seen[-1][1]:
                seen.append(progress_line(process, index))
            # The trigram index, built after the full-text one:
            assert finished(process) == "finished messages_trgm messages_tsv"
            assert process.wait() == 0
            assert admin.execute(_INVALID).fetchall() == []
            assert index_state(admin) == "valid" and not index_left(admin)
            assert finds_gym(store, admin)
            hits = store.search_messages("meanwhile", limit=50, snippets=False)
            assert {hit["id"] for hit in hits} == set(appended) - {appended[10]}
    finally:
        for holder in (first, second):
            if holder is not None:
                holder.close()
        if process.poll() is None:
            process.kill()
            process.wait()
    assert len(set(appended)) == 21
    count = admin.execute("SELECT count(*) FROM messages WHERE id = ANY(%s)", (appended,))
    assert count.fetchone()[0] == 21  # every append landed
    assert admin.execute("SELECT count(*) FROM messages").fetchone()[0] == MESSAGES + 21
    dones = [done for done, _ in seen]
    assert dones == sorted(dones) and len(set(dones)) == len(dones)  # each report further on
    total = seen[-1][1]
    assert seen[-1] == (total, total) and total >= 2 * blocks
    assert any(0 < done < total for done in dones)  # the scan done, the validation to come


@pytest.mark.parametrize(
    ("index", "then"),
    [("messages_tsv", "repair"), (TRIGRAM_INDEX, "repair"), (TRIGRAM_INDEX, "opening")],
)
def test_a_repair_cut_short_leaves_an_invalid_index_the_next_one_builds_again(
    filled: tuple[str, Any], index: str, then: str
) -> None:
    url, admin = filled
    process = repairer(url, index)
    holder = None
    try:
        progress_line(process, index)
        holder, pid = held_before_build(process, url, admin, index)
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            f"WHERE application_name = 'hm-repair' AND {pid} = ANY(pg_blocking_pids(pid))"
        )
        holder.rollback()
        # The build's end is a warning: the repair goes on without it.
        built = "messages_tsv" if index == TRIGRAM_INDEX else "messages_trgm messages_tsv"
        assert finished(process) == f"finished {built}"
        assert process.wait() == 0
    finally:
        if holder is not None:
            holder.close()
        if process.poll() is None:
            process.kill()
            process.wait()
    assert being_built(admin, index)  # left invalid
    assert (index_state(admin), index_left(admin)) == (
        ("invalid", True) if index == TRIGRAM_INDEX else ("valid", False)
    )
    with PostgresSessionStore(url, semantic="off", read_only=True) as reader:
        assert reader.search_messages("weekly report", limit=3)  # searches go on meanwhile
    if then == "repair":
        result = CliRunner().invoke(cli, ["sessions", "repair", "--db", url])
        assert result.exit_code == 0, result.output
        assert "the indexes messages_tsv and messages_trgm (concurrently)" in result.output
    else:
        seen: list[tuple[int, int]] = []
        PostgresSessionStore(
            url, semantic="off", index_progress=lambda d, t: seen.append((d, t))
        ).close()
        assert seen[0][0] == 0 and seen[-1][0] == seen[-1][1] > 0
    assert admin.execute(_INVALID).fetchall() == []
    assert index_state(admin) == "valid" and not index_left(admin)
    marker = admin.execute("SELECT 1 FROM state_meta WHERE key = %s", (pgtrigram.MARKER,))
    assert marker.fetchone() is None


def test_repair_draws_the_trigram_build_on_a_terminal(filled: tuple[str, Any]) -> None:
    from terminal_kit import run_on_a_terminal

    url, admin = filled
    cli_command = [sys.executable, "-c", "from hermes_core.cli import main; main()"]
    code, out, err = run_on_a_terminal([*cli_command, "sessions", "repair", "--db", url])
    assert code == 0, err
    assert "\rRebuilding the full-text index" in err
    assert "\rBuilding the trigram index for substring search" in err and " blocks" in err
    assert "the indexes messages_tsv and messages_trgm (concurrently)" in out
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
