"""What migrating a PostgreSQL store of the build before stems (schema 3) costs, and what it
does to an agent writing meanwhile: migration 4 in one transaction (the build before: the
table locked until it commits) against this build's short migration and batched backfill.

Each round makes a schema-3 store of generated everyday chat
(``bench_sessions_recall.everyday_sessions``), starts a writer (one ``INSERT`` per turn as
an agent of the build before, already running, writes it; a turn every 20 ms) and then a
child process that migrates the store, once with each build, alternating which goes first.
Reported: the migration's wall time and that of its migrating transaction (migrations 4-6,
or 4-7: what holds locks until it commits), the migrating process's CPU and its server
backend's CPU (``bench_scaling.server_cpu``), and the writer's appends while it ran (how
many, their latency, the longest wait); medians over the rounds. Last, what the vector's
trigger (this build) costs an import against the generated columns (the build before): the
same messages copied into a fresh store of each. The build before's migration 4 is
read from git (``--before``, default ``008f3a1``).

Usage: ``python bench/bench_pg_migrate.py [--messages 20000] [--rounds 2] [--before REV]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from bench_scaling import pg_schema  # noqa: E402
from bench_sessions_recall import everyday_sessions  # noqa: E402
from report import write_section  # noqa: E402

_MIGRATE = textwrap.dedent(
    """
    import json, sys, time
    import psycopg
    sys.path.insert(0, sys.argv[3])
    sys.path.insert(0, sys.argv[4])
    from bench_scaling import server_cpu
    if sys.argv[1] == "before":
        from old_pgschema import migrate
    else:
        from hermes_core.sessions.pgbackfill import backfill_stems
        from hermes_core.sessions.pgschema import migrate
        from hermes_core.sessions.pgtrigram import build_trigram_index
    conn = psycopg.connect(sys.argv[2])
    start, wall, cpu = time.time(), time.perf_counter(), time.process_time()
    migrate(conn)
    conn.commit()
    locked = time.perf_counter() - wall
    if sys.argv[1] == "this":
        backfill_stems(conn)
        build_trigram_index(conn)
    took = time.perf_counter() - wall, time.process_time() - cpu, server_cpu(), locked
    print(json.dumps([*took, start, time.time()]))
    """
)


_INSERT = textwrap.dedent(
    """
    import json, sys, time
    import psycopg
    sys.path.insert(0, sys.argv[3])
    sys.path.insert(0, sys.argv[4])
    from bench_scaling import server_cpu
    from hermes_core.sessions.porter import index_stems
    if sys.argv[1] == "before":
        from old_pgschema import migrate
    else:
        from hermes_core.sessions.pgschema import migrate
    texts = json.loads(open(sys.argv[5]).read())
    stems = index_stems(texts)
    conn = psycopg.connect(sys.argv[2])
    migrate(conn)
    conn.execute("INSERT INTO sessions(id, source, started_at) VALUES ('new', 'cli', 1)")
    conn.commit()
    server, wall = server_cpu(), time.perf_counter()
    with conn.cursor().copy(
        "COPY messages(session_id, role, timestamp, content, search_text, stems) FROM STDIN"
    ) as copy:
        for n, (text, stem) in enumerate(zip(texts, stems)):
            copy.write_row(("new", "user", n, text, text, stem))
    conn.commit()
    print(json.dumps([time.perf_counter() - wall, server_cpu() - server]))
    """
)
"""Rows copied into a fresh store of one build (its migrations applied first): what the
vector's trigger costs an import against the generated columns it replaced."""


def _old_schema(before: str, folder: Path) -> None:
    """The build before's ``pgschema`` as ``old_pgschema`` in *folder*."""
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{before}:hermes_core/sessions/pgschema.py"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    (folder / "old_pgschema.py").write_text(source, encoding="utf-8")


