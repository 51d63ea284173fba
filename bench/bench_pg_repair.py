"""What ``sessions repair`` on a PostgreSQL store does to an agent writing meanwhile: the
build before (``REINDEX`` of the full-text index and a plain ``CREATE INDEX`` of the trigram
index inside the repair's transaction) against this build (the transaction, then both built
concurrently).

Each round makes a store of generated everyday chat
(``bench_sessions_recall.everyday_sessions``), starts a writer (one ``INSERT`` per turn, a
turn every 20 ms) and then a child process that repairs the store, once with each build,
alternating which goes first. Reported: the repair's wall time and CPU (the child's), the
writer's appends while it ran (how many, their median and longest wait), and for this build
the progress reports of its index builds; medians over the rounds. The build before's
``pgmaintenance`` is read from git (``--before``, default ``2495bcc``).

Usage: ``python bench/bench_pg_repair.py [--messages 20000] [--rounds 2] [--before REV]``.
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
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from bench_pg_migrate import _Writer  # noqa: E402
from bench_scaling import pg_schema  # noqa: E402
from bench_sessions_recall import everyday_sessions  # noqa: E402
from report import write_section  # noqa: E402

_REPAIR = textwrap.dedent(
    """
    import json, sys, time
    sys.path.insert(0, sys.argv[3])
    if sys.argv[1] == "before":
        from old_pgmaintenance import rebuild_search
    else:
        from hermes_core.sessions.pgmaintenance import rebuild_search
    from hermes_core.sessions.postgres import PostgresSessionStore
    seen = []
    with PostgresSessionStore(sys.argv[2], semantic="off") as store:
        start, wall, cpu = time.time(), time.perf_counter(), time.process_time()
        if sys.argv[1] == "before":
            rebuild_search(store)
        else:
            rebuild_search(store, lambda index, done, total: seen.append((index, done, total)))
        took = time.perf_counter() - wall, time.process_time() - cpu
    print(json.dumps([*took, start, time.time(), seen]))
    """
)


def _old_maintenance(before: str, folder: Path) -> None:
    """The build before's ``pgmaintenance`` as ``old_pgmaintenance`` in *folder*."""
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{before}:hermes_core/sessions/pgmaintenance.py"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    (folder / "old_pgmaintenance.py").write_text(source, encoding="utf-8")


def _store(url: str, texts: list[str]) -> None:
    """A current store holding *texts* in the session ``old``."""
    from hermes_core.sessions.postgres import PostgresSessionStore

    with PostgresSessionStore(url, semantic="off") as store:
        store.create_session("old", source="cli")
        for at in range(0, len(texts), 1_000):
            store.append_messages(
                "old", [{"role": "user", "content": text} for text in texts[at : at + 1_000]]
            )


def _round(build: str, texts: list[str], old: Path) -> dict[str, Any]:
    with pg_schema() as url:
        _store(url, texts)
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "HERMES_SEMANTIC_SEARCH": "off"}
        with _Writer(url) as writer:
            out = subprocess.run(
                [sys.executable, "-c", _REPAIR, build, url, str(old)],
                check=True,
                capture_output=True,
                text=True,
                env=env,
            ).stdout
        wall, cpu, start, end, seen = json.loads(out.strip().splitlines()[-1])
    during = [took for began, took in writer.latencies if began < end and began + took > start]
    return {"wall": wall, "cpu": cpu, "appends": during, "progress": seen}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--before", default="2495bcc")
    args = parser.parse_args()
    texts = [m["content"] for s in everyday_sessions(args.messages) for m in s["messages"]]
    texts = texts[: args.messages]
    load = os.getloadavg()[0]
    results: dict[str, list[dict[str, Any]]] = {"before": [], "this": []}
    with tempfile.TemporaryDirectory() as tmp:
        _old_maintenance(args.before, Path(tmp))
        for n in range(args.rounds):
            for build in ("before", "this") if n % 2 == 0 else ("this", "before"):
                results[build].append(_round(build, texts, Path(tmp)))
    rows = []
    for build, rounds in results.items():
        appends = [took for r in rounds for took in r["appends"]]
        rows.append(
            f"| {build} | {statistics.median(r['wall'] for r in rounds):.2f} | "
            f"{statistics.median(r['cpu'] for r in rounds):.2f} | "
            f"{statistics.median(len(r['appends']) for r in rounds):.0f} | "
            f"{statistics.median(appends) * 1000:.0f} | {max(appends):.2f} |"
        )
    reports: dict[str, list[tuple[int, int]]] = {}
    for index, done, total in results["this"][0]["progress"]:
        reports.setdefault(index, []).append((done, total))
    seen = "; ".join(
        f"`{index}` {len(values)} times, {values[0]} to {values[-1]}"
        for index, values in reports.items()
    )
    body = f"""
`python bench/bench_pg_repair.py --messages {len(texts)} --rounds {args.rounds}` (load
average {load:.1f} at the start): `sessions repair` of a PostgreSQL store of {len(texts):,}
generated messages while an agent appends a turn every 20 ms; the build before
(`{args.before}`: `REINDEX` of `messages_tsv` and `CREATE INDEX` of `messages_trgm` in the
repair's transaction) against this build (both concurrently after it). Medians over {args.rounds}
rounds, alternating which build goes first; wall and CPU of the repairing process.

| build | repair wall s | repair CPU s | appends during | median append ms | longest append s |
|---|---:|---:|---:|---:|---:|
{chr(10).join(rows)}

This build's first round reported its builds' progress (blocks done, blocks in all): {seen}.
Not measured: the server's CPU (the builds run on connections the repair closes).
"""
    write_section("pg-repair", "PostgreSQL repair: writers during `sessions repair`", body)
    print(body)


if __name__ == "__main__":
    started = time.perf_counter()
    main()
    print(f"{time.perf_counter() - started:.0f} s")
