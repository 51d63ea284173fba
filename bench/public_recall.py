"""Recall of session search on a public conversational-memory benchmark file you supply.

The project ships no benchmark data (nothing is downloaded); point this at a
copy of LoCoMo (``locomo10.json``) or LongMemEval (``longmemeval_s.json``,
``longmemeval_m.json``, ``longmemeval_oracle.json``) and it reports, per
ranker, session and evidence-turn recall@1/5/10 exactly as
``bench_sessions_recall.py`` does on the project's own sets:

* each LoCoMo sample, and each LongMemEval instance, gets a fresh store holding
  only its own conversations, imported by ``hermes-memory sessions import``'s
  reader (speakers as names, sessions dated);
* LoCoMo questions are answered by their ``evidence`` turns (``D<n>:<k>``);
  LongMemEval questions by the turns marked ``has_answer`` (instances with
  none, such as abstention questions, are skipped and counted);
* rankers: ours (``SessionStore.search_messages``, full text only) and BM25
  over the OR of the question's words on a plain FTS5 index of the same
  messages; with ``--semantic``, also ours fused with the MiniLM encoder's
  nearest messages (every message is embedded first: 5-50 messages a second
  on two cores, by length, so LongMemEval-S takes many hours in full; use
  ``--limit``);
* then the ``session_search`` tool itself, with no summary model: how many
  questions have an evidence turn whole in its raw previews.

Usage: ``python bench/public_recall.py PATH [--limit N] [--semantic]`` (the
first N samples or instances). The table is printed, not written to the docs; the
script is not one of ``run_all.py``'s ``bench_*`` benchmarks, since it needs
a file the project does not ship.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import sys
import tempfile
from collections.abc import Iterable, Iterator
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
    evaluate,
    ours_ranker,
    plain_index,
    preview_tool,
)

from hermes_core.sessions import SessionStore  # noqa: E402
from hermes_core.sessions.datasets import dataset_layout, iter_json_array  # noqa: E402
from hermes_core.sessions.importer import read_jsonl  # noqa: E402

_DIA_ID = re.compile(r"D(\d+):(\d+)")

Question = dict[str, Any]


def locomo_units(samples: Iterable[dict[str, Any]]) -> Iterator[tuple[Any, list[Question]]]:
    """(sample, its questions with evidence as (session id, message index)) per sample."""
    for n, sample in enumerate(samples):
        sample_id = str(sample.get("sample_id") or f"sample_{n + 1}")
        questions = []
        for qa in sample.get("qa") or []:
            evidence = [
                (f"{sample_id}_session_{session}", int(turn) - 1)
                for item in qa.get("evidence") or []
                for session, turn in _DIA_ID.findall(str(item))
            ]
            if evidence and isinstance(qa.get("question"), str):
                questions.append(
                    {"q": qa["question"], "evidence": evidence, "group": qa.get("category")}
                )
        yield sample, questions


def longmemeval_units(instances: Iterable[dict[str, Any]]) -> Iterator[tuple[Any, list[Question]]]:
    """(instance, its question with the ``has_answer`` turns as evidence) per instance."""
    for instance in instances:
        evidence = [
            (str(session_id), k)
            for session_id, turns in zip(
                instance.get("haystack_session_ids") or [],
                instance.get("haystack_sessions") or [],
                strict=False,
            )
            for k, turn in enumerate(turns)
            if isinstance(turn, dict) and turn.get("has_answer")
        ]
        question = instance.get("question")
        usable = evidence and isinstance(question, str)
        group = instance.get("question_type")
        yield instance, [{"q": question, "evidence": evidence, "group": group}] if usable else []


def evaluate_unit(
    unit: Any, questions: list[Question], semantic: bool = False
) -> dict[str, dict[str, float]]:
    """Hits (not fractions) per ranker and metric for one sample or instance.

    Also ``_questions`` (those with an evidence turn that exists; evidence
    naming no turn of the file, as a few LoCoMo questions have, is left out
    and counted in ``_unknown``, the questions left with none in ``_dropped``)
    and ``_previews`` (those whose evidence is whole in ``session_search``'s
    raw previews).
    """
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        path = home / "unit.json"
        path.write_text(json.dumps([unit]), encoding="utf-8")
        with SessionStore(home / "state.db") as store:
            sessions = read_jsonl(path)
            store.import_sessions(sessions)
            stored = {s["id"]: store.get_messages(s["id"]) for s in sessions}
            turn_ids = {
                (sid, k): message["id"]
                for sid, messages in stored.items()
                for k, message in enumerate(messages)
            }
            contents = {m["id"]: m["content"] for messages in stored.values() for m in messages}
            session_of = {mid: sid for (sid, _), mid in turn_ids.items()}
            known = []
            unknown = dropped = 0
            for q in questions:
                evidence = [list(e) for e in dict.fromkeys(map(tuple, q["evidence"]))]
                found = [e for e in evidence if tuple(e) in turn_ids]
                unknown += len(evidence) - len(found)
                dropped += not found
                if found:
                    known.append({"q": q["q"], "evidence": found})
            rankers: dict[str, Ranker] = {
                BM25_OR: bm25_ranker(plain_index(store), "OR"),
                OURS: ours_ranker(store),
            }
            if semantic:
                rankers[OURS_SEMANTIC] = ours_ranker(store, semantic=True)
            hits: dict[str, dict[str, float]] = {
                name: {
                    metric: value * len(known)
                    for metric, value in evaluate(ranker, known, turn_ids, session_of)[0].items()
                }
                for name, ranker in rankers.items()
                if known
            }
        shown = _previews_with_evidence(home, known, turn_ids, contents, semantic)
    hits["_questions"] = {"n": float(len(known))}
    hits["_unknown"] = {"n": float(unknown)}
    hits["_dropped"] = {"n": float(dropped)}
    hits["_previews"] = {"n": float(shown)}
    return hits


def _previews_with_evidence(
    home: Path,
    questions: list[Question],
    turn_ids: dict[tuple[str, int], int],
    contents: dict[int, str],
    semantic: bool = False,
) -> int:
    """Questions with an evidence turn whole in ``session_search``'s raw previews."""
    tool = preview_tool(home, semantic)
    try:
        found = 0
        for question in questions:
            answer = json.loads(tool({"query": question["q"]}))
            shown = "\n".join(result.get("summary", "") for result in answer.get("results", []))
            found += any(
                contents.get(turn_ids[tuple(evidence)], "\0") in shown
                for evidence in question["evidence"]
            )
        return found
    finally:
        tool.close()


