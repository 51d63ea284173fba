"""The write-scan catalogue on the development splits only: what each new pattern costs.

Reads the **dev** split (``--split train`` for more benign text) of the generated
corpus (``bench/safety_corpus.py``) and of the fetched real texts
(``bench/detector_data.py``; fetch first), never a test or held-out split, so
the patterns can be tuned here. For every benign family and
attack family it prints the share the ``strict`` catalogue refuses before and
after the current round: "before" is the in-run baseline, a scan without the
patterns of :data:`NEW_IDS` and without the letter-spacing and leetspeak
reading (``threats._unobfuscated``). Then it prints the ids the round adds on
benign text (``--show`` prints those texts) and the CPU time of both scans.

Run ``python bench/bench_catalogue_dev.py [--show] [--split train]``.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from collections import Counter, defaultdict
from unittest import mock

sys.path.insert(0, os.path.dirname(__file__))

import detector_data
import safety_corpus
from hermes_memory_builtin import threats
from hermes_memory_builtin.threats import scan_for_threats

SPLITS = ("dev", "train")
"""The splits this script may read: never test or held-out."""
NEW_IDS = frozenset({"conditioned_answer", "tool_call_payment"})
"""The patterns of issue 27's catalogue round 2 (planted answers, payment function calls)."""


def _sets(split: str) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    benign: dict[str, list[str]] = defaultdict(list)
    attacks: dict[str, list[str]] = defaultdict(list)
    for sample in safety_corpus.generate():
        if sample.split == split:
            (attacks if sample.label else benign)[f"generated {sample.family}"].append(sample.text)
    for row in detector_data.real_texts():
        if row.split == split:
            (attacks if row.label else benign)[f"{row.source}"].append(row.text)
    return benign, attacks


def _table(
    title: str,
    sets: dict[str, list[str]],
    baseline: dict[str, list[list[str]]],
    hits: dict[str, list[list[str]]],
) -> None:
    print(f"\n| {title} | texts | before | after |")
    print("|---|---:|---:|---:|")
    totals = [0, 0, 0]
    for name in sorted(sets):
        found = hits[name]
        before = sum(bool(set(ids) - NEW_IDS) for ids in baseline[name])
        after = sum(bool(ids) for ids in found)
        totals = [totals[0] + len(found), totals[1] + before, totals[2] + after]
        print(
            f"| {name} | {len(found)} | {before} ({100 * before / len(found):.2f} %) "
            f"| {after} ({100 * after / len(found):.2f} %) |"
        )
    n, before, after = totals
    print(f"| all | {n} | {before} ({100 * before / n:.2f} %) ", end="")
    print(f"| {after} ({100 * after / n:.2f} %) |")


def _scan_all(
    sets: tuple[tuple[str, list[str]], ...],
) -> tuple[dict[str, list[list[str]]], float, float]:
    """The strict scan of every text, with its wall and CPU seconds."""
    wall, cpu = time.perf_counter(), time.process_time()
    scans = {name: [scan_for_threats(text, "strict") for text in texts] for name, texts in sets}
    return scans, time.perf_counter() - wall, time.process_time() - cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--show", action="store_true", help="print benign texts new ids hit")
    parser.add_argument("--split", choices=SPLITS, default="dev")
    args = parser.parse_args(argv)
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}, "
        f"Python {platform.python_version()}"
    )
    detector_data.verify()
    benign, attacks = _sets(args.split)
    texts_by_set = (*benign.items(), *attacks.items())
    with mock.patch.object(threats, "_unobfuscated", lambda text: None):
        baseline, base_wall, base_cpu = _scan_all(texts_by_set)
    scans, wall, cpu = _scan_all(texts_by_set)
    _table(f"benign ({args.split})", benign, baseline, scans)
    _table(f"attacks ({args.split})", attacks, baseline, scans)
    new_on_benign: Counter[str] = Counter()
    for name, texts in benign.items():
        for text, ids in zip(texts, scans[name], strict=True):
            for pid in NEW_IDS.intersection(ids):
                new_on_benign[pid] += 1
                if args.show:
                    print(f"  {pid} [{name}]: {text[:300]!r}")
    print(f"\nnew ids on benign {args.split} text: {dict(new_on_benign) or 'none'}")
    new_readings = sum(
        base != ids
        for name in scans
        for base, ids in zip(baseline[name], scans[name], strict=True)
        if not NEW_IDS.intersection(ids)
    )
    print(f"texts whose ids the letter-spacing / leetspeak reading changed: {new_readings}")
    count = sum(len(found) for found in scans.values())
    for label, w, c in (("before", base_wall, base_cpu), ("after", wall, cpu)):
        print(
            f"{count} scans {label}: wall {w:.1f} s, CPU {c:.1f} s ({1e3 * c / count:.3f} ms/scan)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
