"""When should meaning join a question's full-text hits? Measured on the public sets' dev halves.

For every question of ``bench/public_sets.py``'s sets (dev half unless told), this
records the full-text ranking ``search_messages`` makes (with what it knows of it:
how much of the question its best conversation covers, the sessions it ranks first)
and the configured encoder's nearest messages, then replays decision rules on them:
full text alone, the fusion as shipped, fusion at other coverage thresholds, fusion
with meaning's vote weighted down, meaning reordering only the full-text candidates
(agreement, never a message full text did not find), and meaning only where full text
found nothing. Printed per set and category: session and turn recall@1/5, and how many
questions a rule turned from hit to miss at turn R@5 (``lost``) and from miss to hit
(``won``) against full text.

Usage::

    python bench/calibrate_semantic.py [--split dev|test] [--set NAME]

It changes nothing; the rule chosen from it lives in
``hermes_core.sessions.search`` (``meaning_rule``).
"""

from __future__ import annotations

import argparse
import os
import pickle
import re
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from public_sets import SETS, Question  # noqa: E402

from hermes_core.embeddings import encoder_name  # noqa: E402
from hermes_core.sessions import SessionStore  # noqa: E402
from hermes_core.sessions.fetch import SearchFilters  # noqa: E402
from hermes_core.sessions.importer import read_jsonl  # noqa: E402
from hermes_core.sessions.search import FUSION_K, NEAREST_CANDIDATES, search_messages  # noqa: E402

DEPTH = 50
"""Hits ranked per question (the tool's pool)."""
NEIGHBOURS = 400
"""Nearest messages read per question (their ranks weigh the agreement rules)."""

Record = dict[str, Any]


PRF_HITS = 3
"""Pseudo-relevance feedback: the first this many full-text hits lend words to the question."""
PRF_WORDS = 5
"""Words added to the question (the most frequent in those hits, weighted by their rarity)."""


def _feedback_words(question: str, texts: Sequence[str], df: dict[str, int], total: int) -> str:
    """The :data:`PRF_WORDS` words the first hits share most that the question does not say."""
    import math
    import re

    from hermes_core.sessions.question import STOP_WORDS

    asked = {w.lower() for w in re.findall(r"\w+", question)}
    counts: dict[str, float] = {}
    for text in texts:
        for word in set(re.findall(r"[a-z]{3,}", text.lower())):
            if word in asked or word in STOP_WORDS or df.get(word, 0) < 2:
                continue
            counts[word] = counts.get(word, 0.0) + math.log(total / df[word])
    return " ".join(sorted(counts, key=lambda w: -counts[w])[:PRF_WORDS])


def _records(sample: dict[str, Any], questions: list[Question], prf: bool = False) -> list[Record]:
    """Per question: its evidence, the full-text ranking and what explains it, its neighbours."""
    import json

    out = []
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        path = home / "unit.json"
        path.write_text(json.dumps([sample]), encoding="utf-8")
        with SessionStore(home / "state.db", semantic="on") as store:
            sessions = read_jsonl(path)
            store.import_sessions(sessions)
            store.index_messages()
            turn_ids = {
                (s["id"], k): message["id"]
                for s in sessions
                for k, message in enumerate(store.get_messages(s["id"]))
            }
            session_of = {mid: sid for (sid, _), mid in turn_ids.items()}
            first_id: dict[str, int] = {}
            for mid, sid in session_of.items():
                first_id[sid] = min(mid, first_id.get(sid, mid))
            started = {s["id"]: store.get_session(s["id"])["started_at"] for s in sessions}
            text_of = {
                message["id"]: message["content"] or ""
                for s in sessions
                for message in store.get_messages(s["id"])
            }
            df: dict[str, int] = {}
            for text in text_of.values():
                for word in set(re.findall(r"[a-z]{3,}", text.lower())):
                    df[word] = df.get(word, 0) + 1
            for question in questions:
                evidence = {turn_ids[e] for e in question["evidence"] if e in turn_ids}
                if not evidence:
                    continue
                before = question.get("before")
                filters = SearchFilters(until=started[before] - 1) if before else SearchFilters()
                explain: dict[str, Any] = {}

                def lexical(
                    conn: Any,
                    q: str = question["q"],
                    f: SearchFilters = filters,
                    explain: dict[str, Any] = explain,
                ) -> Any:
                    return search_messages(
                        conn,
                        store.layout,
                        q,
                        filters=f,
                        limit=DEPTH,
                        snippets=False,
                        nearest=lambda text, k: [],
                        explain=explain,
                    )

                store._read(lexical)
                feedback: list[tuple[int, str]] = []
                if prf and explain.get("lexical"):
                    top = [text_of[mid] for mid, _ in explain["lexical"][:PRF_HITS]]
                    added = _feedback_words(question["q"], top, df, len(text_of))
                    if added:
                        hits = store.search_messages(
                            f"{question['q']} {added}",
                            limit=DEPTH,
                            snippets=False,
                            semantic=False,
                            until=filters.until,
                        )
                        feedback = [(hit["id"], hit["session_id"]) for hit in hits]
                nearest = store._nearest(question["q"], force=True)  # None: not by meaning
                bound = first_id[before] if before else None
                neighbours = [
                    mid
                    for mid in (nearest(question["q"], NEIGHBOURS) if nearest else [])
                    if bound is None or mid < bound
                ]
                out.append(
                    {
                        "group": question["group"],
                        "groups": question.get("groups", ()),
                        "evidence": evidence,
                        "wanted": {session_of[mid] for mid in evidence},
                        "lexical": explain.get("lexical", []),
                        "share": explain.get("share", 0.0),
                        "first": explain.get("first", ()),
                        "by_meaning": explain.get("by_meaning", False),
                        "neighbours": [(mid, session_of[mid]) for mid in neighbours],
                        "feedback": feedback,
                    }
                )
    return out


