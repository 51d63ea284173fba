"""Honcho provider: what it adds to the turn path, against the local fake Honcho.

Measured against the loopback fake of Honcho's v3 API (the one the tests use),
pre-filled with conversation so recalls do real work, once as it is (loopback)
and once with 50 ms added to every request (a remote service):

* baseline: direct honcho-ai SDK calls a synchronous provider would make on
  the turn path: ``peer.context(search_query=…)`` for recall and
  ``session.add_messages([…])`` for a turn's two messages;
* ``prefetch`` in the steady state: the previous turn's ``queue_prefetch``
  finished in the background (as it does while the user reads and types), so
  the turn only picks the cached result up;
* ``sync_turn``: the call on the turn path (queueing the write), and the
  background time until the write reached the service (off the turn path).

Run ``python bench/bench_provider_honcho.py`` (``--quick`` for a small size).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "providers" / "honcho" / "tests"))

import httpx  # noqa: E402
from fake_honcho import FakeHoncho  # noqa: E402
from hermes_memory_honcho import HonchoMemoryProvider  # noqa: E402
from honcho import Honcho  # noqa: E402
from honcho_test_support import API_KEY, write_config  # noqa: E402
from report import percentile, write_section  # noqa: E402

TOPICS = ["garden", "trains", "jazz", "python", "sailing", "tea", "chess", "hiking", "baking"]
USER = "bench-user"


def _fact(i: int) -> str:
    topic = TOPICS[i % len(TOPICS)]
    return f"Fact {i}: I am working on a {topic} project number {i} this month."


def _query(i: int) -> str:
    return f"what do you remember about my {TOPICS[i % len(TOPICS)]} project {i}?"


def _timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1e6


def _row(name: str, samples: list[float], baseline: float | None) -> str:
    p50, p95 = percentile(samples, 50), percentile(samples, 95)
    ratio = f"{p50 / baseline:.4f}×" if baseline else "1 (baseline)"
    return f"| {name} | {p50:,.0f} | {p95:,.0f} | {ratio} |"


def run_scenario(latency: float, turns: int, seed_facts: int) -> list[str]:
    """Measure one latency scenario; return its markdown table rows."""
    home = Path(tempfile.mkdtemp(prefix="bench-honcho-"))
    os.environ["HERMES_HOME"] = str(home)
    os.environ["HONCHO_API_KEY"] = API_KEY
    with FakeHoncho(api_key=API_KEY) as fake:
        write_config(home, base_url=fake.url, workspace="bench", max_retries=0, timeout=10.0)
        http = httpx.Client(timeout=10.0)
        sdk = Honcho(
            api_key=API_KEY,
            base_url=fake.url,
            workspace_id="bench",
            max_retries=0,
            http_client=http,
        )
        session = sdk.session("seed")
        user, ai = sdk.peer(USER), sdk.peer("hermes")
        for start in range(0, seed_facts, 50):
            session.add_messages(
                [user.message(_fact(i)) for i in range(start, min(seed_facts, start + 50))]
            )
        if latency:
            fake.fail(times=None, status=None, delay=latency)

        direct_recall = [
            _timed(partial(user.context, search_query=_query(i))) for i in range(turns)
        ]
        direct_sync = [
            _timed(
                partial(
                    session.add_messages,
                    [user.message(f"Turn {i}: {_query(i)}"), ai.message(f"Answer {i}.")],
                )
            )
            for i in range(turns)
        ]

        provider = HonchoMemoryProvider()
        provider.initialize("bench-session", hermes_home=str(home), platform="cli", user_id=USER)
        provider.wait_idle(120)
        prefetch: list[float] = []
        sync: list[float] = []
        background: list[float] = []
        for i in range(turns):
            provider.queue_prefetch(_query(i))
            provider.wait_idle(120)  # the user reads the answer and types the next message
            prefetch.append(_timed(partial(provider.prefetch, _query(i))))
            sync.append(
                _timed(partial(provider.sync_turn, f"Turn {i}: {_query(i)}", f"Answer {i}."))
            )
            background.append(_timed(partial(provider.wait_idle, 120)))
        recalled = provider.prefetch(_query(turns - 1))
        provider.shutdown()
        http.close()
    assert "project" in recalled, "the benchmark must measure real recalls"
    label = "loopback" if not latency else f"+{latency * 1000:.0f} ms per request"
    base_recall = percentile(direct_recall, 50)
    base_sync = percentile(direct_sync, 50)
    return [
        f"| **{label}** | | | |",
        _row("direct SDK `peer.context(search_query)` (baseline)", direct_recall, None),
        _row("provider `prefetch` on the turn path", prefetch, base_recall),
        _row("direct SDK `session.add_messages` (baseline)", direct_sync, None),
        _row("provider `sync_turn` on the turn path", sync, base_sync),
        _row("provider write reaching Honcho (background)", background, base_sync),
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small size for a smoke run")
    args, _ = parser.parse_known_args(argv)
    turns, slow_turns, facts = (20, 8, 200) if args.quick else (200, 40, 2000)
    rows = run_scenario(0.0, turns, facts) + run_scenario(0.05, slow_turns, facts)
    body = "\n".join(
        [
            f"{turns} turns on loopback and {slow_turns} with 50 ms added per request, "
            f"against the fake Honcho holding {facts} earlier messages of the user. "
            "Microseconds per call; the ratio compares medians with the direct SDK call "
            "of the same scenario. `prefetch` returns the recall the previous turn's "
            "`queue_prefetch` computed in the background, and `sync_turn` only queues; "
            "the background write row is the time until the queued turn reached Honcho, "
            "off the turn path.",
            "",
            "| operation | p50 (µs) | p95 (µs) | vs baseline (p50) |",
            "|---|---:|---:|---:|",
            *rows,
        ]
    )
    write_section("provider_honcho", "Honcho provider: added latency on the turn path", body)


if __name__ == "__main__":
    main()
