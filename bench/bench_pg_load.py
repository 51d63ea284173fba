"""Bulk loading into PostgreSQL: this build against an earlier one, in one run.

Each round imports the same generated everyday chat
(``bench_sessions_recall.everyday_sessions`` plus the Chinese lines of
``bench_scaling``, 500 sessions per ``import_sessions`` call, as ``bench_scaling.py``
and ``sessions import`` load) into a fresh schema with each variant, in turn, each in
a subprocess with its build first on its path:

* ``before``: the earlier build (``--before DIR``, e.g. ``git archive c0414ea``);
* ``after``: this build (stems computed while the ``COPY`` streams, ``ANALYZE`` after
  a large import, the trigram index ``messages_trgm`` kept up to date);
* ``after, no trigram index``: this build with ``messages_trgm`` dropped before loading
  (what the load costs without ``pg_trgm``; the store then searches substrings by
  reading every message).

Reported per variant, medians over the rounds: messages per second (wall time, the
server's work included), the importing process's CPU time and the server backend's
(read in ``/proc``: the server runs on this machine), and the ratio to ``before``.

Usage: ``git archive <commit> | tar -x -C DIR``, then
``python bench/bench_pg_load.py --before DIR [--messages 100000] [--rounds 2]``.
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

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from bench_scaling import history, pg_schema  # noqa: E402
from report import write_section  # noqa: E402

_CHILD = textwrap.dedent(
    """
    import json, sys, time
    sys.path.insert(0, sys.argv[1])
    sys.path.insert(1, sys.argv[4])
    from bench_scaling import server_cpu
    from hermes_core.sessions.backends import open_session_store
    sessions = json.loads(open(sys.argv[3]).read())
    with open_session_store(sys.argv[2], semantic="off") as store:
        if sys.argv[5] == "drop":
            store._write(lambda conn: conn.execute("DROP INDEX IF EXISTS messages_trgm"))
        wall, cpu, server = time.perf_counter(), time.process_time(), 0.0
        for start in range(0, len(sessions), 500):
            before = server_cpu()
            store.import_sessions(sessions[start : start + 500])
            server += server_cpu() - before
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        count = store.message_count()
    print(json.dumps({"wall": wall, "cpu": cpu, "server": server, "messages": count}))
    """
)

VARIANTS = ("before", "after", "after, no trigram index")


def _run(build: Path, url: str, sessions: str, drop: bool) -> dict[str, float]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "HERMES_SEMANTIC_SEARCH": "off"}
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(build), url, sessions, str(HERE), "drop" * drop],
        check=True,
        capture_output=True,
        text=True,
        env=env,
        cwd=str(build),
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="the earlier build's tree")
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    sessions = history(args.messages)
    runs: dict[str, list[dict[str, float]]] = {variant: [] for variant in VARIANTS}
    began = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "sessions.json"
        data.write_text(json.dumps(sessions))
        for round_ in range(args.rounds):
            order = VARIANTS if round_ % 2 == 0 else VARIANTS[::-1]
            for variant in order:
                build = args.before.resolve() if variant == "before" else ROOT
                with pg_schema() as url:
                    run = _run(build, url, str(data), drop=variant.endswith("index"))
                runs[variant].append(run)
                rate = run["messages"] / run["wall"]
                print(f"round {round_ + 1} {variant}: {rate:,.0f} msg/s {run}", flush=True)
    load = os.getloadavg()[0]
    median = {
        variant: {key: statistics.median(run[key] for run in found) for key in found[0]}
        for variant, found in runs.items()
    }
    base = median["before"]
    lines = [
        f"Command: `python bench/bench_pg_load.py --before DIR --messages {args.messages} "
        f"--rounds {args.rounds}` (DIR: `git archive` of the earlier build). "
        f"{args.messages:,} generated messages (everyday chat, some Chinese lines), 500 "
        "sessions per `import_sessions` call, each variant into a fresh schema of PostgreSQL "
        "15 on the same 2-core machine, the variants alternating; medians of the rounds. "
        f"Run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(began))}, "
        f"load average {load:.1f} at its end.",
        "",
        "| Variant | messages/s | wall | client CPU | server CPU | messages/s vs before |",
        "|---|---|---|---|---|---|",
    ]
    for variant, found in median.items():
        rate = found["messages"] / found["wall"]
        lines.append(
            f"| {variant} | {rate:,.0f} | {found['wall']:.1f} s | {found['cpu']:.1f} s | "
            f"{found['server']:.1f} s | {rate / (base['messages'] / base['wall']):.2f}x |"
        )
    write_section("pgload", "PostgreSQL bulk loading", "\n".join(lines))


if __name__ == "__main__":
    main()
