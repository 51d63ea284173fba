"""Import speed of the PostgreSQL session store: this build against an earlier one, and the
cost of migrating an earlier build's store (migration 4: every message's Porter stems).

Since migration 4 the store computes each message's stems in Python (SQLite's FTS5
``porter`` tokenizer, :func:`hermes_core.sessions.porter.index_stems`) and keeps
them in a column the vector is built from; the vector itself lost two parts
(the words as written, twice) that queries no longer read. Each round imports the
same generated everyday chat (``bench_sessions_recall.everyday_sessions``, 500
sessions per ``import_sessions`` call) into a fresh schema once with each build,
alternating which goes first, each in a subprocess with that build first on its
path. Reported: wall time (the server's work included) and the importing
process's CPU time, medians over the rounds; the ratio is this build's over the
earlier one's (the in-run baseline). Then this build opens a store the earlier
build wrote, which applies migration 4 (timed the same way).

Usage: ``git archive <commit> | tar -x -C DIR`` (the earlier build), then
``python bench/bench_pg_import.py --before DIR [--messages 20000] [--rounds 3]``.
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
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from bench_scaling import pg_schema  # noqa: E402
from bench_sessions_recall import everyday_sessions  # noqa: E402
from report import write_section  # noqa: E402

_CHILD = textwrap.dedent(
    """
    import json, sys, time
    sys.path.insert(0, sys.argv[1])
    from hermes_core.sessions.backends import open_session_store
    sessions = json.loads(open(sys.argv[3]).read()) if sys.argv[3] else []
    wall, cpu = time.perf_counter(), time.process_time()
    with open_session_store(sys.argv[2], semantic="off") as store:
        opened = time.perf_counter() - wall, time.process_time() - cpu
        wall, cpu = time.perf_counter(), time.process_time()
        for start in range(0, len(sessions), 500):
            store.import_sessions(sessions[start : start + 500])
        imported = time.perf_counter() - wall, time.process_time() - cpu
    print(json.dumps({"open": opened, "import": imported}))
    """
)


def _run(build: Path, url: str, sessions: str) -> dict[str, list[float]]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "HERMES_SEMANTIC_SEARCH": "off"}
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(build), url, sessions],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="the earlier build's tree")
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    builds = {"earlier": args.before.resolve(), "this": ROOT}
    sessions = everyday_sessions(args.messages, seed=11)
    count = sum(len(session["messages"]) for session in sessions)
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in builds}
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "sessions.json"
        data.write_text(json.dumps(sessions), encoding="utf-8")
        for n in range(args.rounds):
            order = list(builds) if n % 2 == 0 else list(reversed(builds))
            for name in order:
                with pg_schema() as url:
                    wall, cpu = _run(builds[name], url, str(data))["import"]
                times[name].append((wall, cpu))
                print(f"round {n + 1}: {name} build {wall:.1f} s wall, {cpu:.1f} s CPU", flush=True)
        with pg_schema() as url:
            _run(builds["earlier"], url, str(data))
            migrated = _run(builds["this"], url, "")["open"]
    medians = {
        name: (statistics.median(w for w, _ in t), statistics.median(c for _, c in t))
        for name, t in times.items()
    }
    (before_wall, before_cpu), (after_wall, after_cpu) = medians["earlier"], medians["this"]
    ratios = [
        (this[0] / earlier[0], this[1] / earlier[1])
        for earlier, this in zip(times["earlier"], times["this"], strict=True)
    ]
    rounds = ", ".join(f"{wall:.2f}x" for wall, _ in ratios)
    commit = args.before.name
    lines = [
        f"Command: `python bench/bench_pg_import.py --before DIR --messages {args.messages} "
        f"--rounds {args.rounds}` (DIR: `git archive` of the build before migration 4, "
        f"`{commit}`). {count:,} generated everyday messages in {len(sessions):,} sessions, "
        "imported 500 sessions per call into a fresh schema of PostgreSQL 15 on the same "
        "machine; medians of the rounds, the builds alternating. CPU is the importing "
        f"process's (the stems are computed there); wall includes the server's work. Load "
        f"average {os.getloadavg()[0]:.1f} at the end.",
        "",
        "| Build | Wall | CPU (client) | Messages/s (wall) |",
        "|---|---|---|---|",
        f"| earlier (Snowball `english` in SQL) | {before_wall:.1f} s | {before_cpu:.1f} s | "
        f"{count / before_wall:,.0f} |",
        f"| this (Porter stems from Python) | {after_wall:.1f} s | {after_cpu:.1f} s | "
        f"{count / after_wall:,.0f} |",
        f"| ratio this / earlier (median of the rounds' ratios) | "
        f"{statistics.median(w for w, _ in ratios):.2f}x | "
        f"{statistics.median(c for _, c in ratios):.2f}x | |",
        "",
        f"Wall-time ratio of each round: {rounds} (the machine's load moves it more than the "
        "builds do). The client's extra CPU is the stemming: about "
        f"{(after_cpu - before_cpu) / count * 1e6:.0f} µs per message.",
        "",
        f"Migrating the earlier build's store of {count:,} messages (migration 4, on opening "
        f"it): {migrated[0]:.1f} s wall, {migrated[1]:.1f} s CPU of the opening process.",
    ]
    write_section("pg-import", "PostgreSQL import: stems computed in Python", "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
