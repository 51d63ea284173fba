"""A long CJK queue (the upgrade to schema 7, a repair) drains in bounded steps.

A write tokenises its own rows and at most ``WRITE_BACKLOG`` queued ones, never the
whole queue; search finds every queued row meanwhile; an upgrade running in one
process while another appends, or killed half-way and reopened, ends with the gram
index a fresh build would hold, nothing lost or indexed twice. Real processes on real
files.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from schema_kit import downgrade_to_version_6, to_bigrams

from hermes_core.sessions import SCHEMA_VERSION, SessionStore
from hermes_core.sessions.cjk import LONGEST_GRAM, cjk_grams
from hermes_core.sessions.gramqueue import WRITE_BACKLOG, gram_text_sql, tool_calls_text
from hermes_core.sessions.opening import GRAM_BATCH

TERM = "记忆断裂"


def _text(n: int) -> str:
    return f"第{n}号 内存泄漏 报告" + (f" {TERM}" if n % 50 == 0 else "")


def _build(path: Path, count: int) -> None:
    messages = [{"role": "user", "content": _text(n), "timestamp": 1e9 + n} for n in range(count)]
    with SessionStore(path, semantic="off") as store:
        store.import_sessions([{"id": "s", "source": "cli", "messages": messages}])


def _connect(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None, timeout=30)


def _grams(path: Path) -> dict[int, str]:
    conn = _connect(path)
    try:
        return dict(conn.execute("SELECT rowid, grams FROM messages_cjk_grams"))
    finally:
        conn.close()


def _expected_grams(path: Path) -> dict[int, str]:
    """What a fresh build holds for every message in the file now."""
    conn = _connect(path)
    try:
        rows = conn.execute(f"SELECT m.id, {gram_text_sql('m')} FROM messages AS m").fetchall()
    finally:
        conn.close()
    return {
        mid: grams
        for mid, c, n, t in rows
        if (grams := cjk_grams((c, n, tool_calls_text(t)), LONGEST_GRAM))
    }


def _queued(path: Path) -> int:
    conn = _connect(path)
    try:
        return int(conn.execute("SELECT count(*) FROM messages_cjk_pending").fetchone()[0])
    finally:
        conn.close()


def _holding(path: Path, text: str) -> set[int]:
    conn = _connect(path)
    try:
        like = f"%{text}%"
        return {r[0] for r in conn.execute("SELECT id FROM messages WHERE content LIKE ?", (like,))}
    finally:
        conn.close()


def _found(store: SessionStore, query: str) -> set[int]:
    return {h["id"] for h in store.search_messages(query, limit=5000, snippets=False)}


def _integrity(path: Path) -> None:
    conn = _connect(path)
    try:
        conn.execute(
            "INSERT INTO messages_cjk_grams(messages_cjk_grams) VALUES ('integrity-check')"
        )
    finally:
        conn.close()


def test_a_write_takes_its_own_rows_and_a_bounded_part_of_the_queue(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    _build(path, 1_000)
    with SessionStore(path, semantic="off") as store:
        # What another process's upgrade does to the file under this running writer:
        # every gram row back to bigrams, and queued to be tokenised again.
        other = _connect(path)
        other.execute("BEGIN IMMEDIATE")
        to_bigrams(other)
        other.execute("INSERT INTO messages_cjk_pending(id) SELECT rowid FROM messages_cjk_grams")
        other.execute("COMMIT")
        other.close()
        assert store.gram_backlog() == 1_000
        new = store.append_message("s", role="user", content=f"新的 {TERM} 消息")
        assert store.gram_backlog() == 1_000 - WRITE_BACKLOG  # not the whole queue
        assert _grams(path)[new] == cjk_grams([f"新的 {TERM} 消息"], LONGEST_GRAM)
        holding = _holding(path, TERM)
        assert len(holding) == 21 and new in holding
        # Queued rows hold only bigrams: the four- and three-character terms (trigram
        # phrases) find them through the scan of the queue.
        for query in (TERM, "记忆断", "断裂", "忆"):
            assert _found(store, query) == _holding(path, query), query
        without = _holding(path, "内存泄漏") - holding  # a term excluded, queued rows too
        assert _found(store, f"内存泄漏 NOT {TERM}") == without
        writes = 1
        while store.gram_backlog():
            store.append_message("s", role="assistant", content="ok")
            writes += 1
        assert writes == -(-1_000 // WRITE_BACKLOG)  # a bounded part each, until none is left
        for query in (TERM, "记忆断", "断裂"):
            assert _found(store, query) == _holding(path, query), query
        assert store.check() == []
    assert _grams(path) == _expected_grams(path)


def test_a_repair_refills_the_gram_index_in_batches_with_progress(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    _build(path, GRAM_BATCH + 1_500)
    fresh = _grams(path)
    seen: list[tuple[int, int]] = []
    with SessionStore(path, semantic="off") as store:
        counts = store.rebuild_indexes(progress=lambda done, total: seen.append((done, total)))
        assert store.check() == []
    total = GRAM_BATCH + 1_500
    assert seen == [(0, total), (GRAM_BATCH, total), (total, total)]
    assert counts["messages_cjk_grams"] == len(fresh) == GRAM_BATCH + 1_500
    assert _grams(path) == fresh
    assert _queued(path) == 0


_APPENDER = textwrap.dedent(
    """
    import json, sys, time
    from pathlib import Path
    from hermes_core.sessions import SessionStore

    path, ready, go, done = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4])
    term = sys.argv[5]
    store = SessionStore(path, semantic="off")
    ready.touch()
    deadline = time.monotonic() + 120
    while not go.exists() and time.monotonic() < deadline:
        time.sleep(0.005)
    report = {"appended": [], "overlapping": 0, "misses": []}
    tail = 0
    while tail < 20 and time.monotonic() < deadline:
        tail += done.exists()
        backlog = store.gram_backlog()
        n = len(report["appended"])
        text = f"追加{n} {term}" if n % 2 else f"追加{n} 内存"
        report["appended"].append(store.append_message("s", role="user", content=text))
        report["overlapping"] += backlog > 0
        mine = {i for k, i in enumerate(report["appended"]) if k % 2}
        found = {h["id"] for h in store.search_messages(term, limit=5000, snippets=False)}
        if not mine <= found:
            report["misses"].append(sorted(mine - found))
    store.close()
    print(json.dumps(report))
    """
)

_UPGRADER = (
    "import sys\nfrom hermes_core.sessions import SessionStore\nSessionStore(sys.argv[1]).close()"
)


def test_an_upgrade_in_one_process_while_another_appends(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    _build(path, 4 * GRAM_BATCH)
    fresh = _grams(path)
    ready, go, done = (tmp_path / name for name in ("ready", "go", "done"))
    appender = subprocess.Popen(
        [sys.executable, "-c", _APPENDER, str(path), str(ready), str(go), str(done), TERM],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not ready.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    # The appender is a writer already running (it opened the file at version 7); the
    # file goes back to version 6 under it, as if written by the previous release, and
    # another process opens it and upgrades it while the appender goes on appending.
    downgrade_to_version_6(path)
    go.touch()
    upgrader = subprocess.run(
        [sys.executable, "-c", _UPGRADER, str(path)], capture_output=True, text=True, timeout=600
    )
    done.touch()
    out, err = appender.communicate(timeout=600)
    assert upgrader.returncode == 0, upgrader.stderr
    assert appender.returncode == 0, err
    report = json.loads(out)
    assert report["overlapping"] > 0  # some appends were made while the queue was long
    assert report["misses"] == []  # a search never missed a row, queued or not
    assert _queued(path) == 0
    grams = _grams(path)
    assert grams == _expected_grams(path)  # every row once, as a fresh build tokenises it
    assert {i: grams[i] for i in fresh} == fresh
    assert set(report["appended"]) <= set(grams)
    _integrity(path)
    with SessionStore(path, semantic="off") as store:
        assert store.check() == []
        assert _found(store, TERM) == _holding(path, TERM)


def test_an_upgrade_killed_half_way_is_searchable_and_the_reopening_completes_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "state.db"
    _build(path, 6 * GRAM_BATCH)
    fresh = _grams(path)
    downgrade_to_version_6(path)
    upgrader = subprocess.Popen(
        [sys.executable, "-c", _UPGRADER, str(path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    watcher = _connect(path)
    deadline = time.monotonic() + 300
    try:
        while time.monotonic() < deadline:  # until the first batch is committed
            version = watcher.execute("SELECT max(version) FROM schema_version").fetchone()[0]
            left = watcher.execute("SELECT count(*) FROM messages_cjk_pending").fetchone()[0]
            if version == SCHEMA_VERSION and 0 < left < len(fresh):
                break
            time.sleep(0.002)
    finally:
        watcher.close()
    os.kill(upgrader.pid, signal.SIGKILL)
    upgrader.wait(timeout=60)
    left = _queued(path)
    assert 0 < left < len(fresh)  # killed half-way, a batch or more done
    with SessionStore(path, read_only=True, semantic="off") as reader:
        assert reader.gram_backlog() == left
        for query in (TERM, "记忆断", "断裂"):
            assert _found(reader, query) == _holding(path, query), query
    seen: list[tuple[int, int]] = []
    with SessionStore(
        path, semantic="off", upgrade_progress=lambda d, t: seen.append((d, t))
    ) as store:
        assert store.gram_backlog() == 0
        assert store.check() == []
    assert seen[0] == (0, left) and seen[-1] == (left, left)
    assert _grams(path) == fresh  # identical to the fresh build
    _integrity(path)
