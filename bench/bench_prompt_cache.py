"""Prefix-cache economics of the frozen system prompt, against re-injecting memory on writes.

A simulated session of 50 user turns, 10 of which make the model write a memory
(a real ``memory`` tool call through the runtime, the builtin provider and the
files under a temporary ``HERMES_HOME``), runs twice against a scripted model
on loopback:

* **frozen** — hermes-memory's runtime: the system prompt is assembled once and
  the memory written during the session waits for the next session;
* **naive** — the same runtime, but after every memory write the system prompt
  is rebuilt with the live memory (what "make writes visible at once" costs).

Every request the model server received is recorded. For each request we count
its input tokens (characters / 4 over the tools and messages, in wire order)
and the longest prefix it shares with one of the four requests before it: the
part a prefix cache (Anthropic, OpenAI, Gemini) could serve instead of
prefilling it again.

Run: ``python bench/bench_prompt_cache.py`` (``--quick`` for 10 turns).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from report import write_section

from hermes_core.llm import ChatClient, ToolCall
from hermes_core.runtime.session import AgentSession, ToolRun
from hermes_core.testing.openai_fake import FakeOpenAIServer, FakeReply, tool_call

HEADER = (
    "| design | model calls | system prompt changes | input tokens | cacheable "
    "| cacheable share | relative input cost |\n|---|---:|---:|---:|---:|---:|---:|"
)
CACHED_PRICE = 0.10
"""Price of a cached input token relative to an uncached one (Anthropic reads: 10 %)."""

TOPICS = [
    "the deploy pipeline",
    "the billing service",
    "our logging setup",
    "the flaky tests",
    "the database migration",
    "the release checklist",
    "the API rate limits",
    "the onboarding docs",
    "the cache invalidation bug",
    "the metrics dashboard",
]


def user_turns(turns: int, writes: int) -> list[str]:
    """*turns* user messages; every (turns // writes)-th asks the model to remember a fact."""
    every = max(1, turns // max(1, writes))
    messages = []
    for i in range(turns):
        topic = TOPICS[i % len(TOPICS)]
        if writes and i % every == every - 1 and len(messages) // every < writes:
            messages.append(
                f"remember: fact {i} — for {topic}, the owner is team {i % 7} and the "
                f"runbook lives in docs/runbooks/{i}.md"
            )
        else:
            messages.append(
                f"Turn {i}: can you walk me through {topic}? I want to understand how it "
                "works today, what breaks most often and what we should change first."
            )
    return messages


class BenchModel:
    """Writes a memory when asked to remember, otherwise answers at a realistic length."""

    def __call__(self, body: dict[str, Any]) -> FakeReply:
        last = body["messages"][-1]
        if last["role"] == "tool":
            return FakeReply(content="Saved to memory.")
        text = last["content"].split("<memory-context>")[0]
        if text.startswith("remember:"):
            fact = text.removeprefix("remember:").strip()
            return FakeReply(
                tool_calls=[
                    tool_call("memory", {"action": "add", "target": "memory", "content": fact})
                ]
            )
        return FakeReply(
            content=f"Here is how {text[8:60]} works. " + "It has several moving parts. " * 12
        )


class NaiveSession(AgentSession):
    """Rebuilds the system prompt with the live memory files after every memory write."""

    def _run_tool(self, call: ToolCall) -> ToolRun:
        run = super()._run_tool(call)
        if call.name == "memory" and json.loads(run.result).get("success") is True:
            memories = self.hermes_home / "memories"
            live = "\n\n".join(
                f"{name}:\n{(memories / name).read_text(encoding='utf-8')}"
                for name in ("MEMORY.md", "USER.md")
                if (memories / name).exists()
            )
            self._system_prompt = f"{self._base_prompt}\n\n# Memory (live)\n{live}"
        return run

    def start(self) -> str:
        session_id = super().start()
        self._base_prompt = self._system_prompt
        return session_id


@dataclass
class Outcome:
    design: str
    requests: int
    prompt_changes: int
    input_tokens: int
    cacheable_tokens: int

    @property
    def share(self) -> float:
        return self.cacheable_tokens / self.input_tokens if self.input_tokens else 0.0

    @property
    def cost_units(self) -> float:
        """Input cost in uncached-token units when cached tokens cost CACHED_PRICE."""
        uncached = self.input_tokens - self.cacheable_tokens
        return uncached + CACHED_PRICE * self.cacheable_tokens


def _wire(body: dict[str, Any]) -> str:
    """The request as a cache sees it: tools, then each message, in order."""
    parts = [json.dumps(body.get("tools") or [], sort_keys=True)]
    parts += [json.dumps(m, sort_keys=True, ensure_ascii=False) for m in body["messages"]]
    return "".join(parts)


def _common_prefix(a: str, b: str) -> int:
    limit = min(len(a), len(b))
    lo, hi = 0, limit
    while lo < hi:  # binary search on prefix equality
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def run(design: str, turns: int, writes: int) -> Outcome:
    with (
        tempfile.TemporaryDirectory(prefix="hermes-bench-") as tmp,
        FakeOpenAIServer(BenchModel()) as server,
    ):
        home = Path(tmp)
        config = {"model": {"context_window": 1_000_000}, "compression": {"enabled": False}}
        client = ChatClient(server.base_url, "bench-model", max_retries=1)
        kind = NaiveSession if design == "naive" else AgentSession
        previous_home = os.environ.get("HERMES_HOME")
        os.environ["HERMES_HOME"] = str(home)
        try:
            session = kind.open(home, config=config, client=client, platform="cli", stream=False)
            with session:
                for text in user_turns(turns, writes):
                    session.run_turn(text)
        finally:
            if previous_home is None:
                os.environ.pop("HERMES_HOME", None)
            else:
                os.environ["HERMES_HOME"] = previous_home
        bodies = [r.body for r in server.chat_requests]
    wires = [_wire(body) for body in bodies]
    systems = {body["messages"][0]["content"] for body in bodies}
    input_chars = sum(len(w) for w in wires)
    cacheable = 0
    for i, wire in enumerate(wires):
        if i:
            cacheable += max(_common_prefix(wire, earlier) for earlier in wires[max(0, i - 4) : i])
    return Outcome(
        design=design,
        requests=len(bodies),
        prompt_changes=len(systems) - 1,
        input_tokens=input_chars // 4,
        cacheable_tokens=cacheable // 4,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10 turns, 2 writes")
    options = parser.parse_args()
    turns, writes = (10, 2) if options.quick else (50, 10)
    command = "bench/bench_prompt_cache.py" + (" --quick" if options.quick else "")
    frozen = run("frozen", turns, writes)
    naive = run("naive", turns, writes)
    rows = "\n".join(
        f"| {o.design} | {o.requests} | {o.prompt_changes} | {o.input_tokens:,} | "
        f"{o.cacheable_tokens:,} | {o.share:.1%} | {o.cost_units / naive.cost_units:.2f} |"
        for o in (frozen, naive)
    )
    body = f"""
A {turns}-turn session with {writes} memory writes (`python {command}`), run through
the real runtime, builtin provider
and a scripted model on loopback. *Cacheable* = tokens of each request that repeat a prefix
of an earlier one, i.e. what a provider prefix cache could serve; *relative input cost*
prices cached tokens at {CACHED_PRICE:.0%} of uncached ones (Anthropic's read price),
relative to the naive design.

{HEADER}
{rows}

The frozen snapshot changes the system prompt **{frozen.prompt_changes}** times (goal 0);
re-injecting memory on every write changes it {naive.prompt_changes} times, and each change
invalidates everything after the tools, so the naive design pays
{naive.cost_units / frozen.cost_units:.2f}× the frozen design's input cost.
Token counts are characters / 4; real caches also round to blocks (e.g. 128 tokens) and
need a minimum prefix, so the shares are upper bounds for both designs alike.
"""
    write_section("prompt_cache", "Prompt cache: frozen system prompt vs re-injected memory", body)


if __name__ == "__main__":
    main()
