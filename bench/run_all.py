"""Run every benchmark under bench/ (``nox -s bench``); each rewrites its docs section."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    names = argv or sorted(p.stem for p in HERE.glob("bench_*.py"))
    for name in names:
        path = HERE / (name if name.endswith(".py") else f"{name}.py")
        print(f"== {path.name}", flush=True)
        runpy.run_path(str(path), run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
