"""bench/public_sets.py: a REALTALK-shaped chat is read, split and measured; files are checked."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "bench" / "public_sets.py"
sys.path.insert(0, str(SCRIPT.parent))

import public_sets  # noqa: E402


def realtalk_chat(path: Path) -> Path:
    turns = [
        ("Ana", "Morning! Long day ahead."),
        ("bo", "Same, coffee first."),
        ("Ana", "I adopted a grey kitten called Pepper yesterday."),
        ("Bo", "Pepper! Send photos."),
    ]
    data = {
        "name": {"speaker_1": "Ana", "speaker_2": "Bo"},
        "session_1": [
            {"clean_text": text, "speaker": who, "dia_id": f"D1:{n}"}
            for n, (who, text) in enumerate(turns, start=1)
        ],
        "session_1_date_time": "29.12.2023, 22:42:04",
        "session_2": [
            {"clean_text": "The match was great", "speaker": "Bo", "dia_id": "D2:1"},
            {"clean_text": "", "speaker": "Ana", "dia_id": "D2:2"},  # an image only
            {"clean_text": "Which team won?", "speaker": "Ana", "dia_id": "D2:3"},
        ],
        "session_2_date_time": "02.01.2024, 10:00:00",
        "qa": [
            {"question": "What is the name of Ana's kitten?", "evidence": ["D1:3"], "category": 1},
            {"question": "Who asked which team won?", "evidence": ["D2:3"], "category": 3},
            {"question": "Unanswerable?", "evidence": ["D9:9"], "category": 2},
        ],
    }
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_a_realtalk_chat_becomes_a_dated_locomo_sample(tmp_path: Path) -> None:
    sample, questions = public_sets.realtalk_sample(realtalk_chat(tmp_path / "Chat_1_A_B.json"))
    conversation = sample["conversation"]
    assert conversation["session_1_date_time"] == "2023-12-29T22:42:04"
    assert [t["speaker"] for t in conversation["session_1"]] == ["Ana", "Bo", "Ana", "Bo"]
    # The empty turn is dropped and the evidence still points at the right turn.
    assert [q["evidence"] for q in questions] == [
        [("chat_1_a_b_session_1", 2)],
        [("chat_1_a_b_session_2", 1)],
    ]
    assert [q["group"] for q in questions] == ["fact", "inference"]


def test_the_measure_finds_the_evidence(tmp_path: Path) -> None:
    sample, questions = public_sets.realtalk_sample(realtalk_chat(tmp_path / "Chat_1_A_B.json"))
    totals = public_sets.evaluate_sample(sample, questions)
    ours = totals["all"][public_sets.OURS]
    assert ours["n"] == 2 and ours["message@5"] == 2 and ours["session@1"] == 2


def test_a_missing_or_changed_file_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(public_sets, "DATA", tmp_path)
    with pytest.raises(SystemExit, match="is missing: run"):
        public_sets.verify(public_sets.REALTALK)
    (tmp_path / "realtalk").mkdir()
    for name in public_sets.REALTALK["files"]:
        (tmp_path / "realtalk" / Path(name).name).write_text("[]", encoding="utf-8")
    with pytest.raises(SystemExit, match="is not the recorded"):
        public_sets.verify(public_sets.REALTALK)
