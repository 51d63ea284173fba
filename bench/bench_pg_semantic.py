"""Semantic recall on PostgreSQL against SQLite: embedding, search by meaning, vector size.

One run on one machine: *N* generated everyday messages (``bench_scaling.history``) loaded
into a ``state.db`` and into a fresh PostgreSQL schema, then on each backend:

* **embedding**: ``index_messages()`` over everything (the static encoder), wall time,
  this process's CPU and, for PostgreSQL, the server's CPU for this process's connections;
* **search**: the questions and keyword pairs of ``bench_scaling.QUERIES`` (the classes
  meaning takes part in), with meaning and without, taking turns, in one long-lived store
  per backend (the vectors already in memory): p50 / p95 of wall and CPU per search;
* **first search by meaning** of a freshly opened store: PostgreSQL reads every vector of
  the table into memory (then, in a second store, starts from the local copy), SQLite maps
  its vector file;
* **one-shot CLI searches** (``hermes-memory sessions search``, a process each) of a
  question and a keyword pair, meaning on (``auto``) against off, taking turns: median
  wall and CPU of the child;
* **memory per process**: new processes (one after the other, the local copy removed
  before the first) that open the store, search by meaning once, store and embed a
  message (a turn, as a gateway's), then search once per other query: their resident
  memory (``/proc/self/status``: private ``RssAnon`` and file-backed ``RssFile``, whose
  pages every process mapping the file shares; the peak ``VmHWM``) beyond what they held
  before the first search, and the wall and CPU of the first and of the later searches;
  with ``--before DIR`` (``DIR/hermes_core``: an earlier revision's, e.g. ``git archive
  REV hermes_core | tar -x -C DIR``) PostgreSQL's processes run again with that
  revision's ``pgsemantic`` / ``pgvectorcache``, as the baseline;
* **size**: the vectors on disk (``state.db.vectors`` + ``.bin``; ``message_vectors`` with
  its indexes), and on PostgreSQL the same rows copied into a table of float32 and one of
  int8 (a scale per vector) to measure what those forms would take.

Usage: ``python bench/bench_pg_semantic.py [--messages 100000] [--rounds 3] [--before DIR]``
(run under ``nice -n 10``); writes the ``pg-semantic`` section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_scaling  # noqa: E402
from report import percentile, write_section  # noqa: E402

from hermes_core.sessions.backends import open_session_store  # noqa: E402

QUERIES = [*bench_scaling.QUERIES["question"], *bench_scaling.QUERIES["two keywords"]]


def embed(target: str) -> dict[str, float]:
    """``index_messages()`` over the whole store: messages, wall, client and server CPU."""
    postgres = "://" in target
    with open_session_store(target, semantic="on") as store:
        server = bench_scaling.server_cpu() if postgres else 0.0
        wall, cpu = time.perf_counter(), time.process_time()
        done = store.index_messages()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        server = (bench_scaling.server_cpu() - server) if postgres else 0.0
    return {"messages": done, "wall": wall, "cpu": cpu, "server_cpu": server}


def first_search(target: str) -> dict[str, float]:
    """The first search by meaning of a store just opened, as a new process's: SQLite maps its
    vector file; PostgreSQL reads every vector from the server (``wall``/``cpu``), then, in
    a second new store, starts from the local copy the first one wrote (``cached_*``)."""
    import shutil

    from hermes_core.home import get_hermes_home

    out: dict[str, float] = {}
    shutil.rmtree(get_hermes_home() / "cache", ignore_errors=True)
    for prefix in ("", "cached_") if "://" in target else ("",):
        with open_session_store(target, semantic="on") as store:
            wall, cpu = time.perf_counter(), time.process_time()
            store.search_messages(QUERIES[0], semantic=True)
            out[f"{prefix}wall"] = time.perf_counter() - wall
            out[f"{prefix}cpu"] = time.process_time() - cpu
    return out


def searches(target: str, rounds: int) -> dict[str, list[tuple[float, float]]]:
    """(wall, CPU) of each search, with meaning and without, taking turns."""
    out: dict[str, list[tuple[float, float]]] = {"with meaning": [], "words only": []}
    with open_session_store(target, semantic="on") as store:
        store.search_messages(QUERIES[0], semantic=True)  # the vectors in memory
        for _ in range(rounds):
            for query in QUERIES:
                for label, semantic in (("with meaning", True), ("words only", False)):
                    wall, cpu = time.perf_counter(), time.process_time()
                    store.search_messages(query, limit=10, semantic=semantic)
                    out[label].append((time.perf_counter() - wall, time.process_time() - cpu))
    return out


CLI = [sys.executable, "-c", "from hermes_core.cli import main; main()"]
CLI_QUERIES = [bench_scaling.QUERIES["question"][0], bench_scaling.QUERIES["two keywords"][0]]


def cli_runs(target: str, repeats: int) -> dict[str, list[tuple[float, float]]]:
    """(wall, CPU) of one-shot ``hermes-memory sessions search`` processes, with the extra's
    default (``auto``: meaning on, the vectors embedded; PostgreSQL starts from the local
    copy) and with ``HERMES_SEMANTIC_SEARCH=off``, taking turns."""
    import resource
    import subprocess

    out: dict[str, list[tuple[float, float]]] = {"auto": [], "off": []}
    base = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_SEMANTIC")}
    for _ in range(repeats):
        for query in CLI_QUERIES:
            for mode in ("auto", "off"):
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                wall = time.perf_counter()
                subprocess.run(
                    [*CLI, "sessions", "search", query, "--db", target, "--json"],
                    env={**base, "HERMES_SEMANTIC_SEARCH": mode},
                    capture_output=True,
                    check=True,
                )
                wall = time.perf_counter() - wall
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
                out[mode].append((wall, cpu))
    return out


MEMORY_SCRIPT = """
import importlib.util, json, os, sys, time
target, before, queries = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
if before:  # that revision's PostgreSQL vector modules in place of these
    for name in ("pgvectorcache", "pgsemantic"):
        spec = importlib.util.spec_from_file_location(
            f"hermes_core.sessions.{name}", f"{before}/hermes_core/sessions/{name}.py"
        )
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
from hermes_core.sessions.backends import open_session_store

