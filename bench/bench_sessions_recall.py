"""Recall of session search on natural-language questions, against plain BM25.

The evaluation set (``bench/eval/conversations.yaml``) holds 30 short past
conversations — technical and personal, two in Chinese, with vocabulary shared
across them on purpose — and 56 questions, each naming the turn(s) that answer
it. For every question we rank messages and report, over all questions:

* **session recall@k** — an answering session is among the first *k* distinct
  sessions (what ``session_search`` returns);
* **message recall@k** — an answering turn is among the first *k* messages.

Compared (same messages, same run):

* **ours** — ``SessionStore.search_messages`` (sanitiser, question planning:
  stop words, porter stemming, OR with all-words and adjacency boosts, CJK
  routing);
* **BM25, AND** — FTS5's default: the question's words, cleaned of syntax, all
  required, on a plain ``unicode61`` index (the original returns nothing at all
  for a question ending in ``?``; this baseline is kinder);
* **BM25, OR** — the same words OR-ed, no stop words removed, no stemming.

Each ranker runs three times: on the 30 conversations alone, then hidden in
two haystacks of generated history, as in a long-lived agent: technical chat
(``bench_sessions.Corpus``: the deploys, keys, caches and versions the technical
questions ask about) and everyday chat (short questions, long answers, dense in
the travel, family, pets, food, money and hobby words the personal questions
use).

A second set (``bench/eval/people.yaml``) holds four pairs of named friends
chatting over dated sessions, in the shape of public conversational-memory
benchmarks, with questions about what one of them did, said, plans or likes.
Each pair goes through the JSONL importer as a harness would replay it (first
speaker ``user``, second ``assistant``, the speaker as the message's ``name``),
and once more with the names dropped, so the effect of storing them is measured
against BM25, OR on the same messages. On this set the ``session_search`` tool
itself is also asked each question with no summary model configured: what a
reader gets back is then a raw preview (about 600 characters, plus up to 300
around the words that excerpt missed) per returned conversation, and we count
the questions whose answering turn is whole in one, as the sessions are and
with each pair's sessions joined into one long conversation.

A third set (``bench/eval/assistant.yaml``) is one person's dated chats with
an assistant, in the shape of long-term assistant-memory benchmarks: facts
mentioned in passing (some later changed) among sessions holding none, and
questions of six kinds (a fact the user stated, something the assistant said,
a preference, several sessions, the current value of a changed fact, time).
It is imported through the LongMemEval reader, measured alone (with a table per
kind of question and the tool's raw previews) and hidden among generated
everyday chat.

A fourth set (``bench/eval/friends.yaml``) is one long LoCoMo-shaped
conversation: two friends over twelve dated sessions of 16-20 turns, mostly
small talk, with questions of LoCoMo's five categories (one turn, several
sessions, when, inference, the wrong person). It is written out as a LoCoMo
file and imported by that reader; "When did ...?" questions are answered by a
session's date and a relative phrase in a turn ("yesterday", "last weekend").

Usage: ``python bench/bench_sessions_recall.py`` (``--haystack N`` sets the
generated messages per haystack, default 50,000; 0 skips those runs).
``--parity`` instead compares the SQLite and PostgreSQL stores on every recall set
(conversations.yaml alone and in ``--haystack`` generated messages, default 20,000;
people, assistant, friends; REALTALK when fetched) and writes their per-metric table.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_sessions import Corpus  # noqa: E402
from hermes_memory_builtin.session_search import SessionSearchTool  # noqa: E402
from report import write_section  # noqa: E402

from hermes_core.embeddings import encoder_name  # noqa: E402
from hermes_core.sessions import SessionStore  # noqa: E402
from hermes_core.sessions.importer import read_jsonl  # noqa: E402
from hermes_core.sessions.semantic import semantic_available  # noqa: E402

EVAL = HERE / "eval" / "conversations.yaml"
PEOPLE = HERE / "eval" / "people.yaml"
ASSISTANT = HERE / "eval" / "assistant.yaml"
FRIENDS = HERE / "eval" / "friends.yaml"
EVERYDAY = """
    travel trip flight hotel beach city museum history river mountain recipe cooking bake
    oven bread flour sugar butter chicken salmon vegetable garden water plant tomato soil
    seed flower dog cat pet vet food walk run marathon knee training pace race book novel
    author chapter club reading movie film music song concert band guitar money budget bank
    tax loan rent apartment lease move house furniture car brake engine repair mechanic
    insurance doctor health sleep diet exercise gym coffee tea wine dinner lunch restaurant
    family sister brother mother father wedding birthday party gift friend school exam
    language japanese lesson study work job interview manager meeting project deadline email
    phone laptop internet weather rain snow summer winter holiday camping hiking photo camera
