"""Recall of session search on public conversational-memory sets, split into dev and test.

The sets are other people's data: this script fetches them (``fetch``), checks
each file's sha256 against the one recorded here, and writes nothing of them
into the repository (``bench/data/`` is ignored by git). Each set is split by
conversation into a **dev** half (the only one looked at while tuning) and a
**test** half (reported, never tuned on).

* **REALTALK** (Lee et al., 2025, "REALTALK: A 21-Day Real-World Dataset for
  Long-Term Conversation"): ten real messaging-app conversations between two
  people over 21 days (16-25 dated sessions each, 9,944 turns), 728 memory
  questions, each with its evidence turns, in three categories (1 fact, 2 when,
  3 inference). The repository states no licence, so it is fetched, not
  shipped. Its ``data/locomo/`` folder (a split copy of LoCoMo) is never read:
  LoCoMo is kept for independent evaluation. Dev: the odd-numbered chats;
  test: the even-numbered ones.

* **LongMemEval** (Wu et al., 2024; MIT licence; its files are published on
  Hugging Face, ``xiaowu0162/longmemeval``, not on GitHub): not fetched here
  (this machine reaches no such host), so ``run --longmemeval FILE`` takes a
  copy you supply (``longmemeval_s.json`` or ``longmemeval_oracle.json``); each
  instance is one user's history and one question, answered by its
  ``has_answer`` turns, and goes to dev or test by a hash of its
  ``question_id`` (stable across runs and files). Its sha256 is printed, to be
  recorded beside the figures.

Each conversation gets a fresh store (``SessionStore.import_sessions`` through
the LoCoMo-shaped reader: speakers as names, sessions dated); every question
is asked as typed; rankers as in ``bench_sessions_recall.py``: plain BM25 over
the OR of the question's words (the in-run baseline) and ours. Reported per
split and per category: session and evidence-turn recall@1/5/10, and the mean
number of distinct conversations among the first five messages.

Usage::

    python bench/public_sets.py fetch [--from DIR]   # DIR: a local clone to copy from
    python bench/public_sets.py run [--split dev|test|both] [--semantic] [--write]

``--write`` puts the tables in ``docs/benchmarks.md`` (section ``sessions-public``),
with the machine's load and the run's wall and CPU time.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_sessions_recall import (  # noqa: E402
    BM25_OR,
    KS,
    OURS,
    OURS_SEMANTIC,
    Ranker,
    bm25_ranker,
    ours_ranker,
    plain_index,
)
from report import write_section  # noqa: E402

from hermes_core.sessions import SessionStore  # noqa: E402
from hermes_core.sessions.datasets import iter_json_array  # noqa: E402
from hermes_core.sessions.importer import read_jsonl  # noqa: E402

DATA = HERE / "data"

REALTALK = {
    "name": "REALTALK",
    "repository": "https://github.com/danny911kr/REALTALK",
    "commit": "b903e06a9770bf4e5fe9018c3e132889666d3b4a",
    "licence": "none stated (no LICENSE file at this commit): fetched, not shipped",
    "paper": "https://arxiv.org/abs/2502.13270",
    "files": {
        "data/Chat_1_Emi_Elise.json": (
            "4e947998a751a1ba2c3710fc873b90fbcbc234fda7a5e4e75db2b762e0f25a36"
        ),
        "data/Chat_2_Kevin_Elise.json": (
            "4ac6e319c206731aa9a025c93325eb1edb43686cf39473f058c87ae7deb2d62a"
        ),
        "data/Chat_3_Kevin_Paola.json": (
            "10c9208016538cbe7a28aafa6cfd72587b072677964c36ec242159fdf58961f2"
        ),
        "data/Chat_4_Emi_Paola.json": (
            "80aa012ed6a918f5b317bd942b4d4811a158d27a6e07b7a5c6182994107a9367"
        ),
        "data/Chat_5_Nicolas_Nebraas.json": (
            "32dd7c45786b1a26861dc1574a1bb698a855196fd2ae3fc0c091f3c9ab2d6d06"
        ),
        "data/Chat_6_Vanessa_Nicolas.json": (
            "9d5ee072ab5a0667ef71d5644d7cd3a4c6777a1e6e2252bf306f310d982e40ac"
        ),
        "data/Chat_7_Nebraas_Vanessa.json": (
            "b5716bb093217980e747dec0d98996829b569febc09587a025efc6b79806e9ce"
        ),
        "data/Chat_8_Akib_Muhhamed.json": (
            "814f64ad7e8a46f0398f550fe84184e2ba495a292290b9ff96ffc95448280800"
        ),
        "data/Chat_9_Fahim_Akib.json": (
            "05b9b4331bf0e25a2a64dc89c404622c83a61ab5e7c935fb7d844449caf6dd39"
        ),
        "data/Chat_10_Fahim_Muhhamed.json": (
            "26135a9e3482f40bea4c71de570a2d994a361848111067e60587be1dd82a0127"
        ),
    },
    "categories": {1: "fact", 2: "when", 3: "inference"},
}

Question = dict[str, Any]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def fetch(source: dict[str, Any], local: Path | None) -> Path:
    """The set's files under ``bench/data/<name>/``, copied from *local* or cloned at the
    recorded commit; every file's sha256 is checked."""
    target = DATA / source["name"].lower()
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        if local is None:
            local = Path(tmp) / "clone"
            subprocess.run(["git", "clone", "-q", source["repository"], str(local)], check=True)
            checkout = ["git", "-C", str(local), "checkout", "-q", source["commit"]]
            subprocess.run(checkout, check=True)
        for name in source["files"]:
            shutil.copyfile(local / name, target / Path(name).name)
    verify(source)
    return target


