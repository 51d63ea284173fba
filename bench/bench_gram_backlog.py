"""What a long CJK queue (the upgrade to schema 7) costs a writer: one append, and appends
while another process upgrades.

* **one append** into a store whose every CJK row is queued (an upgrade in progress):
  the write as it was before 0.5.0 (tokenising the whole queue in its transaction),
  the bounded write (its own row and ``WRITE_BACKLOG`` more), and the floor: the same
  append with an empty queue;
* **appends during an upgrade**: this process appends one message at a time while a
  second process opens a version 6 copy and upgrades it; the latency (p50, p95, max) of
  the appends made while rows were queued, and the upgrade's wall time (from starting
  its process to its exit) and CPU time, with the pause between batches
  (``GRAM_PAUSE``) and without it (the baseline, set in the upgrading process only).

Usage: ``python bench/bench_gram_backlog.py [--rows 50000]``. Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from hermes_core.sessions import SessionStore
from hermes_core.sessions.cjk import cjk_grams
from hermes_core.sessions.gramqueue import drain_gram_queue, gram_text_sql, tool_calls_text

TEXT = "部署回滚失败，需要检查日志和内存泄漏的问题，记忆断裂的原因还没有找到"


def _build(path: Path, rows: int) -> None:
    messages = [
        {"role": "user", "content": f"第{n}号 {TEXT[n % 7 :]}", "timestamp": 1e9 + n}
        for n in range(rows)
    ]
    with SessionStore(path, semantic="off") as store:
        store.import_sessions([{"id": "s", "source": "cli", "messages": messages}])


def _to_version_6(path: Path) -> None:
    conn = sqlite3.connect(path)
    rows = conn.execute(f"SELECT m.id, {gram_text_sql('m')} FROM messages AS m").fetchall()
    conn.executemany(
        "UPDATE messages_cjk_grams SET grams = ? WHERE rowid = ?",
        [(cjk_grams((c, n, tool_calls_text(t)), 2), mid) for mid, c, n, t in rows],
    )
    conn.execute("UPDATE schema_version SET version = 6")
    conn.execute("UPDATE state_meta SET value = '6' WHERE key = 'hermes_memory.schema'")
    conn.commit()
    conn.close()


def _queue_all(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute(
        "INSERT OR IGNORE INTO messages_cjk_pending(id) SELECT rowid FROM messages_cjk_grams"
    )
    conn.commit()
    conn.close()


def _timed(fn: Any) -> dict[str, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return {
        "wall_ms": round((time.perf_counter() - wall) * 1000, 2),
        "cpu_ms": round((time.process_time() - cpu) * 1000, 2),
    }


def one_append(folder: Path, source: Path) -> dict[str, Any]:
    """One append into a store whose whole gram index is queued, three ways."""
    results: dict[str, Any] = {}
    for way in ("floor", "whole_queue", "bounded"):
        path = folder / f"{way}.db"
        shutil.copy(source, path)
        if way != "floor":
            _queue_all(path)
        with SessionStore(path, semantic="off") as store:
            if way == "whole_queue":  # opening drained it: queue it again under the writer
                _queue_all(path)

                def old_write(store: SessionStore = store) -> None:
                    def write(conn: sqlite3.Connection) -> None:
                        conn.execute(
                            "INSERT INTO messages(session_id, role, timestamp, content) "
                            "VALUES ('s', 'user', 2e9, '新的消息')"
                        )
                        drain_gram_queue(conn, 10**9)  # what every write did before

                    store._write(write)

                results[way] = _timed(old_write)
            else:
                if way == "bounded":
                    _queue_all(path)
                results[way] = _timed(
                    lambda store=store: store.append_message("s", role="user", content="新的消息")
                )
            results[way]["queued_after"] = store.gram_backlog()
    return results


_UPGRADER = """
import sys
from hermes_core.sessions import SessionStore, opening
if sys.argv[2] == "0":
    opening.GRAM_PAUSE = 0.0
SessionStore(sys.argv[1]).close()
"""


def appends_during_upgrade(folder: Path, source: Path, pause: bool) -> dict[str, Any]:
    """Append while another process upgrades a version 6 copy of *source*."""
    path = folder / f"upgrade-{int(pause)}.db"
    shutil.copy(source, path)
    store = SessionStore(path, semantic="off")  # a writer already running, opened at 7
    _to_version_6(path)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    upgrader = subprocess.Popen([sys.executable, "-c", _UPGRADER, str(path), str(int(pause))])
    latencies: list[float] = []  # of the appends made while rows were queued
    appends = 0
    while upgrader.poll() is None:
        queued = store.gram_backlog()
        t = time.perf_counter()
        store.append_message("s", role="user", content="追加的消息")
        appends += 1
        if queued:
            latencies.append((time.perf_counter() - t) * 1000)
    upgrade_wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    store.close()
    latencies.sort()
    return {
        "appends": appends,
        "appends_while_queued": len(latencies),
        "p50_ms": round(statistics.median(latencies), 1),
        "p95_ms": round(latencies[int(0.95 * (len(latencies) - 1))], 1),
        "max_ms": round(latencies[-1], 1),
        "upgrade_wall_s": round(upgrade_wall, 2),
        "upgrade_cpu_s": round(
            after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 2
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=50_000, help="CJK messages in the store")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        source = folder / "source.db"
        _build(source, args.rows)
        report = {
            "rows": args.rows,
            "load": os.getloadavg(),
            "one_append": one_append(folder, source),
            "during_upgrade_without_pause": appends_during_upgrade(folder, source, pause=False),
            "during_upgrade_with_pause": appends_during_upgrade(folder, source, pause=True),
        }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
