"""``hermes-memory sessions search`` with the semantic extra installed, against without it.

Issue 29's bound: with the extra installed, a CLI search costs at most 1.2× the same
search without it, on a 120,000-message store. Each run is a whole process (start-up,
opening the store, the search, printing), timed in wall-clock and CPU seconds (user +
system of the child). The variants take turns on every run of every query:

* **without the extra**: an interpreter without numpy, tokenizers and safetensors
  (``--without-extra PYTHON``: a venv with ``pip install -e .`` and nothing more);
  without one, the same interpreter with ``HERMES_SEMANTIC_SEARCH=off`` stands in;
* **with the extra, embedded**: the default (``semantic: auto``, static encoder), the
  history embedded by ``sessions index`` beforehand;
* **with the extra, not embedded**: the default on a copy with no vectors yet (a history
  recorded before the extra was installed): the search embeds nothing and uses words;
* **minilm, not embedded**: the same with ``HERMES_SEMANTIC_ENCODER=minilm``.

Usage: ``python bench/bench_cli_search.py [--messages N] [--keep DIR] [--without-extra PY]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_sessions import CORPUS_VERSION, Corpus  # noqa: E402
from report import percentile, write_section  # noqa: E402

from hermes_core.sessions import SessionStore  # noqa: E402

QUERIES = {
    "What did we decide about the kubernetes ingress certificate?": "question",
    "why did the redis timeout happen during the deploy?": "question",
    "Which grafana dashboard showed the memory leak?": "question",
    "postgres migration": "two keywords",
    "docker networking": "two keywords",
    "deadlock": "one word",
}
"""Each query and its class: meaning votes on questions and keyword pairs, never on one word."""
REPEATS = 5
TARGET = 1.2


def build(workdir: Path, total: int) -> None:
    """plain.db (never opened with the extra), unembedded.db (a copy), embedded.db (+ vectors)."""
    plain = workdir / "plain.db"
    with SessionStore(plain, semantic="off") as store:
        for sessions in Corpus().batches(total, 5_000):
            store.import_sessions(sessions)
    for name in ("unembedded.db", "embedded.db"):
        shutil.copy(plain, workdir / name)
    started = time.perf_counter()
    with SessionStore(workdir / "embedded.db", semantic="on") as store:
        embedded = store.index_messages(threads=1)
    (workdir / "cli-build.json").write_text(
        json.dumps(
            {
                "messages": total,
                "corpus": CORPUS_VERSION,
                "embedded": embedded,
                "embed_seconds": time.perf_counter() - started,
            }
        )
    )


def _reusable(workdir: Path, total: int) -> bool:
    figures = workdir / "cli-build.json"
    if not figures.is_file():
        return False
    kept = json.loads(figures.read_text())
    return kept.get("messages") == total and kept.get("corpus") == CORPUS_VERSION


def cli_run(python: str, db: Path, query: str, env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one ``hermes-memory sessions search`` process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    done = subprocess.run(
        [
            python,
            "-c",
            "from hermes_core.cli import main; main()",
            "sessions",
            "search",
            query,
            "--db",
            str(db),
            "--json",
        ],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"search failed: {done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=120_000)
    parser.add_argument("--repeats", type=int, default=REPEATS)
    parser.add_argument("--keep", type=Path, help="build the stores here once and reuse them")
    parser.add_argument("--without-extra", help="a Python without the semantic extra")
    parser.add_argument("--write", action="store_true", help="write docs/benchmarks.md")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        workdir = args.keep or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        if not _reusable(workdir, args.messages):
            for path in workdir.glob("*.db*"):
                path.unlink()
            print(f"building {args.messages:,} messages in {workdir}")
            build(workdir, args.messages)
        built = json.loads((workdir / "cli-build.json").read_text())
        base = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_SEMANTIC")}
        base["HERMES_HOME"] = str(workdir / "home")
        # Bytecode cached, as an installed package has it (the warm-up runs write it).
        base.pop("PYTHONDONTWRITEBYTECODE", None)
        without = (
            (args.without_extra, workdir / "plain.db", base)
            if args.without_extra
            else (sys.executable, workdir / "plain.db", {**base, "HERMES_SEMANTIC_SEARCH": "off"})
        )
        variants = {
            "without the extra": without,
            "with the extra, embedded": (sys.executable, workdir / "embedded.db", base),
            "with the extra, not embedded": (sys.executable, workdir / "unembedded.db", base),
            "minilm, not embedded": (
                sys.executable,
                workdir / "unembedded.db",
                {**base, "HERMES_SEMANTIC_ENCODER": "minilm"},
            ),
        }
        load = os.getloadavg()
        walls: dict[str, list[float]] = {v: [] for v in variants}
        cpus: dict[str, list[float]] = {v: [] for v in variants}
        by_class: dict[tuple[str, str], list[float]] = {}
        for query, kind in QUERIES.items():
            for python, db, env in variants.values():
                cli_run(python, db, query, env)  # warm the page cache
            for _ in range(args.repeats):
                for variant, (python, db, env) in variants.items():  # taking turns
                    wall, cpu = cli_run(python, db, query, env)
                    walls[variant].append(wall)
                    cpus[variant].append(cpu)
                    by_class.setdefault((variant, kind), []).append(cpu)
        load_after = os.getloadavg()
    without_name = "without the extra"
    base_wall = percentile(walls[without_name], 50)
    base_cpu = percentile(cpus[without_name], 50)
    lines = [
        "| variant | wall p50 (s) | wall p95 (s) | CPU p50 (s) | CPU p95 (s) | wall vs without | "
        "CPU vs without |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for variant in variants:
        wall50, cpu50 = percentile(walls[variant], 50), percentile(cpus[variant], 50)
        lines.append(
            f"| {variant} | {wall50:.3f} | {percentile(walls[variant], 95):.3f} | {cpu50:.3f} | "
            f"{percentile(cpus[variant], 95):.3f} | {wall50 / base_wall:.2f}× | "
            f"{cpu50 / base_cpu:.2f}× |"
        )
    kinds = list(dict.fromkeys(QUERIES.values()))
    classes = [
        "| variant | "
        + " | ".join(f"{kind}: CPU p50 (s), vs without; p95, vs without" for kind in kinds)
        + " |",
        "|---|" + "---:|" * len(kinds),
    ]
    for variant in variants:
        cells = []
        for kind in kinds:
            cpu50, cpu95 = (percentile(by_class[(variant, kind)], q) for q in (50, 95))
            floor50, floor95 = (percentile(by_class[(without_name, kind)], q) for q in (50, 95))
            cells.append(
                f"{cpu50:.3f}, {cpu50 / floor50:.2f}×; {cpu95:.3f}, {cpu95 / floor95:.2f}×"
            )
        classes.append(f"| {variant} | " + " | ".join(cells) + " |")
    lines += ["", *classes]
    print("\n".join(lines))
    if args.write:
        stand_in = (
            "an interpreter without numpy, tokenizers and safetensors (the core installed alone)"
            if args.without_extra
            else "the same interpreter with `HERMES_SEMANTIC_SEARCH=off` (no extra-less venv given)"
        )
        body = [
            f"Command: `python bench/bench_cli_search.py --messages {args.messages}"
            + (" --without-extra PY`" if args.without_extra else "`"),
            "",
            f"{args.messages:,} messages of `bench_sessions.Corpus` (technical chat, tool calls; "
            f"{built['embedded']:,} user and assistant messages embedded by the static encoder "
            f"for the *embedded* copy in {built['embed_seconds']:.0f} s). Each figure is one "
            "whole `hermes-memory sessions search QUERY --db … --json` process: start-up, "
            f"opening the store, the search, the output, with bytecode cached. {len(QUERIES)} "
            f"queries (3 questions, 2 keyword pairs, 1 word) × {args.repeats} runs, the variants "
            "taking turns (the second table: CPU p50 and p95 per query class); "
            f"*without the extra* is {stand_in}. Load average {load[0]:.1f} / {load[1]:.1f} "
            f"(1 / 5 min) when the runs began, {load_after[0]:.1f} when they ended.",
            "",
            *lines,
        ]
        write_section("cli-search", "CLI search with the semantic extra", "\n".join(body))
    return 0


if __name__ == "__main__":
    sys.exit(main())
