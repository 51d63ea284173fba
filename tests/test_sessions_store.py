"""SessionStore: lifecycle, messages, titles, lineage, listing, schema and bad files.

The ``store`` tests run on both backends (state.db and PostgreSQL, ``session_backend``);
the ones about the SQLite file itself are marked ``sqlite_only``.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_core.errors import SessionStoreError, SessionTitleError
from hermes_core.sessions import SCHEMA_VERSION, SessionStore, default_db_path
from hermes_core.sessions.backends import open_session_store
from hermes_core.sessions.titles import sanitize_title
from tests.backend_kit import raw_sql


@pytest.fixture
def store(session_backend: str) -> Iterator[SessionStore]:
    with open_session_store(session_backend) as opened:
        yield opened


# -- lifecycle ----------------------------------------------------------------------------


@pytest.mark.sqlite_only("where state.db lives")
def test_default_path_follows_hermes_home(hermes_home: Path) -> None:
    assert default_db_path() == hermes_home / "state.db"
    with SessionStore() as opened:
        assert opened.path == hermes_home / "state.db"
    assert (hermes_home / "state.db").is_file()


def test_create_and_get_session(store: SessionStore) -> None:
    assert store.create_session("s1", source="telegram", model="m-1") == "s1"
    row = store.get_session("s1")
    assert row is not None
    assert row["source"] == "telegram"
    assert row["model"] == "m-1"
    assert row["ended_at"] is None
    assert store.get_session("missing") is None


def test_duplicate_create_keeps_first_writer_and_fills_gaps(store: SessionStore) -> None:
    store.create_session("s1", source="cli")
    store.create_session("s1", source="telegram", model="late-model", user_id="u1")
    row = store.get_session("s1")
    assert row is not None
    assert row["source"] == "cli"
    assert row["model"] == "late-model"
    assert row["user_id"] == "u1"


def test_ensure_session_upgrades_unknown_source(store: SessionStore) -> None:
    store.ensure_session("s1")
    store.append_message("s1", "user", "hello")
    store.create_session("s1", source="discord")
    row = store.get_session("s1")
    assert row is not None and row["source"] == "discord"


def test_first_end_wins_until_reopened(store: SessionStore) -> None:
    store.create_session("s1")
    assert store.end_session("s1", "compression") is True
    first = store.get_session("s1")
    assert first is not None and isinstance(first["ended_at"], float)
    assert store.end_session("s1", "user_exit") is False
    again = store.get_session("s1")
    assert again is not None
    assert (again["end_reason"], again["ended_at"]) == ("compression", first["ended_at"])
    assert store.reopen_session("s1") is True
    assert store.end_session("s1", "user_exit") is True
    final = store.get_session("s1")
    assert final is not None and final["end_reason"] == "user_exit"


def test_system_prompt_and_token_counts(store: SessionStore) -> None:
    store.create_session("s1")
    assert store.update_system_prompt("s1", "You are helpful.")
    store.update_token_counts("s1", 200, 100)
    store.update_token_counts("s1", 100, 50, model="backfilled")
    store.update_token_counts("s1", 1, 1, model="ignored")
    row = store.get_session("s1")
    assert row is not None
    assert (row["input_tokens"], row["output_tokens"]) == (301, 151)
    assert row["model"] == "backfilled"
    assert row["system_prompt"] == "You are helpful."
    store.update_token_counts("s1", 5, 6, absolute=True)
    row = store.get_session("s1")
    assert row is not None and (row["input_tokens"], row["output_tokens"]) == (5, 6)


def test_parent_session_is_stored_and_must_exist(store: SessionStore) -> None:
    store.create_session("root")
    store.create_session("child", parent_session_id="root")
    row = store.get_session("child")
    assert row is not None and row["parent_session_id"] == "root"
    with pytest.raises(SessionStoreError, match="Parent session 'nope' does not exist"):
        store.create_session("orphan", parent_session_id="nope")
    assert store.get_session("orphan") is None


# -- messages -----------------------------------------------------------------------------


def test_messages_in_order_with_counts(store: SessionStore) -> None:
    store.create_session("s1")
    first = store.append_message("s1", "user", "Hello")
    second = store.append_message("s1", "assistant", "Hi there!")
    assert second > first
    assert [m["content"] for m in store.get_messages("s1")] == ["Hello", "Hi there!"]
    row = store.get_session("s1")
    assert row is not None and row["message_count"] == 2
    assert store.get_messages_as_conversation("s1") == [
        {"role": "user", "content": "Hello"},
        {"role": "assistant", "content": "Hi there!"},
    ]


def test_append_to_missing_session_is_refused(store: SessionStore) -> None:
    with pytest.raises(SessionStoreError, match="create_session"):
        store.append_message("ghost", "user", "hi")
    assert store.message_count() == 0


def test_tool_call_counting(store: SessionStore) -> None:
    store.create_session("a")
    store.append_message("a", "tool", "result", tool_call_id="c0", tool_name="t")
    assert store.get_session("a")["tool_call_count"] == 0  # type: ignore[index]
    calls = [
        {"id": "c1", "type": "function", "function": {"name": "x", "arguments": "{}"}},
        {"id": "c2", "type": "function", "function": {"name": "y", "arguments": '{"k": 1}'}},
    ]
    store.create_session("b")
    store.append_message("b", "assistant", "", tool_calls=calls[:1])
    assert store.get_session("b")["tool_call_count"] == 1  # type: ignore[index]
    store.create_session("c")
    store.append_message("c", "assistant", "", tool_calls=calls)
    store.append_message("c", "tool", "r1", tool_call_id="c1", tool_name="x")
    store.append_message("c", "tool", "r2", tool_call_id="c2", tool_name="y")
    assert store.get_session("c")["tool_call_count"] == 2  # type: ignore[index]
    messages = store.get_messages("c")
    assert messages[0]["tool_calls"] == calls
    conversation = store.get_messages_as_conversation("c")
    assert conversation[0]["tool_calls"] == calls
    assert conversation[1] == {"role": "tool", "content": "r1", "tool_call_id": "c1", "name": "x"}


def test_a_tool_result_without_a_name_takes_the_name_of_its_call(store: SessionStore) -> None:
    store.create_session("s")
    calls = [
        {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}},
        {"id": "c2", "name": "read_file", "arguments": {}},
    ]
    store.append_messages(
        "s",
        [
            {"role": "assistant", "content": None, "tool_calls": json.dumps(calls)},
            {"role": "tool", "content": "sunny", "tool_call_id": "c1"},
            {"role": "tool", "content": "text", "tool_call_id": "c2", "name": "cat"},
            {"role": "tool", "content": "lost", "tool_call_id": "c9"},
        ],
    )
    assert [m["tool_name"] for m in store.get_messages("s")[1:]] == ["get_weather", "cat", None]
    assert sorted(h["role"] for h in store.search_messages("get_weather")) == ["assistant", "tool"]


def test_a_result_stored_after_its_call_takes_the_calls_name(store: SessionStore) -> None:
    # A host storing the reply's calls, then each result as it comes, one write each.
    store.create_session("s")
    store.create_session("other")
    store.append_message(
        "other", "assistant", None, tool_calls=[{"id": "c2", "name": "elsewhere", "arguments": {}}]
    )
    store.append_message(
        "s",
        "assistant",
        None,
        tool_calls=[
            {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
        ],
    )
    store.append_message("s", "user", "meanwhile")
    store.append_message("s", "tool", "sunny", tool_call_id="c1")
    store.append_message("s", "tool", "not this session's call", tool_call_id="c2")
    store.append_message("s", "tool", "named", tool_call_id="c1", tool_name="weather_v2")
    assert [m["tool_name"] for m in store.get_messages("s")[2:]] == [
        "get_weather",
        None,
        "weather_v2",
    ]
    assert sorted(h["role"] for h in store.search_messages("get_weather")) == ["assistant", "tool"]
    assert store.get_messages_as_conversation("s")[2]["name"] == "get_weather"


def test_tool_calls_json_string_is_not_double_encoded(store: SessionStore) -> None:
    store.create_session("s")
    text = json.dumps([{"id": "c", "function": {"name": "f", "arguments": "{}"}}])
    store.append_message("s", "assistant", "", tool_calls=text)
    assert store.get_messages("s")[0]["tool_calls"] == json.loads(text)


def test_append_messages_is_all_or_nothing(store: SessionStore) -> None:
    store.create_session("s")
    ids = store.append_messages(
        "s",
        [
            {"role": "user", "content": "one"},
            {"role": "assistant", "content": "two", "finish_reason": "stop"},
            {"role": "tool", "content": "three", "tool_call_id": "c", "name": "lookup"},
        ],
    )
    assert len(ids) == 3 and ids == sorted(ids)
    rows = store.get_messages("s")
    assert [r["id"] for r in rows] == ids
    assert rows[1]["finish_reason"] == "stop"
    assert rows[2]["tool_name"] == "lookup"
    stamps = [r["timestamp"] for r in rows]
    assert stamps == sorted(stamps) and len(set(stamps)) == 3
    with pytest.raises(SessionStoreError, match="role"):
        store.append_messages("s", [{"role": "user", "content": "ok"}, {"content": "no role"}])
    assert store.message_count("s") == 3


def test_multimodal_content_round_trips_and_is_searchable(store: SessionStore) -> None:
    parts = [
        {"type": "text", "text": "look at this flamegraph"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
    ]
    store.create_session("s")
    store.append_message("s", "user", parts)
    assert store.get_messages("s")[0]["content"] == parts
    hits = store.search_messages("flamegraph")
    assert [h["session_id"] for h in hits] == ["s"]
    assert store.search_messages("base64") == []


def test_lone_surrogates_are_stored_safely(store: SessionStore) -> None:
    store.create_session("s")
    store.append_message("s", "user", "broken \ud800 text")
    assert store.get_messages("s")[0]["content"].startswith("broken ")


def test_leaked_memory_context_is_stripped_on_replay(store: SessionStore) -> None:
    store.create_session("s")
    leaked = "Sure.<memory-context>\nold recalled facts\n</memory-context> The answer is 4."
    store.append_message("s", "assistant", leaked)
    content = store.get_messages_as_conversation("s")[0]["content"]
    assert "recalled" not in content and "memory-context" not in content
    assert content.endswith("The answer is 4.")


def test_delete_session_orphans_children(store: SessionStore) -> None:
    store.create_session("root")
    store.append_message("root", "user", "bye")
    store.create_session("child", parent_session_id="root")
    store.create_session("grandchild", parent_session_id="child")
    assert store.delete_session("root") is True
    assert store.get_session("root") is None
    assert store.message_count("root") == 0
    assert store.get_session("child")["parent_session_id"] is None  # type: ignore[index]
    assert store.get_session("grandchild")["parent_session_id"] == "child"  # type: ignore[index]
    assert store.delete_session("root") is False
    assert store.search_messages("bye") == []


def test_resolve_session_id_prefixes(store: SessionStore) -> None:
    for sid in ("20240101_a1", "20240101_b2", "x_y", "xzy"):
        store.create_session(sid)
    assert store.resolve_session_id("20240101_a1") == "20240101_a1"
    assert store.resolve_session_id("20240101_b") == "20240101_b2"
    assert store.resolve_session_id("20240101") is None  # ambiguous
    assert store.resolve_session_id("x_") == "x_y"  # '_' is literal, not a wildcard
    assert store.resolve_session_id("nope") is None


def test_meta_upserts(store: SessionStore) -> None:
    assert store.get_meta("k") is None
    store.set_meta("k", "1")
    store.set_meta("k", "2")
    assert store.get_meta("k") == "2"


# -- titles -------------------------------------------------------------------------------


def test_titles_set_clear_and_unique(store: SessionStore) -> None:
    store.create_session("a")
    store.create_session("b")
    assert store.get_session("a")["title"] is None  # type: ignore[index]
    assert store.set_session_title("a", "  My\tproject\u200b  ") is True
    assert store.get_session("a")["title"] == "My project"  # type: ignore[index]
    assert store.set_session_title("a", "My project") is True  # re-setting your own is fine
    with pytest.raises(SessionTitleError, match="already in use by session a"):
        store.set_session_title("b", "My project")
    with pytest.raises(ValueError, match="too long"):
        store.set_session_title("b", "x" * 101)
    store.set_session_title("b", "x" * 100)
    assert store.set_session_title("a", "") is True
    assert store.get_session("a")["title"] is None  # type: ignore[index]
    assert store.set_session_title("missing", "t") is False
    assert store.get_session_by_title("x" * 100)["id"] == "b"  # type: ignore[index]


def test_title_keeps_unicode_and_drops_controls(store: SessionStore) -> None:
    store.create_session("a")
    store.set_session_title("a", "Café 记忆 🚀\x00\x7f\u202e!")
    assert store.get_session("a")["title"] == "Café 记忆 🚀!"  # type: ignore[index]
    store.end_session("a", "done")
    assert store.get_session("a")["title"] == "Café 记忆 🚀!"  # type: ignore[index]


def test_next_title_in_lineage(store: SessionStore) -> None:
    assert store.next_title_in_lineage("My Session") == "My Session"
    store.create_session("a", title="My Session")
    assert store.next_title_in_lineage("My Session") == "My Session #2"
    store.create_session("b", title="My Session #2")
    assert store.next_title_in_lineage("My Session") == "My Session #3"
    assert store.next_title_in_lineage("My Session #2") == "My Session #3"
    store.create_session("c", title="test_project")
    assert store.next_title_in_lineage("testXproject") == "testXproject"
    store.create_session("d", title="100% done")
    assert store.next_title_in_lineage("100% done") == "100% done #2"
    assert store.next_title_in_lineage("100X done") == "100X done"


# -- lineage and listing ---------------------------------------------------------------------


def _chain(store: SessionStore) -> None:
    """root1 (compressed) -> mid1 (compressed) -> tip1; delegate1 spawned from root1 while live."""
    store.create_session("root1", title="Long chat", started_at=1000.0)
    store.append_message("root1", "user", "first question", timestamp=1001.0)
    store.create_session(
        "delegate1", source="delegate", parent_session_id="root1", started_at=1002.0
    )
    store.append_message("delegate1", "user", "subtask", timestamp=1003.0)
    store.end_session("delegate1", "delegation_complete")
    store.end_session("root1", "compression")
    store.create_session("mid1", parent_session_id="root1", started_at=time.time() + 1)
    store.append_message("mid1", "user", "middle question")
    store.end_session("mid1", "compression")
    store.create_session("tip1", parent_session_id="mid1", started_at=time.time() + 2)
    store.append_message("tip1", "user", "latest message")
    store.create_session("between", started_at=1500.0)
    store.append_message("between", "user", "unrelated", timestamp=1501.0)


def test_compression_tip_skips_delegates(store: SessionStore) -> None:
    _chain(store)
    assert store.get_compression_tip("root1") == "tip1"
    assert store.get_compression_tip("mid1") == "tip1"
    assert store.get_compression_tip("tip1") == "tip1"
    assert store.get_compression_tip("between") == "between"
    assert store.get_lineage("mid1") == ["root1", "mid1", "tip1"]
    assert store.get_lineage("delegate1") == ["delegate1"]
    assert store.get_lineage_root("tip1") == "root1"
    assert store.get_lineage_members("tip1") == {"root1", "delegate1", "mid1", "tip1"}


def test_delegate_marker_is_never_a_continuation(store: SessionStore) -> None:
    store.create_session("p")
    store.end_session("p", "compression")
    store.create_session(
        "sub",
        parent_session_id="p",
        model_config={"_delegate_from": "p"},
        started_at=time.time() + 5,
    )
    assert store.get_compression_tip("p") == "p"


def test_lineage_walks_survive_cycles(store: SessionStore, session_backend: str) -> None:
    store.create_session("a")
    store.create_session("b", parent_session_id="a")
    # a damaged file (or another program) could hold a cycle; walks must end
    raw_sql(session_backend, "UPDATE sessions SET parent_session_id = 'b' WHERE id = 'a'")
    store.end_session("a", "compression")
    store.end_session("b", "compression")
    assert store.get_lineage_root("a") in {"a", "b"}
    assert store.get_compression_tip("a") in {"a", "b"}
    assert set(store.get_lineage("a")) == {"a", "b"}


def test_listing_projects_compression_tips(store: SessionStore) -> None:
    _chain(store)
    rows = store.list_sessions(limit=10)
    ids = [row["id"] for row in rows]
    # Ordered by the ROOT's start: 'between' started after root1, so it sorts first.
    assert ids == ["between", "tip1"]
    tip = rows[1]
    assert tip["lineage_root_id"] == "root1"
    assert tip["lineage_ids"] == ["root1", "mid1", "tip1"]
    assert tip["preview"] == "latest message"
    assert tip["ended_at"] is None and tip["end_reason"] is None
    assert tip["started_at"] == 1000.0
    assert tip["title"] == "Long chat"
    raw = store.list_sessions(limit=10, collapse_lineage=False)
    assert {row["id"] for row in raw} == {"root1", "delegate1", "mid1", "tip1", "between"}
    root = next(row for row in raw if row["id"] == "root1")
    assert root["end_reason"] == "compression" and "lineage_root_id" not in root


def test_listing_by_last_activity_and_sources(store: SessionStore) -> None:
    _chain(store)
    store.create_session("tooly", source="tool", started_at=2000.0)
    recent = store.list_sessions(limit=10, order_by_last_active=True, exclude_sources=["tool"])
    assert [row["id"] for row in recent] == ["tip1", "between"]
    assert [row["id"] for row in store.list_sessions(source="tool")] == ["tooly"]


def test_listing_conversations_active_in_a_span(store: SessionStore) -> None:
    _chain(store)  # root1 started at 1000 and goes on now; 'between' lived at 1500-1501
    now = time.time()
    by_activity = {"order_by_last_active": True, "limit": 10}
    assert [r["id"] for r in store.list_sessions(active_since=now - 60, **by_activity)] == ["tip1"]
    assert [r["id"] for r in store.list_sessions(active_since=now - 60)] == ["tip1"]
    assert [
        r["id"] for r in store.list_sessions(active_since=now - 60, collapse_lineage=False)
    ] == [
        "tip1",
        "mid1",
    ]
    span = {"active_since": 1400.0, "active_until": 1600.0}
    assert [r["id"] for r in store.list_sessions(**span, **by_activity)] == ["tip1", "between"]
    assert [r["id"] for r in store.list_sessions(**span)] == ["between", "tip1"]  # by start
    assert store.list_sessions(active_until=999.0, **by_activity) == []


def test_listing_preview_rules(store: SessionStore) -> None:
    store.create_session("s", started_at=100.0)
    assert store.list_sessions()[0]["preview"] == ""
    assert store.list_sessions()[0]["last_active"] == 100.0
    store.append_message("s", "system", "system text")
    store.append_message("s", "user", "line one\nline two " + "x" * 100)
    row = store.list_sessions()[0]
    assert row["preview"].startswith("line one line two")
    assert len(row["preview"]) == 63 and row["preview"].endswith("...")
    assert row["last_active"] > 100.0


def test_branch_child_is_listed(store: SessionStore) -> None:
    store.create_session("main", started_at=10.0)
    store.end_session("main", "branched")
    store.create_session("branch", parent_session_id="main", started_at=20.0)
    store.create_session(
        "reset", parent_session_id="branch", model_config={"_reset_from": "branch"}
    )
    ids = {row["id"] for row in store.list_sessions()}
    assert {"main", "branch", "reset"} <= ids


# -- schema ---------------------------------------------------------------------------------


@pytest.mark.sqlite_only("the state.db tables, triggers, WAL and file mode")
def test_schema_pragmas_and_version(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    SessionStore(path).close()
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        assert {
            "sessions",
            "messages",
            "state_meta",
            "schema_version",
            "messages_fts",
            "messages_fts_trigram",
            "messages_cjk_grams",
        } <= tables
        assert conn.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)]
        triggers = {
            r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='trigger'")
        }
        for table in ("messages_fts", "messages_fts_trigram"):
            assert {f"{table}_insert", f"{table}_delete", f"{table}_update"} <= triggers
    finally:
        conn.close()
    assert path.stat().st_mode & 0o777 == 0o600


@pytest.mark.sqlite_only("a SQLite pragma")
def test_foreign_keys_are_on(store: SessionStore) -> None:
    assert store._conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1


@pytest.mark.sqlite_only("SQLite's data_version")
def test_reopening_is_idempotent_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    with SessionStore(path) as first:
        first.create_session("s")
        first.append_message("s", "user", "kept")
    changes = sqlite3.connect(path).execute("PRAGMA data_version").fetchone()
    with SessionStore(path) as second:
        assert second.search_messages("kept")[0]["session_id"] == "s"
    assert sqlite3.connect(path).execute("PRAGMA data_version").fetchone() == changes


@pytest.mark.sqlite_only("state.db's own migrations")
def test_version_one_file_is_migrated_and_backfilled(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    with SessionStore(path) as store:
        store.create_session("s")
        store.append_message("s", "user", "旧的记忆断裂问题")
    conn = sqlite3.connect(path, isolation_level=None)
    conn.executescript(  # what a version-1 file looked like: no CJK gram index
        """
        DROP TRIGGER messages_cjk_grams_insert;
        DROP TRIGGER messages_cjk_grams_delete;
        DROP TRIGGER messages_cjk_grams_update;
        DROP TABLE messages_cjk_grams;
        DROP TABLE messages_cjk_pending;
        UPDATE schema_version SET version = 1;
        """
    )
    conn.close()
    with SessionStore(path) as store:
        assert store.layout.version == SCHEMA_VERSION
        assert store.layout.grams is not None
        assert [h["session_id"] for h in store.search_messages("记忆")] == ["s"]
        assert [h["session_id"] for h in store.search_messages("断")] == ["s"]


@pytest.mark.sqlite_only("state.db's own migrations")
def test_a_version_four_file_gains_where_sessions_ran(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    with SessionStore(path) as store:
        store.create_session("old")
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("ALTER TABLE sessions DROP COLUMN cwd")
    conn.execute("ALTER TABLE sessions DROP COLUMN git_repo_root")
    conn.execute("UPDATE schema_version SET version = 4")
    conn.close()
    with SessionStore(path) as store:
        assert store.layout.version == SCHEMA_VERSION
        store.create_session("new", cwd="/srv/app/web", git_repo_root="/srv/app")
        store.create_session("new", cwd="/elsewhere")  # the first writer wins
        assert store.get_session("new")["cwd"] == "/srv/app/web"  # type: ignore[index]
        assert store.get_session("new")["git_repo_root"] == "/srv/app"  # type: ignore[index]
        assert store.get_session("old")["cwd"] is None  # type: ignore[index]
    # what a Hermes plugin reads from state.db (local_rag's project scope)
    row = (
        sqlite3.connect(path)
        .execute("SELECT git_repo_root, cwd FROM sessions WHERE id = 'new'")
        .fetchone()
    )
    assert row == ("/srv/app", "/srv/app/web")


@pytest.mark.sqlite_only("state.db's own migrations")
def test_missing_columns_are_added_on_open(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    SessionStore(path).close()
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("DROP INDEX idx_sessions_user_title_unique")
    conn.execute("ALTER TABLE sessions DROP COLUMN title")
    conn.execute("UPDATE schema_version SET version = 1")
    conn.close()
    with SessionStore(path) as store:
        store.create_session("s", title="back again")
        assert store.get_session("s")["title"] == "back again"  # type: ignore[index]


# -- bad files --------------------------------------------------------------------------------


@pytest.mark.sqlite_only("a damaged file")
def test_corrupt_file_error_names_it(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    path.write_bytes(b"this is not a database at all" * 200)
    for read_only in (False, True):
        with pytest.raises(SessionStoreError, match=str(path)):
            SessionStore(path, read_only=read_only)
    assert path.read_bytes().startswith(b"this is not a database")


@pytest.mark.sqlite_only("a damaged file")
def test_damaged_file_is_not_blamed_on_permissions(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    with SessionStore(path) as store:
        store.create_session("s")
    header = path.read_bytes()[:100]
    path.write_bytes(header + b"\xff" * 8000)  # a valid header over scribbled pages
    for read_only in (False, True):
        with pytest.raises(SessionStoreError) as info:
            SessionStore(path, read_only=read_only)
        assert str(path) in str(info.value) and "not an intact SQLite database" in str(info.value)
        assert "writable" not in str(info.value)
    assert path.read_bytes() == header + b"\xff" * 8000


@pytest.mark.sqlite_only("an empty file")
def test_empty_file_read_only_says_it_is_empty(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    path.touch()
    with pytest.raises(SessionStoreError, match="is empty"):
        SessionStore(path, read_only=True)
    assert path.read_bytes() == b""


@pytest.mark.sqlite_only("state.db's schema_version")
def test_file_of_a_newer_version_is_read_but_never_downgraded(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    with SessionStore(path) as store:
        store.create_session("s")
        store.append_message("s", "user", "nginx upstream")
    newer = SCHEMA_VERSION + 1
    conn = sqlite3.connect(path)
    conn.execute("UPDATE schema_version SET version = ?", (newer,))
    conn.execute("UPDATE state_meta SET value = ? WHERE key = 'hermes_memory.schema'", (newer,))
    conn.commit()
    conn.close()
    before = path.read_bytes()
    with pytest.raises(SessionStoreError, match="newer hermes-memory") as info:
        SessionStore(path)
    assert str(path) in str(info.value) and "Upgrade" in str(info.value)
    assert path.read_bytes() == before
    with SessionStore(path, read_only=True) as reader:
        assert [hit["session_id"] for hit in reader.search_messages("nginx")] == ["s"]
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT version FROM schema_version").fetchall() == [(newer,)]
    conn.close()


@pytest.mark.sqlite_only("another application's SQLite file")
def test_other_sqlite_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE recipes (name TEXT)")
    conn.commit()
    conn.close()
    with pytest.raises(SessionStoreError, match="another application"):
        SessionStore(path)
    with pytest.raises(SessionStoreError, match="no Hermes sessions"):
        SessionStore(path, read_only=True)
    names = {r[0] for r in sqlite3.connect(path).execute("SELECT name FROM sqlite_master")}
    assert names == {"recipes"}


@pytest.mark.sqlite_only("a missing state.db file")
def test_read_only_store_refuses_writes_and_missing_files(tmp_path: Path) -> None:
    with pytest.raises(SessionStoreError, match="No session database"):
        SessionStore(tmp_path / "absent.db", read_only=True)
    assert not (tmp_path / "absent.db").exists()
    SessionStore(tmp_path / "state.db").close()
    with (
        SessionStore(tmp_path / "state.db", read_only=True) as reader,
        pytest.raises(SessionStoreError, match="read-only"),
    ):
        reader.create_session("s")


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("finish_reason", {"a": 1}),
        ("tool_call_id", ["c1"]),
        ("tool_name", {"x"}),
        ("token_count", "12"),
    ],
)
def test_message_fields_of_the_wrong_type_are_named(
    store: SessionStore, field: str, value: object
) -> None:
    store.create_session("s")
    with pytest.raises(SessionStoreError, match=field):
        store.append_messages(
            "s", [{"role": "user", "content": "a"}, {"role": "tool", field: value}]
        )
    assert store.message_count("s") == 0


def test_numeric_ids_are_stored_as_text_and_huge_times_fall_back(store: SessionStore) -> None:
    store.create_session("s")
    before = time.time()
    store.append_message("s", "tool", "ok", tool_call_id=7, timestamp=10**400)  # type: ignore[arg-type]
    (message,) = store.get_messages("s")
    assert message["tool_call_id"] == "7"
    assert before <= message["timestamp"] <= time.time()


def test_import_of_two_sessions_with_one_id_or_title_is_refused(store: SessionStore) -> None:
    one = {"id": "a", "messages": [{"role": "user", "content": "x"}]}
    with pytest.raises(SessionStoreError, match="Two imported sessions have the id 'a'"):
        store.import_sessions([one, dict(one)])
    titled = [{**one, "title": "T"}, {**one, "id": "b", "title": "T"}]
    with pytest.raises(SessionStoreError, match="Two imported sessions have the title 'T'"):
        store.import_sessions(titled)
    with pytest.raises(SessionTitleError, match=r"Session 'a'.*too long.*Nothing was imported"):
        store.import_sessions([{**one, "title": "t" * 101}])
    assert store.session_count() == 0


def test_search_and_listing_arguments_out_of_range(store: SessionStore) -> None:
    store.create_session("abc")
    store.create_session("abd")
    store.append_messages("abc", [{"role": "user", "content": f"nginx {n}"} for n in range(3)])
    assert len(store.search_messages("nginx", limit=10**30)) == 3
    assert store.search_messages("nginx", offset=10**30) == []
    assert len(store.list_sessions(limit=10**30)) == 2
    assert [hit["session_id"] for hit in store.search_messages("nginx", session_ids="abc")] == [
        "abc"
    ] * 3  # one id, not its characters
    assert store.search_messages("nginx", exclude_session_ids="abc") == []
    for bad in ({"limit": "5"}, {"since": "yesterday"}, {"until": float("nan")}):
        with pytest.raises(SessionStoreError, match=next(iter(bad))):
            store.search_messages("nginx", **bad)  # type: ignore[arg-type]
    with pytest.raises(SessionStoreError, match="active_since"):
        store.list_sessions(active_since="today")  # type: ignore[arg-type]
    assert store.resolve_session_id("") is None  # not "the only id starting with nothing"


def test_a_read_only_store_refuses_writes(session_backend: str) -> None:
    open_session_store(session_backend).close()
    with open_session_store(session_backend, read_only=True) as reader:
        for write in (
            lambda: reader.create_session("s"),
            lambda: reader.set_meta("k", "v"),
            lambda: reader.delete_conversation("s"),
        ):
            with pytest.raises(SessionStoreError, match="read-only"):
                write()
        assert reader.session_count() == 0


def test_closed_store_says_so(session_backend: str) -> None:
    store = open_session_store(session_backend)
    store.close()
    store.close()
    with pytest.raises(SessionStoreError, match="closed"):
        store.get_session("s")


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("  padded  ", "padded"),
        ("many   inner    spaces", "many inner spaces"),
        ("tabs\tand\nnewlines\r\n", "tabs and newlines"),
        (None, None),
        ("", None),
        ("   ", None),
        ("bell\x07 and null\x00", "bell and null"),
        ("del\x7f", "del"),
        ("zero\u200bwidth", "zerowidth"),
        ("rtl\u202eoverride", "rtloverride"),
        ("\ufeffbom", "bom"),
        ("\u200b\u200c\ufeff", None),
        ("x" * 100, "x" * 100),
        ("emoji 🚀 中文 café — «quotes»!?", "emoji 🚀 中文 café — «quotes»!?"),
    ],
)
def test_sanitize_title(raw: str | None, clean: str | None) -> None:
    assert sanitize_title(raw) == clean


@pytest.mark.parametrize("length", [101, 150])
def test_sanitize_title_rejects_long_titles(length: int) -> None:
    with pytest.raises(SessionTitleError, match=f"Title too long \\({length} chars, max 100\\)"):
        sanitize_title("t" * length)


def test_lone_surrogates_are_stored_as_replacement_characters(store: SessionStore) -> None:
    store.create_session("s-surrogate")
    store.append_message("s-surrogate", "user", "bad \ud800 text")
    assert store.get_messages("s-surrogate")[0]["content"] == "bad \ufffd text"


def test_tool_calls_nested_past_the_json_readers_depth_are_stored(store: SessionStore) -> None:
    store.create_session("s")
    deep = "[" * 100_000 + "]" * 100_000  # more nesting than json.loads can read
    mid = store.append_message("s", "assistant", "部署回滚 with a hostile payload", tool_calls=deep)
    assert [hit["id"] for hit in store.search_messages("部署回滚")] == [mid]
    (message,) = store.get_messages("s")
    assert message["tool_calls"] == deep  # kept as the text it was
