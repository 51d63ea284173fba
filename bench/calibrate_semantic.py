"""When should meaning join a question's full-text hits? Measured on the public sets' dev halves.

For every question of ``bench/public_sets.py``'s sets (dev half unless told), this
records the full-text ranking ``search_messages`` makes (with what it knows of it:
how much of the question its best conversation covers, the sessions it ranks first),
whether the question is long (ranked message first) and the configured encoder's 400
nearest messages (asked of the index directly, so that rules meaning now stays out of
can still be replayed), then replays decision rules on them as
``hermes_core.sessions.search.with_meaning`` applies them: full text alone, the rules
before (long passages voted on below their first hit; the rule of 2026-12-03, which voted
on yes-or-no questions and short passages as on any question; that of the evening, passages
of any length literal and a yes-or-no question voted on below its first hit and never fused),
the rule now (the evening's, with every question's first full-text hit kept in place: meaning
votes and fuses below it), and variations of each part (how many first hits are kept, the
vote's weight on short questions and on those asking *when*, fusing or not where the words
find little, CJK voted on). The neighbours are the index's, so named messages of little text
(``neighbours.near_by_content``) are already left out of every rule. Printed per set, kind of
question (short, long of one sentence, passage, yes or no) and category: session and turn
recall@1/5/10, each with how many questions the rule turned from miss to hit (won, ``+``)
and from hit to miss (lost, ``-``) against full text, and the sign test's one-sided p of the
turn R@5 wins.

Usage::

    python bench/calibrate_semantic.py [--split dev|test] [--set NAME] [--save F | --load F]

It changes nothing; the rule chosen from it lives in
``hermes_core.sessions.search`` (``searched_by_meaning``, ``asks_yes_or_no``, ``with_meaning``).
"""

from __future__ import annotations

import argparse
import math
import os
import pickle
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
from hermes_core.sessions.facade import _CJK, SEMANTIC_MAX_CJK_SHARE  # noqa: E402
from hermes_core.sessions.fetch import SearchFilters  # noqa: E402
from hermes_core.sessions.importer import read_jsonl  # noqa: E402
from hermes_core.sessions.query import parse_query  # noqa: E402
from hermes_core.sessions.question import is_passage, message_first, plan_query  # noqa: E402
from hermes_core.sessions.search import (  # noqa: E402
    FUSION_K,
    KEPT_BEFORE_MEANING,
    MEANING_BELOW_SHARE,
    MEANING_WEIGHT,
    MEANING_WEIGHT_WHEN,
    NEAREST_CANDIDATES,
    asks_yes_or_no,
    meaning_weight,
    search_messages,
)

DEPTH = 50
"""Hits ranked per question (the tool's pool)."""
NEIGHBOURS = 400
"""Nearest messages read per question (their ranks weigh the agreement rules)."""

Record = dict[str, Any]


def _records(sample: dict[str, Any], questions: list[Question]) -> list[Record]:
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
            index = store.semantic_index(force=True)
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
                # The neighbours as the search reads them: the vote weighs places among all
                # messages, the fusion keeps those of the first NEAREST_CANDIDATES that pass
                # its filters.
                # Asked of the index for every question and keywords, also those the store
                # keeps literal (passages, yes-or-no questions, mostly CJK), so that the rules
                # before can be replayed; ``meaning`` says whether the store searches it by
                # meaning now.
                parsed = parse_query(question["q"])
                plan = plan_query(parsed)
                long = message_first(plan)
                asked = index is not None and plan.mode in ("question", "keywords")
                unfiltered = index.nearest(store._read, question["q"], NEIGHBOURS) if asked else []
                bound = first_id[before] if before else None
                out.append(
                    {
                        "q": question["q"],
                        "yes_no": asks_yes_or_no(question["q"]),
                        "group": question["group"],
                        "groups": question.get("groups", ()),
                        "evidence": evidence,
                        "wanted": {session_of[mid] for mid in evidence},
                        "lexical": explain.get("lexical", []),
                        "share": explain.get("share", 0.0),
                        "first": explain.get("first", ()),
                        "long": long,
                        "weight": meaning_weight(parsed, plan),
                        "passage": is_passage(question["q"]),
                        "neighbours": [(mid, session_of[mid]) for mid in unfiltered],
                        "bound": bound,
                    }
                )
    return out


Rule = Callable[[Record], list[tuple[int, str]]]


def mostly_cjk(text: str) -> bool:
    """Whether the store keeps *text* literal for its CJK letters (``_meaning_applies``)."""
    letters = [ch for ch in text if ch.isalnum()]
    return len(_CJK.findall(text)) > SEMANTIC_MAX_CJK_SHARE * len(letters)


