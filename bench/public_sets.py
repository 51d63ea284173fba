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

* **RealMem** (QuantaAlpha, 2026, "RealMem: Benchmarking LLMs in Real-World
  Memory-Driven Interaction"; Apache-2.0): ten generated personas, each one
  user's 135-276 dated sessions with an assistant (1,044-1,807 turns), in
  which 1,415 user turns are marked as needing memory (``is_query``); the
  assistant's reply names the memory points it used and their sessions, and
  each memory point names its source turn, so every query has evidence turns
  in earlier sessions. The query is the user's turn as written (often a
  statement, not a question), searched over the persona's history before the
  query's session (ours through ``until``, the time the query's session began;
  BM25 through the message ids before it). Categories: the set's
  ``category_name`` (Dynamic Incremental, Dynamic Updating, Implicit
  Preference, Temporal-reasoning) and its ``session_type`` (evidence in one
  earlier session or several). The licence allows shipping, but the files
  are 26 MB, so they are fetched too. Dev: the personas at odd places in
  alphabetical order; test: the others.

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

    python bench/public_sets.py fetch [--from DIR ...] # DIRs: local clones or mirrors
    python bench/public_sets.py run [--split dev|test|both] [--semantic] [--write]

``--write`` puts the tables in ``docs/benchmarks.md`` (section ``sessions-public``),
with the machine's load and the run's wall and CPU time.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_sessions_recall import (  # noqa: E402
    BM25_OR,
    KS,
    OURS,
    OURS_SEMANTIC,
    POOL,
    bm25_ranker,
    ours_ranker,
    plain_index,
)
from report import write_section  # noqa: E402

from hermes_core.embeddings import encoder_name  # noqa: E402
from hermes_core.sessions import SessionStore  # noqa: E402
from hermes_core.sessions.datasets import iter_json_array  # noqa: E402
from hermes_core.sessions.importer import read_jsonl  # noqa: E402

DATA = HERE / "data"

