"""High-frequency memory writes: Hermes' refuse-and-consolidate loop against the curator.

A deterministic scenario (seeded generator) runs through the real runtime
(``AgentSession``, the builtin provider, the files under a temporary
``HERMES_HOME``) with a scripted agent on a loopback OpenAI-compatible server:
100 sessions, 400 memory writes of facts about a user and a project, 60 of them
updates of earlier facts, 15 % exact duplicates or light paraphrases, default
budgets (2,200 / 1,375 characters). The same scenario runs in each design, in one process:

* **hermes** — ``memory.overflow: reject`` (the Hermes contract) and an agent
  that, when an add is refused, removes the oldest entries in one batch to make
  room and retries, as a model in a hurry would;
* **archive only** — ``memory.overflow: archive`` without the curator: an
  over-budget add archives the lowest-value entries;
* **curated** — ``memory.overflow: archive`` and ``memory.curator: auto``,
  offline: the curator also runs at every session end;
* **curated + model** — the same with ``memory.curator_model: true`` and a
  loopback model answering the curator's JSON contract from the scenario's
  ground truth (the cost and bounds of the model path).

In both, the agent updates a fact with ``replace`` when it can see the old
value (in its frozen system prompt or earlier in the conversation) and with
``add`` otherwise. At the end a fresh session is opened: a fact counts as
retrievable when its current value is in that session's system prompt or in
the builtin provider's recall (``prefetch``) for a question about it.

Run: ``python bench/bench_curator.py`` (``--quick``: 20 sessions, 80 writes).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hermes_memory_builtin.curator_model import INSTRUCTIONS
from hermes_memory_builtin.similarity import TRIGRAM_JACCARD_THRESHOLD
from report import write_section

from hermes_core.llm import ChatClient
from hermes_core.runtime.session import AgentSession
from hermes_core.runtime.tokens import estimate_text_tokens
from hermes_core.testing.openai_fake import FakeOpenAIServer, FakeReply, tool_call

SEED = 28
CURATOR_TARGET = 80
COMPONENTS = [
    "billing",
    "search",
    "auth",
    "gateway",
    "ledger",
    "mailer",
    "scheduler",
    "exporter",
    "indexer",
    "notifier",
    "uploader",
    "reporting",
    "checkout",
    "inventory",
    "pricing",
    "webhooks",
    "audit",
    "metrics",
    "profiles",
    "catalog",
    "payments",
    "sessions",
    "archiver",
    "thumbnails",
    "geocoder",
    "importer",
    "ratelimiter",
    "feature-flags",
    "analytics",
    "recommender",
    "translations",
    "backups",
    "chat",
    "invoices",
    "shipping",
    "returns",
    "loyalty",
    "coupons",
    "onboarding",
    "support-desk",
]
PROJECT_ATTRIBUTES = {
    "port": lambda r: str(r.randint(3000, 9999)),
    "owner team": lambda r: (
        r.choice(["atlas", "borealis", "cobalt", "delta", "ember", "fjord"])
        + "-"
        + str(r.randint(1, 9))
    ),
    "database": lambda r: (
        r.choice(["postgres", "mysql", "sqlite", "redis", "cassandra"]) + str(r.randint(10, 17))
    ),
    "deploy region": lambda r: (
        r.choice(["eu-west", "us-east", "ap-south", "sa-east"]) + "-" + str(r.randint(1, 3))
    ),
    "log path": lambda r: f"/var/log/{r.choice(['app', 'svc', 'srv'])}/{r.randint(100, 999)}",
    "on-call channel": lambda r: f"#oncall-{r.randint(100, 999)}",
    "language": lambda r: (
        r.choice(["go", "rust", "python", "kotlin", "typescript"]) + " " + str(r.randint(1, 3))
    ),
}
USER_ATTRIBUTES = {
    "home city": ["Berlin", "Lisbon", "Porto", "Madrid", "Oslo", "Ghent", "Turin", "Kraków"],
    "employer": ["Acme", "Globex", "Initech", "Umbrella", "Hooli", "Vandelay", "Wonka"],
    "editor": ["vim", "emacs", "vscode", "helix", "zed", "sublime"],
    "timezone": ["Europe/Berlin", "Europe/Lisbon", "UTC", "America/New_York", "Asia/Tokyo"],
    "shell": ["zsh", "bash", "fish", "nushell"],
    "preferred answer style": ["terse bullet points", "short prose", "code first", "detailed"],
    "first language": ["German", "Portuguese", "Spanish", "Polish", "Italian"],
    "team role": ["backend lead", "SRE", "staff engineer", "engineering manager", "data engineer"],
    "keyboard layout": ["us-intl", "de", "pt", "dvorak", "colemak"],
    "commit style": ["conventional commits", "imperative subject lines", "gitmoji"],
}


@dataclass
class Slot:
    """A fact with one current value: who it is about, which attribute, the values so far."""

    target: str
    subject: str
    attribute: str
    values: list[str] = field(default_factory=list)

    def text(self, value: str) -> str:
        return f"{self.subject}'s {self.attribute} is {value}"

    def question(self) -> str:
        return f"What is {self.subject}'s {self.attribute}?"


@dataclass
class Write:
    """One scripted request to remember something."""

    slot: Slot
    content: str
    kind: str  # new | update | duplicate | paraphrase
    old: str | None = None
    value: str = ""
    """The slot's value this write states."""


