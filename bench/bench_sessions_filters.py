"""Search cost with ``session_search``'s filters on, against the raw FTS5 floor.

The tool always passes its hidden sources (``exclude_sources``, ``tool`` by
default) and, inside a conversation, that conversation's lineage
(``exclude_session_ids``). Each query class of ``bench_sessions.py`` is timed
(CPU, p50 of each query's runs, p95 pooled) as the bare ``MATCH … ORDER BY
rank LIMIT 50`` on the store's own index (the floor), as ours without
filters, with the hidden sources only (no session holds them: the exclusion is
dropped after one indexed look-up), and with a lineage excluded too.

Usage: ``python bench/bench_sessions_filters.py [--messages N]`` (default 100,000).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from functools import partial
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_sessions import QUERY_CLASSES, build, cpu_timed  # noqa: E402
from report import percentile, write_section  # noqa: E402

from hermes_core.sessions import SessionStore  # noqa: E402
from hermes_core.sessions.connection import open_connection  # noqa: E402

REPEATS = 9
VARIANTS = ("floor", "ours", "ours, hidden sources", "ours, hidden sources + lineage")


def measure(workdir: Path) -> dict[str, dict[str, tuple[float, float]]]:
    store = SessionStore(workdir / "ours.db", read_only=True, semantic="off")
    floor = open_connection(workdir / "ours.db", read_only=True)
    lineage = [
        store._read(lambda c: c.execute("SELECT max(session_id) FROM messages").fetchone()[0])
    ]
    results: dict[str, dict[str, tuple[float, float]]] = {}
    for name, (queries, index, matches) in QUERY_CLASSES.items():
        floor_sql = f"SELECT rowid FROM {index} WHERE {index} MATCH ? ORDER BY rank LIMIT 50"
        calls: dict[str, Any] = {}
        per_query: dict[str, list[float]] = {v: [] for v in VARIANTS}
        pooled: dict[str, list[float]] = {v: [] for v in VARIANTS}
        for query, match in zip(queries, matches, strict=True):
            calls = {
                "floor": partial(
                    lambda sql, m: floor.execute(sql, (m,)).fetchall(), floor_sql, match
                ),
                "ours": partial(store.search_messages, query, limit=50, snippets=False),
                "ours, hidden sources": partial(
                    store.search_messages, query, limit=50, snippets=False, exclude_sources=["tool"]
                ),
                "ours, hidden sources + lineage": partial(
                    store.search_messages,
                    query,
                    limit=50,
                    snippets=False,
                    exclude_sources=["tool"],
                    exclude_session_ids=lineage,
                ),
            }
            for call in calls.values():
                call()  # warm
            runs: dict[str, list[float]] = {v: [] for v in VARIANTS}
            for _ in range(REPEATS):
                for variant, call in calls.items():  # the variants take turns
                    runs[variant].append(cpu_timed(call))
            for variant in VARIANTS:
                per_query[variant].append(percentile(runs[variant], 50))
                pooled[variant] += runs[variant]
        results[name] = {
            v: (percentile(per_query[v], 50) * 1000, percentile(pooled[v], 95) * 1000)
            for v in VARIANTS
        }
    store.close()
    floor.close()
    return results


def table(results: dict[str, dict[str, tuple[float, float]]]) -> list[str]:
    head = "| query class | " + " | ".join(f"{v} p50 / p95 (ms)" for v in VARIANTS) + " |"
    lines = [head, "|---|" + "---:|" * len(VARIANTS)]
    for name, row in results.items():
        floor_p50, floor_p95 = row["floor"]
        cells = []
        for variant in VARIANTS:
            p50, p95 = row[variant]
            ratio = (
                "" if variant == "floor" else f" ({p50 / floor_p50:.2f}× / {p95 / floor_p95:.2f}×)"
            )
            cells.append(f"{p50:.2f} / {p95:.2f}{ratio}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--write", action="store_true", help="write docs/benchmarks.md")
    args = parser.parse_args(argv)
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        build(Path(tmp), args.messages, 5_000)
        lines = table(measure(Path(tmp)))
    print("\n".join(lines))
    if args.write:
        body = [
            f"Command: `python bench/bench_sessions_filters.py --messages {args.messages}`",
            "",
            f"{args.messages:,} messages of `bench_sessions.Corpus`; CPU time; p50 is the "
            "median of each query's median, p95 pooled over every run; in brackets, ours over "
            f"the floor. Load average {load:.1f} when the run began (the cores were shared).",
            "",
            *lines,
        ]
        write_section("sessions-filters", "Search cost with the tool's filters", "\n".join(body))
    return 0


if __name__ == "__main__":
    sys.exit(main())