def _schema_3(url: str, texts: list[str]) -> None:
    """A store as the build before stems left it: schemas 1-3, holding *texts*."""
    import psycopg

    from hermes_core.testing.postgres import migrated_to

    with psycopg.connect(url, autocommit=True) as conn:
        migrated_to(conn, 3)
        conn.execute("INSERT INTO sessions(id, source, started_at) VALUES ('old', 'cli', 1)")
        with conn.cursor().copy(
            "COPY messages(session_id, role, timestamp, content, search_text) FROM STDIN"
        ) as copy:
            for n, text in enumerate(texts):
                copy.write_row(("old", "user" if n % 2 == 0 else "assistant", n, text, text))
        conn.execute("VACUUM ANALYZE messages")


class _Writer:
    """An agent of the build before writing a turn every 20 ms, timing each append."""

    def __init__(self, url: str) -> None:
        import psycopg

        self._conn = psycopg.connect(url, autocommit=True)
        self.latencies: list[tuple[float, float]] = []
        """(epoch seconds at the start, seconds taken) of each append."""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run)

    def _run(self) -> None:
        n = 0
        while not self._stop.is_set():
            n += 1
            start, began = time.perf_counter(), time.time()
            self._conn.execute(
                "INSERT INTO messages(session_id, role, timestamp, content, search_text) "
                "VALUES ('old', 'user', %s, %s, %s)",
                (1e9 + n, f"turn {n} while migrating", f"turn {n} while migrating"),
            )
            self.latencies.append((began, time.perf_counter() - start))
            self._stop.wait(0.02)

    def __enter__(self) -> _Writer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._conn.close()


def _round(build: str, texts: list[str], old: Path) -> dict[str, Any]:
    with pg_schema() as url:
        _schema_3(url, texts)
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
        with _Writer(url) as writer:
            out = subprocess.run(
                [sys.executable, "-c", _MIGRATE, build, url, str(old), str(HERE)],
                check=True,
                capture_output=True,
                text=True,
                env=env,
            ).stdout
        wall, cpu, server, locked, start, end = json.loads(out.strip().splitlines()[-1])
    during = [took for began, took in writer.latencies if began < end and began + took > start]
    return {"wall": wall, "cpu": cpu, "server": server, "locked": locked, "appends": during}


def _steps(texts: list[str]) -> dict[int, float]:
    """Seconds each of this build's migrations 4-7 takes on a schema-3 store of *texts*,
    applied in one transaction (rolled back), as the store applies them."""
    import psycopg

    from hermes_core.sessions.pgschema import MIGRATIONS

    took = {}
    with pg_schema() as url:
        _schema_3(url, texts)
        with psycopg.connect(url) as conn:
            for version in (4, 5, 6, 7):
                start = time.perf_counter()
                step = MIGRATIONS[version]
                if isinstance(step, str):
                    conn.execute(step)
                else:
                    step(conn)
                took[version] = time.perf_counter() - start
            conn.rollback()
    return took