REALTALK: dict[str, Any] = {
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

REALMEM: dict[str, Any] = {
    "name": "RealMem",
    "repository": "https://github.com/zhiyuan5986/RealMemBench",
    "commit": "067c486a525b0811ef9cb8cb5ad258e286d0ce7e",
    "licence": "Apache-2.0 (LICENSE at this commit): fetched, since the files are 26 MB",
    "paper": "RealMem: Benchmarking LLMs in Real-World Memory-Driven Interaction (2026)",
    "files": {
        "dataset/Adeleke_Okonjo_dialogues_256k.json": (
            "9dc2a8bf2777c182108b3859be6987b4203b65bd6df5cbb6e1a02e4e9f871fdb"
        ),
        "dataset/Ethan_Hunt_dialogues_256k.json": (
            "67bd20d962cd0b01c1531cc82a73a0b1a1e58ef17db6e2f743fc9b35273734ac"
        ),
        "dataset/Kenta_Tanaka_dialogues_256k.json": (
            "b8fe2e606db96dbce1ffa0ab7c21b23ce83d4b5d472d80cd4bd23cd8a259d397"
        ),
        "dataset/Kim_Ji_young_dialogues_256k.json": (
            "e3e286120bc5e42d3dbe513d720f969ecebf3518fbe1a4782595e927474356a9"
        ),
        "dataset/Liam_O_Connor_dialogues_256k.json": (
            "2427ab7d7012b28c0da9b2a70b1763cb60630f5198cf6eeed1ee68d0271c551c"
        ),
        "dataset/Lin_Wanyu_dialogues_256k.json": (
            "a7a751066c48e829b3012a94f2b365febd0e6fb6db454a6d5f4ec01f9c55008a"
        ),
        "dataset/Oliver_Smith_dialogues_256k.json": (
            "25a829eb690d7f81bd47141a0cd7c174e1aa98d899111d8b04e9115f0b92e1f3"
        ),
        "dataset/Pak_Budi_dialogues_256k.json": (
            "d35e08ac141e83780b8b7bc3611feef042dbd082d0986812da1d885d028b638a"
        ),
        "dataset/Sarah_Miller_dialogues_256k.json": (
            "2e84cfb4e29bfceebfb4eed09b84e7a2a7cae8a908d8584830e4c94a29819a6d"
        ),
        "dataset/Sophie_Dubois_dialogues_256k.json": (
            "75f71e5ec0d14606debaea409075a6e631faf6a57d74ce7ec49f17476ef44e26"
        ),
    },
}

MEMDAILY: dict[str, Any] = {
    "name": "MemDaily",
    "repository": "https://github.com/nuster1128/MemSim",
    "commit": "db9d5d552d6cb1d859f692eb7e6c0fd6d61d3815",
    "licence": "none stated (no LICENSE file at this commit): fetched, not shipped",
    "paper": "https://arxiv.org/abs/2409.20163",
    "files": {
        "data_generation/final_dataset/messages_and_QAs/01_simple_events.json": (
            "592cd332c982959ffe67239fea2ccc7adf074258f0dc2527d9bf203d4a838a25"
        ),
        "data_generation/final_dataset/messages_and_QAs/01_simple_hybrid.json": (
            "f0199afed0aaff46bdda788a80aeb291ac50b28980b7e1aee760733356ba4d5c"
        ),
        "data_generation/final_dataset/messages_and_QAs/01_simple_items.json": (
            "011906cb651f7e8ca3d87aeb654c24e8b24200a9a252c58ba6d1fbbb79e1be1e"
        ),
        "data_generation/final_dataset/messages_and_QAs/01_simple_places.json": (
            "6d0bf2f0e42a99c6ce06d066f6f251992776f435f83ff12240ced1a8bec8e4a9"
        ),
        "data_generation/final_dataset/messages_and_QAs/01_simple_roles.json": (
            "47659282fc524e22e810f34f895d387b4d76874fe92cc38aea5c8939d510293e"
        ),
        "data_generation/final_dataset/messages_and_QAs/02_conditional_events.json": (
            "afdad9a6de1dc6af896d372345446259ff6e05b85a23d9ad3e6aba5b842abbf2"
        ),
        "data_generation/final_dataset/messages_and_QAs/02_conditional_hybrid.json": (
            "b5a0fe68d7d78b55c08fc8f28e9da0ad513b8ca24cdcc4db448b4b0f062803c3"
        ),
        "data_generation/final_dataset/messages_and_QAs/02_conditional_items.json": (
            "cbde35fff52a2d13100769daea52bac66ba7bce519a20068e0f9ba1ebd058dbf"
        ),
        "data_generation/final_dataset/messages_and_QAs/02_conditional_places.json": (
            "584d8cce4270301e547b62f5bf98e2acab79e4e3836ce811f7184d8d7a0a28b2"
        ),
        "data_generation/final_dataset/messages_and_QAs/02_conditional_roles.json": (
            "43b8e58baeb44df22c7d4188da47598c40b0fa35abb4d6b0434f5f97c8a255da"
        ),
        "data_generation/final_dataset/messages_and_QAs/03_comparative_events.json": (
            "a11395761719255330bbd6ec10fc94b57a4bd7b46a239a6ad843efb400318764"
        ),
        "data_generation/final_dataset/messages_and_QAs/03_comparative_hybrid.json": (
            "5e3c27d0088708b043976a5dbc9ea97a6e202aecee8d51d94b9cc97b5c814f29"
        ),
        "data_generation/final_dataset/messages_and_QAs/03_comparative_roles.json": (
            "2478bb7e562515023a65a265e4cc68d3828a0cb70bc3b36d49dc78f2bef7039a"
        ),
        "data_generation/final_dataset/messages_and_QAs/04_aggregative_events.json": (
            "41543366aa1fc54bbfbbfe63d9bcd3448b72b90c64f1df3960bad68b16899cbe"
        ),
        "data_generation/final_dataset/messages_and_QAs/04_aggregative_hybrid.json": (
            "6ebd925f9f3dc1b6c78e16bdebf93c39d71df867aad1e941aced2f07eb82f547"
        ),
        "data_generation/final_dataset/messages_and_QAs/04_aggregative_roles.json": (
            "2f198a0f5d083bdb649f262484b21bbb3000d76d7087714c87635f58921ddca2"
        ),
        "data_generation/final_dataset/messages_and_QAs/05_post_processing_events.json": (
            "bfe15208ff59f92a66a3aee794af611fc42d8a07d450dd014b16ecd9e83c5295"
        ),
        "data_generation/final_dataset/messages_and_QAs/05_post_processing_hybrid.json": (
            "f3bcc0b52a2173a649f48316fc3056acb2d7f2b7f5fd7366f7b3e2cd7cd33784"
        ),
        "data_generation/final_dataset/messages_and_QAs/05_post_processing_items.json": (
            "3c174e01dc76abfe715af0781499f8e9e66113f907cef0b49e4229f7c4c4adb4"
        ),
        "data_generation/final_dataset/messages_and_QAs/05_post_processing_places.json": (
            "ad4418211751c62f3f77b0a27495479a1bf18cf37429e29dba65690871cd17fd"
        ),
        "data_generation/final_dataset/messages_and_QAs/05_post_processing_roles.json": (
            "c31531f7cabcc64d1a3f206bb9a48e385029b7ac20f9e44c34ffa267e09df057"
        ),
        "data_generation/final_dataset/messages_and_QAs/06_noisy_events.json": (
            "e1495bbab1ae954250286fb8613152de078184559866512d82fb2dee3398c8fa"
        ),
        "data_generation/final_dataset/messages_and_QAs/06_noisy_hybrid.json": (
            "e275dbf5af90f21bc257b6bfec902eb400477c9cd99f9678af422ace83f0be78"
        ),
        "data_generation/final_dataset/messages_and_QAs/06_noisy_items.json": (
            "72e992f0dd3aa005b57f260f1c84314430aa45acde4b1be3dc7211ea978a638a"
        ),
        "data_generation/final_dataset/messages_and_QAs/06_noisy_places.json": (
            "21cbc7631b045cf538c083b0904d999b3ce6edca08a645a5c956db11403903be"
        ),
        "data_generation/final_dataset/messages_and_QAs/06_noisy_roles.json": (
            "660d31de2847ed2a154af9b50eed220332f6544d8fa828c5dbf8a38d5a21d3d8"
        ),
    },
}

SOURCES = {"realtalk": REALTALK, "realmem": REALMEM, "memsim": MEMDAILY}

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
            if (local / name).is_file():
                shutil.copyfile(local / name, target / Path(name).name)
            else:  # a bare mirror (a git directory): the file as of the recorded commit
                shown = ["git", "--git-dir", str(local), "show", f"{source['commit']}:{name}"]
                blob = subprocess.run(shown, check=True, capture_output=True).stdout
                (target / Path(name).name).write_bytes(blob)
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


def _realmem_when(text: str, after: datetime | None) -> datetime:
    """A session's day as a time, a minute after the previous session's at least (the set
    dates sessions by day; the ranking of a query must see exactly the sessions before its
    own, and ``until`` tells them apart by time)."""
    day = datetime.strptime(text.split(" (")[0].strip(), "%Y-%m-%d")
    return day if after is None or day > after else after + timedelta(minutes=1)


def _memory_text(content: Any) -> str:
    """A memory point's content as text (a few are objects, not strings)."""
    text = content if isinstance(content, str) else json.dumps(content, sort_keys=True)
    return text.strip()


def realmem_sample(path: Path) -> tuple[dict[str, Any], list[Question]]:
    """A RealMem persona as one LongMemEval-shaped instance (its sessions, dated), and its
    memory queries with evidence as (session id, turn index) and the sessions each may not
    search (its own and later ones)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    persona = path.stem.split("_dialogues")[0].lower()
    ids, dates, sessions = [], [], []
    position: dict[tuple[str, int], tuple[str, int]] = {}  # (uuid, 1-based turn) -> turn
    queries: list[tuple[int, dict[str, Any], dict[str, Any]]] = []
    when: datetime | None = None
    for n, session in enumerate(data["dialogues"]):
        sid = f"{persona}_{n + 1:03d}"
        turns = []
        raw = session.get("dialogue_turns") or []
        for k, turn in enumerate(raw):
            text = turn.get("content") or ""
            if not text.strip():
                continue
            position[(session["session_uuid"], k + 1)] = (sid, len(turns))
            turns.append({"role": str(turn.get("speaker", "")).lower(), "content": text})
            if turn.get("is_query"):
                reply = raw[k + 1] if k + 1 < len(raw) else {}
                queries.append((n, turn, reply))
        ids.append(sid)
        when = _realmem_when(session["current_time"], when)
        dates.append(when.isoformat())
        sessions.append(turns)
    source_turn = {
        (session["session_uuid"], _memory_text(memory["content"])): memory["source_turn"]
        for session in data["dialogues"]
        for memory in session.get("extracted_memory") or []
    }
    questions = []
    for n, turn, reply in queries:
        used = reply.get("memory_used") or turn.get("memory_used") or []
        evidence = []
        for memory in used:
            key = (memory.get("session_uuid"), _memory_text(memory.get("content", "")))
            at = position.get((key[0], source_turn.get(key, -1)))
            if at is not None and int(at[0].rsplit("_", 1)[1]) <= n:  # an earlier session
                evidence.append(at)
        if evidence:
            questions.append(
                {
                    "q": turn["content"],
                    "evidence": list(dict.fromkeys(evidence)),
                    "group": turn.get("category_name") or "other",
                    "groups": [str(turn.get("session_type") or "").replace("_", "-")],
                    "before": ids[n],
                }
            )
    instance = {
        "question_id": persona,
        "question": "",
        "haystack_session_ids": ids,
        "haystack_dates": dates,
        "haystack_sessions": sessions,
    }
    return instance, questions


def realmem_split(split: str) -> Iterator[tuple[dict[str, Any], list[Question]]]:
    verify(REALMEM)
    target = DATA / "realmem"
    for n, name in enumerate(sorted(REALMEM["files"])):
        if (n % 2 == 0) == (split == "dev"):
            yield realmem_sample(target / Path(name).name)


def _memdaily_when(text: str) -> datetime:
    """``2024年04月01日 周一 08:30`` as a time (the weekday is redundant)."""
    found = re.match(r"(\d{4})年(\d{2})月(\d{2})日\s+\S+\s+(\d{2}):(\d{2})", text.strip())
    if found is None:
        raise SystemExit(f"MemDaily: unreadable time {text!r}")
    year, month, day, hour, minute = (int(part) for part in found.groups())
    return datetime(year, month, day, hour, minute)


def memdaily_sample(path: Path, split: str) -> tuple[dict[str, Any], list[Question]]:
    """One MemDaily file (a question type in one scenario, ~100 trajectories) as one user's
    history: a dated session per trajectory, its messages as the user's turns. The questions
    of the even trajectories are dev, of the odd ones test; both halves search the whole file
    (the other trajectories are the distractors, as in the set's own noisy variants)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    kind, scenario = path.stem[3:].rsplit("_", 1)
    ids, dates, sessions, questions = [], [], [], []
    for trajectory in data:
        sid = f"{path.stem}_{trajectory['tid']:03d}"
        turns: list[dict[str, str]] = []
        position: dict[int, int] = {}
        for message in trajectory["message_list"]:
            if str(message.get("message") or "").strip():
                position[message["mid"]] = len(turns)
                turns.append({"role": "user", "content": message["message"]})
        ids.append(sid)
        dates.append(_memdaily_when(trajectory["message_list"][0]["time"]).isoformat())
        sessions.append(turns)
        if (trajectory["tid"] % 2 == 0) != (split == "dev"):
            continue
        for qa in trajectory["question_list"]:
            evidence = [(sid, position[m]) for m in qa.get("target_step_id") or [] if m in position]
            if evidence:
                questions.append(
                    {"q": qa["question"], "evidence": evidence, "group": kind, "groups": [scenario]}
                )
    instance = {
        "question_id": path.stem,
        "question": "",
        "haystack_session_ids": ids,
        "haystack_dates": dates,
        "haystack_sessions": sessions,
    }
    return instance, questions


def memdaily_split(split: str) -> Iterator[tuple[dict[str, Any], list[Question]]]:
    verify(MEMDAILY)
    for name in sorted(MEMDAILY["files"]):
        yield memdaily_sample(DATA / "memdaily" / Path(name).name, split)


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


Ranked = Callable[[str, tuple[int, float] | None], list[int]]
"""A ranker given the history's bound: (the first message id, the time) it may not reach."""


def _ids_by_session(session_of: dict[int, str]) -> dict[str, list[int]]:
    ids: dict[str, list[int]] = {}
    for mid, sid in session_of.items():
        ids.setdefault(sid, []).append(mid)
    return ids


def _bm25_before(conn: Any) -> Ranked:
    """BM25 over the OR of the question's words, on the messages before the bound's id."""
    plain = bm25_ranker(conn, "OR")

    def rank(question: str, bound: tuple[int, float] | None) -> list[int]:
        if bound is None:
            return plain(question)
        words = re.findall(r"\w+", question)
        if not words:
            return []
        match = " OR ".join(f'"{w}"' for w in words)
        sql = "SELECT rowid FROM plain WHERE plain MATCH ? AND rowid < ? ORDER BY rank LIMIT ?"
        return [row[0] for row in conn.execute(sql, (match, bound[0], POOL))]

    return rank


def _ours_before(store: SessionStore, semantic: bool = False) -> Ranked:
    """Ours (``search_messages``), on the messages before the bound's time (``until``)."""
    plain = ours_ranker(store, semantic)  # embeds every message first, with meaning

    def rank(question: str, bound: tuple[int, float] | None) -> list[int]:
        if bound is None:
            return plain(question)
        hits = store.search_messages(
            question, limit=POOL, snippets=False, semantic=semantic, until=bound[1]
        )
        return [hit["id"] for hit in hits]

    return rank


BM25_BIGRAMS = "BM25, OR of words and CJK bigrams"
"""The CJK baseline: FTS5 over text with every CJK run cut into overlapping bigrams (the
usual CJK retrieval baseline; ``unicode61`` alone keeps a whole run as one token)."""

CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")


def cjk_bigrams(text: str) -> str:
    """*text* with each CJK run replaced by its overlapping bigrams (a lone character kept)."""

    def cut(run: re.Match[str]) -> str:
        chars = run.group()
        grams = [chars[i : i + 2] for i in range(len(chars) - 1)] or [chars]
        return " " + " ".join(grams) + " "

    return CJK_RUN.sub(cut, text)


def _bigram_before(store: SessionStore) -> Ranked:
    """BM25 over words and CJK bigrams (the OR of the question's), before the bound's id."""
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE plain USING fts5(content)")
    rows = store._read(
        lambda c: c.execute("SELECT id, COALESCE(content, '') FROM messages").fetchall()
    )
    conn.executemany(
        "INSERT INTO plain(rowid, content) VALUES (?, ?)",
        [(mid, cjk_bigrams(text)) for mid, text in rows],
    )
    plain = _bm25_before(conn)
    return lambda question, bound: plain(cjk_bigrams(question), bound)


Opener = Callable[[Path], AbstractContextManager[Any]]
"""A fresh, empty store for one conversation, given a scratch folder."""


def _state_db(home: Path) -> SessionStore:
    return SessionStore(home / "state.db")


def evaluate_sample(
    sample: dict[str, Any],
    questions: list[Question],
    semantic: bool = False,
    cjk: bool = False,
    opener: Opener = _state_db,
) -> dict[str, dict[str, dict[str, float]]]:
    """group -> ranker -> summed hits (and ``n``, ``sessions@5``) for one conversation
    (*cjk*: with the CJK-bigram baseline too) in the store *opener* gives (a ``state.db``)."""
    totals: dict[str, dict[str, dict[str, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        path = home / "unit.json"
        path.write_text(json.dumps([sample]), encoding="utf-8")
        with opener(home) as store:
            sessions = read_jsonl(path)
            store.import_sessions(sessions)
            turn_ids = {
                (s["id"], k): message["id"]
                for s in sessions
                for k, message in enumerate(store.get_messages(s["id"]))
            }
            session_of = {mid: sid for (sid, _), mid in turn_ids.items()}
            first_id = {sid: min(mids) for sid, mids in _ids_by_session(session_of).items()}
            started = {s["id"]: store.get_session(s["id"])["started_at"] for s in sessions}
            plain = plain_index(store)
            rankers: dict[str, Ranked] = {
                BM25_OR: _bm25_before(plain),
                OURS: _ours_before(store),
            }
            if cjk:
                rankers[BM25_BIGRAMS] = _bigram_before(store)
            if semantic:
                rankers[OURS_SEMANTIC] = _ours_before(store, semantic=True)
            for question in questions:
                evidence = {turn_ids[e] for e in question["evidence"] if e in turn_ids}
                if not evidence:
                    continue
                wanted = {session_of[mid] for mid in evidence}
                before = question.get("before")
                bound = (first_id[before], started[before] - 1) if before in first_id else None
                groups = ("all", question["group"], *question.get("groups", ()))
                for name, ranker in rankers.items():
                    ranked = ranker(question["q"], bound)
                    for group in groups:
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
    units: Iterator[tuple[dict[str, Any], list[Question]]],
    semantic: bool = False,
    cjk: bool = False,
    opener: Opener = _state_db,
) -> dict[str, dict[str, dict[str, float]]]:
    totals: dict[str, dict[str, dict[str, float]]] = {}
    for sample, questions in units:
        for group, rankers in evaluate_sample(sample, questions, semantic, cjk, opener).items():
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
        for name in (BM25_OR, BM25_BIGRAMS, OURS, OURS_SEMANTIC):
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
            label = f"ours + semantic ({encoder_name()})" if name == OURS_SEMANTIC else name
            lines.append(
                f"| {group} | {int(n)} | {label} | {cells} | {hits['sessions@5'] / n:.2f} |"
            )
    return lines


SETS: dict[str, Callable[[str], Iterator[tuple[dict[str, Any], list[Question]]]]] = {
    "REALTALK": realtalk_split,
    "RealMem": realmem_split,
    "MemDaily": memdaily_split,
}
CJK_SETS = {"MemDaily"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    fetching = sub.add_parser("fetch", help="fetch the sets and check their sha256")
    fetching.add_argument(
        "--from",
        dest="local",
        type=Path,
        nargs="*",
        default=[],
        help="local clones or git mirrors to copy from (matched by repository name)",
    )
    running = sub.add_parser("run", help="measure recall on a split")
    running.add_argument("--split", choices=("dev", "test", "both"), default="dev")
    running.add_argument("--semantic", action="store_true", help="also rank with meaning fused")
    running.add_argument("--write", action="store_true", help="write docs/benchmarks.md")
    running.add_argument("--longmemeval", type=Path, help="also a LongMemEval file you supply")
    running.add_argument("--set", choices=sorted(SETS), action="append", help="only these sets")
    args = parser.parse_args(argv)
    if args.command == "fetch":
        for source in SOURCES.values():
            name = source["repository"].rstrip("/").split("/")[-1].lower()
            local = next((d for d in args.local if name in str(d).lower()), None)
            print(fetch(source, local))
        return 0
    splits = ("dev", "test") if args.split == "both" else (args.split,)
    sets = {name: units for name, units in SETS.items() if name in (args.set or SETS)}
    if args.longmemeval is not None:
        print(f"{args.longmemeval}: sha256 {sha256(args.longmemeval)}")
        sets["LongMemEval"] = lambda split: longmemeval_split(args.longmemeval, split)
    load = os.getloadavg()[0]
    wall, cpu = time.perf_counter(), time.process_time()
    lines = []
    for name, units in sets.items():
        for split in splits:
            totals = run(units(split), args.semantic, cjk=name in CJK_SETS)
            lines += [f"### {name}, {split} half", "", *table(totals), ""]
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print("\n".join(lines))
    if args.write:
        intro = [
            f"Command: `python bench/public_sets.py run --split {args.split}"
            f"{' --semantic' if args.semantic else ''} --write` (after "
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
            "fetched, not shipped). RealMem: ten generated personas, each one user's "
            "135-276 dated sessions with an assistant, 1,415 user turns marked as needing "
            "memory, answered by the memory points the assistant's reply used (their source "
            "turns, in earlier sessions; each query searches only the sessions before its "
            "own); categories by the set's memory category and by evidence in one earlier "
            f"session or several ({REALMEM['repository']} at {REALMEM['commit'][:12]}; "
            "Apache-2.0, fetched for its size). MemDaily (Chinese): 26 files of MemSim's "
            "generated daily-life messages (a question type in a scenario, ~100 trajectories "
            "each, 2,954 questions with their target messages); each file is one user's "
            "history, a dated session per trajectory; dev asks the even trajectories' "
            "questions, test the odd ones', both over the whole file "
            f"({MEMDAILY['repository']} at {MEMDAILY['commit'][:12]}; no licence stated, so "
            "fetched, not shipped); its extra baseline is BM25 over CJK bigrams. "
            "The semantic row uses the configured encoder "
            "(`HERMES_SEMANTIC_ENCODER`, static by default). Session recall@k: an evidence "
            "conversation among the "
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