def paraphrase(text: str, slot: Slot, rng: random.Random) -> str:
    """A rewording of *text*, as an agent saving the same fact again writes it."""
    value = slot.values[-1]
    forms = [
        lambda t: t + ".",
        lambda t: t.replace("'s ", " ", 1).replace(" is ", ": ", 1),
        lambda t: "Note: " + t,
        lambda t: t[0].lower() + t[1:] + " (confirmed)",
        lambda t: f"{slot.attribute.capitalize()} of {slot.subject.lower()}: {value}",
    ]
    return rng.choice(forms)(text)


def scenario(writes: int, updates: int, duplicates: int, seed: int = SEED) -> list[Write]:
    """The write sequence: new facts, updates of earlier ones, duplicates and paraphrases."""
    rng = random.Random(seed)
    new_count = writes - updates - duplicates
    slots: list[Slot] = []
    user_slots = [
        Slot("user", "The user", attribute, []) for attribute in USER_ATTRIBUTES
    ]  # ten facts about the user
    project_slots = [
        Slot("memory", f"The {component} service", attribute, [])
        for component in COMPONENTS
        for attribute in PROJECT_ATTRIBUTES
    ]
    rng.shuffle(project_slots)
    slots = user_slots + project_slots[: new_count - len(user_slots)]
    rng.shuffle(slots)
    plan: list[Write] = []
    introduced: list[Slot] = []

    def value_for(slot: Slot) -> str:
        if slot.target == "user":
            choices = [v for v in USER_ATTRIBUTES[slot.attribute] if v not in slot.values]
            return rng.choice(choices)
        while True:
            value = PROJECT_ATTRIBUTES[slot.attribute](rng)
            if value not in slot.values:
                return value

    kinds = ["new"] * new_count + ["update"] * updates + ["duplicate"] * duplicates
    head, tail = kinds[:20], kinds[20:]  # start with new facts so updates have something
    head.sort(key=lambda kind: kind != "new")
    rng.shuffle(tail)
    pending = iter(slots)
    for kind in head + tail:
        if kind == "new" or not introduced:
            slot = next(pending)
            value = value_for(slot)
            slot.values.append(value)
            introduced.append(slot)
            plan.append(Write(slot, slot.text(value), "new", value=value))
        elif kind == "update":
            weights = [3 if s.target == "user" else 1 for s in introduced]
            slot = rng.choices(introduced, weights)[0]
            old = plan_text(plan, slot)
            value = value_for(slot)
            slot.values.append(value)
            wording = rng.choice(["{s}'s {a} is now {v}", "{s}'s {a} changed to {v}"])
            text = wording.format(s=slot.subject, a=slot.attribute, v=value)
            plan.append(Write(slot, text, "update", old, value=value))
        else:
            slot = rng.choice(introduced[-30:])
            current = plan_text(plan, slot)
            if rng.random() < 0.5:
                plan.append(Write(slot, current, "duplicate", value=slot.values[-1]))
            else:
                plan.append(
                    Write(slot, paraphrase(current, slot, rng), "paraphrase", value=slot.values[-1])
                )
    # a fact may have been written with several values: 'values' already holds them in order
    return plan


