"""mem0 provider: what it adds to the turn path, on the platform fake and the local engine.

Scenarios, each against a store pre-filled with the user's earlier facts:

* platform mode against the loopback fake of Mem0's API (the one the tests
  use), as it is and with 50 ms added to every request (a remote service);
* local mode on mem0's own engine (embedded qdrant under a temporary
  HERMES_HOME) with the hashing embedder and with the MiniLM embedder.

Rows per scenario:

* baseline: the direct synchronous call a naive provider would make on the
  turn path (``MemoryClient.search`` / ``Memory.search`` for recall,
  ``add`` of the turn's two messages for a write);
* ``prefetch`` of a query the previous turn's ``queue_prefetch`` warmed;
* ``on_turn_start`` + ``prefetch`` of a new query, as the runtime calls them:
  the latest finished recall is served while this query's search runs in the
  background;
* ``sync_turn`` on the turn path (it only queues), and the background time
  until the write was stored (off the turn path).

Plus the MiniLM embedder's throughput, batched and one sentence at a time,
against the hashing embedder. Run ``python bench/bench_provider_mem0.py``
(``--quick`` for a small size).
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
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "providers" / "mem0" / "tests"))
os.environ.setdefault("MEM0_DIR", tempfile.mkdtemp(prefix="bench-mem0-dir-"))

from fake_mem0 import FakeMem0Platform  # noqa: E402
from hermes_memory_mem0 import Mem0MemoryProvider  # noqa: E402
from hermes_memory_mem0.embedders import (  # noqa: E402
    HashEmbedder,
    MiniLMEncoder,
    missing_minilm_requirements,
)
from hermes_memory_mem0.local_engine import LocalBackend  # noqa: E402
from hermes_memory_mem0.sdk import import_mem0  # noqa: E402
from hermes_memory_mem0.settings import load_settings  # noqa: E402
from report import percentile, write_section  # noqa: E402

TOPICS = ["garden", "trains", "jazz", "python", "sailing", "tea", "chess", "hiking", "baking"]
USER = "bench-user"
API_KEY = "m0-bench-key"


def _fact(i: int) -> str:
    return f"Fact {i}: I am working on a {TOPICS[i % len(TOPICS)]} project number {i}."


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


def _measure_provider(
    provider: Mem0MemoryProvider, turns: int
) -> tuple[list[float], list[float], list[float], list[float]]:
    warm, fresh, sync, background = [], [], [], []
    for i in range(turns):
        provider.queue_prefetch(_query(i))
        provider.flush(120)  # the user reads the answer and types the next message
        warm.append(_timed(partial(provider.prefetch, _query(i))))

        def turn(i: int = i) -> None:
            provider.on_turn_start(i, f"and the {TOPICS[(i + 3) % len(TOPICS)]} one?")
            provider.prefetch(f"and the {TOPICS[(i + 3) % len(TOPICS)]} one?")

        fresh.append(_timed(turn))
        provider.flush(120)
        sync.append(_timed(partial(provider.sync_turn, f"Turn {i}: {_query(i)}", f"Answer {i}.")))
        background.append(_timed(partial(provider.flush, 120)))
    recalled = provider.prefetch(_query(turns - 1))
    assert "project" in recalled, "the benchmark must measure real recalls"
    return warm, fresh, sync, background


def _rows(
    label: str,
    recall_name: str,
    direct_recall: list[float],
    direct_add: list[float],
    measured: tuple[list[float], list[float], list[float], list[float]],
) -> list[str]:
    warm, fresh, sync, background = measured
    base_recall, base_add = percentile(direct_recall, 50), percentile(direct_add, 50)
    return [
        f"| **{label}** | | | |",
        _row(f"direct `{recall_name}` (baseline)", direct_recall, None),
        _row("`prefetch`, query warmed by `queue_prefetch`", warm, base_recall),
        _row("`on_turn_start` + `prefetch`, new query", fresh, base_recall),
        _row("direct `add` of the turn (baseline)", direct_add, None),
        _row("`sync_turn` on the turn path", sync, base_add),
        _row("write stored (background, off the turn path)", background, base_add),
    ]


def platform_scenario(latency: float, turns: int, facts: int) -> list[str]:
    home = Path(tempfile.mkdtemp(prefix="bench-mem0-"))
    with FakeMem0Platform(api_key=API_KEY) as fake:
        for i in range(facts):
            fake.seed(_fact(i), user_id=USER)
        fake.latency = latency
        mem0 = import_mem0(home / "mem0")
        client = mem0.MemoryClient(api_key=API_KEY, host=fake.url)
        direct_recall = [
            _timed(partial(client.search, _query(i), filters={"user_id": USER}, top_k=10))
            for i in range(turns)
        ]
        direct_add = [
            _timed(
                partial(
                    client.add,
                    [
                        {"role": "user", "content": f"Direct turn {i}: {_query(i)}"},
                        {"role": "assistant", "content": f"Direct answer {i}."},
                    ],
                    user_id=USER,
                    agent_id="hermes",
                )
            )
            for i in range(turns)
        ]
        client.client.close()
        config = {"mem0": {"mode": "platform", "host": fake.url, "prefetch_wait": 10}}
        provider = Mem0MemoryProvider(config, env={"MEM0_API_KEY": API_KEY})
        provider.initialize("bench", hermes_home=str(home), platform="cli", user_id=USER)
        measured = _measure_provider(provider, turns)
        provider.shutdown()
    label = (
        "platform fake, loopback"
        if not latency
        else (f"platform fake, +{latency * 1000:.0f} ms per request")
    )
    return _rows(label, "MemoryClient.search", direct_recall, direct_add, measured)


def local_scenario(embedder: str, turns: int, facts: int) -> list[str]:
    home = Path(tempfile.mkdtemp(prefix="bench-mem0-"))
    config: dict[str, Any] = {
        "mem0": {"mode": "local", "local": {"embedder": embedder}, "prefetch_wait": 30}
    }
    settings = load_settings(config, env={})
    direct = LocalBackend(settings, data_dir=home / "mem0")
    for i in range(facts):
        direct.add(
            [{"role": "user", "content": _fact(i)}],
            user_id=USER,
            agent_id="hermes",
            infer=False,
            metadata={},
        )
    direct_recall = [
        _timed(partial(direct.search, _query(i), user_id=USER, top_k=10)) for i in range(turns)
    ]
    direct_add = [
        _timed(
            partial(
                direct.add,
                [
                    {"role": "user", "content": f"Direct turn {i}: {_query(i)}"},
                    {"role": "assistant", "content": f"Direct answer {i}."},
                ],
                user_id=USER,
                agent_id="hermes",
                infer=False,
                metadata={},
            )
        )
        for i in range(turns)
    ]
    direct.close()  # the provider opens the same store on its own
    provider = Mem0MemoryProvider(config, env={})
    provider.initialize("bench", hermes_home=str(home), platform="cli", user_id=USER)
    measured = _measure_provider(provider, turns)
    provider.shutdown()
    label = f"local engine, {embedder} embedder"
    return _rows(label, "Memory.search", direct_recall, direct_add, measured)


def embedding_throughput(sentences: int) -> list[str]:
    texts = [f"{_fact(i)} It needs {i % 7} more weekends of work." for i in range(sentences)]
    encoder = MiniLMEncoder.load()
    encoder.encode(texts[:8])  # warm-up

    def per_second(fn: Callable[[], object]) -> float:
        start = time.perf_counter()
        fn()
        return sentences / (time.perf_counter() - start)

    batched = per_second(partial(encoder.encode, texts))
    single = per_second(lambda: [encoder.encode([text]) for text in texts])
    hashing = per_second(partial(HashEmbedder(256).encode, texts))
    return [
        "| embedder | sentences/s | vs MiniLM one at a time |",
        "|---|---:|---:|",
        f"| MiniLM, one sentence per call (baseline) | {single:,.0f} | 1 (baseline) |",
        f"| MiniLM, batched (32 per forward pass) | {batched:,.0f} | {batched / single:.2f}× |",
        f"| hashing embedder (256 dims) | {hashing:,.0f} | {hashing / single:.2f}× |",
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small size for a smoke run")
    args, _ = parser.parse_known_args(argv)
    if args.quick:
        turns, slow_turns, facts, minilm_facts, sentences = 8, 4, 100, 30, 32
    else:
        turns, slow_turns, facts, minilm_facts, sentences = 100, 30, 2000, 300, 256
    home = Path(tempfile.mkdtemp(prefix="bench-mem0-home-"))
    os.environ["HERMES_HOME"] = str(home)
    rows = platform_scenario(0.0, turns, facts) + platform_scenario(0.05, slow_turns, facts)
    rows += local_scenario("hash", turns, facts)
    minilm_ok = not missing_minilm_requirements()
    if minilm_ok:
        rows += local_scenario("minilm", slow_turns, minilm_facts)
    load = os.getloadavg()[0]
    body = [
        f"Platform mode: {turns} turns on loopback and {slow_turns} with 50 ms added per "
        f"request, against the fake Mem0 API holding {facts} memories of the user. Local "
        f"mode: mem0's own engine (embedded qdrant), {turns} turns with the hashing "
        f"embedder over {facts} memories"
        + (f" and {slow_turns} with MiniLM over {minilm_facts}" if minilm_ok else "")
        + ". Microseconds per call; the ratio compares medians with the direct call of "
        "the same scenario. `prefetch` never waits for the network or the engine once a "
        "recall has finished: it serves the warmed result for its query, or the latest "
        "finished one while its own search runs in the background. `sync_turn` only "
        "queues; the background row is the time until the write was stored (the local "
        "engine first checks, in one scan, that the user has not stored the same text). "
        f"The machine was shared: 1-minute load average {load:.1f} at the end of the run.",
        "",
        "| operation | p50 (µs) | p95 (µs) | vs baseline (p50) |",
        "|---|---:|---:|---:|",
        *rows,
    ]
    if minilm_ok:
        body += [
            "",
            f"MiniLM (all-MiniLM-L6-v2, numpy forward pass, no torch) over {sentences} "
            "sentences of about 20 tokens:",
            "",
            *embedding_throughput(sentences),
        ]
    write_section("provider_mem0", "mem0 provider: added latency on the turn path", "\n".join(body))


if __name__ == "__main__":
    main()