def _fused(r: Record, kept: int = 0) -> list[tuple[int, str]]:
    """The first *kept* full-text hits, then reciprocal rank fusion of the others with the
    first neighbours that pass the search's filters (``search._fused``)."""
    bound = r["bound"]
    head, lexical = list(r["lexical"][:kept]), list(r["lexical"][kept:])
    held = {mid for mid, _ in head}
    semantic = [
        row
        for row in r["neighbours"][:NEAREST_CANDIDATES]
        if (bound is None or row[0] < bound) and row[0] not in held
    ]
    if not semantic:
        return list(r["lexical"])
    score: dict[tuple[int, str], float] = {}
    order: dict[tuple[int, str], int] = {}
    for ranking in (lexical, semantic):
        for rank, row in enumerate(ranking):
            score[row] = score.get(row, 0.0) + 1.0 / (FUSION_K + rank + 1)
            order.setdefault(row, len(order))
    ranked = sorted(
        score, key=lambda row: (*(row[1] not in t for t in r["first"]), -score[row], order[row])
    )
    return head + ranked[: DEPTH - kept]


def _voted(r: Record, weight: float, kept: int = 0) -> list[tuple[int, str]]:
    """The full-text hits after their first *kept*, reordered by meaning's vote
    (``search._agreeing``): places among all messages, nothing added."""
    lexical = list(r["lexical"])
    place = {mid: n for n, (mid, _) in enumerate(r["neighbours"])}
    tail = lexical[kept:]
    score = {
        row: 1.0 / (FUSION_K + rank + 1)
        + (weight / (FUSION_K + place[row[0]] + 1) if row[0] in place else 0.0)
        for rank, row in enumerate(tail)
    }
    order = {row: n for n, row in enumerate(tail)}
    tail.sort(key=lambda row: (*(row[1] not in t for t in r["first"]), -score[row], order[row]))
    return lexical[:kept] + tail


def meaning_rule(
    short_weight: float | None = None,
    when_weight: float = MEANING_WEIGHT_WHEN,
    below: float = MEANING_BELOW_SHARE,
    passage_kept: int | None = None,
    long_kept: int | None = KEPT_BEFORE_MEANING,
    long_weight: float = MEANING_WEIGHT,
    yes_no: str = "below the first",
    short_passages: bool = False,
    cjk: bool = False,
    kept: int = KEPT_BEFORE_MEANING,
) -> Rule:
    """A short question: below its first *kept* hits, fused below coverage *below*, else voted
    on with *short_weight* (by default its weight now, ``search.meaning_weight``; one asking
    *when*: *when_weight*); a
    long one voted on with *long_weight* below its first *long_kept* hits (a long passage: its
    first *passage_kept*), or literal where that is None. A short yes-or-no question is voted
    on below its first hit and never fused (*yes_no* ``"below the first"``), literal
    (``"literal"``) or as any other (``"as others"``); a short passage is literal unless
    *short_passages*; a mostly-CJK question is literal unless *cjk*. The defaults are the
    rule now."""

    def rule(r: Record) -> list[tuple[int, str]]:
        if not r["neighbours"] or (mostly_cjk(r["q"]) and not cjk):  # not searched by meaning
            return list(r["lexical"])
        if r["yes_no"] and yes_no == "literal":
            return list(r["lexical"])
        if r["long"]:
            held = passage_kept if r["passage"] else long_kept
            return list(r["lexical"]) if held is None else _voted(r, long_weight, held)
        if r["passage"] and not short_passages:
            return list(r["lexical"])
        if r["yes_no"] and yes_no == "below the first":
            return _voted(r, MEANING_WEIGHT, KEPT_BEFORE_MEANING)
        if r["share"] < below:
            return _fused(r, kept)
        if short_weight is not None:
            return _voted(r, short_weight, kept)
        asks_when = r["weight"] == MEANING_WEIGHT_WHEN
        return _voted(r, when_weight if asks_when else MEANING_WEIGHT, kept)

    return rule


def _top_of_first_conversation(r: Record) -> list[tuple[int, str]]:
    """The rule of 2026-12-03 (meaning over a short question's every hit), then its first
    conversation's best message by that ranking first and the rest in its order: session R@1
    is full text's, turn R@1 may change."""
    ranked = meaning_rule(kept=0)(r)
    if not r["lexical"] or ranked == list(r["lexical"]):
        return ranked
    sid = r["lexical"][0][1]
    top = next(row for row in ranked if row[1] == sid)
    return [top, *(row for row in ranked if row != top)]


