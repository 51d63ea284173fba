"""Shared by every benchmark: machine facts and writing a section of docs/benchmarks.md.

Each benchmark owns one section between ``<!-- bench:NAME:start -->`` and
``<!-- bench:NAME:end -->`` markers; rerunning it replaces only that section.
"""

from __future__ import annotations

import fcntl
import os
import platform
import sqlite3
import statistics
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

DOC = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"
HEADER = """# Benchmarks

Every figure here is produced by a script under `bench/` and compared with a
baseline measured in the same run on the same machine; rerun them all with
`nox -s bench` (or one with `python bench/<name>.py`). Absolute numbers depend
on the machine; the ratios are what to compare.
"""


def machine() -> str:
    """One line naming the machine, Python and SQLite the figures come from."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return (
        f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}, "
        f"Python {sys.version.split()[0]}, SQLite {sqlite3.sqlite_version}"
    )


def percentile(values: Sequence[float], pct: float) -> float:
    """The *pct* percentile (0-100) of *values* by linear interpolation."""
    if not values:
        return float("nan")
    if len(values) == 1:
        return float(values[0])
    return statistics.quantiles(values, n=100, method="inclusive")[max(0, min(98, int(pct) - 1))]


def write_section(name: str, title: str, body: str) -> None:
    """Replace (or append) benchmark *name*'s section of docs/benchmarks.md."""
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    section = (
        f"<!-- bench:{name}:start -->\n## {title}\n\n"
        f"*Measured {stamp} on {machine()}.*\n\n{body.strip()}\n<!-- bench:{name}:end -->"
    )
    start, end = f"<!-- bench:{name}:start -->", f"<!-- bench:{name}:end -->"
    DOC.parent.mkdir(parents=True, exist_ok=True)
    # Benchmarks may run at once: read-modify-write the page under a lock.
    with open(DOC.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        text = DOC.read_text(encoding="utf-8") if DOC.exists() else HEADER
        if start in text and end in text:
            before = text.split(start, 1)[0]
            after = text.split(end, 1)[1]
            text = before + section + after
        else:
            text = text.rstrip() + "\n\n" + section + "\n"
        tmp = DOC.with_suffix(".tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, DOC)
    print(section)