def plan_text(plan: Sequence[Write], slot: Slot) -> str:
    """The text the agent last wrote for *slot*."""
    for write in reversed(plan):
        if write.slot is slot:
            return write.content
    raise LookupError(slot.attribute)


class Agent:
    """A scripted agent: saves what it is told, makes room the way a hurried model does.

    *scenario* maps the user message to its :class:`Write`. When an add is
    refused for the budget it removes the oldest entries (the first in
    ``current_entries``) and adds again in one batch.
    """

    def __init__(self, writes: Mapping[str, Write]) -> None:
        self.writes = writes
        self.housekeeping_tokens = 0
        self.refusals = 0
        self.lost_writes = 0
        self.overflow_adds = 0
        self.judge_calls = 0
        self.judge_tokens = 0
        self.memory_results: list[dict[str, Any]] = []

    def __call__(self, body: dict[str, Any]) -> FakeReply:
        messages = body["messages"]
        if messages[0]["content"] == INSTRUCTIONS:
            return self._judge(json.loads(messages[-1]["content"]))
        last = messages[-1]
        if last["role"] == "tool":
            return self._after_tool(messages, last)
        text = last["content"].split("<memory-context>")[0].strip()
        write = self.writes.get(text)
        if write is None:
            return FakeReply(content="Sure.")
        seen = messages[0]["content"] + "".join(
            json.dumps(m.get("tool_calls") or "") for m in messages[1:]
        )
        if write.kind == "update" and write.old and write.old in seen:
            args = {
                "action": "replace",
                "target": write.slot.target,
                "old_text": write.old,
                "content": write.content,
            }
        else:
            args = {"action": "add", "target": write.slot.target, "content": write.content}
        return FakeReply(tool_calls=[tool_call("memory", args, f"call-{len(messages)}")])

    def _judge(self, request: Mapping[str, Any]) -> FakeReply:
        """The curator's model: answers its JSON contract from what the scenario wrote."""
        self.judge_calls += 1
        truth = {w.content: (id(w.slot), w.value) for w in self.writes.values()}
        decisions = []
        for pair in request["pairs"]:
            first, second = truth.get(pair["first"]), truth.get(pair["second"])
            verdict = "distinct"
            if first and second and first[0] == second[0]:
                verdict = "duplicate" if first[1] == second[1] else "supersedes"
            decisions.append({"pair": pair["pair"], "verdict": verdict})
        answer = json.dumps({"decisions": decisions})
        self.judge_tokens += estimate_text_tokens(INSTRUCTIONS + json.dumps(request))
        self.judge_tokens += estimate_text_tokens(answer)
        return FakeReply(content=answer)

    def _after_tool(
        self, messages: Sequence[Mapping[str, Any]], last: Mapping[str, Any]
    ) -> FakeReply:
        result = json.loads(last["content"])
        self.memory_results.append(result)
        call = json.loads(messages[-2]["tool_calls"][0]["function"]["arguments"])
        self.overflow_adds += bool(result.get("archived_entries"))
        housekeeping = "operations" in call or bool(result.get("archived_entries"))
        if housekeeping:
            self.housekeeping_tokens += estimate_text_tokens(json.dumps(call))
            self.housekeeping_tokens += estimate_text_tokens(last["content"])
        if result.get("success"):
            return FakeReply(content="Saved.")
        self.refusals += 1
        self.housekeeping_tokens += estimate_text_tokens(last["content"])
        entries = result.get("current_entries")
        if "operations" in call or not entries or call.get("action") != "add":
            self.lost_writes += 1
            return FakeReply(content="Could not save that.")
        limit = int(str(result["usage"]).split("/")[1].replace(",", ""))
        keep = list(entries)
        removed: list[str] = []
        while keep and len("\n§\n".join([*keep, call["content"]])) > limit:
            removed.append(keep.pop(0))
        operations = [{"action": "remove", "old_text": entry} for entry in removed]
        operations.append({"action": "add", "content": call["content"]})
        args = {"target": call["target"], "operations": operations}
        return FakeReply(tool_calls=[tool_call("memory", args, f"call-{len(messages)}")])


