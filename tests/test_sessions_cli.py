"""hermes-memory sessions: list, search, show, import."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from hermes_core.cli import cli
from hermes_core.sessions import SessionStore


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["sessions", *args])
    return result.exit_code, result.output


@pytest.fixture
def db(hermes_home: Path) -> Path:
    path = hermes_home / "state.db"
    with SessionStore(path) as store:
        store.create_session("20240501_aaa", source="cli", title="Nginx fix")
        store.append_message("20240501_aaa", "user", "nginx returns 502 after the upgrade")
        store.append_message("20240501_aaa", "assistant", "The upstream socket path changed.")
        store.create_session("20240502_bbb", source="telegram")
        store.append_message("20240502_bbb", "user", "部署脚本又失败了")
    return path


def test_list_uses_hermes_home_by_default(db: Path) -> None:
    code, out = run("list")
    assert code == 0, out
    assert "20240501_aaa" in out and "Nginx fix" in out and "20240502_bbb" in out
    code, out = run("list", "--source", "telegram", "--json")
    assert code == 0
    assert [row["id"] for row in json.loads(out)] == ["20240502_bbb"]


def test_search_with_filters(db: Path) -> None:
    code, out = run("search", "nginx upgrade?")
    assert code == 0, out
    assert "20240501_aaa" in out and "nginx" in out
    code, out = run("search", "nginx", "--role", "assistant")
    assert code == 0 and "No matches." in out
    code, out = run("search", "部署", "--json")
    assert [hit["session_id"] for hit in json.loads(out)] == ["20240502_bbb"]
    code, out = run("search", "nginx", "--since", "1h", "--source", "cli,telegram", "--json")
    assert len(json.loads(out)) == 1
    code, out = run("search", "nginx", "--until", "2001-01-01", "--json")
    assert json.loads(out) == []


def test_search_grouped_by_session(db: Path) -> None:
    code, out = run("search", "nginx OR upstream OR 部署", "--group", "--json")
    assert code == 0, out
    groups = json.loads(out)
    assert sorted(g["session_id"] for g in groups) == ["20240501_aaa", "20240502_bbb"]
    first = next(g for g in groups if g["session_id"] == "20240501_aaa")
    assert first["matches"] == 2 and len(first["message_ids"]) == 2
    code, out = run("search", "nginx OR upstream", "--group")
    assert code == 0 and out.count("20240501_aaa") == 1 and "(2 matches)" in out


def test_bad_since_is_explained(db: Path) -> None:
    for command in (("search", "nginx"), ("list",)):
        code, out = run(*command, "--since", "the other day")
        assert code != 0 and "duration" in out and "ISO date" in out and "yesterday" in out


def test_times_can_be_said_in_words(db: Path) -> None:
    with SessionStore(db) as store:  # a conversation from last year
        store.create_session("old", source="cli", started_at=datetime(2020, 3, 1).timestamp())
        store.append_message("old", "user", "nginx on the old box", timestamp=1583020800.0)
    code, out = run("search", "nginx", "--since", "last week", "--json")
    assert code == 0, out
    assert {hit["session_id"] for hit in json.loads(out)} == {"20240501_aaa"}
    code, out = run("search", "nginx", "--until", "yesterday", "--json")
    assert {hit["session_id"] for hit in json.loads(out)} == {"old"}
    code, out = run("list", "--since", "today", "--json")
    assert code == 0, out
    assert {row["id"] for row in json.loads(out)} == {"20240501_aaa", "20240502_bbb"}
    code, out = run("list", "--until", "2021-01-01", "--json")
    assert [row["id"] for row in json.loads(out)] == ["old"]


def test_show_by_prefix_and_title(db: Path) -> None:
    code, out = run("show", "20240501")
    assert code == 0, out
    assert "[USER]: nginx returns 502 after the upgrade" in out
    code, out = run("show", "Nginx fix", "--json")
    assert code == 0
    assert json.loads(out)["session"]["id"] == "20240501_aaa"
    code, out = run("show", "2024")
    assert code != 0 and "several session ids" in out and "20240502_bbb" in out


def test_missing_database_is_explained(tmp_path: Path, hermes_home: Path) -> None:
    code, out = run("list", "--db", str(tmp_path / "nope.db"))
    assert code != 0 and "No session database" in out
    code, out = run("search", "anything")
    assert code == 0 and "No sessions yet" in out
    assert not (hermes_home / "state.db").exists()


def test_import_jsonl_messages_and_conversations(tmp_path: Path, hermes_home: Path) -> None:
    path = tmp_path / "history.jsonl"
    lines = [
        {
            "role": "user",
            "content": "How do I rotate the TLS cert?",
            "timestamp": "2024-05-01T10:00:00Z",
        },
        {"role": "assistant", "content": "Use certbot renew.", "timestamp": 1714557700},
        {
            "messages": [
                {"role": "user", "content": "what is a goroutine leak"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "c",
                            "type": "function",
                            "function": {"name": "search", "arguments": "{}"},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "c", "name": "search", "content": "results"},
            ],
            "title": "Go leak",
        },
    ]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n\n")
    code, out = run("import", str(path), "--title", "TLS")
    assert code == 0, out
    assert "Imported 5 messages in 2 sessions" in out
    with SessionStore(hermes_home / "state.db", read_only=True) as store:
        rows = {row["title"]: row for row in store.list_sessions()}
        assert set(rows) == {"TLS", "Go leak"}
        assert rows["TLS"]["source"] == "import" and rows["TLS"]["message_count"] == 2
        assert rows["Go leak"]["tool_call_count"] == 1
        assert store.search_messages("certbot")[0]["session_id"] == rows["TLS"]["id"]
    code, out = run("import", str(path))
    assert code != 0 and "already exists" in out and "nothing was imported" in out


def test_import_dates_conversations_by_started_at(tmp_path: Path, hermes_home: Path) -> None:
    """Benchmark-style histories date whole sessions; --since then filters by that date."""
    path = tmp_path / "dated.jsonl"
    lines = [
        {
            "session_id": "old",
            "started_at": "2023-05-20T02:21:00+00:00",
            "messages": [
                {"role": "user", "content": "I adopted a beagle named Biscuit"},
                {"role": "assistant", "content": "Congratulations on Biscuit!"},
            ],
        },
        {
            "session_id": "new",
            "started_at": 1717200000,
            "messages": [{"role": "user", "content": "Biscuit learned to sit today"}],
        },
    ]
    path.write_text("\n".join(json.dumps(line) for line in lines))
    code, out = run("import", str(path))
    assert code == 0, out
    with SessionStore(hermes_home / "state.db", read_only=True) as store:
        old = store.get_session("old")
        assert old is not None and old["started_at"] == 1684549260.0
        stamps = [m["timestamp"] for m in store.get_messages("old")]
        assert stamps[0] == 1684549260.0 and stamps[1] > stamps[0]  # order kept
        recent = store.search_messages("Biscuit", since=1700000000)
        assert {hit["session_id"] for hit in recent} == {"new"}
    bad = tmp_path / "bad_date.jsonl"
    bad.write_text(json.dumps({"started_at": "last spring", "messages": lines[1]["messages"]}))
    code, out = run("import", str(bad))
    assert code != 0 and "line 1:" in out and '"started_at"' in out


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("2023/05/20 (Sat) 02:21", datetime(2023, 5, 20, 2, 21)),
        ("2023/05/20", datetime(2023, 5, 20)),
        ("2:10 pm on 9 May, 2023", datetime(2023, 5, 9, 14, 10)),
        ("7:55 PM on 9 Jun, 2023", datetime(2023, 6, 9, 19, 55)),
        ("May 8, 2023", datetime(2023, 5, 8)),
        ("2023-05-20 02:21:00", datetime(2023, 5, 20, 2, 21)),
    ],
)
def test_import_reads_dates_as_datasets_write_them(
    tmp_path: Path, hermes_home: Path, written: str, expected: datetime
) -> None:
    path = tmp_path / "dated.jsonl"
    line = {
        "session_id": "s",
        "started_at": written,
        "messages": [{"role": "user", "content": "hi"}],
    }
    path.write_text(json.dumps(line))
    code, out = run("import", str(path))
    assert code == 0, out
    with SessionStore(hermes_home / "state.db", read_only=True) as store:
        session = store.get_session("s")
        assert session is not None and session["started_at"] == expected.timestamp()


def test_bad_import_names_lines_and_writes_nothing(tmp_path: Path, db: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(
        "\n".join(
            [
                json.dumps({"role": "user", "content": "fine"}),
                "{not json",
                json.dumps({"role": "wizard", "content": "x"}),
                json.dumps([1, 2]),
                json.dumps({"role": "assistant", "content": 5}),
                json.dumps({"messages": []}),
                json.dumps({"role": "assistant", "tool_calls": [{"function": {}}]}),
                json.dumps({"role": "user", "content": "x", "timestamp": "soon"}),
            ]
        )
    )
    before = SessionStore(db, read_only=True)
    count = before.message_count()
    before.close()
    code, out = run("import", str(path), "--db", str(db))
    assert code != 0
    for line in range(2, 9):
        assert f"line {line}:" in out
    assert "line 1:" not in out and "nothing was imported" in out
    with SessionStore(db, read_only=True) as store:
        assert store.message_count() == count


def _message_count(db: Path) -> int:
    with SessionStore(db, read_only=True) as store:
        return store.message_count()


@pytest.mark.parametrize(
    "stamp",
    ["0001-01-01", "9999-12-31T23:59:59", 10**400, 1e300, -5, 1_700_000_000_000],
)
def test_import_refuses_times_outside_1970_to_3000(tmp_path: Path, db: Path, stamp: object) -> None:
    path = tmp_path / "dates.jsonl"
    line = json.dumps({"role": "user", "content": "x", "timestamp": stamp})
    path.write_text(json.dumps({"role": "user", "content": "fine"}) + "\n" + line + "\n")
    before = _message_count(db)
    code, out = run("import", str(path), "--db", str(db))
    assert code == 1, out  # an error message, not a traceback (exit code 1 either way)
    assert "line 2:" in out and "between 1970 and 3000" in out and "nothing was imported" in out
    assert _message_count(db) == before


def test_import_refuses_nan_and_infinite_times(tmp_path: Path, db: Path) -> None:
    path = tmp_path / "nan.jsonl"
    path.write_text(
        '{"role": "user", "content": "x", "timestamp": NaN}\n'
        '{"messages": [{"role": "user", "content": "y"}], "started_at": Infinity}\n'
    )
    code, out = run("import", str(path), "--db", str(db))
    assert code == 1 and "line 1:" in out and "line 2:" in out and '"started_at"' in out


def test_import_names_the_lines_of_clashing_ids_and_titles(tmp_path: Path, db: Path) -> None:
    path = tmp_path / "clash.jsonl"
    path.write_text(
        "\n".join(
            json.dumps(line)
            for line in [
                {"role": "user", "content": "a", "session_id": "loose"},
                {"messages": [{"role": "user", "content": "b"}], "session_id": "c1", "title": "T"},
                {"messages": [{"role": "user", "content": "c"}], "session_id": "c1"},
                {"messages": [{"role": "user", "content": "d"}], "session_id": "loose"},
                {"messages": [{"role": "user", "content": "e"}], "title": "T"},
                {"messages": [{"role": "user", "content": "f"}], "title": "t" * 101},
            ]
        )
    )
    before = _message_count(db)
    code, out = run("import", str(path), "--db", str(db))
    assert code == 1, out
    assert "line 3: session id 'c1' is already used on line 2" in out
    assert "line 4: session id 'loose' is already used on line 1" in out
    assert "line 5: session title 'T' is already used on line 2" in out
    assert "line 6: Title too long" in out
    assert _message_count(db) == before


def test_import_of_a_title_already_in_the_database_is_explained(tmp_path: Path, db: Path) -> None:
    path = tmp_path / "title.jsonl"
    path.write_text(
        json.dumps({"messages": [{"role": "user", "content": "x"}], "title": "Nginx fix"})
    )
    before = _message_count(db)
    code, out = run("import", str(path), "--db", str(db))
    assert code == 1
    assert str(path) in out and "'Nginx fix' is already used by session '20240501_aaa'" in out
    assert "nothing was imported" in out
    assert _message_count(db) == before


@pytest.mark.parametrize(
    ("line", "error"),
    [
        ({"role": "user", "content": "x", "session_id": {"a": 1}}, '"session_id" must be text'),
        ({"role": "assistant", "content": "x", "finish_reason": {"a": 1}}, '"finish_reason"'),
        ({"role": "tool", "content": "x", "tool_call_id": ["c"]}, '"tool_call_id" must be text'),
        ({"messages": [{"role": "user", "content": "x"}], "source": ["cli"]}, '"source"'),
        ({"messages": [{"role": "user", "content": "x"}], "title": ["T"]}, '"title" must be text'),
        ({"role": "assistant", "tool_calls": "not json"}, '"tool_calls" must be a list'),
    ],
)
def test_import_fields_of_the_wrong_type_are_named(
    tmp_path: Path, db: Path, line: dict[str, object], error: str
) -> None:
    path = tmp_path / "types.jsonl"
    path.write_text(json.dumps(line) + "\n")
    code, out = run("import", str(path), "--db", str(db))
    assert code == 1 and "line 1:" in out and error in out, out


def test_import_reads_tool_calls_stored_as_json_text(tmp_path: Path, db: Path) -> None:
    calls = [{"id": "c1", "function": {"name": "read_file", "arguments": '{"path": "/etc/hosts"}'}}]
    path = tmp_path / "calls.jsonl"
    path.write_text(
        json.dumps({"role": "assistant", "content": None, "tool_calls": json.dumps(calls)})
        + "\n"
        + json.dumps({"role": "tool", "content": "127.0.0.1", "tool_call_id": 7})
        + "\n"
    )
    code, out = run("import", str(path), "--db", str(db), "--session-id", "calls")
    assert code == 0, out
    with SessionStore(db, read_only=True) as store:
        messages = store.get_messages("calls")
    assert messages[0]["tool_calls"] == calls  # decoded once, not stored as a JSON string of JSON
    assert messages[1]["tool_call_id"] == "7"


def test_import_with_a_too_long_title_option_is_explained(tmp_path: Path, db: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({"role": "user", "content": "x"}))
    code, out = run("import", str(path), "--db", str(db), "--title", "x" * 200)
    assert code == 1 and "--title" in out and "Title too long" in out


def test_locomo_sample_with_one_speaker_twice_is_refused(tmp_path: Path, db: Path) -> None:
    sample = {
        "sample_id": "conv-x",
        "conversation": {
            "speaker_a": "Ana",
            "speaker_b": "Ana ",
            "session_1": [{"speaker": "Ana", "text": "hi", "dia_id": "D1:1"}],
        },
    }
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([sample]))
    code, out = run("import", str(path), "--db", str(db))
    assert code == 1 and "conv-x" in out and "both 'Ana'" in out


def test_locomo_samples_with_one_id_are_refused_clearly(tmp_path: Path, db: Path) -> None:
    sample = {
        "sample_id": "conv-x",
        "conversation": {
            "speaker_a": "Ana",
            "speaker_b": "Ben",
            "session_1": [{"speaker": "Ana", "text": "hi", "dia_id": "D1:1"}],
        },
    }
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([sample, sample]))
    code, out = run("import", str(path), "--db", str(db))
    assert code == 1 and str(path) in out and "'conv-x_session_1'" in out
    assert "UNIQUE" not in out


@pytest.mark.parametrize("option", ["--since", "--until"])
def test_bad_time_option_is_named(db: Path, option: str) -> None:
    code, out = run("search", "nginx", option, "soonish")
    assert code == 2 and f"Invalid value for '{option}'" in out


def test_stored_control_characters_are_shown_not_obeyed(hermes_home: Path) -> None:
    with SessionStore(hermes_home / "state.db") as store:
        store.create_session("esc")
        store.append_message("esc", "user", "nginx \x1b]0;pwned\x07 \x1b[2J done\rover\r\nnext")
    for args in (("show", "esc"), ("search", "nginx"), ("list",)):
        code, out = run(*args)
        assert code == 0, out
        assert "\x1b" not in out and "\x07" not in out and "\r" not in out
    code, out = run("show", "esc")
    assert "nginx <U+001B>]0;pwned<U+0007> <U+001B>[2J done<U+000D>over\nnext" in out


def test_show_of_an_ambiguous_prefix_lists_the_candidates(hermes_home: Path) -> None:
    with SessionStore(hermes_home / "state.db") as store:
        for sid in ("run_a", "run_b", "rx"):
            store.create_session(sid)
    code, out = run("show", "run")
    assert code == 1 and "several session ids" in out and "run_a, run_b" in out
    assert "rx" not in out
    code, out = run("show", "run_")  # '_' is a character of the id, not a wildcard
    assert code == 1 and "several session ids" in out
    code, out = run("show", "r%")
    assert code == 1 and "No session matches 'r%'" in out


@pytest.mark.parametrize("query", ["", "   ", "?!", "\x00"])
def test_search_without_words_says_so(db: Path, query: str) -> None:
    code, out = run("search", query)
    assert code == 2 and "no words to search for" in out


def test_import_of_one_pretty_printed_conversation(tmp_path: Path, db: Path) -> None:
    path = tmp_path / "conversation.json"
    conversation = {
        "session_id": "pretty",
        "messages": [
            {"role": "user", "content": "the cron job never fires"},
            {"role": "assistant", "content": "The crontab had no trailing newline."},
        ],
    }
    path.write_text(json.dumps(conversation, indent=2))
    code, out = run("import", str(path), "--db", str(db))
    assert code == 0, out
    with SessionStore(db, read_only=True) as store:
        assert [m["content"] for m in store.get_messages("pretty")][1].startswith("The crontab")


def test_import_into_a_non_database_file_names_it_and_leaves_it(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    path.write_text(json.dumps({"role": "user", "content": "x"}) + "\n")
    before = path.read_bytes()
    code, out = run("import", str(path), "--db", str(path))
    assert code == 1 and str(path) in out and "not an intact SQLite database" in out
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["history.jsonl"]


def test_import_of_non_utf8_or_empty_files(tmp_path: Path) -> None:
    binary = tmp_path / "b.jsonl"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    code, out = run("import", str(binary))
    assert code != 0 and "UTF-8" in out
    empty = tmp_path / "e.jsonl"
    empty.write_text("\n\n")
    code, out = run("import", str(empty))
    assert code != 0 and "no messages" in out


@pytest.mark.parametrize("args", [("list", "--json"), ("search", "deploy", "--json")])
def test_json_output_without_history_is_an_empty_list(args: tuple[str, ...]) -> None:
    code, output = run(*args)
    assert code == 0
    assert json.loads(output) == []