""".split()  # noqa: SIM905
FILLER = """
    the a to of and in is it that for on with this be are as at by from or have not but we
    you can will if so what when how which there their should would could just also then now
    about into more some like i my me our
""".split()  # noqa: SIM905
"""Function words of chat, first-person ones included: without them every real message
saying *I* or *my* was rare in the haystack, which flattered BM25 over all words."""
KS = (1, 5, 10)
POOL = 50
OURS = "ours (`search_messages`)"
OURS_SEMANTIC = f"ours + semantic ({encoder_name()}, fused)"
"""The row of ours fused with meaning, named by the configured encoder (``static`` unless
``$HERMES_SEMANTIC_ENCODER`` says ``minilm``)."""
SEMANTIC = semantic_available()
"""Whether the configured encoder can load: the semantic rows are measured only then."""
BM25_OR = "BM25, OR of all words"
WITH_NAMES = "ours, speaker names stored (`name`)"
WITHOUT_NAMES = "ours, imported without names"

Ranker = Callable[[str], list[int]]


def load(store: SessionStore) -> tuple[dict[tuple[str, int], int], list[dict[str, Any]]]:
    """Write the conversations into *store*; return (turn -> message id, questions)."""
    data = yaml.safe_load(EVAL.read_text(encoding="utf-8"))
    turn_ids: dict[tuple[str, int], int] = {}
    stamp = 1_700_000_000.0
    for session in data["sessions"]:
        sid = session["id"]
        store.create_session(sid, source=session.get("source", "cli"), started_at=stamp)
        messages = []
        for n, turn in enumerate(session["turns"]):
            role, content = turn[0], turn[1]
            extra = turn[2] if len(turn) > 2 else {}
            message: dict[str, Any] = {"role": role, "content": content, "timestamp": stamp + n}
            if role == "assistant" and "arguments" in extra:
                message["tool_calls"] = [
                    {
                        "id": f"{sid}_{n}",
                        "type": "function",
                        "function": {"name": extra["name"], "arguments": str(extra["arguments"])},
                    }
                ]
            if role == "tool":
                message["tool_call_id"] = f"{sid}_{n - 1}"
                message["name"] = extra.get("name")
            messages.append(message)
        for n, mid in enumerate(store.append_messages(sid, messages)):
            turn_ids[(sid, n)] = mid
        stamp += 86_400
    return turn_ids, data["questions"]


def plain_index(store: SessionStore) -> sqlite3.Connection:
    """An in-memory FTS5 ``unicode61`` index over the same messages (the baselines)."""
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE plain USING fts5(content)")
    rows = store._read(
        lambda c: c.execute(
            "SELECT id, COALESCE(content, '') || ' ' || COALESCE(tool_name, '') || ' ' "
            "|| COALESCE(tool_calls, '') FROM messages"
        ).fetchall()
    )
    conn.executemany("INSERT INTO plain(rowid, content) VALUES (?, ?)", rows)
    return conn


def _words(question: str) -> list[str]:
    return re.findall(r"\w+", question)


def bm25_ranker(conn: sqlite3.Connection, joiner: str) -> Ranker:
    def rank(question: str) -> list[int]:
        words = _words(question)
        if not words:
            return []
        match = f" {joiner} ".join(f'"{w}"' for w in words)
        sql = "SELECT rowid FROM plain WHERE plain MATCH ? ORDER BY rank LIMIT ?"
        return [row[0] for row in conn.execute(sql, (match, POOL))]

    return rank


COST: dict[str, float] = {}
"""What semantic recall cost on the assistant set (filled by :func:`semantic_cost`)."""


def semantic_cost(store: SessionStore, questions: Sequence[str]) -> dict[str, float]:
    """Embedding rate (messages/s) and median question latency (ms) with and without it."""
    started = time.perf_counter()
    embedded = store.index_messages()
    rate = embedded / max(time.perf_counter() - started, 1e-9)

    def median_ms(semantic: bool) -> float:
        times = []
        for question in questions:
            began = time.perf_counter()
            store.search_messages(question, limit=POOL, semantic=semantic)
            times.append((time.perf_counter() - began) * 1000)
        return statistics.median(times)

    return {"rate": rate, "text_ms": median_ms(False), "fused_ms": median_ms(True)}


def ours_ranker(store: SessionStore, semantic: bool = False) -> Ranker:
    if semantic:
        store.index_messages()  # every message embedded before the first question

    def rank(question: str) -> list[int]:
        hits = store.search_messages(question, limit=POOL, snippets=False, semantic=semantic)
        return [hit["id"] for hit in hits]

    return rank


def evaluate(
    ranker: Ranker,
    questions: Sequence[dict[str, Any]],
    turn_ids: dict[tuple[str, int], int],
    session_of: dict[int, str],
) -> tuple[dict[str, float], list[str]]:
    hits = {f"{level}@{k}": 0 for level in ("session", "message") for k in KS}
    misses = []
    for question in questions:
        evidence = [turn_ids[(sid, n)] for sid, n in question["evidence"]]
        sessions_wanted = {session_of[mid] for mid in evidence}
        ranked = ranker(question["q"])
        sessions: list[str] = []
        for mid in ranked:
            if session_of[mid] not in sessions:
                sessions.append(session_of[mid])
        for k in KS:
            hits[f"session@{k}"] += bool(sessions_wanted & set(sessions[:k]))
            hits[f"message@{k}"] += bool(set(evidence) & set(ranked[:k]))
        if not sessions_wanted & set(sessions[:1]):
            misses.append(question["q"])
    total = len(questions)
    return {key: value / total for key, value in hits.items()}, misses


def everyday_sessions(total: int, seed: int = 5) -> list[dict[str, Any]]:
    """Generated everyday chat: short user turns, long assistant answers (*total* messages)."""
    rng = random.Random(seed)

    def text(words: int) -> str:
        picked = (
            rng.choice(EVERYDAY) if rng.random() < 0.35 else rng.choice(FILLER)
            for _ in range(words)
        )
        return " ".join(picked).capitalize() + "."

    sessions: list[dict[str, Any]] = []
    made = 0
    while made < total:
        messages: list[dict[str, Any]] = []
        for _ in range(rng.randint(3, 10)):
            messages.append({"role": "user", "content": text(rng.randint(8, 30))})
            messages.append({"role": "assistant", "content": text(rng.randint(120, 320))})
        sessions.append(
            {"id": f"everyday_{len(sessions):05d}", "messages": messages[: total - made]}
        )
        made += len(sessions[-1]["messages"])
    return sessions


Results = dict[str, tuple[dict[str, float], list[str]]]


def run(haystack: list[list[dict[str, Any]]]) -> tuple[int, int, int, Results]:
    """Evaluate every ranker; returns (questions, sessions, messages, results by ranker)."""
    with tempfile.TemporaryDirectory() as tmp, SessionStore(Path(tmp) / "state.db") as store:
        for batch in haystack:
            store.import_sessions(batch)
        turn_ids, questions = load(store)
        session_of = dict(
            store._read(lambda c: c.execute("SELECT id, session_id FROM messages").fetchall())
        )
        plain = plain_index(store)
        rankers: dict[str, Ranker] = {
            "BM25, AND (FTS5 default)": bm25_ranker(plain, "AND"),
            BM25_OR: bm25_ranker(plain, "OR"),
            OURS: ours_ranker(store),
        }
        if SEMANTIC and not haystack:  # embedding a 50,000-message haystack takes too long
            rankers[OURS_SEMANTIC] = ours_ranker(store, semantic=True)
        results = {
            name: evaluate(ranker, questions, turn_ids, session_of)
            for name, ranker in rankers.items()
        }
        sessions = len(set(session_of.values()))
        return len(questions), sessions, len(session_of), results


def people_jsonl(data: dict[str, Any], path: Path, names: bool) -> Path:
    """Write the pairs to *path* as JSONL conversations, each turn named by its speaker or not."""
    lines = []
    for pair in data["pairs"]:
        roles = dict(zip(pair["speakers"], ("user", "assistant"), strict=True))
        for session in pair["sessions"]:
            messages = [
                {"role": roles[speaker], "content": text} | ({"name": speaker} if names else {})
                for speaker, text in session["turns"]
            ]
            line = {"session_id": session["id"], "started_at": session["started_at"]}
            lines.append(json.dumps(line | {"messages": messages}, ensure_ascii=False))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def people_turns(store: SessionStore, data: dict[str, Any]) -> dict[tuple[str, int], int]:
    """(session, 0-based turn) -> message id for the imported pairs."""
    return {
        (session["id"], n): message["id"]
        for pair in data["pairs"]
        for session in pair["sessions"]
        for n, message in enumerate(store.get_messages(session["id"]))
    }


def turn_texts(data: dict[str, Any]) -> dict[tuple[str, int], str]:
    """(session, 0-based turn) -> the turn's text, for every pair."""
    return {
        (session["id"], n): text
        for pair in data["pairs"]
        for session in pair["sessions"]
        for n, (_, text) in enumerate(session["turns"])
    }


