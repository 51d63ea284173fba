"""Files written by Hermes Agent itself open read-only, unchanged, and are searchable.

The fixtures are built with the original's DDL for three generations of its
``state.db`` (see the reference notes, §1.3–§1.5): the early external-content
layout (schema v2), the mid layout with inline concatenated FTS tables (v11)
and the newest layout with external content over views (v30).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from hermes_core.cli import cli
from hermes_core.errors import SessionStoreError
from hermes_core.sessions import SessionStore

E1_SQL = """
CREATE TABLE schema_version (version INTEGER NOT NULL);
CREATE TABLE sessions (
    id TEXT PRIMARY KEY, source TEXT NOT NULL, user_id TEXT, model TEXT, model_config TEXT,
    system_prompt TEXT, parent_session_id TEXT, started_at REAL NOT NULL, ended_at REAL,
    end_reason TEXT, message_count INTEGER DEFAULT 0, tool_call_count INTEGER DEFAULT 0,
    input_tokens INTEGER DEFAULT 0, output_tokens INTEGER DEFAULT 0,
    FOREIGN KEY (parent_session_id) REFERENCES sessions(id)
);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL, content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT,
    timestamp REAL NOT NULL, token_count INTEGER, finish_reason TEXT
);
CREATE VIRTUAL TABLE messages_fts USING fts5(content, content=messages, content_rowid=id);
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
END;
INSERT INTO schema_version VALUES (2);
"""

_CONCAT = (
    "COALESCE(new.content, '') || ' ' || COALESCE(new.tool_name, '') || ' ' "
    "|| COALESCE(new.tool_calls, '')"
)
E2_SQL = f"""
CREATE TABLE schema_version (version INTEGER NOT NULL);
CREATE TABLE state_meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE sessions (
    id TEXT PRIMARY KEY, source TEXT NOT NULL, user_id TEXT, model TEXT, model_config TEXT,
    system_prompt TEXT, parent_session_id TEXT, started_at REAL NOT NULL, ended_at REAL,
    end_reason TEXT, message_count INTEGER DEFAULT 0, tool_call_count INTEGER DEFAULT 0,
    input_tokens INTEGER DEFAULT 0, output_tokens INTEGER DEFAULT 0, title TEXT,
    api_call_count INTEGER DEFAULT 0, estimated_cost_usd REAL,
    FOREIGN KEY (parent_session_id) REFERENCES sessions(id)
);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL, content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT,
    timestamp REAL NOT NULL, token_count INTEGER, finish_reason TEXT, reasoning TEXT,
    reasoning_content TEXT, reasoning_details TEXT
);
CREATE INDEX idx_messages_session ON messages(session_id, timestamp);
CREATE VIRTUAL TABLE messages_fts USING fts5(content);
CREATE VIRTUAL TABLE messages_fts_trigram USING fts5(content, tokenize='trigram');
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts(rowid, content) VALUES (new.id, {_CONCAT});
END;
CREATE TRIGGER messages_fts_trigram_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts_trigram(rowid, content) VALUES (new.id, {_CONCAT});
END;
INSERT INTO schema_version VALUES (11);
"""

_TOOL_PREFIX = (
    "CASE WHEN new.role = 'tool' THEN substr(COALESCE(new.content, ''), 1, 8192) "
    "ELSE new.content END"
)
E3_SQL = f"""
CREATE TABLE schema_version (version INTEGER NOT NULL);
CREATE TABLE state_meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE system_prompts (hash TEXT PRIMARY KEY, prompt TEXT NOT NULL);
CREATE TABLE sessions (
    id TEXT PRIMARY KEY, source TEXT NOT NULL, created_source TEXT, user_id TEXT,
    session_key TEXT, chat_id TEXT, model TEXT, model_config TEXT, system_prompt TEXT,
    system_prompt_hash TEXT, parent_session_id TEXT, started_at REAL NOT NULL, ended_at REAL,
    end_reason TEXT, message_count INTEGER DEFAULT 0, tool_call_count INTEGER DEFAULT 0,
    input_tokens INTEGER DEFAULT 0, output_tokens INTEGER DEFAULT 0, title TEXT,
    title_source TEXT, last_activity_at REAL, archived INTEGER NOT NULL DEFAULT 0,
    pinned INTEGER NOT NULL DEFAULT 0, hidden INTEGER NOT NULL DEFAULT 0, tool_names TEXT,
    FOREIGN KEY (parent_session_id) REFERENCES sessions(id)
);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL, content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT,
    effect_disposition TEXT, timestamp REAL NOT NULL, token_count INTEGER, finish_reason TEXT,
    reasoning TEXT, reasoning_content TEXT, reasoning_details TEXT, platform_message_id TEXT,
    observed INTEGER DEFAULT 0, _compressed_summary INTEGER NOT NULL DEFAULT 0,
    active INTEGER NOT NULL DEFAULT 1, compacted INTEGER NOT NULL DEFAULT 0,
    api_content TEXT, display_kind TEXT, display_metadata TEXT
);
CREATE INDEX idx_messages_session_id ON messages(session_id, id);
CREATE VIEW messages_fts_src AS
  SELECT id, CASE WHEN role = 'tool' THEN substr(COALESCE(content, ''), 1, 8192)
                  ELSE content END AS content, tool_name, tool_calls
  FROM messages;