def status():
    fields = {}
    for line in open("/proc/self/status"):
        key, _, value = line.partition(":")
        if key in ("VmRSS", "RssAnon", "RssFile", "VmHWM"):
            fields[key] = int(value.split()[0]) * 1024
    return fields

def timed(store, query):
    wall, cpu = time.perf_counter(), time.process_time()
    store.search_messages(query, limit=10, semantic=True)
    return time.perf_counter() - wall, time.process_time() - cpu

with open_session_store(target, semantic="on") as store:
    store.search_messages(queries[0], limit=10, semantic=False)
    store.semantic_index().encoder.encode(["warm"])  # the encoder loaded beforehand
    start = status()
    first = timed(store, queries[0])
    session = f"bench-turn-{os.getpid()}"  # a turn, as a gateway's: a message embedded
    store.create_session(session)
    store.append_message(session, "user", "Remind me to water the tomatoes on Friday.")
    store.index_messages()
    later = [timed(store, query) for query in queries[1:]]
    print(json.dumps({"start": start, "end": status(), "first": first, "later": later}))
"""


def process_memory(target: str, before: str = "") -> list[dict[str, Any]]:
    """Two new processes, one after the other (the local copy removed before the first):
    what each holds beyond its start, and its first and later searches by meaning."""
    import json
    import shutil
    import subprocess

    from hermes_core.home import get_hermes_home

    shutil.rmtree(get_hermes_home() / "cache", ignore_errors=True)
    out = []
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-c", MEMORY_SCRIPT, target, before, json.dumps(QUERIES)],
            capture_output=True,
            text=True,
            check=True,
        )
        out.append(json.loads(done.stdout))
    return out


def sqlite_size(path: str) -> int:
    return sum(
        os.path.getsize(p) for p in (f"{path}.vectors", f"{path}.vectors.bin") if os.path.exists(p)
    )


def pg_sizes(url: str) -> dict[str, int]:
    """Bytes of ``message_vectors`` (with its indexes) as stored (float16), and of copies of
    its rows holding float32 and int8 vectors."""
    import numpy as np
    import psycopg

    sizes: dict[str, int] = {}
    with psycopg.connect(url, autocommit=True) as conn:
        sizes["float16"] = conn.execute(
            "SELECT pg_total_relation_size('message_vectors')"
        ).fetchone()[0]
        rows = conn.execute(
            "SELECT message_id, encoder, piece, checksum, vector FROM message_vectors"
        ).fetchall()
        for form in ("float32", "int8"):
            table = f"vectors_{form}"
            conn.execute(
                f"CREATE TABLE {table} (seq BIGSERIAL NOT NULL, message_id BIGINT NOT NULL, "
                "checksum INTEGER NOT NULL, encoder SMALLINT NOT NULL, piece SMALLINT NOT NULL, "
                "vector BYTEA NOT NULL, PRIMARY KEY (message_id, encoder, piece))"
            )
            conn.execute(f"CREATE INDEX ON {table}(encoder, seq)")
            conn.execute(f"CREATE INDEX ON {table}(encoder) WHERE piece = 0")
            with (
                conn.cursor() as cur,
                cur.copy(
                    f"COPY {table}(message_id, encoder, piece, checksum, vector) FROM STDIN"
                ) as copy,
            ):
                for mid, encoder, piece, check, vector in rows:
                    half = np.frombuffer(vector, dtype="<f2").astype(np.float32)
                    if form == "float32":
                        data = half.astype("<f4").tobytes()
                    else:
                        scale = float(np.abs(half).max()) / 127 if len(half) else 1.0
                        quantized = np.round(half / (scale or 1.0)).astype(np.int8)
                        data = np.float32(scale).tobytes() + quantized.tobytes()
                    copy.write_row((mid, encoder, piece, check, data))
            sizes[form] = conn.execute(f"SELECT pg_total_relation_size('{table}')").fetchone()[0]
        sizes["pieces"] = len(rows)
    return sizes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cli", type=int, default=3, help="one-shot CLI searches per query")
    parser.add_argument("--before", default="", help="an earlier revision's tree (baseline)")
    args = parser.parse_args(argv)
    began = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    sessions = bench_scaling.history(args.messages)
    figures: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp, bench_scaling.pg_schema() as url:
        os.environ["HERMES_HOME"] = str(Path(tmp) / "home")  # the local copy goes there
        targets = {"SQLite": str(Path(tmp) / "state.db"), "PostgreSQL": url}
        for name, target in targets.items():
            print(f"load {args.messages:,} messages into {name}", flush=True)
            load = bench_scaling.fill(target, sessions)
            print(f"embed {name}", flush=True)
            figures[name] = {"load": load, "embed": embed(target)}
            print(f"  {figures[name]['embed']}", flush=True)
            figures[name]["first"] = first_search(target)
            figures[name]["search"] = searches(target, args.rounds)
            figures[name]["cli"] = cli_runs(target, args.cli)
            figures[name]["memory"] = process_memory(target)
            if args.before and name == "PostgreSQL":
                figures[name]["memory_before"] = process_memory(target, args.before)
        figures["SQLite"]["size"] = sqlite_size(targets["SQLite"])
        figures["PostgreSQL"]["sizes"] = pg_sizes(url)
    load_average = os.getloadavg()[0]
    print(
        {
            name: {k: v for k, v in f.items() if k.startswith("memory")}
            for name, f in figures.items()
        }
    )
    lines = [
        f"Command: `nice -n 10 python bench/bench_pg_semantic.py --messages {args.messages} "
        f"--rounds {args.rounds} --cli {args.cli}"
        f"{' --before DIR' if args.before else ''}` (started {began}; PostgreSQL 15 on the "
        "same machine, a fresh schema)."
        f" {args.messages:,} generated everyday messages (`bench_scaling.history`: "
        "short user turns, assistant answers of 120-320 words), the static encoder; load "
        f"average {load_average:.1f} at the end (other agents' tests and benchmarks ran "
        "beside it).",
        "",
        "| | SQLite | PostgreSQL | PostgreSQL / SQLite |",
        "|---|---:|---:|---:|",
    ]
    sq, pg = figures["SQLite"], figures["PostgreSQL"]

    def row(label: str, a: float, b: float, unit: str, digits: int = 1) -> None:
        ratio = f"{b / a:.2f}x" if a else "-"
        lines.append(f"| {label} | {a:,.{digits}f} {unit} | {b:,.{digits}f} {unit} | {ratio} |")

    for key in ("messages",):
        lines.append(f"| messages embedded | {sq['embed'][key]:,} | {pg['embed'][key]:,} | |")
    row("`index_messages()` wall", sq["embed"]["wall"], pg["embed"]["wall"], "s")
    row("… client CPU", sq["embed"]["cpu"], pg["embed"]["cpu"], "s")
    lines.append(f"| … server CPU | - | {pg['embed']['server_cpu']:,.1f} s | |")
    row(
        "messages embedded per second (wall)",
        sq["embed"]["messages"] / sq["embed"]["wall"],
        pg["embed"]["messages"] / pg["embed"]["wall"],
        "/s",
        0,
    )
    row("first search by meaning, wall", sq["first"]["wall"], pg["first"]["wall"], "s", 2)
    row("… its CPU", sq["first"]["cpu"], pg["first"]["cpu"], "s", 2)
    row(
        "first search, PostgreSQL from the local copy, wall",
        sq["first"]["wall"],
        pg["first"]["cached_wall"],
        "s",
        2,
    )
    row("… its CPU", sq["first"]["cpu"], pg["first"]["cached_cpu"], "s", 2)
    for label in ("with meaning", "words only"):
        for name, q in (("p50", 50), ("p95", 95)):
            a = percentile([w for w, _ in sq["search"][label]], q) * 1000
            b = percentile([w for w, _ in pg["search"][label]], q) * 1000
            row(f"search {label}, {name} wall", a, b, "ms")
        a = statistics.median(c for _, c in sq["search"][label]) * 1000
        b = statistics.median(c for _, c in pg["search"][label]) * 1000
        row(f"search {label}, median CPU (client)", a, b, "ms")
    for name, q in (("wall", 0), ("CPU", 1)):
        a, b = (
            [statistics.median(r[q] for r in f["cli"][mode]) for mode in ("auto", "off")]
            for f in (sq, pg)
        )
        row(f"one-shot CLI search, meaning on, median {name}", a[0], b[0], "s", 2)
        row(f"… meaning off, median {name}", a[1], b[1], "s", 2)
        lines.append(f"| … on / off ({name}) | {a[0] / a[1]:.2f}x | {b[0] / b[1]:.2f}x | |")
    sizes = pg["sizes"]
    lines += [
        "",
        f"Vectors on disk ({sizes['pieces']:,} pieces): SQLite "
        f"{sq['size'] / 1e6:,.0f} MB (`state.db.vectors` float16 rows + `.bin` float32 file); "
        f"PostgreSQL `message_vectors` with its indexes {sizes['float16'] / 1e6:,.0f} MB as "
        f"stored (float16), {sizes['float32'] / 1e6:,.0f} MB for the same rows as float32 and "
        f"{sizes['int8'] / 1e6:,.0f} MB as int8 with a scale per vector "
        f"({sizes['float16'] / sizes['pieces']:,.0f} / {sizes['float32'] / sizes['pieces']:,.0f}"
        f" / {sizes['int8'] / sizes['pieces']:,.0f} bytes a piece).",
    ]
    lines += [
        "",
        "Memory per process: a new process opens the store, searches by meaning once, stores "
        "and embeds a message (a turn), then searches once per other query "
        f"({len(QUERIES) - 1}); its resident memory at the end beyond what it held "
        "before the first search (the encoder loaded), private (`RssAnon`) and file-backed "
        "(`RssFile`: pages of mapped files, one copy shared by every process mapping them), "
        "its peak (`VmHWM`) beyond the start, the first search's wall / CPU and the median of "
        "the later ones. The first process of each pair starts without the local copy.",
        "",
        "| process | private | file-backed (shared) | peak | first search wall / CPU "
        "| later searches, median wall / CPU |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    variants = [("SQLite", sq["memory"])]
    if "memory_before" in pg:
        variants.append(("PostgreSQL, before (a private copy)", pg["memory_before"]))
    variants.append(
        ("PostgreSQL, mapped copy" if "memory_before" in pg else "PostgreSQL", pg["memory"])
    )
    for label, runs in variants:
        for n, run in enumerate(runs):
            start, end = run["start"], run["end"]
            later_wall = statistics.median(w for w, _ in run["later"]) * 1000
            later_cpu = statistics.median(c for _, c in run["later"]) * 1000
            lines.append(
                f"| {label}, {('first', 'second')[n]} | "
                f"{(end['RssAnon'] - start['RssAnon']) / 1e6:,.0f} MB | "
                f"{(end['RssFile'] - start['RssFile']) / 1e6:,.0f} MB | "
                f"{(end['VmHWM'] - start['VmRSS']) / 1e6:,.0f} MB | "
                f"{run['first'][0]:.2f} s / {run['first'][1]:.2f} s | "
                f"{later_wall:,.0f} ms / {later_cpu:,.0f} ms |"
            )
    for name in ("SQLite", "PostgreSQL"):
        load = figures[name]["load"]
        lines.append(
            f"Loading into {name}: {load['wall']:,.0f} s wall (not part of the figures above)."
        )
    write_section("pg-semantic", "Semantic recall: PostgreSQL against SQLite", "\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
