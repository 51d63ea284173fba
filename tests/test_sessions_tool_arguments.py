"""Tool-call arguments are searchable as the words they hold, whatever their JSON escapes."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from hermes_core.sessions import SCHEMA_VERSION, SessionStore
from hermes_core.sessions.backends import open_session_store
from hermes_core.sessions.gramqueue import tool_calls_text
from hermes_core.sessions.schema import _TOOL_CALLS_TEXT, _TOOL_CALLS_TEXT_V3, schema_sql
from tests.backend_kit import raw_sql

# What clients write: json.dumps' defaults escape line breaks, quotes and every
# non-ASCII letter (an Anthropic tool_use input turned into OpenAI arguments).
COMMAND = {"command": 'cd /srv\nhelm rollback payments 41\necho "done"', "note": "回滚缓存队列"}


def _call(arguments: Any, name: str = "terminal") -> list[dict[str, Any]]:
    return [{"id": "c1", "type": "function", "function": {"name": name, "arguments": arguments}}]


def _sessions(store: SessionStore, query: str) -> list[str]:
    return [hit["session_id"] for hit in store.search_messages(query)]


@pytest.mark.parametrize(
    "arguments",
    [
        json.dumps(COMMAND),  # every escape json.dumps writes
        json.dumps(COMMAND, ensure_ascii=False),  # CJK as letters, line breaks escaped
        COMMAND,  # arguments given as an object, not JSON text
    ],
    ids=["ascii-escaped", "letters", "object"],
)
def test_words_after_escapes_and_escaped_cjk_are_found(
    session_backend: str, arguments: Any
) -> None:
    with open_session_store(session_backend) as store:
        store.create_session("s")
        store.append_message("s", "assistant", "", tool_calls=_call(arguments))
        store.create_session("other")
        store.append_message("other", "user", "nothing about that")
        for query in ("helm", "payments", '"helm rollback"', "done", "terminal", "command"):
            assert _sessions(store, query) == ["s"], query
        for query in ("回滚", "缓存队列", "队", "缓存队列 helm"):
            assert _sessions(store, query) == ["s"], query
        assert _sessions(store, "nhelm") == []  # the escape's letter is not glued on any more
        assert store.check() == []


def test_a_whole_tool_calls_list_written_with_escapes_is_found(session_backend: str) -> None:
    # The stored list itself escaped (json.dumps of the list): CJK only as \\u escapes.
    with open_session_store(session_backend) as store:
        store.create_session("s")
        listed = json.dumps(_call(json.dumps(COMMAND)))
        store.append_message("s", "assistant", "", tool_calls=listed)
        stored = raw_sql(session_backend, "SELECT tool_calls FROM messages")[0][0]
        assert stored.isascii()
        assert _sessions(store, "缓存") == ["s"]
        assert _sessions(store, "helm") == ["s"]
        assert store.check() == []


@pytest.mark.sqlite_only("SQLite's messages_fts_src view")
def test_arguments_without_escapes_are_indexed_as_written(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    with SessionStore(path) as store:
        store.create_session("s")
        store.append_message("s", "assistant", "", tool_calls=_call('{"path": "/etc/hosts"}'))
        store.append_message("s", "assistant", "", tool_calls=_call("not json at all\\n"))
        store.append_message("s", "assistant", "", tool_calls=_call('"a \\"quoted\\" string"'))
        rows = store._conn.execute("SELECT tool_calls FROM messages_fts_src ORDER BY id").fetchall()
    assert rows == [
        ('terminal {"path": "/etc/hosts"}',),
        ("terminal not json at all\\n",),  # not JSON: kept as it is
        ('terminal a "quoted" string',),  # a JSON string: decoded
    ]


def test_deep_or_broken_arguments_are_stored_and_indexed_without_error(
    session_backend: str,
) -> None:
    deep = "[" * 5000 + "]" * 5000
    with open_session_store(session_backend) as store:
        store.create_session("s")
        for arguments in (deep, '{"a": "\\u12', '{"\\ud800": "x"}', "\\"):
            store.append_message("s", "assistant", "", tool_calls=_call(arguments, "probe"))
        assert len(store.search_messages("probe", limit=10)) == 4
        assert store.check() == []


def test_gram_tokens_come_from_decoded_arguments() -> None:
    raw = json.dumps(_call(json.dumps({"查询": ["日志", 3, None], "n": "\\u4e00 literal"})))
    assert raw.isascii()
    envelope = ["id", "type", "function", "c1", "function", "name", "arguments", "terminal"]
    # a value that only looks escaped ('\\u4e00' as written) stays as it is
    assert tool_calls_text(raw).split() == [*envelope, "查询", "n", "日志", "\\u4e00", "literal"]
    assert tool_calls_text("[" * 3000) == "[" * 3000  # unreadable JSON: indexed as it is
    assert tool_calls_text(json.dumps(["[" * 3000])) == "[" * 3000


# -- upgrading a version-3 file ------------------------------------------------------------------


def _make_version_three(path: Path, rows: list[tuple[str, str, str | None]]) -> None:
    """A file as version 3 wrote it, holding *rows* (role, content, tool_calls) in session s."""
    SessionStore(path).close()
    old = schema_sql()
    for row in ("m", "new", "old"):
        old = old.replace(_TOOL_CALLS_TEXT.format(r=row), _TOOL_CALLS_TEXT_V3.format(r=row))
        old = old.replace(f" OR instr({row}.tool_calls, '\\u') > 0", "")
    assert "json_tree" not in old and "'\\u'" not in old
    conn = sqlite3.connect(path, isolation_level=None)
    for (trigger,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'"):
        conn.execute(f"DROP TRIGGER {trigger}")
    for view in ("messages_fts_src", "messages_fts_trigram_src"):
        conn.execute(f"DROP VIEW {view}")
    conn.executescript(old)
    conn.execute("INSERT INTO sessions(id, source, started_at) VALUES ('s', 'cli', 1)")
    conn.executemany(
        "INSERT INTO messages(session_id, role, timestamp, content, tool_calls) "
        "VALUES ('s', ?, 1, ?, ?)",
        rows,
    )
    conn.execute("UPDATE schema_version SET version = 3")
    conn.execute("UPDATE state_meta SET value = '3' WHERE key = 'hermes_memory.schema'")
    conn.close()


@pytest.mark.sqlite_only("a version-3 state.db and its upgrade")
def test_version_three_file_is_read_as_it_is_and_upgraded_exactly(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    plain = json.dumps(_call('{"path": "/etc/hosts"}'), ensure_ascii=False)
    rows: list[tuple[str, str, str | None]] = [
        ("assistant", "", json.dumps(_call(json.dumps(COMMAND)), ensure_ascii=False)),
        ("assistant", "checking", plain),
        ("user", "部署 the cache", None),
    ]
    _make_version_three(path, rows)
    before = path.read_bytes()

    with SessionStore(path, read_only=True) as reader:  # read as it is, never changed
        assert reader.layout.version == 3
        assert reader.search_messages("缓存队列") == []  # version 3 indexed '\\u7f13\\u5b58…'
        assert _sessions(reader, "hosts") == ["s"]
        assert reader.check() == []
    assert path.read_bytes() == before

    with SessionStore(path) as store:
        assert store.layout.version == SCHEMA_VERSION
        assert [h["id"] for h in store.search_messages("helm")] == [1]
        assert [h["id"] for h in store.search_messages("缓存队列")] == [1]
        assert [h["id"] for h in store.search_messages("hosts")] == [2]
        assert store.check() == []
        for index in ("messages_fts", "messages_fts_trigram"):  # version 3's text is gone
            for token in ("nhelm", "u7f13"):
                found = store._conn.execute(
                    f"SELECT rowid FROM {index} WHERE {index} MATCH ?", (token,)
                ).fetchall()
                assert found == [], (index, token)
        # Rows indexed by version 3, re-indexed or not, are updated and deleted exactly.
        store._conn.execute("UPDATE messages SET tool_calls = NULL WHERE id = 1")
        store._conn.execute("DELETE FROM messages WHERE id = 2")
        assert store.check() == []
        for query in ("helm", "缓存队列", "hosts", "terminal"):
            assert store.search_messages(query) == [], query
        assert [h["id"] for h in store.search_messages("部署")] == [3]


@pytest.mark.sqlite_only("bytes a raw sqlite3 writer stored that are not UTF-8")
def test_text_another_program_stored_as_invalid_utf8_is_read_with_replacements(
    tmp_path: Path,
) -> None:
    path = tmp_path / "state.db"
    with SessionStore(path) as store:
        store.create_session("s")
        store.append_message("s", "user", "rollback plan for 部署")
    conn = sqlite3.connect(path, isolation_level=None)  # bytes Python itself cannot write
    conn.execute(
        "INSERT INTO messages(session_id, role, timestamp, content) "
        "VALUES ('s', 'assistant', 2, CAST(X'726f6c6c6261636b20ff20e983a8e7bdb2' AS TEXT))"
    )
    conn.close()
    with SessionStore(path) as store:  # the queued CJK row is tokenised despite the bad byte
        store.append_message("s", "user", "still writable")
        hits = store.search_messages("rollback")
        assert sorted(h["id"] for h in hits) == [1, 2]
        assert sorted(h["id"] for h in store.search_messages("部署")) == [1, 2]
        assert "\ufffd" in store.get_messages("s")[1]["content"]
        assert store.check() == []
    with SessionStore(path, read_only=True) as reader:
        assert sorted(h["id"] for h in reader.search_messages("rollback")) == [1, 2]


def test_a_question_counts_words_inside_a_multi_line_command(session_backend: str) -> None:
    # Coverage of the question reads the decoded arguments: 'helm' follows a '\n' escape.
    command = "cd /srv/charts\nhelm rollback payments 41\nkubectl get pods"
    with open_session_store(session_backend) as store:
        store.create_session("did_it")
        store.append_message("did_it", "user", "the release is broken, undo it")
        store.append_message("did_it", "assistant", "", tool_calls=_call({"command": command}))
        store.create_session("talked_about_it")
        # Three of the four words; the command holds all four, two of them after a '\n'.
        store.append_message("talked_about_it", "user", "helm is nice. payments asked kubectl")
        store.append_message("talked_about_it", "assistant", "sure, docs are in the wiki")
        hits = store.search_messages("How did we rollback payments with helm and kubectl?")
    assert hits[0]["session_id"] == "did_it"
