"""What a PostgreSQL outage costs a turn, and what the operations on a PostgreSQL store cost.

On the real server (``$HERMES_BENCH_POSTGRES_URL``, default the local test
server), through a loopback proxy the run cuts and restores
(``hermes_core/testing/tcp_proxy.py``), in a schema of its own that is dropped:

* **append, database up** (the in-run baseline): one message per ``append_messages``;
* **the first append of an outage**: what a turn waits before its messages go to
  the spool (the store's retries, each waiting out the pool's connect timeout);
* **append, database away**: one message to the spool (JSON line + ``fsync``);
* **write-back**: the spooled messages stored once the database answers, per message;
* **backup copy**: ``copy_to_sqlite`` (one REPEATABLE READ transaction, verified),
  and **repair**: ``rebuild_search`` (search text and GIN index made again).

Wall and CPU time (this process) beside each other. Usage:
``python bench/bench_spool.py [--messages 2000] [--connect-timeout 1]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

from hermes_core.sessions.pgmaintenance import copy_to_sqlite, rebuild_search
from hermes_core.sessions.postgres import PostgresSessionStore
from hermes_core.sessions.spool import SessionSpool, SpooledSessionStore, spool_path
from hermes_core.testing.tcp_proxy import TCPProxy

BASE = os.environ.get("HERMES_BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")


def _timed(fn, count: int) -> tuple[list[float], float]:  # type: ignore[no-untyped-def]
    """Per-call wall times (ms) of *count* calls, and the CPU seconds they took."""
    walls = []
    cpu = time.process_time()
    for n in range(count):
        start = time.perf_counter()
        fn(n)
        walls.append((time.perf_counter() - start) * 1000)
    return walls, time.process_time() - cpu


def _row(name: str, walls: list[float], cpu: float, baseline: float | None) -> str:
    median = statistics.median(walls)
    p99 = sorted(walls)[max(0, int(len(walls) * 0.99) - 1)]
    ratio = f"{median / baseline:.2f}x" if baseline else "1.00x"
    return (
        f"| {name} | {len(walls):,} | {median:.2f} | {p99:.2f} | "
        f"{sum(walls) / 1000:.2f} | {cpu:.2f} | {ratio} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--connect-timeout", type=float, default=1.0)
    args = parser.parse_args()
    import psycopg

    admin = psycopg.connect(BASE, autocommit=True)
    schema = "hm_bench_" + uuid.uuid4().hex[:10]
    admin.execute(f"CREATE SCHEMA {schema}")
    joiner = "&" if "?" in BASE else "?"
    url = f"{BASE}{joiner}options={quote(f'-csearch_path={schema}')}"
    parts = urlsplit(url)
    proxy = TCPProxy(parts.hostname or "127.0.0.1", parts.port or 5432).start()
    proxied = urlunsplit(
        parts._replace(netloc=f"{parts.username or 'postgres'}@127.0.0.1:{proxy.port}")
    )
    rows = []
    try:
        with tempfile.TemporaryDirectory() as home:
            inner = PostgresSessionStore(proxied, connect_timeout=args.connect_timeout)
            spool = SessionSpool(spool_path(home, inner.path, None))
            store = SpooledSessionStore(inner, spool)
            store.create_session("bench")

            def append(n: int) -> None:
                store.append_messages(
                    "bench", [{"role": "user", "content": f"message {n} about deploy scripts"}]
                )

            walls, cpu = _timed(append, args.messages)
            baseline = statistics.median(walls)
            rows.append(_row("append, database up (baseline)", walls, cpu, None))
            proxy.stop()
            walls, cpu = _timed(append, 1)
            rows.append(_row("first append of an outage", walls, cpu, baseline))
            walls, cpu = _timed(lambda n: append(args.messages + 1 + n), args.messages)
            rows.append(_row("append, database away (to the spool)", walls, cpu, baseline))
            proxy.start()
            for _ in range(60):  # the pool reconnects after its backoff
                try:
                    inner.session_count()
                    break
                except Exception:
                    continue
            cpu = time.process_time()
            start = time.perf_counter()
            written = store.drain()
            wall = time.perf_counter() - start
            per = [wall * 1000 / max(1, written)] * max(1, written)
            rows.append(_row("write-back, per message", per, time.process_time() - cpu, baseline))
            assert spool.pending() == 0 and inner.message_count() == 2 * args.messages + 1
            target = Path(home) / "copy.db"
            cpu = time.process_time()
            start = time.perf_counter()
            copy_to_sqlite(url, target)
            wall = time.perf_counter() - start
            rows.append(
                _row("backup copy (whole store)", [wall * 1000], time.process_time() - cpu, None)
            )
            cpu = time.process_time()
            start = time.perf_counter()
            rebuild_search(inner)
            wall = time.perf_counter() - start
            rows.append(
                _row("repair (whole store)", [wall * 1000], time.process_time() - cpu, None)
            )
            store.close()
    finally:
        proxy.stop()
        admin.execute(f"DROP SCHEMA {schema} CASCADE")
        admin.close()
    load = os.getloadavg()
    print(
        f"load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; {os.cpu_count()} cores; "
        f"{args.messages:,} messages; connect timeout {args.connect_timeout:g}s"
    )
    print("| step | calls | median ms | p99 ms | wall s | CPU s | median vs baseline |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        print(row)


if __name__ == "__main__":
    sys.exit(main())
