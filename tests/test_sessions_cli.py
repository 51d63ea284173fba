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
    assert code != 0 and "No session matches" in out


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
    assert "Imported 5 messages in 2 session(s)" in out
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
        ("1:56 pm on 8 May, 2023", datetime(2023, 5, 8, 13, 56)),
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
