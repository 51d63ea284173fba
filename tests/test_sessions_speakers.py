"""Speaker names: who said a user or assistant message is kept, shown and searchable."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from hermes_core.cli import cli
from hermes_core.errors import SessionImportError, SessionStoreError
from hermes_core.sessions import SCHEMA_VERSION, SessionStore
from hermes_core.sessions.backends import open_session_store
from hermes_core.sessions.importer import read_jsonl
from hermes_core.sessions.schema import has_cjk_sql, schema_sql
from hermes_core.sessions.transcript import format_conversation
from tests.backend_kit import db_args


def _two_person_chat(store: SessionStore) -> None:
    store.create_session("chat", source="import")
    store.append_messages(
        "chat",
        [
            {"role": "user", "name": "Ines", "content": "I went to a pottery class today."},
            {"role": "assistant", "name": "Dora", "content": "That sounds wonderful!"},
            {"role": "user", "name": "小明", "content": "我们明天去爬山吧"},
        ],
    )


def test_names_round_trip_and_tool_names_stay_tool_names(session_backend: str) -> None:
    with open_session_store(session_backend) as store:
        _two_person_chat(store)
        store.append_message("chat", "tool", "42", tool_call_id="c1", name="calculator")
        store.append_message("chat", "user", "no speaker")
        conversation = store.get_messages_as_conversation("chat")
        rows = store.get_messages("chat")
    assert [m.get("name") for m in conversation] == [
        "Ines",
        "Dora",
        "小明",
        "calculator",
        None,
    ]
    tool = rows[3]
    assert (tool["tool_name"], tool["name"]) == ("calculator", None)


def test_a_speaker_is_searchable_without_saying_their_own_name(session_backend: str) -> None:
    with open_session_store(session_backend) as store:
        _two_person_chat(store)
        store.create_session("other")
        store.append_message("other", "user", "a pottery class for gardeners")
        hits = store.search_messages("What did Ines say about the pottery class?", limit=3)
        assert hits[0]["session_id"] == "chat" and hits[0]["role"] == "user"
        melanie = store.search_messages("Dora")
        assert [(h["id"], h["name"]) for h in melanie] == [
            (store.get_messages("chat")[1]["id"], "Dora")
        ]
        # A CJK name goes through the gram index, one character or more.
        assert [h["session_id"] for h in store.search_messages("小明")] == ["chat"]
        assert [h["session_id"] for h in store.search_messages("明")] == ["chat"]
        assert store.check() == []


@pytest.mark.sqlite_only("SQLite's triggers keep the indexes exact under a raw sqlite3 writer")
def test_renaming_a_speaker_keeps_every_index_exact(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    with SessionStore(path) as store:
        _two_person_chat(store)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("UPDATE messages SET name = '老王' WHERE name = '小明'")
    conn.execute("UPDATE messages SET name = NULL WHERE name = 'Dora'")
    conn.close()
    with SessionStore(path) as store:
        assert store.check() == []
        assert store.search_messages("小明") == []
        assert [h["session_id"] for h in store.search_messages("老王")] == ["chat"]
        assert store.search_messages("Dora") == []


def test_a_name_that_is_not_text_is_refused_and_nothing_is_written(session_backend: str) -> None:
    with open_session_store(session_backend) as store:
        store.create_session("s")
        with pytest.raises(SessionStoreError, match="name must be text"):
            store.append_messages(
                "s",
                [{"role": "user", "content": "kept?"}, {"role": "user", "name": 7, "content": "x"}],
            )
        assert store.get_messages("s") == []


def test_import_keeps_speakers_and_names_a_bad_one(session_backend: str, tmp_path: Path) -> None:
    good = tmp_path / "chat.jsonl"
    good.write_text(
        json.dumps(
            {
                "session_id": "locomo_1",
                "started_at": "2:10 pm on 9 May, 2023",
                "messages": [
                    {"role": "user", "name": "Ines", "content": "I'm researching adoption."},
                    {"role": "assistant", "name": "Dora", "content": "That's brave of you."},
                ],
            }
        )
        + "\n",
        encoding="utf-8",
    )
    with open_session_store(session_backend) as store:
        store.import_sessions(read_jsonl(good))
        assert [m["name"] for m in store.get_messages("locomo_1")] == ["Ines", "Dora"]
        assert store.search_messages("Ines adoption")[0]["session_id"] == "locomo_1"
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"role": "user", "name": ["Ann"], "content": "hi"}\n', encoding="utf-8")
    with pytest.raises(SessionImportError, match=r'line 1: "name" must be text'):
        read_jsonl(bad)


def test_transcripts_show_who_spoke() -> None:
    text = format_conversation(
        [
            {"role": "user", "name": "Ines", "content": "hello"},
            {"role": "assistant", "content": "hi"},
            {"role": "tool", "name": "search", "content": "result"},
        ]
    )
    assert text.split("\n\n") == [
        "[USER:Ines]: hello",
        "[ASSISTANT]: hi",
        "[TOOL:search]: result",
    ]


def _make_version_two(path: Path) -> None:
    """Turn a current file into what version 2 wrote: no ``name`` column anywhere."""
    old = schema_sql()
    for row in ("m", "new", "old"):
        old = old.replace(f"COALESCE({row}.tool_name, {row}.name)", f"{row}.tool_name")
    old = old.replace(
        has_cjk_sql("new"), has_cjk_sql("new", ("content", "tool_name", "tool_calls"))
    )
    old = old.replace("tool_name, name, tool_calls", "tool_name, tool_calls")
    old = re.sub(r"CREATE INDEX IF NOT EXISTS idx_messages_speaker[^;]*;", "", old)
    assert re.search(r"\b(m|new|old)\.name\b", old) is None
    conn = sqlite3.connect(path, isolation_level=None)
    triggers = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")]
    for trigger in triggers:
        conn.execute(f"DROP TRIGGER {trigger}")
    for view in ("messages_fts_src", "messages_fts_trigram_src"):
        conn.execute(f"DROP VIEW {view}")
    conn.execute("DROP INDEX idx_messages_speaker")
    conn.execute("ALTER TABLE messages DROP COLUMN name")
    conn.executescript(old)
    conn.execute("UPDATE schema_version SET version = 2")
    conn.close()


@pytest.mark.sqlite_only("a version-2 state.db and its migration")
def test_version_two_file_is_read_as_it_is_and_migrated_exactly(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    with SessionStore(path) as store:
        store.create_session("s")
        store.append_message("s", "user", "deploy the 部署脚本 tonight")
        store.append_message("s", "tool", "ok", tool_call_id="c1", tool_name="shell_exec")
    _make_version_two(path)

    with SessionStore(path, read_only=True) as reader:  # read as it is, never changed
        assert reader.layout.version == 2
        assert [h["session_id"] for h in reader.search_messages("部署")] == ["s"]
        assert reader.check() == []
        assert reader.get_messages("s")[0].get("name") is None

    with SessionStore(path) as store:
        assert store.layout.version == SCHEMA_VERSION
        # Rows indexed under version 2 are updated and deleted exactly under version 3.
        store._conn.execute("UPDATE messages SET content = 'rolled back' WHERE role = 'user'")
        store._conn.execute("DELETE FROM messages WHERE role = 'tool'")
        store.append_message("s", "user", "hello", name="Ines")
        assert store.check() == []
        assert store.search_messages("部署") == []
        assert store.search_messages("shell_exec") == []
        assert [h["role"] for h in store.search_messages("Ines")] == ["user"]


def test_a_question_naming_a_speaker_prefers_their_conversations(session_backend: str) -> None:
    with open_session_store(session_backend) as store:
        chats = {
            "ben_and_ana": [
                ("Ben", "The bike shop hired me."),
                ("Ana", "That suits you!"),
                ("Ben", "I fix gears and brakes."),
                ("Ana", "Every day?"),
                ("Ben", "Five days a week, mornings off."),
                ("Ben", "And the owner lets me ride the demo bikes."),
            ],
            "grace_and_hiro": [
                ("Grace", "Work is great, I got the job at the city library."),
                ("Hiro", "Congratulations, Grace."),
            ],
        }
        for sid, turns in chats.items():
            store.create_session(sid)
            store.append_messages(
                sid,
                [
                    {"role": "user" if n % 2 == 0 else "assistant", "name": who, "content": text}
                    for n, (who, text) in enumerate(turns)
                ],
            )
        hits = store.search_messages("Where does Ben work?", limit=5)
        assert hits[0]["session_id"] == "ben_and_ana"
        # A name nobody speaks under leaves the topic word to decide.
        hits = store.search_messages("Where does Carol work?", limit=5)
        assert hits[0]["session_id"] == "grace_and_hiro"


def test_the_cli_shows_who_spoke(session_backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with open_session_store(session_backend) as store:
        _two_person_chat(store)
    args = db_args(session_backend, monkeypatch)
    found = CliRunner().invoke(cli, ["sessions", "search", "wonderful", *args])
    assert found.exit_code == 0, found.output
    assert "assistant (Dora)  #2" in found.output
    shown = CliRunner().invoke(cli, ["sessions", "show", "chat", *args])
    assert "[USER:Ines]: I went to a pottery class today." in shown.output
