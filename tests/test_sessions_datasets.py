"""``sessions import`` of LoCoMo and LongMemEval files, as they are published."""

from __future__ import annotations

import io
import json
import tracemalloc
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core.cli import cli
from hermes_core.errors import SessionImportError
from hermes_core.sessions import SessionStore, datasets
from hermes_core.sessions.datasets import iter_json_array
from hermes_core.sessions.importer import VALID_ROLES, read_jsonl


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["sessions", *args])
    return result.exit_code, result.output


def locomo_sample(sample_id: str = "conv-1") -> dict[str, Any]:
    return {
        "sample_id": sample_id,
        "conversation": {
            "speaker_a": "Ines",
            "speaker_b": "Dora",
            "session_1_date_time": "2:10 pm on 9 May, 2023",
            "session_1": [
                {
                    "speaker": "Ines",
                    "dia_id": "D1:1",
                    "text": "Hey Dora! I went to a pottery class yesterday.",
                },
                {"speaker": "Dora", "dia_id": "D1:2", "text": "Fun! How did it go?"},
                {
                    "speaker": "Ines",
                    "dia_id": "D1:3",
                    "text": "It was messy, my bowl collapsed twice.",
                },
            ],
            "session_2_date_time": "6:40 pm on 26 May, 2023",
            "session_2": [
                {
                    "speaker": "Dora",
                    "dia_id": "D2:1",
                    "text": "Look at my new watercolour!",
                    "img_url": ["https://example.invalid/p.jpg"],
                    "blip_caption": "a watercolour of a harbour at dawn",
                },
                {"speaker": "Ines", "dia_id": "D2:2", "text": "Gorgeous colours."},
            ],
        },
        "qa": [{"question": "What did Dora paint?", "evidence": ["D2:1"], "category": 1}],
    }


def write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_locomo_sessions_come_dated_with_speaker_names(tmp_path: Path, hermes_home: Path) -> None:
    source = write(tmp_path / "locomo10.json", [locomo_sample(), locomo_sample("conv-2")])
    code, out = run("import", str(source))
    assert code == 0, out
    assert "Imported 10 messages in 4 sessions" in out
    with SessionStore(hermes_home / "state.db", read_only=True) as store:
        session = store.get_session("conv-1_session_1")
        assert session is not None
        assert session["title"] == "conv-1: Ines and Dora, session 1"
        assert session["started_at"] == datetime(2023, 5, 9, 14, 10).timestamp()
        first = store.get_messages("conv-1_session_1")
        # D1:k is message k-1; the first speaker is the user, the second the assistant
        assert [(m["role"], m["name"]) for m in first] == [
            ("user", "Ines"),
            ("assistant", "Dora"),
            ("user", "Ines"),
        ]
        painted = store.get_messages("conv-2_session_2")[0]
        assert painted["content"] == (
            "Look at my new watercolour! [shares an image: a watercolour of a harbour at dawn]"
        )
        hits = store.search_messages("What did Dora paint?", session_ids=["conv-1_session_2"])
        assert hits[0]["id"] == store.get_messages("conv-1_session_2")[0]["id"]


def test_longmemeval_haystacks_are_imported_once_each(tmp_path: Path, hermes_home: Path) -> None:
    shared = [
        {"role": "user", "content": "I adopted a cat named Miso.", "has_answer": True},
        {"role": "assistant", "content": "Congratulations on Miso!"},
    ]
    other = [{"role": "user", "content": "Any tips for sourdough?"}]
    instances = [
        {
            "question_id": "q1",
            "question": "What is my cat's name?",
            "question_date": "2023/06/01 (Thu) 10:00",
            "haystack_session_ids": ["s_cat", "s_bread"],
            "haystack_dates": ["2023/05/20 (Sat) 02:21", "2023/05/21 (Sun) 09:00"],
            "haystack_sessions": [shared, other],
        },
        {
            "question_id": "q2",
            "haystack_session_ids": ["s_cat"],
            "haystack_dates": ["2023/05/20 (Sat) 02:21"],
            "haystack_sessions": [shared],
        },
    ]
    code, out = run("import", str(write(tmp_path / "longmemeval_s.json", instances)))
    assert code == 0, out
    with SessionStore(hermes_home / "state.db", read_only=True) as store:
        assert sorted(s["id"] for s in store.list_sessions()) == ["s_bread", "s_cat"]
        cat = store.get_messages("s_cat")
        assert [m["content"] for m in cat] == [shared[0]["content"], shared[1]["content"]]
        assert cat[0]["timestamp"] == datetime(2023, 5, 20, 2, 21).timestamp()
        assert store.search_messages("What is my cat's name?")[0]["session_id"] == "s_cat"


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (
            [
                {
                    "sample_id": "c9",
                    "conversation": {
                        "speaker_a": "A",
                        "speaker_b": "B",
                        "session_1": [{"speaker": "Zed", "text": "hi"}],
                    },
                }
            ],
            "c9, session_1, turn 1: needs a 'speaker' (A or B)",
        ),
        (
            [{"sample_id": "c9", "conversation": {"speaker_a": "A", "session_1": []}}],
            "speaker_a and speaker_b must be names",
        ),
        (
            [{"question_id": "q7", "haystack_sessions": [[]], "haystack_session_ids": []}],
            "q7: haystack_sessions, haystack_session_ids and haystack_dates",
        ),
        (
            [
                {
                    "haystack_sessions": [[{"role": "narrator", "content": "x"}]],
                    "haystack_session_ids": ["s1"],
                    "haystack_dates": ["2023/05/20 (Sat) 02:21"],
                }
            ],
            'session s1: "role" must be one of',
        ),
        ([{"some": "thing"}], "not a LoCoMo or LongMemEval file"),
    ],
)
def test_malformed_benchmark_files_are_named_and_write_nothing(
    tmp_path: Path, hermes_home: Path, data: Any, problem: str
) -> None:
    code, out = run("import", str(write(tmp_path / "bench.json", data)))
    assert code != 0 and problem in out and "Traceback" not in out
    assert (
        not (hermes_home / "state.db").exists()
        or not SessionStore(hermes_home / "state.db", read_only=True).list_sessions()
    )


