"""Supermemory provider: what it adds to the turn path, against the local fake service.

Measured against the loopback fake of the Supermemory 5.x API (the one the
tests use), pre-filled with documents so searches do real work:

* baseline: a direct SDK ``search`` and ``add`` call (what a synchronous
  provider would put on the turn path);
* ``prefetch`` in the steady state: the previous turn's ``queue_prefetch``
  finished in the background (as it does while the user reads and types), so
  the turn only picks the result up;
* ``prefetch`` cold: nothing queued (first turn of a session), so the turn
  waits for one recall;
* ``sync_turn``: the call on the turn path (queueing the write), and the
  background time until the write reached the service (off the turn path).

Run ``python bench/bench_provider_supermemory.py`` (``--quick`` for a small size).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "providers" / "supermemory" / "tests"))

import supermemory  # noqa: E402
import yaml  # noqa: E402
from fake_supermemory import FakeSupermemory  # noqa: E402
from hermes_memory_supermemory import SupermemoryProvider  # noqa: E402
from report import percentile, write_section  # noqa: E402

TOPICS = ["garden", "trains", "jazz", "python", "sailing", "tea", "chess", "hiking", "baking"]


def _fact(i: int) -> str:
    topic = TOPICS[i % len(TOPICS)]
    return f"Fact {i}: the user mentioned {topic} project number {i} on day {i % 31}."


def _query(i: int) -> str:
    return f"what do you remember about {TOPICS[i % len(TOPICS)]} project {i}?"


def _timed(fn: Callable[..., object], *args: Any, **kwargs: Any) -> float:
    start = time.perf_counter()
    fn(*args, **kwargs)
    return (time.perf_counter() - start) * 1e6


def _row(name: str, samples: list[float], baseline: float) -> str:
    p50, p95 = percentile(samples, 50), percentile(samples, 95)
    return f"| {name} | {p50:,.0f} | {p95:,.0f} | {p50 / baseline:.3f}× |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes for a smoke run")
    args = parser.parse_args()
    documents, turns = (200, 30) if args.quick else (2000, 200)

    with tempfile.TemporaryDirectory() as tmp, FakeSupermemory() as fake:
        home = Path(tmp)
        os.environ["HERMES_HOME"] = str(home)
        os.environ["SUPERMEMORY_API_KEY"] = fake.api_key
        config = {
            "memory": {"provider": "supermemory"},
            "supermemory": {"base_url": fake.url, "prefetch_wait": 10.0},
        }
        (home / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")

        client = supermemory.Supermemory(api_key=fake.api_key, base_url=fake.url, max_retries=0)
        for i in range(documents):
            client.add("hermes", content=_fact(i), id=f"seed_{i}")

        # Baseline: direct SDK calls, each a full HTTP round trip.
        direct_search = [
            _timed(client.search, "hermes", query=_query(i), limit=10) for i in range(turns)
        ]
        direct_add = [
            _timed(client.add, "hermes", content=_fact(documents + i), id=f"d_{i}")
            for i in range(turns)
        ]

        provider = SupermemoryProvider()
        provider.initialize("bench", hermes_home=str(home), platform="cli")
        provider.flush(10)

        cold: list[float] = []
        for i in range(turns):
            provider.on_session_switch(f"cold-{i}", reset=True)  # nothing queued
            cold.append(_timed(provider.prefetch, _query(i)))

        steady: list[float] = []
        provider.on_session_switch("steady", reset=True)
        provider.queue_prefetch(_query(0))
        for i in range(1, turns + 1):
            pending = provider._pending
            if pending is not None:
                pending.future.result(timeout=30)  # the user is still reading: not timed
            steady.append(_timed(provider.prefetch, _query(i)))
            provider.queue_prefetch(_query(i))

        enqueue: list[float] = []
        background: list[float] = []
        for i in range(turns):
            user = f"Turn {i}: I started a new {TOPICS[i % len(TOPICS)]} project today."
            start = time.perf_counter()
            provider.sync_turn(user, "Sounds fun, tell me more.", session_id="bench")
            enqueue.append((time.perf_counter() - start) * 1e6)
            provider.flush(30)
            background.append((time.perf_counter() - start) * 1e6)
        provider.shutdown()
        client.close()

    search_p50, add_p50 = percentile(direct_search, 50), percentile(direct_add, 50)
    body = "\n".join(
        [
            f"{documents} documents in the fake, {turns} turns; latencies in µs; the ratio is "
            "p50 against the direct SDK call of the same kind (lower is better; the turn-path "
            "goal is near zero).",
            "",
            "| what | p50 µs | p95 µs | vs direct call |",
            "|---|---:|---:|---:|",
            _row("direct SDK `search` (baseline)", direct_search, search_p50),
            _row("`prefetch`, steady state (turn path)", steady, search_p50),
            _row("`prefetch`, cold first turn (turn path)", cold, search_p50),
            _row("direct SDK `add` (baseline)", direct_add, add_p50),
            _row("`sync_turn` call (turn path)", enqueue, add_p50),
            _row("`sync_turn` until stored (background)", background, add_p50),
        ]
    )
    write_section("provider_supermemory", "Supermemory provider: added turn latency", body)


if __name__ == "__main__":
    main()
