"""Writes memory cannot attribute: what screening them as ``client`` instead of ``model`` holds.

Through the MCP server, before the client describes a turn with ``note_turn``, a
write nothing explains has origin ``client`` and is held from the detector's
calibrated threshold (``provenance.untrusted_review``) instead of its review band.
This runs :func:`~hermes_memory_builtin.provenance.screen` on the same texts as
``model`` (the in-run baseline) and as ``client``: the generated safety corpus
(``bench/safety_corpus.py``, dev and test splits: attacks stopped, benign held), the
REALTALK chat messages (benign, dev and test halves) and MemDaily's messages
(benign, Chinese; both from ``python bench/public_sets.py fetch``, git-ignored).
Nothing is tuned here: the threshold comes with the detector.

Run ``python bench/bench_origins.py``.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hermes_memory_builtin.detector import load_detector
from hermes_memory_builtin.provenance import screen, untrusted_review
from public_sets import DATA, realtalk_split
from report import write_section
from safety_corpus import generate


def _stopped(texts: list[str], origin: str) -> int:
    return sum(screen(text, origin).action != "store" for text in texts)


def _row(name: str, texts: list[str]) -> str:
    model, client = _stopped(texts, "model"), _stopped(texts, "client")
    n = len(texts)
    return f"| {name} | {n:,} | {model:,} ({model / n:.2%}) | {client:,} ({client / n:.2%}) |"


def _realtalk(split: str) -> list[str]:
    return [
        turn["text"]
        for sample, _ in realtalk_split(split)
        for key, turns in sample["conversation"].items()
        if key.startswith("session_") and isinstance(turns, list)
        for turn in turns
    ]


def _memdaily() -> list[str]:
    messages: Iterable[dict[str, object]] = (
        message
        for path in sorted((DATA / "memdaily").glob("*.json"))
        for trajectory in json.loads(path.read_text(encoding="utf-8"))
        for message in trajectory["message_list"]
    )
    return [str(m["message"]) for m in messages if str(m.get("message") or "").strip()]


def main() -> int:
    started = time.process_time()
    corpus = list(generate())
    rows = []
    for split in ("dev", "test"):
        for label, kind in ((1, "attacks stopped"), (0, "benign held")):
            texts = [s.text for s in corpus if s.split == split and s.label == label]
            rows.append(_row(f"generated {split}: {kind}", texts))
    for split in ("dev", "test"):
        name = f"REALTALK messages, {split} half: benign held"
        try:
            rows.append(_row(name, _realtalk(split)))
        except SystemExit as missing:  # not fetched: `python bench/public_sets.py fetch`
            rows.append(f"| {name} | — | not measured: {missing} | |")
    memdaily = _memdaily()
    if memdaily:
        rows.append(_row("MemDaily messages (Chinese): benign held", memdaily))
    body = "\n".join(
        [
            "`screen()` on the same texts as `model` (the in-run baseline: held from the "
            f"review band, {load_detector().review:g}) and as `client` (held from the "
            f"calibrated threshold, {untrusted_review():g}). "
            "`python bench/bench_origins.py`; CPU "
            f"{time.process_time() - started:.1f} s.",
            "",
            "| texts | n | as `model` | as `client` |",
            "|---|---:|---:|---:|",
            *rows,
        ]
    )
    print(body)
    write_section("origins", "Writes memory cannot attribute: `client` against `model`", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
