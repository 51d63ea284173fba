"""PostgreSQL search on one loaded store: this build's predicates against an earlier build's.

The earlier build cannot open a store of a newer schema, so both run here on the same
store (``bench_scaling.py --keep``'s, default 1,000,000 messages), in one process,
alternating per round: ``before`` is this build's search with the earlier build's term
predicates (``pgsearch._term`` of ``--before DIR``: every word, phrase and prefix a
weighted ``tsquery`` the server tests on each candidate's whole vector), the server's
default ``work_mem`` (4 MB) and plan cache (``auto``: a statement psycopg prepared may get
a generic plan from its tenth run on); ``after`` is this build (a phrase's order read from
the ``stems`` column, ``work_mem`` 32 MB so the index's bitmaps stay exact, every
statement planned for its own terms). Both return the
same hits (checked per query). Reported per query class of ``bench_scaling.QUERIES``:
median wall time and the server backend's CPU per query (clock ticks of 10 ms), and the
ratio.

Usage: ``git archive <commit> | tar -x -C DIR``, then
``python bench/bench_pg_search.py --before DIR [--messages 1000000] [--rounds 3]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_scaling import QUERIES, kept, server_cpu  # noqa: E402
from report import write_section  # noqa: E402

from hermes_core.sessions import pgsearch  # noqa: E402
from hermes_core.sessions.backends import open_session_store  # noqa: E402


def _earlier_term(tree: Path) -> Any:
    """``_term`` of the earlier build's ``pgsearch`` (loaded beside this build's modules)."""
    spec = importlib.util.spec_from_file_location(
        "pgsearch_before", tree / "hermes_core" / "sessions" / "pgsearch.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module._term


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="the earlier build's tree")
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--classes", default=",".join(QUERIES), help="query classes to run")
    args = parser.parse_args()
    classes = [label for label in args.classes.split(",") if label]
    variants = {
        "before": (_earlier_term(args.before.resolve()), "4MB", "auto"),
        "after": (pgsearch._term, pgsearch.SEARCH_WORK_MEM, pgsearch.PLAN_CACHE_MODE),
    }
    began = time.time()
    found: dict[str, dict[str, Any]] = {}
    with open_session_store(kept(args.messages)[1], semantic="off") as store:
        if store.message_count() != args.messages:
            raise SystemExit(
                f"no kept store of {args.messages:,} messages: run bench_scaling.py --parts "
                f"search --backends postgres --messages {args.messages} --keep --load-only"
            )
        for label in classes:
            queries = QUERIES[label]
            times: dict[str, list[float]] = {name: [] for name in variants}
            server = dict.fromkeys(variants, 0.0)
            same = True
            for query in queries:
                hits = {}
                for round_ in range(args.rounds + 1):
                    order = list(variants) if round_ % 2 == 0 else list(variants)[::-1]
                    for name in order:
                        pgsearch._term, pgsearch.SEARCH_WORK_MEM, pgsearch.PLAN_CACHE_MODE = (
                            variants[name]
                        )
                        if round_ == 0:  # the warm-up, and the hits compared
                            hits[name] = [hit["id"] for hit in store.search_messages(query)]
                            continue
                        before, wall = server_cpu(), time.perf_counter()
                        store.search_messages(query, limit=10)
                        times[name].append((time.perf_counter() - wall) * 1000)
                        server[name] += server_cpu() - before
                same = same and hits["before"] == hits["after"]
            found[label] = {
                name: (statistics.median(times[name]), server[name] * 1000 / len(times[name]))
                for name in variants
            } | {"same": same}
            print(label, found[label], flush=True)
    pgsearch._term, pgsearch.SEARCH_WORK_MEM, pgsearch.PLAN_CACHE_MODE = variants["after"]
    lines = [
        f"Command: `python bench/bench_pg_search.py --before DIR --messages {args.messages} "
        f"--rounds {args.rounds}` (DIR: `git archive` of the earlier build) on the kept store "
        f"of {args.messages:,} generated messages of `bench_scaling.py`, PostgreSQL 15 on the "
        "same 2-core machine. `search_messages(limit=10)`, the variants alternating, "
        "medians; server CPU per query in clock ticks of 10 ms. Run "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(began))}, load average "
        f"{os.getloadavg()[0]:.1f} at its end.",
        "",
        "| Query class | before | after | after / before | server CPU before → after | same hits |",
        "|---|---|---|---|---|---|",
    ]
    for label, row in found.items():
        (a, sa), (b, sb) = row["before"], row["after"]
        lines.append(
            f"| {label} | {a:,.1f} ms | {b:,.1f} ms | {b / max(a, 1e-6):.2f}x | "
            f"{sa:,.0f} → {sb:,.0f} ms | {'yes' if row['same'] else 'no'} |"
        )
    if set(classes) != set(QUERIES):
        return  # a partial run is printed only
    write_section("pgsearch", "PostgreSQL search: before and after, one store", "\n".join(lines))


if __name__ == "__main__":
    main()
