"""Several processes appending to one state.db at once lose nothing."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from hermes_core.errors import SessionStoreError
from hermes_core.sessions import SessionStore

WORKERS = 4
APPENDS = 5_000

_WORKER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from hermes_core.sessions import SessionStore

    path, worker, count, go = sys.argv[1], sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
    store = SessionStore(path)
    session = "w" + worker
    store.create_session(session, source="cli")
    deadline = time.monotonic() + 60
    while not go.exists() and time.monotonic() < deadline:
        time.sleep(0.005)
    for i in range(count):
        text = f"marker w{worker}n{i}" + (" 并发标记" if i % 10 == 0 else "")
        store.append_message(session, "user" if i % 2 else "assistant", text)
    store.close()
    """
)


def test_parallel_appends_lose_nothing_and_indexes_agree(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    SessionStore(path).close()
    go = tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(path), str(n), str(APPENDS), str(go)],
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(WORKERS)
    ]
    time.sleep(0.5)
    go.touch()
    for proc in procs:
        _, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err

    with SessionStore(path, read_only=True) as store:
        conn = store._conn
        total = WORKERS * APPENDS
        assert conn.execute("SELECT COUNT(*), COUNT(DISTINCT id) FROM messages").fetchone() == (
            total,
            total,
        )
        for n in range(WORKERS):
            row = store.get_session(f"w{n}")
            assert row is not None and row["message_count"] == APPENDS
            contents = [
                r[0]
                for r in conn.execute(
                    "SELECT content FROM messages WHERE session_id = ? ORDER BY id", (f"w{n}",)
                )
            ]
            assert [c.split()[1] for c in contents] == [f"w{n}n{i}" for i in range(APPENDS)]

        all_ids = {r[0] for r in conn.execute("SELECT id FROM messages")}
        cjk_ids = {
            r[0] for r in conn.execute("SELECT id FROM messages WHERE content LIKE '%标记%'")
        }
        assert len(cjk_ids) == total // 10

        def matched(table: str, query: str) -> set[int]:
            sql = f"SELECT rowid FROM {table} WHERE {table} MATCH ?"
            return {r[0] for r in conn.execute(sql, (query,))}

        assert matched("messages_fts", "marker") == all_ids
        assert matched("messages_fts_trigram", '"marker"') == all_ids
        assert matched("messages_cjk_grams", '"标记"') == cjk_ids
        assert conn.execute("SELECT COUNT(*) FROM messages_cjk_pending").fetchone()[0] == 0
        assert len(store.search_messages("w3n4999")) == 1
        assert len(store.search_messages("并发", limit=5000)) == total // 10
    checker = sqlite3.connect(path)
    try:
        for table in ("messages_fts", "messages_fts_trigram", "messages_cjk_grams"):
            checker.execute(f"INSERT INTO {table}({table}) VALUES ('integrity-check')")
    finally:
        checker.close()


def test_a_write_waits_out_a_brief_lock(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    with SessionStore(path) as store:
        store.create_session("s")
        holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        holder.execute("BEGIN IMMEDIATE")
        release = threading.Timer(0.6, lambda: holder.execute("COMMIT"))
        release.start()
        try:
            store.append_message("s", "user", "written after the lock is released")
        finally:
            release.join()
            holder.close()
        assert store.message_count("s") == 1


def test_a_write_gives_up_with_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    with SessionStore(path, write_patience=0.5) as store:
        store.create_session("s")
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        try:
            with pytest.raises(SessionStoreError, match="stayed locked") as info:
                store.append_message("s", "user", "never written")
            assert str(path) in str(info.value)
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        assert store.message_count("s") == 0
        store.append_message("s", "user", "the store still works")
        assert store.message_count("s") == 1


def test_opening_needs_no_write_lock(tmp_path: Path) -> None:
    """Opening an up-to-date file writes nothing, so a busy writer elsewhere does not block it."""
    path = tmp_path / "state.db"
    SessionStore(path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with SessionStore(path, write_patience=0.2) as store:
            assert store.layout.ours
            assert store.list_sessions() == []
    finally:
        holder.execute("ROLLBACK")
        holder.close()
