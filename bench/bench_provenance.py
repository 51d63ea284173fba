"""Provenance on the write path: what telling a tool-derived write apart costs.

Every ``memory`` write now works out its origin (the user's message of the turn,
the turn's untrusted tool output) and records it in the origin ledger beside the
file. Measured per ``MemoryStore.add`` (a fresh entry into a realistically full
``MEMORY.md``): the in-run baseline is an add with no turn text at all; then an
add while the turn's user message is set and 200 kB of tool output were seen (the
first write of the turn reads the tool output into word 3-grams, later writes of
the turn reuse them); then a write that repeats the tool output and is held; and
a 10-operation batch, plain and held whole. Wall and CPU time (``process_time``)
medians of interleaved samples, and the load average at the start and end.

Run ``python bench/bench_provenance.py`` (``--quick`` for fewer samples).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hermes_memory_builtin.store import MemoryStore
from report import write_section

BASE_ENTRIES = [
    f"Fact {n}: the staging cluster runs Postgres 16 behind pgbouncer on port 64{n:02d}."
    for n in range(18)
]
PAGE_SENTENCE = "the nightly export of the billing tables lands in the cold bucket at four"
TOOL_OUTPUT = (
    " ".join(
        f"paragraph {n} of the wiki describes service {n % 97} and its owners."
        for n in range(3_300)
    )
    + f" {PAGE_SENTENCE}."
)[:200_000]


def fresh_store(root: Path, number: int) -> MemoryStore:
    folder = root / f"m{number}"
    folder.mkdir()
    (folder / "MEMORY.md").write_text("\n§\n".join(BASE_ENTRIES), encoding="utf-8")
    store = MemoryStore(folder, memory_char_limit=20_000)
    store.load_from_disk()
    return store


def timed(action: Callable[[], object]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    action()
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    samples = 20 if args.quick else 120
    load_before = os.getloadavg()
    results: dict[str, list[tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        counter = iter(range(10**9))

        def plain() -> Callable[[], object]:
            store = fresh_store(root, next(counter))
            return lambda: store.add("memory", f"Deploy window {next(counter)} is Tuesday noon")

        def turn(first: bool) -> Callable[[], object]:
            store = fresh_store(root, next(counter))
            store.turn_user_message = "what does the wiki say about the billing exports?"
            store.note_tool_output(f"{TOOL_OUTPUT} sample {next(counter)}")  # not cached yet
            if not first:
                store.add("memory", "Warm-up entry of this turn, unrelated")
            return lambda: store.add("memory", f"Deploy window {next(counter)} is Tuesday noon")

        def ledger() -> Callable[[], object]:
            store = fresh_store(root, next(counter))
            entries = [*BASE_ENTRIES, "One new entry"]
            return lambda: store.entry_origins().record("memory", entries, {entries[-1]: "model"})

        def held() -> Callable[[], object]:
            store = fresh_store(root, next(counter))
            store.note_tool_output(TOOL_OUTPUT)
            store.add("memory", "Warm-up entry of this turn, unrelated")
            return lambda: store.add("memory", f"Per the wiki {PAGE_SENTENCE} {next(counter)}")

        def batch(hold: bool) -> Callable[[], object]:
            store = fresh_store(root, next(counter))
            store.note_tool_output(TOOL_OUTPUT)
            store.add("memory", "Warm-up entry of this turn, unrelated")
            tail = PAGE_SENTENCE if hold else "a fact of the model's own"
            ops = [
                {"action": "add", "content": f"Batch fact {n} about queue {n}"} for n in range(9)
            ]
            ops.append({"action": "add", "content": f"Per the wiki {tail}"})
            return lambda: store.apply_batch("memory", ops)

        modes: dict[str, Callable[[], Callable[[], object]]] = {
            "add, no turn text (baseline)": plain,
            "add, first write of a turn with 200 kB tool output": lambda: turn(True),
            "add, later write of that turn": lambda: turn(False),
            "add repeating the tool output (held)": held,
            "batch of 10, applied": lambda: batch(False),
            "batch of 10, held whole": lambda: batch(True),
            "origin ledger update alone (part of every write)": ledger,
        }
        for _ in range(samples):
            for name, make in modes.items():
                action = make()
                results.setdefault(name, []).append(timed(action))
    load_after = os.getloadavg()
    base_wall = statistics.median(w for w, _ in results["add, no turn text (baseline)"])
    rows = ["| write | wall (median) | CPU (median) | wall vs baseline |", "|---|---|---|---|"]
    for name, values in results.items():
        wall = statistics.median(w for w, _ in values)
        cpu = statistics.median(c for _, c in values)
        rows.append(
            f"| {name} | {wall * 1e3:.2f} ms | {cpu * 1e3:.2f} ms | {wall / base_wall:.2f}× |"
        )
    body = (
        f"{samples} interleaved samples of each write into an 18-entry MEMORY.md on a "
        "temporary folder (lock, re-read, scan, detector, atomic replace, origin ledger). "
        f"Load average {load_before[0]:.1f} at the start, {load_after[0]:.1f} at the end "
        "(a shared machine: compare the ratios).\n\n" + "\n".join(rows)
    )
    write_section("provenance", "Provenance on the write path", body)


if __name__ == "__main__":
    main()
