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


def memdaily_file(path: Path) -> Path:
    def trajectory(tid: int, facts: list[str], question: str, targets: list[int]) -> dict:
        messages = [
            {"mid": mid, "message": text, "time": f"2024年04月0{tid + 1}日 周一 0{mid}:30"}
            for mid, text in enumerate(facts)
        ]
        qa = {"qid": 0, "question": question, "target_step_id": targets}
        return {"tid": tid, "message_list": messages, "question_list": [qa]}

    data = [
        trajectory(
            0,
            ["我将要参加金融科技论坛。", "", "金融科技论坛的地点是北京。"],
            "金融科技论坛的地点是哪里？",
            [2],
        ),
        trajectory(
            1, ["我的同事王芳喜欢爬山。", "王芳的生日是五月三日。"], "王芳的生日是哪天？", [1]
        ),
    ]
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def test_a_memdaily_file_becomes_one_users_dated_sessions(tmp_path: Path) -> None:
    path = memdaily_file(tmp_path / "01_simple_events.json")
    dev, dev_questions = public_sets.memdaily_sample(path, "dev")
    test, test_questions = public_sets.memdaily_sample(path, "test")
    # Both halves search the same history; the questions are split by trajectory.
    assert dev == test and len(dev["haystack_sessions"]) == 2
    assert dev["haystack_dates"][0] == "2024-04-01T00:30:00"
    # The empty message is dropped and the evidence still points at the right turn.
    assert dev_questions[0]["evidence"] == [("01_simple_events_000", 1)]
    assert test_questions[0]["evidence"] == [("01_simple_events_001", 1)]
    assert (dev_questions[0]["group"], dev_questions[0]["groups"]) == ("simple", ["events"])


def test_cjk_bigrams_cut_runs_and_keep_other_words() -> None:
    assert public_sets.cjk_bigrams("王芳 likes 爬山吗") == " 王芳  likes  爬山 山吗 "
    assert public_sets.cjk_bigrams("我").strip() == "我"


def test_the_cjk_baseline_finds_chinese_evidence(tmp_path: Path) -> None:
    path = memdaily_file(tmp_path / "01_simple_events.json")
    sample, questions = public_sets.memdaily_sample(path, "test")
    totals = public_sets.evaluate_sample(sample, questions, cjk=True)
    assert totals["all"][public_sets.BM25_BIGRAMS]["message@1"] == 1
    assert totals["all"][public_sets.OURS]["message@5"] == 1
