"""Manager per-turn overhead: what the MemoryManager adds to a turn.

One turn is ``on_turn_start`` + ``prefetch_all`` + ``sync_all`` (the enqueue
only; the background write is waited for outside the timed window, as the
model call would cover it in a real turn), with the builtin provider and one
no-op external provider. The baseline calls the same provider methods
directly. Run ``python bench/bench_manager.py`` (``--quick`` for a small size).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from report import percentile, write_section

from hermes_core.errors import PluginError
from hermes_core.manager import MemoryManager
from hermes_core.provider import MemoryProvider

TARGET_P50_US = 200.0


class NoOpProvider(MemoryProvider):
    """Implements every per-turn hook and does nothing in each."""

    def __init__(self, name: str) -> None:
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        pass

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return []

    def on_turn_start(self, turn_number: int, message: str, **kwargs: Any) -> None:
        pass

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        return ""

    def sync_turn(
        self,
        user_content: str,
        assistant_content: str,
        *,
        session_id: str = "",
        messages: list[dict[str, Any]] | None = None,
    ) -> None:
        pass


def builtin_provider() -> tuple[MemoryProvider, str]:
    """The installed builtin provider, or a no-op stand-in when it is not installed."""
    try:
        from hermes_core.plugins import load_builtin_provider

        return load_builtin_provider(), "builtin provider"
    except (ImportError, PluginError):
        return NoOpProvider("builtin"), "no-op stand-in (builtin provider not installed)"


def measure(turns: int, warmup: int) -> dict[str, Any]:
    builtin, builtin_label = builtin_provider()
    external = NoOpProvider("noop-external")
    manager = MemoryManager()
    manager.add_provider(builtin)
    manager.add_provider(external)
    manager.initialize_all("bench-session", platform="cli")
    providers = (builtin, external)
    session = "bench-session"
    messages = [
        f"turn {i}: what do you remember about the deployment schedule of project {i % 7}?"
        for i in range(turns + warmup)
    ]
    reply = "The deployment runs every Tuesday after the CI gate passes."
    clock = time.perf_counter_ns

    bare: list[float] = []
    managed: list[float] = []
    parts: dict[str, list[float]] = {"on_turn_start": [], "prefetch_all": [], "sync_all": []}
    for i, message in enumerate(messages):
        t0 = clock()
        for provider in providers:
            provider.on_turn_start(i, message, model="bench", remaining_tokens=100_000)
        for provider in providers:
            provider.prefetch(message, session_id=session)
        for provider in providers:
            provider.sync_turn(message, reply, session_id=session)
        t1 = clock()
        manager.on_turn_start(i, message, model="bench", remaining_tokens=100_000)
        t2 = clock()
        manager.prefetch_all(message, session_id=session)
        t3 = clock()
        manager.sync_all(message, reply, session_id=session)
        t4 = clock()
        manager.flush_pending(10)  # the model call would cover the background write
        if i >= warmup:
            bare.append((t1 - t0) / 1000)
            managed.append((t4 - t1) / 1000)
            parts["on_turn_start"].append((t2 - t1) / 1000)
            parts["prefetch_all"].append((t3 - t2) / 1000)
            parts["sync_all"].append((t4 - t3) / 1000)
    manager.shutdown_all()
    return {"bare": bare, "managed": managed, "parts": parts, "builtin": builtin_label}


def render(result: dict[str, Any], turns: int, quick: bool) -> str:
    bare50, bare95 = percentile(result["bare"], 50), percentile(result["bare"], 95)
    man50, man95 = percentile(result["managed"], 50), percentile(result["managed"], 95)
    verdict = "met" if man50 <= TARGET_P50_US else "NOT met"
    lines = [
        f"{turns} turns{' (quick run)' if quick else ''}; builtin provider: {result['builtin']}; "
        "external: a provider whose `on_turn_start`, `prefetch` and `sync_turn` return at once. "
        "A turn is `on_turn_start` + `prefetch_all` + `sync_all` (enqueue); the baseline calls "
        "the same provider methods directly.",
        "",
        "| per turn | p50 (µs) | p95 (µs) | p50 ratio vs bare |",
        "|---|---:|---:|---:|",
        f"| bare provider calls | {bare50:.1f} | {bare95:.1f} | 1.0× |",
        f"| through MemoryManager | {man50:.1f} | {man95:.1f} | {man50 / bare50:.0f}× |",
        "",
        f"Manager overhead at p50: **{man50 - bare50:.1f} µs** per turn "
        f"(target ≤ {TARGET_P50_US:.0f} µs for the whole managed turn: {verdict}).",
        "",
        "| manager call | p50 (µs) | p95 (µs) |",
        "|---|---:|---:|",
    ]
    for name, values in result["parts"].items():
        lines.append(f"| `{name}` | {percentile(values, 50):.1f} | {percentile(values, 95):.1f} |")
    lines += [
        "",
        "Most of `prefetch_all` is the hand-off to the external provider's prefetch thread, "
        "which is what bounds a hung provider by `external_prefetch_timeout`.",
    ]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small run for development")
    args = parser.parse_args(argv)
    turns, warmup = (2_000, 200) if args.quick else (20_000, 1_000)
    with tempfile.TemporaryDirectory(prefix="bench-manager-") as home:
        os.environ["HERMES_HOME"] = home
        result = measure(turns, warmup)
    write_section("manager", "Manager per-turn overhead", render(result, turns, args.quick))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