def blind_questions(data: dict[str, Any]) -> tuple[int, int]:
    """(questions naming a speaker, those of them whose answering turns never say that name)."""
    speakers = {name for pair in data["pairs"] for name in pair["speakers"]}
    texts = turn_texts(data)
    naming = blind = 0
    for question in data["questions"]:
        named = {name for name in speakers if re.search(rf"\b{name}\b", question["q"])}
        said = any(name in texts[(sid, n)] for sid, n in question["evidence"] for name in named)
        naming += bool(named)
        blind += bool(named) and not said
    return naming, blind


MODEL_ENV = ("HERMES_MODEL_BASE_URL", "HERMES_MODEL", "OPENAI_BASE_URL")
"""Variables that would give ``session_search`` a summary model (it falls back to them)."""


def preview_tool(home: Path, semantic: bool | None = None) -> SessionSearchTool:
    """``session_search`` over *home*'s state.db with no summary model: raw previews only.

    *semantic* sets ``session_search.semantic``; None leaves the default (on when
    the encoder is installed).
    """
    for name in MODEL_ENV:  # this process only
        os.environ.pop(name, None)
    return SessionSearchTool(
        home, {} if semantic is None else {"session_search": {"semantic": semantic}}
    )


def preview_answers(
    home: Path, data: dict[str, Any], texts: dict[tuple[str, int], str] | None = None
) -> int:
    """Questions whose answering turn is whole in ``session_search``'s raw previews."""
    texts = turn_texts(data) if texts is None else texts
    tool = preview_tool(home)
    try:
        found = 0
        for question in data["questions"]:
            answer = json.loads(tool({"query": question["q"]}))
            shown = "\n".join(result["summary"] for result in answer.get("results", []))
            found += any(texts[(sid, n)] in shown for sid, n in question["evidence"])
        return found
    finally:
        tool.close()