Rule = Callable[[Record], list[tuple[int, str]]]


def _rrf(
    lexical: Sequence[tuple[int, str]],
    semantic: Sequence[tuple[int, str]],
    first: Sequence[frozenset[str]],
    weight: float = 1.0,
    only_lexical: bool = False,
) -> list[tuple[int, str]]:
    score: dict[tuple[int, str], float] = {}
    order = {row: n for n, row in enumerate(lexical)}
    for rank, row in enumerate(lexical):
        score[row] = 1.0 / (FUSION_K + rank + 1)
    for rank, row in enumerate(semantic):
        if only_lexical and row not in order:
            continue
        score[row] = score.get(row, 0.0) + weight / (FUSION_K + rank + 1)
        order.setdefault(row, len(order))
    ranked = sorted(
        score, key=lambda row: (*(row[1] not in tier for tier in first), -score[row], order[row])
    )
    return ranked[:DEPTH]


def rules() -> dict[str, Rule]:
    def text(r: Record) -> list[tuple[int, str]]:
        return list(r["lexical"])

    def fused_below(threshold: float, weight: float = 1.0) -> Rule:
        def rule(r: Record) -> list[tuple[int, str]]:
            if not r["by_meaning"] or r["share"] >= threshold:
                return list(r["lexical"])
            return _rrf(r["lexical"], r["neighbours"][:NEAREST_CANDIDATES], r["first"], weight)

        return rule

    def agreement(weight: float, among: int = DEPTH) -> Rule:
        def rule(r: Record) -> list[tuple[int, str]]:
            if not r["by_meaning"]:
                return list(r["lexical"])
            head, tail = r["lexical"][:among], r["lexical"][among:]
            return _rrf(head, r["neighbours"], r["first"], weight, only_lexical=True) + tail

        return rule

    def combined(weight: float, threshold: float) -> Rule:
        """Meaning adds its own messages below *threshold*, else only reorders (shipped)."""
        insert, reorder = fused_below(threshold), agreement(weight)

        def rule(r: Record) -> list[tuple[int, str]]:
            return insert(r) if r["share"] < threshold else reorder(r)

        return rule

    def with_feedback(weight: float) -> Rule:
        """Full text fused with the question searched again with its feedback words."""

        def rule(r: Record) -> list[tuple[int, str]]:
            if not r.get("feedback"):
                return list(r["lexical"])
            return _rrf(r["lexical"], r["feedback"], r["first"], weight)

        return rule

    def when_empty(r: Record) -> list[tuple[int, str]]:
        if r["lexical"] or not r["by_meaning"]:
            return list(r["lexical"])
        return r["neighbours"][:DEPTH]

    def fill_after(keep: int) -> Rule:
        def rule(r: Record) -> list[tuple[int, str]]:
            if not r["by_meaning"]:
                return list(r["lexical"])
            top = list(r["lexical"][:keep])
            fused = _rrf(r["lexical"], r["neighbours"][:NEAREST_CANDIDATES], r["first"])
            return (top + [row for row in fused if row not in top])[:DEPTH]

        return rule

    found = {
        "full text": text,
        "fused < 0.50 (the rule before)": fused_below(0.5),
        "fused always": fused_below(2.0),
        "fused < 0.20": fused_below(0.2),
        "fused < 0.35": fused_below(0.35),
        "fused < 0.50, meaning x0.5": fused_below(0.5, 0.5),
        "fused always, meaning x0.5": fused_below(2.0, 0.5),
        "agreement x1 (rerank only)": agreement(1.0),
        "agreement x0.5 (rerank only)": agreement(0.5),
        "agreement x0.25 (rerank only)": agreement(0.25),
        "agreement x0.15 (rerank only)": agreement(0.15),
        "agreement x0.1 (rerank only)": agreement(0.1),
        "agreement x0.25 among the first 20": agreement(0.25, 20),
        "agreement x0.25 among the first 10": agreement(0.25, 10),
        "full text top 5 kept, fused after": fill_after(5),
        "meaning only when full text is empty": when_empty,
        "agreement x0.25, fused < 0.20 (shipped)": combined(0.25, 0.2),
        "agreement x0.15, fused < 0.20": combined(0.15, 0.2),
        "agreement x0.1, fused < 0.20": combined(0.1, 0.2),
        "agreement x0.25, fused < 0.35": combined(0.25, 0.35),
        "PRF: + feedback words x1 (full text only)": with_feedback(1.0),
        "PRF: + feedback words x0.5 (full text only)": with_feedback(0.5),
    }
    return found


