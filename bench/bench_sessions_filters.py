"""Search cost with ``session_search``'s filters on, against two FTS5 floors.

The tool always passes its hidden sources (``exclude_sources``, ``tool`` by
default) and, inside a conversation, that conversation's lineage
(``exclude_session_ids``). Each query class of ``bench_sessions.py`` is timed
(CPU, p50 of each query's runs, p95 pooled; every variant takes its turn on each
run of each query) as:

* the **independent floor** (issue 29's harness): a separate file holding the
  same messages' text in one ``content`` column, indexed by a plain FTS5
  ``unicode61`` table and a ``trigram`` table (no stemming, no other column);
  a bare ``MATCH … ORDER BY rank LIMIT 50`` on the one that answers the class
  (a 2-character CJK term, which a trigram cannot match, as a ``LIKE`` scan);
* the **own-index floor**: the same bare statement on the store's own word,
  gram and trigram indexes;
* ours (``search_messages(q, limit=50, snippets=False)``) without filters, with
  the hidden sources only, and with a lineage excluded too.

Usage: ``python bench/bench_sessions_filters.py [--messages N] [--keep DIR]``
(default 100,000 messages; ``--keep`` builds the two files there once and
reuses them; ``--write`` updates docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_sessions import CORPUS_VERSION, QUERY_CLASSES, Corpus, cpu_timed  # noqa: E402
from report import percentile, write_section  # noqa: E402

from hermes_core.sessions import SessionStore  # noqa: E402
from hermes_core.sessions.connection import open_connection  # noqa: E402

REPEATS = 15
INDEPENDENT = "independent floor"
OWN = "own-index floor"
OURS = "ours"
HIDDEN = "ours, hidden sources"
LINEAGE = "ours, hidden sources + lineage"
VARIANTS = (INDEPENDENT, OWN, OURS, HIDDEN, LINEAGE)
TARGET = 1.2
"""Issue 29's bound: every class within 1.2× of the independent floor at p50 and p95."""

INDEPENDENT_SCHEMA = """
PRAGMA journal_mode = WAL;
CREATE TABLE messages (id INTEGER PRIMARY KEY, content TEXT);
CREATE VIRTUAL TABLE words USING fts5(content, content='messages', content_rowid='id',
    tokenize='unicode61');
CREATE VIRTUAL TABLE grams USING fts5(content, content='messages', content_rowid='id',
    tokenize='trigram');
CREATE TRIGGER messages_ai AFTER INSERT ON messages BEGIN
    INSERT INTO words(rowid, content) VALUES (new.id, new.content);
    INSERT INTO grams(rowid, content) VALUES (new.id, new.content);
END;
"""

# The independent floor's statement per class: (SQL, how a query of the class becomes its
# parameter). Latin classes go to the unicode61 index as typed; a 4-character CJK term is a
# trigram phrase; a 2-character one is shorter than a trigram, so the harness scans.
_MATCH = "SELECT rowid FROM {index} WHERE {index} MATCH ? ORDER BY rank LIMIT 50"
INDEPENDENT_SQL: dict[str, tuple[str, Callable[[str], str]]] = {
    "single term": (_MATCH.format(index="words"), str),
    "two terms": (_MATCH.format(index="words"), str),
    "phrase": (_MATCH.format(index="words"), str),
    "prefix": (_MATCH.format(index="words"), str),
    "2-char Chinese": (
        "SELECT id FROM messages WHERE content LIKE ? LIMIT 50",
        lambda q: f"%{q}%",
    ),
    "4-char Chinese": (_MATCH.format(index="grams"), lambda q: f'"{q}"'),
}
_COUNT = {
    "words": "SELECT count(*) FROM words WHERE words MATCH ?",
    "grams": "SELECT count(*) FROM grams WHERE grams MATCH ?",
}