def joined_pairs(data: dict[str, Any]) -> dict[str, Any]:
    """*data* with each pair's sessions joined into one long conversation (evidence remapped)."""
    pairs = []
    moved: dict[tuple[str, int], list[Any]] = {}
    for pair in data["pairs"]:
        first = pair["sessions"][0]
        turns: list[Any] = []
        for session in pair["sessions"]:
            for n, turn in enumerate(session["turns"]):
                moved[(session["id"], n)] = [first["id"], len(turns)]
                turns.append(turn)
        pairs.append({**pair, "sessions": [{**first, "turns": turns}]})
    questions = [
        {**question, "evidence": [moved[(sid, n)] for sid, n in question["evidence"]]}
        for question in data["questions"]
    ]
    return {**data, "pairs": pairs, "questions": questions}


def run_people(data: dict[str, Any]) -> tuple[int, Results, dict[str, tuple[int, int]]]:
    """Evaluate BM25, OR and ours with and without names.

    Returns (messages, results, questions answered in the tool's previews per variant,
    as they are and with each pair's sessions joined into one long conversation).
    """
    results: Results = {}
    previews: dict[str, tuple[int, int]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for names, label in ((True, WITH_NAMES), (False, WITHOUT_NAMES)):
            joined = Path(tmp) / f"joined_{names}"
            joined.mkdir()
            long_data = joined_pairs(data)
            with SessionStore(joined / "state.db") as store:
                jsonl = people_jsonl(long_data, joined / "pairs.jsonl", names)
                store.import_sessions(read_jsonl(jsonl))
            home = Path(tmp) / f"names_{names}"
            home.mkdir()
            with SessionStore(home / "state.db") as store:
                store.import_sessions(read_jsonl(people_jsonl(data, home / "pairs.jsonl", names)))
                turn_ids = people_turns(store, data)
                session_of = {mid: sid for (sid, _), mid in turn_ids.items()}
                questions = data["questions"]
                if names:  # the baseline indexes the text alone: the same either way
                    plain = bm25_ranker(plain_index(store), "OR")
                    results[BM25_OR] = evaluate(plain, questions, turn_ids, session_of)
                results[label] = evaluate(ours_ranker(store), questions, turn_ids, session_of)
                if names and SEMANTIC:
                    semantic = ours_ranker(store, semantic=True)
                    results[OURS_SEMANTIC] = evaluate(semantic, questions, turn_ids, session_of)
            previews[label] = (
                preview_answers(home, data),
                preview_answers(joined, long_data),
            )
    return len(turn_ids), results, previews


KINDS = {
    "user": "a fact the user stated",
    "assistant": "something the assistant said",
    "preference": "a request that depends on a stated taste",
    "multi": "spread over several sessions",
    "update": "the current value of a changed fact",
    "temporal": "when, how long before or after",
}


def longmemeval_instance(data: dict[str, Any]) -> dict[str, Any]:
    """The set as one LongMemEval instance: every session in its haystack, evidence marked."""
    from datetime import datetime

    evidence = {(sid, n) for question in data["questions"] for sid, n in question["evidence"]}
    return {
        "question_id": "assistant_set",
        "haystack_session_ids": [session["id"] for session in data["sessions"]],
        "haystack_dates": [
            datetime.strptime(session["date"], "%Y-%m-%d %H:%M").strftime("%Y/%m/%d (%a) %H:%M")
            for session in data["sessions"]
        ],
        "haystack_sessions": [
            [
                {"role": role, "content": text}
                | ({"has_answer": True} if (session["id"], n) in evidence else {})
                for n, (role, text) in enumerate(session["turns"])
            ]
            for session in data["sessions"]
        ],
    }


def run_assistant(
    data: dict[str, Any], haystack: int
) -> tuple[int, int, Results, dict[str, Results], int]:
    """BM25, OR and ours on the assistant set, imported as a LongMemEval file.

    With *haystack* > 0 the set is hidden among that many messages of generated
    everyday chat. Returns (sessions, messages, results, results per kind of
    question, questions whose answering turn is whole in the tool's raw previews).
    """
    texts = {
        (session["id"], n): text
        for session in data["sessions"]
        for n, (_, text) in enumerate(session["turns"])
    }
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        path = home / "assistant.json"
        path.write_text(json.dumps([longmemeval_instance(data)]), encoding="utf-8")
        with SessionStore(home / "state.db") as store:
            if haystack:
                store.import_sessions(everyday_sessions(haystack, seed=9))
            store.import_sessions(read_jsonl(path))
            turn_ids = {
                (session["id"], n): message["id"]
                for session in data["sessions"]
                for n, message in enumerate(store.get_messages(session["id"]))
            }
            session_of = dict(
                store._read(lambda c: c.execute("SELECT id, session_id FROM messages").fetchall())
            )
            rankers = {
                BM25_OR: bm25_ranker(plain_index(store), "OR"),
                OURS: ours_ranker(store),
            }
            if SEMANTIC and not haystack:
                COST.update(semantic_cost(store, [q["q"] for q in data["questions"]]))
                rankers[OURS_SEMANTIC] = ours_ranker(store, semantic=True)
            questions = data["questions"]
            results = {
                name: evaluate(ranker, questions, turn_ids, session_of)
                for name, ranker in rankers.items()
            }
            by_kind = {
                kind: {
                    name: evaluate(
                        ranker, [q for q in questions if q["type"] == kind], turn_ids, session_of
                    )
                    for name, ranker in rankers.items()
                }
                for kind in KINDS
            }
        previews = preview_answers(home, data, texts)
    return len(set(session_of.values())), len(session_of), results, by_kind, previews


def _kinds_table(
    by_kind: dict[str, Results],
    questions: Sequence[dict[str, Any]],
    *,
    field: str = "type",
    labels: dict[str, str] = KINDS,
    heading: str = "kind of question",
    shown: dict[str, int] | None = None,
) -> list[str]:
    """R@1 by session and R@5 by message per kind of question (``field``), both rankers.

    With *shown*, a last column counts the questions whose answering turn is whole
    in a raw preview of the tool.
    """
    extra = (" answering turn in a preview |", "---:|") if shown is not None else ("", "")
    rankers = [
        name for name in (BM25_OR, OURS, OURS_SEMANTIC) if name in next(iter(by_kind.values()))
    ]
    short = {BM25_OR: "BM25 OR", OURS: "ours", OURS_SEMANTIC: "+ semantic"}
    columns = [
        f"{metric}, {short[name]}" for metric in ("session R@1", "message R@5") for name in rankers
    ]
    lines = [
        f"| {heading} | questions | " + " | ".join(columns) + f" |{extra[0]}",
        "|---|---:|" + "---:|" * len(columns) + extra[1],
    ]
    for kind, results in by_kind.items():
        count = sum(q[field] == kind for q in questions)
        cells = [
            f"{results[ranker][0][metric]:.2f}"
            for metric in ("session@1", "message@5")
            for ranker in rankers
        ]
        if shown is not None:
            cells.append(f"{shown[kind]}/{count}")
        lines.append(f"| {kind} ({labels[kind]}) | {count} | " + " | ".join(cells) + " |")
    return lines


def _assistant_section(haystack: int) -> list[str]:
    data = yaml.safe_load(ASSISTANT.read_text(encoding="utf-8"))
    questions = data["questions"]
    sessions, messages, results, by_kind, previews = run_assistant(data, 0)
    facts = sum(not session["id"].startswith("h") for session in data["sessions"])
    lines = [
        "",
        "### One user and an assistant over nine months",
        "",
        f"{len(questions)} questions over {sessions} dated user/assistant sessions ({messages} "
        f"messages) in `bench/eval/assistant.yaml`, written for this project in the shape of "
        f"long-term assistant-memory benchmarks: in {facts} sessions the user mentions facts "
        "about their life while asking for help with something else (some facts change: a "
        f"move, a new job, a faster race), {sessions - facts} hold none (general questions on "
        "the same topics). The questions are worded as people ask, not as the chats said it "
        "(*kitten* for *cat*, *salary* for *take home*, 18 for *eighteen*). Imported as a "
        "LongMemEval file (`sessions import`'s reader).",
        "",
        *_table(results),
        "",
        *_kinds_table(by_kind, questions),
        "",
        "The `session_search` tool with no summary model (raw previews): the answering turn "
        f"is whole in a preview for {previews}/{len(questions)} questions.",
    ]
    if COST:
        lines += [
            "",
            f"Semantic recall's cost here: embedding the {messages} messages ran at "
            f"{COST['rate']:.0f} messages/s; a question took {COST['fused_ms']:.0f} ms "
            f"fused against {COST['text_ms']:.1f} ms full-text only (median; the encoder reads "
            "the question, then 120 vectors are compared).",
        ]
    if haystack:
        sessions, messages, crowded, _, _ = run_assistant(data, haystack)
        lines += [
            "",
            f"Hidden among {haystack:,} messages of generated everyday chat ({sessions:,} "
            "sessions in all):",
            "",
            *_table(crowded),
        ]
    return lines


CATEGORIES = {
    "single-hop": "one turn answers it",
    "multi-hop": "turns from two or more sessions",
    "temporal": "when: a session's date and a relative phrase in a turn",
    "open-domain": "an inference from what was said",
    "adversarial": "asks about the wrong person",
}


def locomo_sample(data: dict[str, Any]) -> dict[str, Any]:
    """The friends set as one LoCoMo sample (``speaker_a``, ``session_<n>``, ``D<n>:<k>``)."""
    conversation: dict[str, Any] = {"speaker_a": data["speaker_a"], "speaker_b": data["speaker_b"]}
    for n, session in enumerate(data["sessions"], start=1):
        conversation[f"session_{n}_date_time"] = session["date_time"]
        conversation[f"session_{n}"] = [
            {"speaker": speaker, "text": text, "dia_id": f"D{n}:{k}"}
            for k, (speaker, text) in enumerate(session["turns"], start=1)
        ]
    return {"sample_id": data["sample_id"], "conversation": conversation}


def friends_questions(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The questions with evidence as (imported session id, 0-based turn)."""
    return [
        {
            **question,
            "evidence": [
                [f"{data['sample_id']}_session_{session}", int(turn) - 1]
                for item in question["evidence"]
                for session, turn in re.findall(r"D(\d+):(\d+)", str(item))
            ],
        }
        for question in data["questions"]
    ]


def run_friends(
    data: dict[str, Any],
) -> tuple[int, int, Results, dict[str, Results], dict[str, int], int]:
    """BM25, OR and ours on the friends set, imported as a LoCoMo file.

    Returns (sessions, messages, results, results per category, questions per
    category whose answering turn is whole in the tool's raw previews, temporal
    questions whose preview showing the turn is dated with its session's day).
    """
    questions = friends_questions(data)
    sample = locomo_sample(data)
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        path = home / "friends.json"
        path.write_text(json.dumps([sample]), encoding="utf-8")
        with SessionStore(home / "state.db") as store:
            sessions = read_jsonl(path)
            store.import_sessions(sessions)
            stored = {s["id"]: store.get_messages(s["id"]) for s in sessions}
            started = {s["id"]: store.get_session(s["id"])["started_at"] for s in sessions}
        turn_ids = {(sid, n): m["id"] for sid, ms in stored.items() for n, m in enumerate(ms)}
        texts = {(sid, n): m["content"] for sid, ms in stored.items() for n, m in enumerate(ms)}
        session_of = {mid: sid for (sid, _), mid in turn_ids.items()}
        with SessionStore(home / "state.db", read_only=True) as store:
            rankers = {BM25_OR: bm25_ranker(plain_index(store), "OR"), OURS: ours_ranker(store)}
            if SEMANTIC:
                rankers[OURS_SEMANTIC] = ours_ranker(store, semantic=True)
            results = {
                name: evaluate(ranker, questions, turn_ids, session_of)
                for name, ranker in rankers.items()
            }
            by_kind = {
                kind: {
                    name: evaluate(
                        ranker,
                        [q for q in questions if q["category"] == kind],
                        turn_ids,
                        session_of,
                    )
                    for name, ranker in rankers.items()
                }
                for kind in CATEGORIES
            }
        tool = preview_tool(home)
        shown: dict[str, int] = dict.fromkeys(CATEGORIES, 0)
        dated = 0
        try:
            for question in questions:
                answer = json.loads(tool({"query": question["q"]}))
                found = [
                    result
                    for result in answer.get("results", [])
                    if any(
                        texts[(sid, n)] in result.get("summary", "")
                        for sid, n in question["evidence"]
                    )
                ]
                shown[question["category"]] += bool(found)
                if question["category"] == "temporal":
                    days = {
                        datetime.fromtimestamp(started[sid]).strftime("%B %d, %Y")
                        for sid, _ in question["evidence"]
                    }
                    dated += any(
                        any(day in str(result.get("when", "")) for day in days) for result in found
                    )
        finally:
            tool.close()
    return len(stored), len(turn_ids), results, by_kind, shown, dated


def _friends_section() -> list[str]:
    data = yaml.safe_load(FRIENDS.read_text(encoding="utf-8"))
    questions = data["questions"]
    sessions, messages, results, by_kind, shown, dated = run_friends(data)
    temporal = sum(q["category"] == "temporal" for q in questions)
    return [
        "",
        "### Two friends over twelve dated sessions (LoCoMo-shaped)",
        "",
        f"{len(questions)} questions over {sessions} dated sessions ({messages} messages) of "
        f"one pair of friends in `bench/eval/friends.yaml`, written for this project in the "
        "shape of LoCoMo: long sessions of mostly small talk with facts mentioned in passing, "
        'questions of its five categories, and "When did …?" questions answered by a '
        "session's date and a relative phrase in a turn (*yesterday*, *last weekend*). "
        "Written out as a LoCoMo file and imported by `sessions import`'s reader (one speaker "
        "`user`, the other `assistant`, both named).",
        "",
        *_table(results),
        "",
        *_kinds_table(
            by_kind,
            questions,
            field="category",
            labels=CATEGORIES,
            heading="category",
            shown=shown,
        ),
        "",
        "The last column counts questions whose answering turn is whole in the "
        "`session_search` tool's raw previews (no summary model): "
        f"{sum(shown.values())}/{len(questions)} in all; for {dated} of the {temporal} "
        "temporal questions the result showing it carries its session's date (`when`).",
    ]


def _table(results: Results, ours: str = OURS) -> list[str]:
    lines = [
        "| ranker | session R@1 | session R@5 | session R@10 | message R@1 | message R@5 "
        "| message R@10 |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, (scores, _) in results.items():
        cells = [f"{scores[f'session@{k}']:.2f}" for k in KS]
        cells += [f"{scores[f'message@{k}']:.2f}" for k in KS]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    misses = results[ours][1]
    if misses:
        lines += ["", "Questions whose first session is wrong for us:", ""]
        lines += [f"- {question}" for question in misses]
    return lines


def _people_section() -> list[str]:
    data = yaml.safe_load(PEOPLE.read_text(encoding="utf-8"))
    messages, results, previews = run_people(data)
    sessions = sum(len(pair["sessions"]) for pair in data["pairs"])
    naming, blind = blind_questions(data)

    def answered(variant: int) -> str:
        return ", ".join(
            f"{found[variant]}/{len(data['questions'])} {label.removeprefix('ours, ')}"
            for label, found in previews.items()
        )

    return [
        "",
        "### Two named people per conversation",
        "",
        f"{len(data['questions'])} questions over {sessions} dated sessions ({messages} "
        f"messages) of {len(data['pairs'])} pairs of friends in `bench/eval/people.yaml`, "
        "written for this project in the shape of public conversational-memory benchmarks: "
        "the pairs share topics (dogs, classes, trips, jobs, running) and call each other by "
        f"name. {naming} questions name a person; in {blind} of them no answering turn contains "
        "that name. Imported as a harness replays a pair (first speaker "
        "`user`, second `assistant`) with each speaker as the message's `name`, then again "
        "without names.",
        "",
        *_table(results, WITH_NAMES),
        "",
        "The `session_search` tool with no summary model returns a raw preview from each of "
        "the (at most 3) conversations it picks: about 600 characters around the best match, "
        "plus up to 300 from the turn the search ranked first there when that excerpt misses "
        "it, else around query words that excerpt missed. Questions whose answering "
        "turn is whole in a preview: "
        + answered(0)
        + "; with each pair's sessions joined into one long conversation (43–48 turns, "
        "about 4,000 characters, of which a preview shows under a quarter): " + answered(1) + ".",
    ]


PARITY_TARGET = 0.02
"""PostgreSQL's recall may fall short of SQLite's by at most this much on any set and metric."""


def parity(haystack: int, semantic: bool = False) -> int:
    """Recall of ``search_messages`` on SQLite and on PostgreSQL, every set (those of
    ``bench_scaling.recall_sets``, REALTALK when fetched) loaded the same way into a fresh store
    of each; writes the ``sessions-parity`` section; 1 when a difference exceeds the target.

    *semantic*: with meaning on, every message embedded on both backends first, the sets of
    ``bench_scaling.recall_sets`` only; writes the ``sessions-parity-semantic`` section."""
    import bench_scaling  # both import this module: loaded only here
    import public_sets

    from hermes_core.sessions.backends import open_session_store

    @contextmanager
    def postgres_store(_: Path) -> Iterator[Any]:
        with bench_scaling.pg_schema() as url, open_session_store(url, semantic="off") as store:
            yield store

    started = time.perf_counter()
    cpu = time.process_time()
    results = bench_scaling.recall_parity(haystack, semantic)
    for name in () if semantic else ("RealMem", "MemDaily"):
        split = public_sets.SETS[name]
        try:
            units = [*split("dev"), *split("test")]
        except SystemExit as exc:  # not fetched: said in the report
            print(f"{name} skipped: {exc}", flush=True)
            continue
        print(f"recall: {name}", flush=True)
        cjk = name in public_sets.CJK_SETS
        pair = [
            public_sets.run(iter(units), cjk=cjk)["all"][public_sets.OURS],
            public_sets.run(iter(units), cjk=cjk, opener=postgres_store)["all"][public_sets.OURS],
        ]
        count = int(pair[0]["n"])
        sqlite, pg = (
            {k: v / count for k, v in hits.items() if k.startswith(("session@", "message@"))}
            for hits in pair
        )
        results.append((f"{name} (all personas)", count, sqlite, pg))
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    flag = " --semantic" if semantic else ""
    lines = [
        f"Command: `python bench/bench_sessions_recall.py --parity{flag} --haystack {haystack}` "
        f"(PostgreSQL at `{bench_scaling.POSTGRES}`, a fresh schema per set). Run "
        f"{datetime.now().astimezone():%Y-%m-%d %H:%M %Z}, {wall:.0f} s wall, {cpu:.0f} s CPU "
        f"of this process, load average {os.getloadavg()[0]:.1f} at its end. "
        + (
            "With semantic search on both backends (the static encoder; every message "
            "embedded first). "
            if semantic
            else "Without semantic search. "
        )
        + "Difference: PostgreSQL minus SQLite.",
        "",
        "| Set | Questions | Metric | SQLite | PostgreSQL | Difference |",
        "|---|---|---|---|---|---|",
    ]
    worst = 0.0
    for name, count, sqlite, postgres in results:
        for metric in sqlite:
            difference = postgres[metric] - sqlite[metric]
            worst = max(worst, abs(difference))
            lines.append(
                f"| {name} | {count} | {metric} | {sqlite[metric]:.3f} | "
                f"{postgres[metric]:.3f} | {difference:+.3f} |"
            )
    verdict = "within" if worst <= PARITY_TARGET else "NOT within"
    lines += [
        "",
        f"Largest difference on any set and metric: {worst:.3f} ({verdict} the "
        f"{PARITY_TARGET} target).",
    ]
    if semantic:
        write_section(
            "sessions-parity-semantic",
            "Session search recall with meaning: SQLite against PostgreSQL",
            "\n".join(lines),
        )
    else:
        write_section(
            "sessions-parity", "Session search recall: SQLite against PostgreSQL", "\n".join(lines)
        )
    print("\n".join(lines))
    return 0 if worst <= PARITY_TARGET else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a 10,000-message haystack")
    parser.add_argument("--haystack", type=int, help="generated messages around the set")
    parser.add_argument(
        "--parity", action="store_true", help="SQLite against PostgreSQL on every recall set"
    )
    parser.add_argument(
        "--semantic", action="store_true", help="with --parity: meaning on, on both backends"
    )
    args = parser.parse_args(argv)
    if args.parity:
        return parity(args.haystack if args.haystack is not None else 20_000, args.semantic)
    haystack = args.haystack if args.haystack is not None else 10_000 if args.quick else 50_000
    questions, sessions, base_messages, clean = run([])
    lines = [
        "Command: `python bench/bench_sessions_recall.py`",
        "",
        f"{questions} questions over {sessions} conversations ({base_messages} messages) in "
        "`bench/eval/conversations.yaml`, written for this project. Session recall@k: an "
        "answering conversation is among the first k distinct sessions; message recall@k: "
        "an answering turn is among the first k messages. "
        f"`{OURS_SEMANTIC}` is ours fused with the {encoder_name()} encoder's nearest messages "
        "(reciprocal rank fusion, every message embedded first), measured when the encoder is "
        "installed (`hermes-memory-core[semantic]`); not on the generated haystacks.",
        "",
        *_table(clean),
    ]
    haystacks = {
        "technical chat (`bench_sessions.Corpus`: the deploys, keys, caches and versions "
        "the technical questions ask about, as word salad, plus tool calls and output)": list(
            Corpus(seed=11).batches(haystack, 5_000)
        ),
        "everyday chat (short questions, long answers, a third of their words from the "
        "travel, family, pets, food, money and hobby topics the personal questions ask "
        "about)": [everyday_sessions(haystack)],
    }
    for description, batches in haystacks.items() if haystack else ():
        _, sessions, messages, crowded = run(batches)
        lines += [
            "",
            f"### Hidden among {messages - base_messages:,} messages of "
            + description.split(" (")[0],
            "",
            f"The {questions} questions' conversations among {sessions:,} sessions of "
            f"generated {description}.",
            "",
            *_table(crowded),
        ]
    lines += _people_section()
    lines += _assistant_section(haystack)
    lines += _friends_section()
    write_section("sessions-recall", "Session search recall on questions", "\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
