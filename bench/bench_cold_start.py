"""Cold start of ``hermes-memory plugins`` against ``python -c pass``.

Each run is a fresh process (the console script of the current environment)
with an empty temporary ``HERMES_HOME``, so it pays for interpreter start,
imports, entry-point scanning and probing every installed provider. Runs of the
baseline and of the command are interleaved so machine load hits both alike;
the medians are compared, as wall-clock time and as the child's CPU time (user +
system), which a busy machine inflates far less. Bytecode is cached
(``PYTHONPYCACHEPREFIX`` in a temporary directory) as in a normal installation,
even when the environment sets ``PYTHONDONTWRITEBYTECODE``. Run
``python bench/bench_cold_start.py`` (``--quick`` for a small size).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from report import percentile, write_section

TARGET_EXTRA_MS = 250.0


def timed(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall-clock ms, CPU ms) of one run of *command*, which must succeed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall * 1000, cpu * 1000


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few runs (development)")
    parser.add_argument("--runs", type=int, default=None, help="runs per command")
    args = parser.parse_args(argv)
    runs = args.runs or (5 if args.quick else 40)

    script = Path(sys.executable).parent / "hermes-memory"
    if not script.exists():
        print(
            f"{script} not found: install hermes-memory-core in this environment", file=sys.stderr
        )
        return 1
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "python -c 'import hermes_core.plugins'": [
            sys.executable,
            "-c",
            "import hermes_core.plugins",
        ],
        "hermes-memory --help": [str(script), "--help"],
        "hermes-memory plugins": [str(script), "plugins"],
    }
    with tempfile.TemporaryDirectory(prefix="bench-cold-start-") as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        env = dict(os.environ, HERMES_HOME=str(home), PYTHONPYCACHEPREFIX=str(Path(tmp) / "pyc"))
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        listing = subprocess.run(
            [str(script), "plugins", "--json"], env=env, check=True, capture_output=True, text=True
        )
        providers = [p["name"] for p in json.loads(listing.stdout)["providers"]]
        for command in commands.values():  # warm the bytecode and OS caches
            timed(command, env)
        wall: dict[str, list[float]] = {label: [] for label in commands}
        cpu: dict[str, list[float]] = {label: [] for label in commands}
        for _ in range(runs):
            for label, command in commands.items():
                wall_ms, cpu_ms = timed(command, env)
                wall[label].append(wall_ms)
                cpu[label].append(cpu_ms)
    load = os.getloadavg()[0]

    base_wall = statistics.median(wall["python -c pass"])
    base_cpu = statistics.median(cpu["python -c pass"])
    rows = []
    for label in commands:
        median_wall = statistics.median(wall[label])
        median_cpu = statistics.median(cpu[label])
        rows.append(
            f"| `{label}` | {median_wall:.0f} | {percentile(wall[label], 90):.0f} | "
            f"{median_wall - base_wall:+.0f} | {median_cpu:.0f} | {median_cpu - base_cpu:+.0f} |"
        )
    extra_wall = statistics.median(wall["hermes-memory plugins"]) - base_wall
    extra_cpu = statistics.median(cpu["hermes-memory plugins"]) - base_cpu

    def verdict(extra: float) -> str:
        return "meets" if extra <= TARGET_EXTRA_MS else "misses"

    body = "\n".join(
        [
            f"Median of {runs} fresh processes per command, interleaved, empty `HERMES_HOME`, "
            f"bytecode cached; load average {load:.1f} on {os.cpu_count()} cores at the end "
            f"of the run. Providers installed and probed: {', '.join(providers) or 'none'}.",
            "",
            "| command | wall median ms | wall p90 ms | wall vs baseline | CPU median ms "
            "| CPU vs baseline |",
            "|---|---:|---:|---:|---:|---:|",
            *rows,
            "",
            f"`hermes-memory plugins` costs **{extra_wall:+.0f} ms** of wall-clock time and "
            f"**{extra_cpu:+.0f} ms** of CPU time over `python -c pass` (target "
            f"+{TARGET_EXTRA_MS:.0f} ms: wall {verdict(extra_wall)}, CPU {verdict(extra_cpu)}). "
            "On a loaded machine the wall-clock figure includes waiting for a core; the CPU "
            "figure is the work itself. Importing the discovery module (pluggy, "
            "importlib.metadata, the provider contract) is the core's fixed share; the rest "
            "is the CLI shell (click), one scan of the installed distributions' entry points "
            "(shared by both entry-point groups) and the installed providers: each plugin "
            "module is imported, each provider created, and each available provider's "
            "`get_tool_schemas()` called, so a provider that imports a heavy library there "
            "shows up here. None of that imports an HTTP client (httpx, `hermes_core.llm`), "
            "a vendor SDK, the session store, tenacity or numpy; `tests/test_cold_imports.py` "
            "keeps it so. `--help` imports none of the command modules, but loads every "
            "plugin, since a plugin may add commands.",
        ]
    )
    write_section("cold_start", "Cold start: `hermes-memory plugins`", body)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