def rules() -> dict[str, Rule]:
    before: dict[str, Any] = {"yes_no": "as others", "short_passages": True, "kept": 0}
    evening: dict[str, Any] = {"kept": 0}
    return {
        "full text": lambda r: list(r["lexical"]),
        "before: long voted on below their first hit": meaning_rule(passage_kept=1, **before),
        "passages voted on below their first 3": meaning_rule(passage_kept=3, **before),
        "every long question literal": meaning_rule(long_kept=None, **before),
        "before today: long passages literal": meaning_rule(**before),
        "before today, when voted x0.1": meaning_rule(when_weight=MEANING_WEIGHT, **before),
        "before today, short voted x0.15": meaning_rule(short_weight=0.15, **before),
        "before today, short passages literal": meaning_rule(yes_no="as others", kept=0),
        "before today, yes-or-no literal": meaning_rule(
            yes_no="literal", short_passages=True, kept=0
        ),
        "2026-12-03 evening: passages literal, yes-or-no below the first": meaning_rule(**evening),
        "evening, its first conversation's best first": _top_of_first_conversation,
        "now: every question below its first hit": meaning_rule(),
        "now, below the first 2 hits": meaning_rule(kept=2),
        "now, yes-or-no fused too": meaning_rule(yes_no="as others"),
        "now, yes-or-no literal": meaning_rule(yes_no="literal"),
        "now, short never fused": meaning_rule(below=0.0),
        "now, when voted x0.1": meaning_rule(when_weight=MEANING_WEIGHT),
        "now, when voted x0.3": meaning_rule(when_weight=0.3),
        "now, short voted x0.15": meaning_rule(short_weight=0.15),
        "now, mostly-CJK questions voted on too": meaning_rule(cjk=True),
        "now, mostly-CJK questions voted on, never fused": meaning_rule(cjk=True, below=0.0),
    }


def _kind(r: Record) -> str:
    """The question's class for the rule: short, long of one sentence, or a passage."""
    if r["passage"]:
        return "passage"
    return "long, one sentence" if r["long"] else "short"


METRICS = ("session R@1", "session R@5", "session R@10", "turn R@1", "turn R@5", "turn R@10")


def _hits(r: Record, ranked: Sequence[tuple[int, str]]) -> tuple[bool, ...]:
    ids = [mid for mid, _ in ranked]
    order = list(dict.fromkeys(sid for _, sid in ranked))
    wanted, evidence = r["wanted"], r["evidence"]
    return tuple(bool(wanted & set(order[:k])) for k in (1, 5, 10)) + tuple(
        bool(evidence & set(ids[:k])) for k in (1, 5, 10)
    )


def sign_p(won: int, lost: int) -> float:
    """One-sided sign test: the chance of *won* or more wins of ``won + lost`` coin tosses."""
    n = won + lost
    return sum(math.comb(n, i) for i in range(won, n + 1)) / 2**n if n else 1.0


def score(records: Sequence[Record], rule: Rule, base: Rule) -> list[tuple[float, int, int]]:
    """Per metric: the recall, the questions won and those lost against *base*."""
    out = [[0, 0, 0] for _ in METRICS]
    for r in records:
        now, was = _hits(r, rule(r)), _hits(r, base(r))
        for cell, hit, had in zip(out, now, was, strict=True):
            cell[0] += hit
            cell[1] += hit and not had
            cell[2] += had and not hit
    n = max(len(records), 1)
    return [(hits / n, won, lost) for hits, won, lost in out]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=("dev", "test"), default="dev")
    parser.add_argument("--set", choices=sorted(SETS), action="append")
    parser.add_argument("--save", type=Path, help="keep the records in this file")
    parser.add_argument("--load", type=Path, help="replay the rules on records kept before")
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
            kept[name] = [r for sample, qs in units(args.split) for r in _records(sample, qs)]
            if args.save:
                args.save.write_bytes(pickle.dumps(kept))
        records = kept[name]
        groups = sorted({g for r in records for g in (r["group"], *r["groups"])})
        kinds = ["short", "long, one sentence", "passage", "yes or no"]
        for group in ["all", *kinds, *groups]:
            chosen = [
                r
                for r in records
                if group in ("all", r["group"], *r["groups"], _kind(r))
                or (group == "yes or no" and r["yes_no"])
            ]
            if not chosen:
                continue
            print(f"\n### {name} {args.split}, {group} (n={len(chosen)})\n")
            print("| rule | " + " | ".join(METRICS) + " | p (turn R@5) |")
            print("|---|" + "---:|" * (len(METRICS) + 1))
            for label, rule in every.items():
                cells = score(chosen, rule, base)
                shown = " | ".join(f"{v:.3f} +{won} -{lost}" for v, won, lost in cells)
                turn5 = cells[METRICS.index("turn R@5")]
                print(f"| {label} | {shown} | {sign_p(turn5[1], turn5[2]):.3f} |")
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"\n{wall:.0f} s wall, {cpu:.0f} s CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