def read_units(path: Path, limit: int | None) -> tuple[str, Iterator[tuple[Any, list[Question]]]]:
    """(layout, its units with their questions), the file read one sample or instance at a time.

    A published file is large (``longmemeval_m.json`` is about 2.7 GB), so an
    array is parsed element by element and only the first *limit* are read.
    """
    with path.open(encoding="utf-8-sig") as stream:
        is_array = stream.read(1 << 16).lstrip().startswith("[")
    if is_array:
        items: Iterator[Any] = _array_items(path)
    else:
        items = iter([json.loads(path.read_text(encoding="utf-8-sig"))])
    items = itertools.islice(items, limit) if limit else items
    first = next(items, None)
    layout = dataset_layout(first)
    if layout is None:
        raise SystemExit(f"{path} is neither a LoCoMo nor a LongMemEval file.")
    items = _same_layout(path, layout, itertools.chain([first], items))
    units = locomo_units(items) if layout == "LoCoMo" else longmemeval_units(items)
    return layout, units


def _array_items(path: Path) -> Iterator[Any]:
    with path.open(encoding="utf-8-sig") as stream:
        yield from iter_json_array(stream)


def _same_layout(path: Path, layout: str, items: Iterable[Any]) -> Iterator[dict[str, Any]]:
    for n, item in enumerate(items, start=1):
        if dataset_layout(item) != layout:
            raise SystemExit(f"{path}: item #{n} is not a {layout} item like the first.")
        yield item


def run(
    path: Path, limit: int | None, semantic: bool = False
) -> tuple[str, int, int, int, dict[str, dict[str, float]], tuple[int, int]]:
    """(layout, questions, skipped units, evidence shown in previews, summed hits per ranker,
    (evidence ids naming no turn, questions skipped for having only such evidence))."""
    layout, units = read_units(path, limit)
    totals: dict[str, dict[str, float]] = {}
    asked = skipped = previews = unknown = dropped = 0
    for unit, questions in units:
        if not questions:
            skipped += 1
            continue
        hits = evaluate_unit(unit, questions, semantic)
        asked += int(hits.pop("_questions")["n"])
        previews += int(hits.pop("_previews")["n"])
        unknown += int(hits.pop("_unknown")["n"])
        dropped += int(hits.pop("_dropped")["n"])
        for ranker, metrics in hits.items():
            for metric, value in metrics.items():
                totals.setdefault(ranker, {}).setdefault(metric, 0.0)
                totals[ranker][metric] += value
    return layout, asked, skipped, previews, totals, (unknown, dropped)


def table(asked: int, totals: dict[str, dict[str, float]]) -> list[str]:
    """The recall table (fractions of *asked*)."""
    columns = [f"{level} R@{k}" for level in ("session", "message") for k in KS]
    lines = ["| ranker | " + " | ".join(columns) + " |", "|---|" + "---:|" * len(columns)]
    for ranker in (BM25_OR, OURS, OURS_SEMANTIC):
        if ranker not in totals:
            continue
        metrics = totals[ranker]
        values = [
            metrics.get(f"{level}@{k}", 0.0) / max(asked, 1)
            for level in ("session", "message")
            for k in KS
        ]
        lines.append(f"| {ranker} | " + " | ".join(f"{v:.2f}" for v in values) + " |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", type=Path, help="a LoCoMo or LongMemEval JSON file")
    parser.add_argument("--limit", type=int, default=None, help="only the first N samples")
    parser.add_argument(
        "--semantic",
        action="store_true",
        help="also rank with the MiniLM encoder fused in (needs hermes-memory-core[semantic])",
    )
    args = parser.parse_args(argv)
    layout, asked, skipped, previews, totals, (unknown, dropped) = run(
        args.path, args.limit, args.semantic
    )
    print(f"{layout}: {asked} questions (units without usable evidence skipped: {skipped})")
    if unknown:
        print(
            f"Evidence naming no turn of the file: {unknown} left out "
            f"({dropped} questions with no other evidence skipped)"
        )
    print()
    print("\n".join(table(asked, totals)))
    print(
        f"\nEvidence turn whole in session_search's raw previews (no summary model): "
        f"{previews}/{asked}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