def build(workdir: Path, total: int, batch: int = 5_000) -> dict[str, Any]:
    """The store and the independent file, filled with the same messages in the same order."""
    store = SessionStore(workdir / "ours.db", semantic="off")
    independent = sqlite3.connect(workdir / "independent.db", isolation_level=None)
    independent.executescript(INDEPENDENT_SCHEMA)
    started = time.perf_counter()
    done = 0
    for sessions in Corpus().batches(total, batch):
        store.import_sessions(sessions)
        independent.execute("BEGIN IMMEDIATE")
        independent.executemany(
            "INSERT INTO messages(content) VALUES (?)",
            [(m["content"] or "",) for s in sessions for m in s["messages"]],
        )
        independent.execute("COMMIT")
        done += sum(len(s["messages"]) for s in sessions)
        print(f"  imported {done:,} / {total:,}", end="\r", flush=True)
    print()
    independent.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    independent.close()
    store.close()
    figures = {"messages": done, "corpus": CORPUS_VERSION, "seconds": time.perf_counter() - started}
    (workdir / "filters-build.json").write_text(json.dumps(figures))
    return figures


def _reusable(workdir: Path, total: int) -> bool:
    figures = workdir / "filters-build.json"
    if not figures.is_file():
        return False
    kept = json.loads(figures.read_text())
    return kept.get("messages") == total and kept.get("corpus") == CORPUS_VERSION


def _fetch(conn: sqlite3.Connection, sql: str, param: str) -> list[Any]:
    return conn.execute(sql, (param,)).fetchall()


Row = dict[str, Any]


def measure(workdir: Path, repeats: int = REPEATS) -> dict[str, Row]:
    """Per class: p50 / p95 (ms) of every variant, and how many messages each index matches."""
    store = SessionStore(workdir / "ours.db", read_only=True, semantic="off")
    own = open_connection(workdir / "ours.db", read_only=True)
    independent = open_connection(workdir / "independent.db", read_only=True)
    lineage = [own.execute("SELECT max(session_id) FROM messages").fetchone()[0]]
    results: dict[str, Row] = {}
    for name, (queries, index, matches) in QUERY_CLASSES.items():
        own_sql = _MATCH.format(index=index)
        independent_sql, independent_param = INDEPENDENT_SQL[name]
        per_query: dict[str, list[float]] = {v: [] for v in VARIANTS}
        pooled: dict[str, list[float]] = {v: [] for v in VARIANTS}
        matched: dict[str, list[int]] = {"independent": [], "own": [], "hits": []}
        for query, match in zip(queries, matches, strict=True):
            search = partial(store.search_messages, query, limit=50, snippets=False)
            calls: dict[str, Callable[[], Any]] = {
                INDEPENDENT: partial(
                    _fetch, independent, independent_sql, independent_param(query)
                ),
                OWN: partial(_fetch, own, own_sql, match),
                OURS: search,
                HIDDEN: partial(search, exclude_sources=["tool"]),
                LINEAGE: partial(search, exclude_sources=["tool"], exclude_session_ids=lineage),
            }
            for call in calls.values():
                call()  # warm the page cache
            runs: dict[str, list[float]] = {v: [] for v in VARIANTS}
            for _ in range(repeats):
                for variant, call in calls.items():  # the variants take turns
                    runs[variant].append(cpu_timed(call))
            for variant in VARIANTS:
                per_query[variant].append(percentile(runs[variant], 50))
                pooled[variant] += runs[variant]
            if name != "2-char Chinese":
                table = "grams" if "Chinese" in name else "words"
                matched["independent"].append(
                    independent.execute(_COUNT[table], (independent_param(query),)).fetchone()[0]
                )
            matched["own"].append(
                own.execute(
                    f"SELECT count(*) FROM {index} WHERE {index} MATCH ?", (match,)
                ).fetchone()[0]
            )
            matched["hits"].append(len(calls[LINEAGE]()))
        results[name] = {
            v: (percentile(per_query[v], 50) * 1000, percentile(pooled[v], 95) * 1000)
            for v in VARIANTS
        }
        results[name]["matched"] = {k: (sum(v) / len(v) if v else None) for k, v in matched.items()}
        results[name]["queries"] = [
            (query, per_query[INDEPENDENT][n] * 1000, per_query[LINEAGE][n] * 1000)
            for n, query in enumerate(queries)
        ]
    store.close()
    own.close()
    independent.close()
    return results