def _insert(build: str, texts_file: Path, old: Path) -> tuple[float, float]:
    with pg_schema() as url:
        out = subprocess.run(
            [sys.executable, "-c", _INSERT, build, url, str(old), str(HERE), str(texts_file)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    wall, server = json.loads(out.strip().splitlines()[-1])
    return wall, server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--before", default="008f3a1", help="the build before (a git revision)")
    args = parser.parse_args()
    sessions = everyday_sessions(args.messages, seed=11)
    texts = [str(m["content"]) for s in sessions for m in s["messages"]][: args.messages]
    builds = ("before", "this")
    results: dict[str, list[dict[str, Any]]] = {name: [] for name in builds}
    with tempfile.TemporaryDirectory() as tmp:
        _old_schema(args.before, Path(tmp))
        for n in range(args.rounds):
            for name in builds if n % 2 == 0 else tuple(reversed(builds)):
                result = _round(name, texts, Path(tmp))
                results[name].append(result)
                print(
                    f"round {n + 1}: {name}: {result['wall']:.1f} s wall "
                    f"({result['locked']:.1f} s migrating), {result['cpu']:.1f} s CPU, server "
                    f"{result['server']:.1f} s, {len(result['appends'])} appends, longest "
                    f"{max(result['appends'], default=0):.2f} s",
                    flush=True,
                )

        steps = _steps(texts)
        texts_file = Path(tmp) / "texts.json"
        texts_file.write_text(json.dumps(texts), encoding="utf-8")
        inserts: dict[str, list[tuple[float, float]]] = {name: [] for name in builds}
        for n in range(args.rounds):
            for name in builds if n % 2 == 0 else tuple(reversed(builds)):
                inserts[name].append(_insert(name, texts_file, Path(tmp)))
                print(f"round {n + 1}: {name}: COPY {inserts[name][-1]}", flush=True)

    def median(name: str, key: str) -> float:
        return statistics.median(r[key] for r in results[name])

    def appends(name: str) -> tuple[float, float, float]:
        rounds = results[name]
        count = statistics.median(len(r["appends"]) for r in rounds)
        p50 = statistics.median(statistics.median(r["appends"] or [0]) for r in rounds)
        longest = statistics.median(max(r["appends"], default=0) for r in rounds)
        return count, p50, longest

    rows = []
    for name, label in (
        ("before", f"build before (`{args.before}`): one transaction"),
        ("this", "this build: short migration, batched backfill, concurrent trigram index"),
    ):
        count, p50, longest = appends(name)
        rows.append(
            f"| {label} | {median(name, 'wall'):.1f} s | {median(name, 'locked'):.1f} s | "
            f"{median(name, 'cpu'):.1f} s | {median(name, 'server'):.1f} s | {count:.0f} | "
            f"{p50 * 1000:.0f} ms | {longest:.2f} s |"
        )
    lines = [
        f"Command: `python bench/bench_pg_migrate.py --messages {args.messages} --rounds "
        f"{args.rounds} --before {args.before}`. A schema-3 store of {len(texts):,} generated "
        "everyday messages (PostgreSQL 15 on this machine), migrated by a child process of each "
        "build while a writer of the build before appends a turn every 20 ms; medians of the "
        "rounds, the builds alternating. CPU: the migrating process's, and its server "
        "backend's. Load average "
        f"{os.getloadavg()[0]:.1f} at the end.",
        "",
        "| Migration 4 | Wall | Migrating transaction | CPU (client) | CPU (server) | "
        "Appends meanwhile | Append p50 | Longest append |",
        "|---|---|---|---|---|---|---|---|",
        *rows,
        "",
        "This build's migrating transaction, step by step (one more store, rolled back): "
        + ", ".join(f"migration {v} {took:.2f} s" for v, took in steps.items())
        + ". Migration 6 only creates `pg_trgm` and queues the trigram index, which this "
        "build then builds with `CREATE INDEX CONCURRENTLY` after the backfill (writes go "
        "on); the build before builds it with `CREATE INDEX` inside the transaction (a "
        "SHARE lock: reads go on, writes wait).",
        "",
        f"What the trigger costs a write: the same {len(texts):,} messages (stems computed "
        "beforehand) copied with `COPY` into a fresh store of each build, medians of the "
        "rounds:",
        "",
        "| Build | COPY wall | Server CPU |",
        "|---|---|---|",
        *(
            f"| {label} | {statistics.median(w for w, _ in inserts[name]):.2f} s | "
            f"{statistics.median(c for _, c in inserts[name]):.2f} s |"
            for name, label in (
                ("before", "build before: generated columns"),
                ("this", "this build: the vector's trigger"),
            )
        ),
    ]
    write_section(
        "pg-migrate", "PostgreSQL migration 4: writers during the backfill", "\n".join(lines)
    )
    print("\n".join(lines))


if __name__ == "__main__":
    main()