@dataclass
class Outcome:
    design: str
    writes: int
    refusals: int
    lost_writes: int
    housekeeping_tokens: int
    retrievable: int
    facts: int
    stale_in_prompt: int
    prompt_changes: int
    curator_runs: int
    curator_cpu: float
    curator_wall: float
    curator_max_wall: float
    archived: int
    overflow_adds: int
    judge_calls: int
    judge_tokens: int


CONFIGS: dict[str, dict[str, Any]] = {
    "hermes": {"overflow": "reject", "curator": "off"},
    "archive only": {"overflow": "archive", "curator": "off"},
    "curated": {"overflow": "archive", "curator": "auto"},
    "curated + model": {"overflow": "archive", "curator": "auto", "curator_model": True},
}


def _timed_curator(stats: dict[str, list[float]]) -> None:
    """Record the wall and CPU time of every curator run in *stats* (when it exists)."""
    try:
        from hermes_memory_builtin import curator
    except ImportError:
        return
    original = curator.Curator.run

    def timed(self: Any, *args: Any, **kwargs: Any) -> Any:
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            return original(self, *args, **kwargs)
        finally:
            stats["wall"].append(time.perf_counter() - wall)
            stats["cpu"].append(time.process_time() - cpu)

    curator.Curator.run = timed  # type: ignore[method-assign]
    stats["restore"] = [original]  # type: ignore[list-item]