def test_longmemeval_sessions_without_ids_are_named_after_their_instance(
    tmp_path: Path, hermes_home: Path
) -> None:
    instance = {"question_id": "q9", "haystack_sessions": [[{"role": "user", "content": "hi"}]]}
    code, out = run("import", str(write(tmp_path / "lme.json", [instance])))
    assert code == 0, out
    with SessionStore(hermes_home / "state.db", read_only=True) as store:
        assert [s["id"] for s in store.list_sessions()] == ["q9_session_1"]


def test_benchmark_files_take_no_session_id(tmp_path: Path, hermes_home: Path) -> None:
    source = write(tmp_path / "locomo.json", locomo_sample())
    code, out = run("import", str(source), "--session-id", "mine")
    assert code != 0 and "without --session-id" in out
    code, out = run("import", str(source))  # a single sample object works too
    assert code == 0 and "in 2 sessions" in out


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "conversation",
                    "speaker_a",
                    "speaker_b",
                    "session_1",
                    "session_1_date_time",
                    "speaker",
                    "text",
                    "blip_caption",
                    "sample_id",
                    "haystack_sessions",
                    "haystack_session_ids",
                    "haystack_dates",
                    "role",
                    "content",
                    "messages",
                ]
            ),
            children,
            max_size=5,
        )
    ),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None)
@given(data=JSON)
def test_any_json_document_imports_or_fails_with_a_clear_error(
    tmp_path_factory: pytest.TempPathFactory, data: Any
) -> None:
    path = tmp_path_factory.mktemp("fuzz") / "bench.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    try:
        sessions = read_jsonl(path)
    except SessionImportError as exc:
        assert str(path) in str(exc)
        return
    for session in sessions:
        assert session["messages"] and all(m["role"] in VALID_ROLES for m in session["messages"])


@pytest.mark.parametrize(
    "deep", ["[" * 100_000 + "]" * 100_000, '{"a":' * 100_000 + "1" + "}" * 100_000]
)
def test_json_nested_too_deeply_is_a_clear_error(tmp_path: Path, deep: str) -> None:
    path = tmp_path / "deep.json"
    path.write_text(deep + "\n", encoding="utf-8")
    with pytest.raises(SessionImportError, match="line 1: JSON nested too deeply"):
        read_jsonl(path)


ARRAYS = [
    "[]",
    " [ ] \n",
    "\ufeff[1]",
    '[12345, -1.5e10, "a,]b\\"", {"x": [1, 2], "y": "}"}, true, null, 67890]',
    '[\n  {"a": 1} ,\n\t[ ]  ,"x"\n]\n',
    "[" + ",".join(str(n) for n in range(300)) + "]",
]


@pytest.mark.parametrize("text", ARRAYS)
@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 4096])
def test_json_arrays_are_read_element_by_element(text: str, chunk: int) -> None:
    # numbers, strings and objects split across reads come out whole
    assert list(iter_json_array(io.StringIO(text), chunk)) == json.loads(text.lstrip("\ufeff"))


@pytest.mark.parametrize("text", ["", "{}", "[", "[1,]", "[1 2]", "[1] x", '["a]', "[1,,2]"])
@pytest.mark.parametrize("chunk", [1, 3, 4096])
def test_broken_json_arrays_raise(text: str, chunk: int) -> None:
    with pytest.raises(ValueError):
        list(iter_json_array(io.StringIO(text), chunk))


def test_a_large_benchmark_file_is_read_in_the_memory_of_its_distinct_sessions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As in longmemeval_s.json (265 MB), most haystack sessions recur in many instances:
    # neither the file's text nor a parsed copy of it is held while reading.
    monkeypatch.setattr(datasets, "_CHUNK_CHARS", 4096)
    shared = [
        [{"role": "user", "content": f"Session {k}: " + "tell me about sourdough " * 40}]
        for k in range(3)
    ]
    instances = [
        {
            "question_id": f"q{n}",
            "question": "What did I bake?",
            "question_date": "2023/05/30 (Tue) 23:40",
            "haystack_session_ids": ["s0", "s1", "s2"],
            "haystack_dates": ["2023/05/20 (Sat) 02:21"] * 3,
            "haystack_sessions": shared,
        }
        for n in range(300)
    ]
    path = write(tmp_path / "longmemeval_s.json", instances)
    size = path.stat().st_size
    tracemalloc.start()
    try:
        sessions = read_jsonl(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [s["id"] for s in sessions] == ["s0", "s1", "s2"]
    assert peak < size / 4, (peak, size)


def test_an_array_mixing_the_two_layouts_names_the_odd_item(
    tmp_path: Path, hermes_home: Path
) -> None:
    mixed = [locomo_sample(), {"question_id": "q1", "haystack_sessions": []}]
    code, out = run("import", str(write(tmp_path / "mixed.json", mixed)))
    assert code != 0 and "item #2 of the array is not a LoCoMo sample" in out