CREATE VIRTUAL TABLE messages_fts USING fts5(
  content, tool_name, tool_calls, content='messages_fts_src', content_rowid='id');
CREATE VIEW messages_fts_trigram_src AS
  SELECT m.id, m.role, m.content, m.tool_name
  FROM messages m JOIN sessions s ON s.id = m.session_id
  WHERE m.role <> 'tool' AND s.source NOT IN ('cron', 'subagent')
    AND json_extract(CASE WHEN json_valid(s.model_config) THEN s.model_config ELSE '{{}}' END,
                     '$._delegate_from') IS NULL;
CREATE VIRTUAL TABLE messages_fts_trigram USING fts5(
  content, tool_name, content='messages_fts_trigram_src', content_rowid='id',
  tokenize='trigram');
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
  INSERT INTO messages_fts(rowid, content, tool_name, tool_calls)
  VALUES (new.id, {_TOOL_PREFIX}, new.tool_name, new.tool_calls);
END;
CREATE TRIGGER messages_fts_trigram_insert AFTER INSERT ON messages
WHEN new.role <> 'tool' BEGIN
  INSERT INTO messages_fts_trigram(rowid, content, tool_name)
  VALUES (new.id, new.content, new.tool_name);
END;
INSERT INTO schema_version VALUES (30);
INSERT INTO state_meta VALUES ('fts_storage_version', '3');
"""

CALL = json.dumps(
    [
        {
            "id": "c1",
            "type": "function",
            "function": {"name": "read_file", "arguments": '{"path": "/etc/hosts"}'},
        }
    ]
)


def _fill(conn: sqlite3.Connection, layout: str) -> None:
    if layout == "e1":  # no titles yet in the early layout
        conn.execute(
            "INSERT INTO sessions(id, source, model, started_at) VALUES (?, ?, ?, ?)",
            ("h_old", "telegram", "hermes-model", 1_700_000_000.0),
        )
    else:
        conn.execute(
            "INSERT INTO sessions(id, source, model, started_at, title) VALUES (?, ?, ?, ?, ?)",
            ("h_old", "telegram", "hermes-model", 1_700_000_000.0, "Old chat"),
        )
    conn.execute(
        "INSERT INTO sessions(id, source, model, started_at) VALUES (?, ?, ?, ?)",
        ("h_new", "cli", "hermes-model", 1_700_100_000.0),
    )
    rows = [
        (
            "h_old",
            "user",
            "How do I fix the nginx certificate renewal?",
            None,
            None,
            1_700_000_001.0,
        ),
        ("h_old", "assistant", "Run certbot renew and reload nginx.", None, None, 1_700_000_002.0),
        ("h_old", "assistant", "", CALL, None, 1_700_000_003.0),
        ("h_old", "tool", "127.0.0.1 localhost", None, "read_file", 1_700_000_004.0),
        ("h_new", "user", "我们讨论了记忆断裂和通信协议", None, None, 1_700_100_001.0),
        (
            "h_new",
            "user",
            "\x00json:" + json.dumps([{"type": "text", "text": "multimodal kestrel photo"}]),
            None,
            None,
            1_700_100_002.0,
        ),
    ]
    conn.executemany(
        "INSERT INTO messages(session_id, role, content, tool_calls, tool_name, timestamp) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        rows,
    )
    if layout == "e3":
        conn.execute(
            "INSERT INTO messages(session_id, role, content, timestamp, active, compacted) "
            "VALUES ('h_new', 'user', 'rewound secret wombat', 1700100003, 0, 0)"
        )


_LAYOUTS: dict[str, tuple[str, bool]] = {
    "e1": (E1_SQL, False),
    "e2": (E2_SQL, False),
    "e3": (E3_SQL, True),
}


@pytest.fixture(params=sorted(_LAYOUTS))
def hermes_db(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    sql, wal = _LAYOUTS[request.param]
    path = tmp_path / f"{request.param}_state.db"
    conn = sqlite3.connect(path, isolation_level=None)
    if wal:
        conn.execute("PRAGMA journal_mode = WAL")
    conn.executescript(sql)
    _fill(conn, request.param)
    conn.close()
    return path


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _unchanged(path: Path) -> Callable[[], None]:
    before = _digest(path)

    def check() -> None:
        assert _digest(path) == before

    return check


def test_opens_read_only_and_searches(hermes_db: Path) -> None:
    check = _unchanged(hermes_db)
    with SessionStore(hermes_db, read_only=True) as store:
        assert not store.layout.ours
        hits = store.search_messages("certificate renewal")
        assert hits and hits[0]["session_id"] == "h_old"
        assert {
            h["session_id"] for h in store.search_messages("How do I renew the certificate?")
        } == {"h_old"}
        assert {h["session_id"] for h in store.search_messages("通信")} == {"h_new"}
        assert {h["session_id"] for h in store.search_messages("记")} == {"h_new"}
        assert {h["session_id"] for h in store.search_messages("记忆断裂")} == {"h_new"}
        assert store.search_messages("nginx", source_filter=["cli"]) == []
        assert store.search_messages('"unterminated (') == []
        messages = store.get_messages("h_new")
        assert messages[1]["content"] == [{"type": "text", "text": "multimodal kestrel photo"}]
        assert [r["id"] for r in store.list_sessions()] == ["h_new", "h_old"]
        assert store.list_sessions()[1]["preview"].startswith("How do I fix")
        assert store.get_lineage("h_old") == ["h_old"]
    check()


def test_tool_call_text_is_searchable_where_indexed(hermes_db: Path) -> None:
    # The early layout indexed message content only; later ones add tool names and calls.
    expected = set() if hermes_db.name.startswith("e1") else {"assistant", "tool"}
    with SessionStore(hermes_db, read_only=True) as store:
        assert {h["role"] for h in store.search_messages("read_file")} == expected


def test_rewound_rows_stay_hidden(tmp_path: Path) -> None:
    path = tmp_path / "e3.db"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.executescript(E3_SQL)
    _fill(conn, "e3")
    conn.close()
    with SessionStore(path, read_only=True) as store:
        assert store.search_messages("wombat") == []
        assert all("wombat" not in str(m["content"]) for m in store.get_messages("h_new"))


def test_writable_open_is_refused_without_touching_the_file(hermes_db: Path) -> None:
    check = _unchanged(hermes_db)
    with pytest.raises(SessionStoreError, match="read-only") as info:
        SessionStore(hermes_db)
    assert str(hermes_db) in str(info.value)
    check()


def test_cli_reads_a_hermes_file(hermes_db: Path) -> None:
    check = _unchanged(hermes_db)
    runner = CliRunner()
    listed = runner.invoke(cli, ["sessions", "list", "--db", str(hermes_db)])
    assert listed.exit_code == 0, listed.output
    assert "h_old" in listed.output and "h_new" in listed.output
    found = runner.invoke(cli, ["sessions", "search", "certbot", "--db", str(hermes_db), "--json"])
    assert found.exit_code == 0, found.output
    assert [hit["session_id"] for hit in json.loads(found.output)] == ["h_old"]
    shown = runner.invoke(cli, ["sessions", "show", "h_ol", "--db", str(hermes_db)])
    assert shown.exit_code == 0, shown.output
    assert "[USER]: How do I fix the nginx certificate renewal?" in shown.output
    refused = runner.invoke(
        cli, ["sessions", "import", str(hermes_db), "--db", str(hermes_db)], catch_exceptions=False
    )
    assert refused.exit_code != 0
    checked = runner.invoke(cli, ["sessions", "check", "--db", str(hermes_db)])
    assert checked.exit_code == 0 and "a Hermes Agent file" in checked.output
    repaired = runner.invoke(cli, ["sessions", "repair", "--db", str(hermes_db)])
    assert repaired.exit_code != 0 and "only reads it" in repaired.output
    for deleting in (["delete", "h_old"], ["prune", "--older-than", "1d"]):
        refused = runner.invoke(cli, ["sessions", *deleting, "--yes", "--db", str(hermes_db)])
        assert refused.exit_code == 1 and "only reads it" in refused.output
    check()


def test_one_query_is_compiled_for_each_file(hermes_db: Path, tmp_path: Path) -> None:
    # Compiled search SQL is remembered per file layout: the same query string asked of
    # our file (gram index) and of a Hermes file (trigram or LIKE) in one process must
    # each run what that file can answer.
    with SessionStore(tmp_path / "ours.db") as ours:
        ours.create_session("o1", source="cli")
        ours.append_message("o1", "user", "记忆断裂的原因是通信协议")
        for _ in range(2):
            with SessionStore(hermes_db, read_only=True) as theirs:
                assert {h["session_id"] for h in theirs.search_messages("记忆")} == {"h_new"}
                assert {h["session_id"] for h in theirs.search_messages("记忆断裂")} == {"h_new"}
            assert {h["session_id"] for h in ours.search_messages("记忆")} == {"o1"}
            assert {h["session_id"] for h in ours.search_messages("记忆断裂")} == {"o1"}