def run(design: str, sessions: int, plan: list[Write]) -> Outcome:
    messages = {f"Please remember this ({n}): {w.content}": w for n, w in enumerate(plan)}
    agent = Agent(messages)
    order = list(messages)
    per_session = -(-len(order) // sessions)
    stats: dict[str, list[float]] = {"wall": [], "cpu": []}
    _timed_curator(stats)
    with (
        tempfile.TemporaryDirectory(prefix="hermes-bench-") as tmp,
        FakeOpenAIServer(agent) as server,
    ):
        home = Path(tmp)
        config = {
            "model": {
                "context_window": 1_000_000,
                "base_url": server.base_url,
                "model": "bench-model",
            },
            "compression": {"enabled": False},
            "memory": CONFIGS[design],
        }
        (home / "config.yaml").write_text(json.dumps(config), encoding="utf-8")  # JSON is YAML
        previous_home = os.environ.get("HERMES_HOME")
        os.environ["HERMES_HOME"] = str(home)
        prompt_changes = 0
        try:
            for start in range(0, len(order), per_session):
                client = ChatClient(server.base_url, "bench-model", max_retries=1)
                first_request = len(server.chat_requests)
                session = AgentSession.open(
                    home, config=config, client=client, platform="cli", stream=False
                )
                with session:
                    for text in order[start : start + per_session]:
                        session.run_turn(text)
                systems = {
                    r.body["messages"][0]["content"] for r in server.chat_requests[first_request:]
                } - {INSTRUCTIONS}  # the curator's own model calls are not the agent's prompt
                prompt_changes += len(systems) - 1
            retrievable, stale = _final_check(home, config, plan)
        finally:
            if previous_home is None:
                os.environ.pop("HERMES_HOME", None)
            else:
                os.environ["HERMES_HOME"] = previous_home
            if "restore" in stats:
                from hermes_memory_builtin import curator

                curator.Curator.run = stats["restore"][0]  # type: ignore[method-assign]
        archived = _archive_size(home)
    facts = len({id(w.slot) for w in plan})
    return Outcome(
        design=design,
        writes=len(plan),
        refusals=agent.refusals,
        lost_writes=agent.lost_writes,
        housekeeping_tokens=agent.housekeeping_tokens,
        retrievable=retrievable,
        facts=facts,
        stale_in_prompt=stale,
        prompt_changes=prompt_changes,
        curator_runs=len(stats["wall"]),
        curator_cpu=sum(stats["cpu"]),
        curator_wall=sum(stats["wall"]),
        curator_max_wall=max(stats["wall"], default=0.0),
        archived=archived,
        overflow_adds=agent.overflow_adds,
        judge_calls=agent.judge_calls,
        judge_tokens=agent.judge_tokens,
    )


def _archive_size(home: Path) -> int:
    try:
        from hermes_memory_builtin.archive import Archive
    except ImportError:
        return 0
    path = home / "memories" / "archive.db"
    if not path.exists():
        return 0
    with Archive(home / "memories") as archive:
        return archive.count()


_WORD = re.compile(r"[a-z0-9]+")


def _mentions(text: str, slot: Slot, value: str) -> bool:
    """Whether *text* states *value* for *slot* (the value next to the attribute)."""
    lowered = text.lower()
    attribute = slot.attribute.lower()
    subject = slot.subject.lower().removeprefix("the ")
    for line in lowered.split("\n"):
        if attribute in line and subject in line and value.lower() in line:
            return True
    return False


def _final_check(home: Path, config: Mapping[str, Any], plan: Sequence[Write]) -> tuple[int, int]:
    """(facts whose current value is retrievable, facts with a stale value in the prompt)."""
    session = AgentSession.open(home, config=config, client=None, platform="cli")
    slots = {id(w.slot): w.slot for w in plan}
    retrievable = stale = 0
    with session:
        prompt = session.system_prompt
        for slot in slots.values():
            current = slot.values[-1]
            if _mentions(prompt, slot, current):
                retrievable += 1
            else:
                recall = session.manager.prefetch_all(
                    slot.question(), session_id=session.session_id
                )
                retrievable += _mentions(recall, slot, current)
            if any(_mentions(prompt, slot, old) for old in slot.values[:-1]):
                stale += 1
    return retrievable, stale


def threshold_table(plan: Sequence[Write]) -> str:
    """How the near-duplicate rule scores every pair of distinct texts the scenario wrote.

    A pair is a true duplicate when both texts state the same value of the same fact.
    For each word-Jaccard threshold (trigram threshold fixed) it counts the duplicate
    pairs found and the other pairs wrongly merged, without and with the slot guard
    (two values of one fact are never merged) the curator applies.
    """
    from hermes_memory_builtin import similarity

    texts: dict[str, Write] = {}
    for write in plan:
        texts.setdefault(write.content, write)
    items = list(texts.items())
    scored = []
    for i, (a, wa) in enumerate(items):
        for b, wb in items[i + 1 :]:
            same = wa.slot is wb.slot and wa.value == wb.value
            if not same and similarity.normalise(a) != similarity.normalise(b):
                words = similarity.jaccard(similarity.content_words(a), similarity.content_words(b))
                if words < 0.5:
                    continue  # far apart: merged at no threshold below
            else:
                words = similarity.jaccard(similarity.content_words(a), similarity.content_words(b))
            tri = similarity.jaccard(similarity.trigrams(a), similarity.trigrams(b))
            guarded = similarity.different_values(a, b)
            exact = similarity.normalise(a) == similarity.normalise(b)
            scored.append((same, words, tri, guarded, exact))
    duplicates = sum(item[0] for item in scored)
    rows = []
    for threshold in (0.5, 0.6, 0.7, 0.8, 0.9, 1.0):
        hits = [
            item
            for item in scored
            if item[4] or item[1] >= threshold or item[2] >= similarity.TRIGRAM_JACCARD_THRESHOLD
        ]
        found = sum(item[0] for item in hits)
        wrong = sum(not item[0] for item in hits)
        wrong_guarded = sum(not item[0] and not item[3] for item in hits)
        chosen = " (chosen)" if threshold == similarity.TOKEN_JACCARD_THRESHOLD else ""
        rows.append(
            f"| {threshold:.1f}{chosen} | {found}/{duplicates} | {wrong} | {wrong_guarded} |"
        )
    return (
        "| word Jaccard ≥ | duplicate pairs found | other pairs merged | other pairs merged, "
        "with the slot guard |\n|---|---:|---:|---:|\n" + "\n".join(rows)
    )


HEADER = (
    "| design | writes | refused to the agent | writes lost | housekeeping tokens "
    "| current facts retrievable | stale values in prompt | prompt changes in a session "
    "| archived entries |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|"
)


TIMING_HEADER = (
    "| design | curator runs | mean wall per run (ms) | mean CPU per run (ms) "
    "| slowest run (ms) | model calls | model tokens |\n|---|---:|---:|---:|---:|---:|---:|"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20 sessions, 80 writes")
    options = parser.parse_args()
    sessions, writes, updates, duplicates = (
        (20, 80, 12, 12) if options.quick else (100, 400, 60, 60)
    )
    command = "bench/bench_curator.py" + (" --quick" if options.quick else "")
    outcomes = [run(design, sessions, scenario(writes, updates, duplicates)) for design in CONFIGS]
    rows = "\n".join(
        f"| {o.design} | {o.writes} | {o.refusals} | {o.lost_writes} | {o.housekeeping_tokens:,} "
        f"| {o.retrievable}/{o.facts} ({o.retrievable / o.facts:.0%}) | {o.stale_in_prompt} "
        f"| {o.prompt_changes} | {o.archived} |"
        for o in outcomes
    )
    curated = outcomes[2]
    timing = "\n".join(
        f"| {o.design} | {o.curator_runs} | {o.curator_wall / max(1, o.curator_runs) * 1000:.1f} "
        f"| {o.curator_cpu / max(1, o.curator_runs) * 1000:.1f} | {o.curator_max_wall * 1000:.1f} "
        f"| {o.judge_calls} | {o.judge_tokens:,} |"
        for o in outcomes[2:]
    )
    thresholds = threshold_table(scenario(writes, updates, duplicates))
    body = f"""
`python {command}`: {sessions} sessions, {writes} memory writes ({updates} updates of earlier
facts, {duplicates} exact duplicates or light paraphrases; seed {SEED}), default budgets,
through the real runtime, builtin provider and a scripted agent on loopback. *hermes* is
`memory.overflow: reject` with an agent that, when refused, removes the oldest entries in one
batch and retries; *curated* is `memory.overflow: archive` + `memory.curator: auto`, offline.
*Housekeeping tokens* are the tokens of refused results and of the calls (and results) made to
free room or reporting what moved (characters / 4). A fact is *retrievable* when a fresh
session shows its current value in the system prompt or recalls it for a question about it.

{HEADER}
{rows}

*Writes lost* were refused even after the agent's retry. *archive only* is
`memory.overflow: archive` without the curator: every add over the budget succeeds and its
result lists what moved to the archive ({outcomes[1].overflow_adds} such adds here). In
*curated* the curator brings each
file back under {CURATOR_TARGET} % at every session end, so a session's few writes nearly
always fit: {curated.overflow_adds} add(s) took the overflow path (each result lists what
moved; those tokens count as housekeeping). Every refusal in *hermes* returns all current
entries, which is where its housekeeping tokens go; the entries it removes to make room are
gone for good, so their facts are not retrievable at the end.

The curator runs once per session end (goal: ≤ 1 s per run offline). *curated + model* adds
`memory.curator_model: true` with a loopback model that answers the curator's JSON contract
from the scenario's ground truth (so it shows the cost and bounds of the model path, not a
model's judgement); its time includes the HTTP round trips.

{TIMING_HEADER}
{timing}

The near-duplicate thresholds, on every pair of distinct texts this scenario writes
(trigram Jaccard fixed at {TRIGRAM_JACCARD_THRESHOLD:.2f}; a pair is a duplicate when both
state the same value of the same fact):

{thresholds}
"""
    write_section("curator", "Curator: high-frequency writes, refusals and retrievable facts", body)


if __name__ == "__main__":
    main()
