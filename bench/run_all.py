"""Run every benchmark under bench/ (``nox -s bench``); each rewrites its docs section.

``python bench/run_all.py [NAME ...] [-- ARGS]`` runs the named benchmarks (all
``bench_*.py`` by default), each in its own process, passing ARGS to each.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    names, extra = argv, []
    if "--" in argv:
        cut = argv.index("--")
        names, extra = argv[:cut], argv[cut + 1 :]
    selected = names or sorted(p.stem for p in HERE.glob("bench_*.py"))
    failed = []
    for name in selected:
        path = HERE / (name if name.endswith(".py") else f"{name}.py")
        print(f"== {path.name}", flush=True)
        if subprocess.run([sys.executable, str(path), *extra], check=False).returncode:
            failed.append(path.name)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