def score(records: Sequence[Record], rule: Rule, base: Rule) -> dict[str, float]:
    out = {"n": 0.0, "s1": 0.0, "s5": 0.0, "t1": 0.0, "t5": 0.0, "won": 0.0, "lost": 0.0}
    for r in records:
        ranked = rule(r)
        ids = [mid for mid, _ in ranked]
        order = list(dict.fromkeys(sid for _, sid in ranked))
        out["n"] += 1
        out["s1"] += bool(r["wanted"] & set(order[:1]))
        out["s5"] += bool(r["wanted"] & set(order[:5]))
        out["t1"] += bool(r["evidence"] & set(ids[:1]))
        hit = bool(r["evidence"] & set(ids[:5]))
        out["t5"] += hit
        was = bool(r["evidence"] & {mid for mid, _ in base(r)[:5]})
        out["won"] += hit and not was
        out["lost"] += was and not hit
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=("dev", "test"), default="dev")
    parser.add_argument("--set", choices=sorted(SETS), action="append")
    parser.add_argument("--save", type=Path, help="keep the records in this file")
    parser.add_argument("--load", type=Path, help="replay the rules on records kept before")
    parser.add_argument("--prf", action="store_true", help="also search with feedback words")
    args = parser.parse_args(argv)
    load = os.getloadavg()[0]
    wall, cpu = time.perf_counter(), time.process_time()
    every = rules()
    base = every["full text"]
    print(f"encoder {encoder_name()}, {args.split} half, load {load:.1f}")
    kept: dict[str, list[Record]] = pickle.loads(args.load.read_bytes()) if args.load else {}
    for name, units in SETS.items():
        if args.set and name not in args.set:
            continue
        if name not in kept:
            kept[name] = [
                r for sample, qs in units(args.split) for r in _records(sample, qs, args.prf)
            ]
            if args.save:
                args.save.write_bytes(pickle.dumps(kept))
        records = kept[name]
        groups = sorted({g for r in records for g in (r["group"], *r["groups"])})
        for group in ["all", *groups]:
            chosen = [r for r in records if group in ("all", r["group"], *r["groups"])]
            print(f"\n### {name} {args.split}, {group} (n={len(chosen)})\n")
            print("| rule | session R@1 | session R@5 | turn R@1 | turn R@5 | won | lost |")
            print("|---|---:|---:|---:|---:|---:|---:|")
            for label, rule in every.items():
                s = score(chosen, rule, base)
                n = max(s["n"], 1)
                print(
                    f"| {label} | {s['s1'] / n:.3f} | {s['s5'] / n:.3f} | {s['t1'] / n:.3f} "
                    f"| {s['t5'] / n:.3f} | {int(s['won'])} | {int(s['lost'])} |"
                )
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"\n{wall:.0f} s wall, {cpu:.0f} s CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