def _ratio(value: float, floor: float) -> str:
    ratio = value / floor
    text = f"{ratio:.2f}×"
    return f"**{text}**" if ratio > TARGET else text


def table(results: dict[str, Row]) -> list[str]:
    head = "| query class | " + " | ".join(f"{v} p50 / p95 (ms)" for v in VARIANTS)
    head += " | matches: independent / own index | hits |"
    lines = [head, "|---|" + "---:|" * (len(VARIANTS) + 2)]
    for name, row in results.items():
        floor_p50, floor_p95 = row[INDEPENDENT]
        cells = []
        for variant in VARIANTS:
            p50, p95 = row[variant]
            ratio = (
                ""
                if variant == INDEPENDENT
                else f" ({_ratio(p50, floor_p50)} / {_ratio(p95, floor_p95)})"
            )
            cells.append(f"{p50:.2f} / {p95:.2f}{ratio}")
        matched = row["matched"]
        independent = "scan" if matched["independent"] is None else f"{matched['independent']:,.0f}"
        cells.append(f"{independent} / {matched['own']:,.0f}")
        cells.append(f"{matched['hits']:.0f}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def query_table(results: dict[str, Row]) -> list[str]:
    """Each query of the classes above the target: independent floor and ours with filters."""
    lines = []
    for name, row in results.items():
        floor_p50, floor_p95 = row[INDEPENDENT]
        p50, p95 = row[LINEAGE]
        if p50 <= TARGET * floor_p50 and p95 <= TARGET * floor_p95:
            continue
        if not lines:
            lines = [
                "| class | query | independent floor p50 (ms) | ours, both filters p50 (ms) | × |",
                "|---|---|---:|---:|---:|",
            ]
        for query, floor, ours in row["queries"]:
            lines.append(f"| {name} | {query} | {floor:.2f} | {ours:.2f} | {ours / floor:.2f}× |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=REPEATS)
    parser.add_argument("--keep", type=Path, help="build the files in this directory, reuse them")
    parser.add_argument("--write", action="store_true", help="write docs/benchmarks.md")
    args = parser.parse_args(argv)
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        workdir = args.keep or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        if _reusable(workdir, args.messages):
            print(f"reusing {args.messages:,} messages in {workdir}")
        else:
            for name in ("ours.db", "independent.db"):
                for suffix in ("", "-wal", "-shm", ".vectors"):
                    Path(f"{workdir / name}{suffix}").unlink(missing_ok=True)
            print(f"building {args.messages:,} messages in {workdir}")
            build(workdir, args.messages)
        load = os.getloadavg()
        results = measure(workdir, args.repeats)
    lines = table(results)
    queries = query_table(results)
    print("\n".join(lines))
    print("\n".join(queries))
    if args.write:
        body = [
            f"Command: `python bench/bench_sessions_filters.py --messages {args.messages}`",
            "",
            f"{args.messages:,} messages of `bench_sessions.Corpus`; CPU time; p50 is the "
            "median of each query's median, p95 pooled over every run "
            f"({args.repeats} runs per query, the variants taking turns); in brackets, over the "
            "independent floor (bold above 1.2×). *matches* is how many messages the index's "
            "MATCH holds on average (what BM25 scores), *hits* what ours returns with both "
            f"filters. Load average {load[0]:.1f} / {load[1]:.1f} (1 / 5 min) when the "
            "searches began (the cores were shared).",
            "",
            *lines,
            *(["", *queries] if queries else []),
        ]
        write_section("sessions-filters", "Search cost with the tool's filters", "\n".join(body))
    return 0


if __name__ == "__main__":
    sys.exit(main())