def verify(source: dict[str, Any]) -> None:
    target = DATA / source["name"].lower()
    for name, digest in source["files"].items():
        path = target / Path(name).name
        if not path.is_file():
            raise SystemExit(f"{path} is missing: run `python bench/public_sets.py fetch` first")
        if digest and sha256(path) != digest:
            raise SystemExit(f"{path}: sha256 {sha256(path)} is not the recorded {digest}")


def _realtalk_when(text: str) -> str:
    return datetime.strptime(text.strip(), "%d.%m.%Y, %H:%M:%S").isoformat()


def realtalk_sample(path: Path) -> tuple[dict[str, Any], list[Question]]:
    """A REALTALK chat as a LoCoMo-shaped sample, and its questions with evidence as
    (session id, turn index)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    sample_id = path.stem.lower()
    names = {data["name"]["speaker_1"].strip(), data["name"]["speaker_2"].strip()}
    by_case = {name.lower(): name for name in names}
    conversation: dict[str, Any] = {}
    conversation["speaker_a"], conversation["speaker_b"] = (
        data["name"]["speaker_1"].strip(),
        data["name"]["speaker_2"].strip(),
    )
    position: dict[str, tuple[str, int]] = {}
    number = 0
    while f"session_{number + 1}" in data:
        number += 1
        turns = []
        for turn in data[f"session_{number}"]:
            text = turn.get("clean_text") or ""
            speaker = by_case.get(str(turn.get("speaker", "")).strip().lower())
            if speaker is None or not text.strip():
                continue
            position[turn["dia_id"]] = (f"{sample_id}_session_{number}", len(turns))
            turns.append({"speaker": speaker, "text": text})
        conversation[f"session_{number}"] = turns
        when = data.get(f"session_{number}_date_time")
        if when:
            conversation[f"session_{number}_date_time"] = _realtalk_when(when)
    questions = []
    for qa in data.get("qa") or []:
        evidence = [position[e] for e in qa.get("evidence") or [] if e in position]
        if evidence and isinstance(qa.get("question"), str):
            group = REALTALK["categories"].get(qa.get("category"), str(qa.get("category")))
            questions.append({"q": qa["question"], "evidence": evidence, "group": group})
    return {"sample_id": sample_id, "conversation": conversation}, questions


def realtalk_split(split: str) -> Iterator[tuple[dict[str, Any], list[Question]]]:
    verify(REALTALK)
    target = DATA / "realtalk"
    for name in REALTALK["files"]:
        number = int(Path(name).stem.split("_")[1])
        if (number % 2 == 1) == (split == "dev"):
            yield realtalk_sample(target / Path(name).name)


def longmemeval_split(path: Path, split: str) -> Iterator[tuple[dict[str, Any], list[Question]]]:
    """The LongMemEval instances of *path* that fall in *split*, as LongMemEval-shaped units
    with their question (evidence: the ``has_answer`` turns)."""
    from public_recall import longmemeval_units, read_units

    layout, _ = read_units(path, 1)
    if layout != "LongMemEval":
        raise SystemExit(f"{path} is not a LongMemEval file")
    with path.open(encoding="utf-8-sig") as stream:
        items = iter_json_array(stream)
        for instance, questions in longmemeval_units(items):
            key = str(instance.get("question_id", ""))
            half = "dev" if hashlib.sha256(key.encode()).digest()[0] % 2 == 0 else "test"
            if questions and half == split:
                yield (
                    instance,
                    [{**q, "evidence": [tuple(e) for e in q["evidence"]]} for q in questions],
                )


def diversity(ranked: list[int], session_of: dict[int, str], k: int = 5) -> int:
    return len({session_of[mid] for mid in ranked[:k] if mid in session_of})


def evaluate_sample(
    sample: dict[str, Any], questions: list[Question], semantic: bool = False
) -> dict[str, dict[str, dict[str, float]]]:
    """group -> ranker -> summed hits (and ``n``, ``sessions@5``) for one conversation."""
    totals: dict[str, dict[str, dict[str, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        path = home / "unit.json"
        path.write_text(json.dumps([sample]), encoding="utf-8")
        with SessionStore(home / "state.db") as store:
            sessions = read_jsonl(path)
            store.import_sessions(sessions)
            turn_ids = {
                (s["id"], k): message["id"]
                for s in sessions
                for k, message in enumerate(store.get_messages(s["id"]))
            }
            session_of = {mid: sid for (sid, _), mid in turn_ids.items()}
            rankers: dict[str, Ranker] = {
                BM25_OR: bm25_ranker(plain_index(store), "OR"),
                OURS: ours_ranker(store),
            }
            if semantic:
                rankers[OURS_SEMANTIC] = ours_ranker(store, semantic=True)
            for question in questions:
                evidence = {turn_ids[e] for e in question["evidence"] if e in turn_ids}
                if not evidence:
                    continue
                wanted = {session_of[mid] for mid in evidence}
                for group in ("all", question["group"]):
                    for name, ranker in rankers.items():
                        ranked = ranker(question["q"])
                        order = list(dict.fromkeys(session_of[mid] for mid in ranked))
                        hits = totals.setdefault(group, {}).setdefault(name, {})
                        hits["n"] = hits.get("n", 0) + 1
                        hits["sessions@5"] = hits.get("sessions@5", 0) + diversity(
                            ranked, session_of
                        )
                        for k in KS:
                            key = f"session@{k}"
                            hits[key] = hits.get(key, 0) + bool(wanted & set(order[:k]))
                            key = f"message@{k}"
                            hits[key] = hits.get(key, 0) + bool(evidence & set(ranked[:k]))
    return totals


def run(
    units: Iterator[tuple[dict[str, Any], list[Question]]], semantic: bool = False
) -> dict[str, dict[str, dict[str, float]]]:
    totals: dict[str, dict[str, dict[str, float]]] = {}
    for sample, questions in units:
        for group, rankers in evaluate_sample(sample, questions, semantic).items():
            for name, hits in rankers.items():
                into = totals.setdefault(group, {}).setdefault(name, {})
                for key, value in hits.items():
                    into[key] = into.get(key, 0) + value
    return totals


def table(totals: dict[str, dict[str, dict[str, float]]]) -> list[str]:
    columns = [f"{level} R@{k}" for level in ("session", "turn") for k in KS]
    lines = [
        "| questions | n | ranker | " + " | ".join(columns) + " | sessions in top 5 |",
        "|---|---:|---|" + "---:|" * (len(columns) + 1),
    ]
    for group in ["all", *sorted(g for g in totals if g != "all")]:
        for name in (BM25_OR, OURS, OURS_SEMANTIC):
            hits = totals[group].get(name)
            if hits is None:
                continue
            n = hits["n"]
            values = [
                hits[f"{'session' if level == 'session' else 'message'}@{k}"] / n
                for level in ("session", "turn")
                for k in KS
            ]
            cells = " | ".join(f"{v:.3f}" for v in values)
            lines.append(
                f"| {group} | {int(n)} | {name} | {cells} | {hits['sessions@5'] / n:.2f} |"
            )
    return lines


SETS: dict[str, Callable[[str], Iterator[tuple[dict[str, Any], list[Question]]]]] = {
    "REALTALK": realtalk_split,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    fetching = sub.add_parser("fetch", help="fetch the sets and check their sha256")
    fetching.add_argument("--from", dest="local", type=Path, help="a local clone to copy from")
    running = sub.add_parser("run", help="measure recall on a split")
    running.add_argument("--split", choices=("dev", "test", "both"), default="dev")
    running.add_argument("--semantic", action="store_true", help="also rank with meaning fused")
    running.add_argument("--write", action="store_true", help="write docs/benchmarks.md")
    running.add_argument("--longmemeval", type=Path, help="also a LongMemEval file you supply")
    args = parser.parse_args(argv)
    if args.command == "fetch":
        print(fetch(REALTALK, args.local))
        return 0
    splits = ("dev", "test") if args.split == "both" else (args.split,)
    sets = dict(SETS)
    if args.longmemeval is not None:
        print(f"{args.longmemeval}: sha256 {sha256(args.longmemeval)}")
        sets["LongMemEval"] = lambda split: longmemeval_split(args.longmemeval, split)
    load = os.getloadavg()[0]
    wall, cpu = time.perf_counter(), time.process_time()
    lines = []
    for name, units in sets.items():
        for split in splits:
            lines += [f"### {name}, {split} half", "", *table(run(units(split), args.semantic)), ""]
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print("\n".join(lines))
    if args.write:
        intro = [
            "Command: `python bench/public_sets.py run --split both --write` (after "
            "`python bench/public_sets.py fetch`).",
            "",
            f"Load average {load:.1f} on the machine's cores when the run began (other "
            f"work shared them); the run took {wall:.0f} s wall, {cpu:.0f} s CPU.",
            "",
            "Public data, not written by this project, split by conversation into a dev half "
            "(the only one looked at while tuning) and a test half (reported). REALTALK: "
            "ten real 21-day messaging-app conversations between two people, 728 questions "
            "with evidence turns, categories 1 fact, 2 when, 3 inference "
            f"({REALTALK['repository']} at {REALTALK['commit'][:12]}; no licence stated, so "
            "fetched, not shipped). Session recall@k: an evidence conversation among the "
            "first k distinct sessions; turn recall@k: an evidence turn among the first k "
            "messages; the last column is the mean number of distinct conversations among "
            "the first five messages. BM25 is the in-run baseline (plain FTS5 unicode61 "
            "over the OR of the question's words).",
            "",
        ]
        write_section(
            "sessions-public", "Session search recall on public sets", "\n".join(intro + lines)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
