"""bench/public_recall.py: recall on a LoCoMo or LongMemEval file, from the command line."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest

from hermes_core.embeddings import encoder_name
from hermes_core.sessions.semantic import semantic_available

SCRIPT = Path(__file__).resolve().parent.parent / "bench" / "public_recall.py"


def recall(path: Path, *args: str) -> tuple[str, dict[str, list[float]], str]:
    """(first line, ranker -> its six recall figures, last line) of the script's report."""
    result = subprocess.run(
        [sys.executable, str(SCRIPT), str(path), *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    rows = {
        line.split("|")[1].strip(): [float(cell) for cell in line.split("|")[2:-1]]
        for line in lines
        if line.startswith("| ") and not line.startswith("| ranker")
    }
    return lines[0], rows, lines[-1]


def test_locomo_evidence_turns_are_found(tmp_path: Path) -> None:
    turns = [
        ("Ana", "I finally went to my first pottery lesson."),
        ("Ben", "No way! What did you make?"),
        ("Ana", "A very lopsided bowl."),
        ("Ben", "I have been training for the Riverside half marathon."),
    ]
    sample: dict[str, Any] = {
        "sample_id": "conv-7",
        "conversation": {
            "speaker_a": "Ana",
            "speaker_b": "Ben",
            "session_1_date_time": "2:10 pm on 9 May, 2023",
            "session_1": [
                {"speaker": s, "dia_id": f"D1:{k}", "text": t} for k, (s, t) in enumerate(turns, 1)
            ],
            "session_2_date_time": "2:00 pm on 9 June, 2023",
            "session_2": [
                {"speaker": "Ben", "dia_id": "D2:1", "text": "My knee hurts after the long run."}
            ],
        },
        "qa": [
            {"question": "What did Ana make in her pottery lesson?", "evidence": ["D1:3"]},
            {"question": "Which race was Ben training for?", "evidence": ["D1:4"], "category": 2},
            {"question": "No evidence here", "answer": "n/a"},
        ],
    }
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([sample]), encoding="utf-8")
    header, rows, previews = recall(path)
    assert header.startswith("LoCoMo: 2 questions")
    assert previews.endswith("raw previews (no summary model): 2/2")
    ours = rows["ours (`search_messages`)"]
    assert ours[:3] == [1.0, 1.0, 1.0]  # session R@1/5/10
    # "A very lopsided bowl." shares no word with its question, yet is in the first five
    assert ours[4:] == [1.0, 1.0]
    assert all(o >= b for o, b in zip(ours, rows["BM25, OR of all words"], strict=True))
    assert set(rows) == {"BM25, OR of all words", "ours (`search_messages`)"}


def longmemeval_instance(question: str, haystack: list[list[dict[str, Any]]]) -> dict[str, Any]:
    """One LongMemEval instance: *question* over *haystack*'s sessions (s1, s2, …), dated."""
    return {
        "question_id": "q1",
        "question_type": "single-session-user",
        "question": question,
        "haystack_session_ids": [f"s{n}" for n in range(1, len(haystack) + 1)],
        "haystack_dates": [
            (date(2023, 5, 20) + timedelta(days=n)).strftime("%Y/%m/%d (%a) 02:21")
            for n in range(len(haystack))
        ],
        "haystack_sessions": haystack,
    }


def test_longmemeval_has_answer_turns_are_the_evidence(tmp_path: Path) -> None:
    haystack = [
        [
            {"role": "user", "content": "I adopted a cat and named her Miso.", "has_answer": True},
            {"role": "assistant", "content": "Miso is a lovely name!"},
        ],
        [{"role": "user", "content": "How do I keep sourdough starter alive?"}],
    ]
    instance = longmemeval_instance("What did I name my cat?", haystack)
    abstention = {**instance, "question_id": "q2_abs", "haystack_sessions": [[], []]}
    path = tmp_path / "longmemeval.json"
    path.write_text(json.dumps([instance, abstention]), encoding="utf-8")
    header, rows, previews = recall(path)
    assert header == "LongMemEval: 1 questions (units without usable evidence skipped: 1)"
    assert previews.endswith(": 1/1")
    assert rows["ours (`search_messages`)"] == [1.0] * 6


def test_locomo_evidence_as_the_real_file_writes_it(tmp_path: Path) -> None:
    # locomo10.json has evidence strings naming two turns, evidence naming a turn or
    # session that does not exist, questions without evidence, and category 5
    # (adversarial) questions with "adversarial_answer" instead of "answer".
    turns = [
        ("Ana", "I finally went to my first pottery lesson."),
        ("Ben", "No way! What did you make?"),
        ("Ana", "A very lopsided bowl from the pottery lesson."),
    ]
    sample: dict[str, Any] = {
        "sample_id": "conv-9",
        "conversation": {
            "speaker_a": "Ana",
            "speaker_b": "Ben",
            "session_1_date_time": "2:10 pm on 9 May, 2023",
            "session_1": [
                {"speaker": s, "dia_id": f"D1:{k}", "text": t} for k, (s, t) in enumerate(turns, 1)
            ],
            "session_2_date_time": "2:00 pm on 9 June, 2023",
            "session_2": [
                {
                    "speaker": "Ben",
                    "dia_id": "D2:1",
                    "text": "My knee hurts after the long run.",
                    "img_url": ["https://example.invalid/knee.jpg"],
                    "blip_caption": "a photo of a knee brace",
                }
            ],
            "session_3_date_time": "3:00 pm on 1 July, 2023",
        },
        "qa": [
            {"question": "What did Ana make?", "evidence": ["D1:3; D2:1"], "category": 1},
            {"question": "Whose knee hurts?", "evidence": ["D2:1", "D2:9"], "category": 2},
            {"question": "Where is the lake?", "evidence": ["D7:1"], "category": 4},
            {"question": "What pottery did Ben make?", "answer": "n/a", "category": 3},
            {
                "question": "What did Ben make in the pottery lesson?",
                "adversarial_answer": "a bowl",
                "evidence": ["D1:3"],
                "category": 5,
            },
        ],
    }
    path = tmp_path / "locomo10.json"
    path.write_text(json.dumps([sample]), encoding="utf-8")
    result = subprocess.run(
        [sys.executable, str(SCRIPT), str(path)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    # the knee question keeps its one real evidence turn; the lake question has none
    assert lines[0] == "LoCoMo: 3 questions (units without usable evidence skipped: 0)"
    assert lines[1] == (
        "Evidence naming no turn of the file: 2 left out (1 questions with no other evidence "
        "skipped)"
    )


def test_limit_reads_only_the_first_instances(tmp_path: Path) -> None:
    # longmemeval_m.json is 2.7 GB: --limit N parses the first N instances, not the file
    instance = {
        "question_id": "q1",
        "question_type": "single-session-user",
        "question": "What did I name my cat?",
        "question_date": "2023/05/30 (Tue) 23:40",
        "answer": "Miso",
        "haystack_session_ids": ["s1"],
        "haystack_dates": ["2023/05/20 (Sat) 02:21"],
        "haystack_sessions": [
            [{"role": "user", "content": "I named my cat Miso.", "has_answer": True}]
        ],
        "answer_session_ids": ["s1"],
    }
    path = tmp_path / "longmemeval_m.json"
    path.write_text("[" + json.dumps(instance) + ', {"question_id": "q2", "haystack_ses', "utf-8")
    header, rows, _ = recall(path, "--limit", "1")
    assert header.startswith("LongMemEval: 1 questions")
    assert rows["ours (`search_messages`)"] == [1.0] * 6


@pytest.mark.skipif(not semantic_available(), reason="the semantic extra is not installed")
def test_semantic_ranks_a_paraphrased_question(tmp_path: Path) -> None:
    semantic_row = f"ours + semantic ({encoder_name()}, fused)"  # named by the encoder
    haystack = [
        [
            {
                "role": "user",
                "content": "We brought home a rescue tabby and called her Miso.",
                "has_answer": True,
            }
        ],
        [{"role": "user", "content": "Which flour suits a sourdough loaf?"}],
        [{"role": "user", "content": "My bike chain keeps slipping on hills."}],
    ]
    instance = longmemeval_instance("What did we name the cat we adopted?", haystack)
    path = tmp_path / "longmemeval.json"
    path.write_text(json.dumps([instance]), encoding="utf-8")
    _, rows, _ = recall(path)
    assert semantic_row not in rows
    _, rows, _ = recall(path, "--semantic")
    assert rows["ours (`search_messages`)"][0] == 0.0  # no word of the question was said
    assert rows[semantic_row][0] == 1.0
