"""Hostile input, round 16: deleting and pruning, imports, ids, and rows other programs wrote.

Each test is a probe that exposed a real problem, kept with its fix: naming a
conversation to delete, conversations longer than a lineage walk's bound,
import files with numbers Python refuses to read, session ids that look like
other ids, and message rows whose text another program stored as a BLOB.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core.cli import cli
from hermes_core.errors import SessionImportError, SessionStoreError
from hermes_core.sessions import SessionStore
from hermes_core.sessions.importer import read_jsonl
from hermes_core.sessions.lineage import MAX_HOPS
from hermes_core.sessions.records import valid_session_id


def run(*args: str, stdin: str | None = None) -> tuple[int, str]:
    result: Result = CliRunner().invoke(cli, ["sessions", *args], input=stdin)
    assert not isinstance(result.exception, Exception) or isinstance(
        result.exception, SystemExit
    ), result.exception  # a handled error, not a traceback
    return result.exit_code, " ".join(result.output.split())


# -- naming the conversation to delete ------------------------------------------------------------


def test_an_exact_title_is_not_taken_for_the_start_of_another_id(hermes_home: Path) -> None:
    """`sessions delete abc` meant the session titled "abc", not the one whose id starts so."""
    with SessionStore(hermes_home / "state.db", semantic="off") as store:
        store.create_session("abc123", title="Tax return")
        store.append_message("abc123", "user", "keep this one")
        store.create_session("zz9", title="abc")
        store.append_message("zz9", "user", "delete this one")
    code, out = run("delete", "abc", "--yes")
    assert code == 0, out
    assert "'abc' (zz9): 1 session, 1 message." in out
    with SessionStore(hermes_home / "state.db", read_only=True) as store:
        assert store.get_session("zz9") is None
        assert store.get_session("abc123") is not None
    code, out = run("show", "abc1")  # a unique prefix still names a session
    assert code == 0 and "keep this one" in out


def test_an_id_prefix_names_ids_of_its_own_case_only(hermes_home: Path) -> None:
    """Ids are case-sensitive (`=` compares them so): `ABC` does not name `abc123`."""
    with SessionStore(hermes_home / "state.db", semantic="off") as store:
        store.create_session("abc123")
        store.append_message("abc123", "user", "keep this one")
        assert store.resolve_session_id("ABC") is None
        assert store.session_ids_starting_with("ABC") == []
        assert store.resolve_session_id("abc") == "abc123"
        store.create_session("a%c")
        store.create_session("a[b]*?")
        assert store.session_ids_starting_with("a%") == ["a%c"]  # no wildcard either
        assert store.session_ids_starting_with("a[b]*") == ["a[b]*?"]
        assert store.session_ids_starting_with("a[") == ["a[b]*?"]
    code, out = run("delete", "ABC", "--yes")
    assert code == 1 and "No session matches 'ABC'" in out
    with SessionStore(hermes_home / "state.db", read_only=True) as store:
        assert store.get_session("abc123") is not None


@given(prefix=st.text(min_size=1, max_size=6))
@settings(max_examples=150, deadline=None)
def test_prefix_lookup_agrees_with_str_startswith(
    tmp_path_factory: pytest.TempPathFactory, prefix: str
) -> None:
    ids = ["abc", "ABC", "a_c", "a%c", "a*c", "a?c", "a[c]", "a\\c", "é", "É", "记忆", "x" + prefix]
    path = tmp_path_factory.mktemp("prefix") / "state.db"
    with SessionStore(path, semantic="off") as store:
        for sid in ids:
            if not sid.strip() or any(unicodedata.category(c) in ("Cc", "Cs", "Cf") for c in sid):
                continue
            store.create_session(sid)
        stored = sorted(row[0] for row in store._conn.execute("SELECT id FROM sessions"))
        try:
            prefix.encode("utf-8")
        except UnicodeEncodeError:
            return
        expected = sorted(sid for sid in stored if sid.startswith(prefix))
        assert sorted(store.session_ids_starting_with(prefix, limit=100)) == expected


# -- conversations longer than a walk's bound -----------------------------------------------------


def _long_chain(store: SessionStore, length: int) -> list[str]:
    ids = [f"c{n:05d}" for n in range(length)]
    parent = None
    for n, sid in enumerate(ids):
        store.create_session(sid, parent_session_id=parent, started_at=1000.0 + n)
        store.append_message(sid, "user", f"turn {n} of the long conversation")
        store.end_session(sid, "compression")
        parent = sid
    return ids


def test_deleting_a_conversation_longer_than_the_walk_bound_deletes_all_of_it(
    tmp_path: Path,
) -> None:
    with SessionStore(tmp_path / "state.db", semantic="off") as store:
        ids = _long_chain(store, MAX_HOPS + 200)
        store.create_session("other")
        store.append_message("other", "user", "unrelated")
        assert store.delete_conversation(ids[0]) == ids
        assert store.session_count() == 1 and store.message_count() == 1
        assert store.search_messages("long conversation") == []
        assert store.check() == []


def test_the_delete_command_deletes_and_counts_all_of_a_long_conversation(
    hermes_home: Path,
) -> None:
    with SessionStore(hermes_home / "state.db", semantic="off") as store:
        ids = _long_chain(store, MAX_HOPS + 200)
    count = len(ids)
    code, out = run("delete", ids[0], "--yes")
    assert code == 0, out
    assert f"{count:,} sessions, {count:,} messages" in out
    assert f"{ids[0]} -> {ids[1]} -> {ids[2]} -> … -> {ids[-2]} -> {ids[-1]}:" in out
    with SessionStore(hermes_home / "state.db", read_only=True) as store:
        assert store.session_count() == 0


def test_pruning_a_conversation_longer_than_the_walk_bound_prunes_all_of_it(
    tmp_path: Path,
) -> None:
    with SessionStore(tmp_path / "state.db", semantic="off") as store:
        ids = _long_chain(store, MAX_HOPS + 200)
        store.create_session("open")
        store.append_message("open", "user", "still going")
        assert sorted(store.prune_conversations(1e12)) == ids
        assert [row["id"] for row in store.list_sessions()] == ["open"]


# -- import files with numbers Python refuses to read ---------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        '{"role": "user", "content": "hi", "timestamp": %s}',
        '{"messages": [{"role": "user", "content": "hi"}], "started_at": %s}',
        '{"role": "user", "content": "hi", "extra": [1, 2, %s]}',
    ],
)
def test_a_number_too_long_to_read_names_its_line(tmp_path: Path, line: str) -> None:
    path = tmp_path / "long-number.jsonl"
    good = '{"role": "user", "content": "fine"}'
    path.write_text(good + "\n" + line % ("9" * 5000) + "\n", encoding="utf-8")
    with pytest.raises(SessionImportError) as caught:
        read_jsonl(path)
    assert "line 2" in str(caught.value) and "digits" in str(caught.value)
    code, out = run("import", str(path), "--db", str(tmp_path / "state.db"))
    assert code == 1 and "line 2" in out and "nothing was imported" in out
    assert not (tmp_path / "state.db").exists()


def test_a_json_document_with_a_number_too_long_to_read_is_refused_clearly(
    tmp_path: Path,
) -> None:
    path = tmp_path / "doc.json"
    path.write_text(
        json.dumps({"role": "user", "content": "hi"})[:-1] + ', "n": ' + "9" * 5000 + "}",
        encoding="utf-8",
    )
    code, out = run("import", str(path), "--db", str(tmp_path / "state.db"))
    assert code == 1 and "line 1" in out and "digits" in out


# -- session ids that look like other ids ---------------------------------------------------------


@pytest.mark.parametrize(
    "bad_id",
    ["chat\u202eexe.ftp", "ab\u200bc", "\u2066abc\u2069", "abc\ufeff", "a\u00adb", "\u061cx"],
)
def test_session_ids_with_invisible_or_bidi_characters_are_refused(
    tmp_path: Path, bad_id: str
) -> None:
    with SessionStore(tmp_path / "state.db", semantic="off") as store:
        with pytest.raises(SessionStoreError, match="invisible"):
            store.create_session(bad_id)
        with pytest.raises(SessionStoreError, match="invisible"):
            store.import_sessions([{"id": bad_id, "messages": [{"role": "user", "content": "x"}]}])
        assert store.session_count() == 0
    path = tmp_path / "one.jsonl"
    path.write_text(
        json.dumps({"role": "user", "content": "x", "session_id": bad_id}) + "\n", "utf-8"
    )
    with pytest.raises(SessionImportError, match="line 1"):
        read_jsonl(path)


@given(st.characters(categories=["Cf"]))
def test_no_format_character_is_accepted_in_a_session_id(char: str) -> None:
    with pytest.raises(SessionStoreError):
        valid_session_id(f"ab{char}cd")


@pytest.mark.parametrize(
    "good_id", ["20240501_123456_ab12cd", "a/b/../c", "1; DROP TABLE sessions;--", "记忆-1", "é"]
)
def test_ordinary_and_odd_but_visible_ids_are_kept(tmp_path: Path, good_id: str) -> None:
    with SessionStore(tmp_path / "state.db", semantic="off") as store:
        store.create_session(good_id)
        store.append_message(good_id, "user", "hello")
        assert store.resolve_session_id(good_id) == good_id
        assert store.delete_conversation(good_id) == [good_id]


# -- rows another program wrote -------------------------------------------------------------------


def _blob_rows(path: Path) -> None:
    with SessionStore(path, semantic="off") as store:
        store.create_session("s1", title="Blobs")
        store.append_message("s1", "user", "how do I deploy the nginx config?")
    with sqlite3.connect(path) as raw:  # a C or Go program binding bytes, not text
        raw.execute(
            "INSERT INTO messages(session_id, role, content, tool_calls, tool_name, timestamp) "
            "VALUES ('s1', 'assistant', CAST(? AS BLOB), CAST(? AS BLOB), NULL, 1.7e9)",
            ("Run nginx -t, then deploy with reload \xe9".encode(), b'[{"id": "c1"}]'),
        )
        raw.execute(
            "INSERT INTO messages(session_id, role, content, tool_name, timestamp) "
            "VALUES ('s1', 'tool', ?, CAST(? AS BLOB), 1.7e9)",
            (b"\xffdeploy log\xfe", b"terminal"),
        )


def test_message_text_stored_as_a_blob_is_read_as_text(hermes_home: Path) -> None:
    path = hermes_home / "state.db"
    _blob_rows(path)
    with SessionStore(path, read_only=True) as store:
        messages = store.get_messages("s1")
        assert messages[1]["content"] == "Run nginx -t, then deploy with reload é"
        assert messages[1]["tool_calls"] == [{"id": "c1"}]
        assert messages[2]["content"] == "\ufffddeploy log\ufffd"
        assert messages[2]["tool_name"] == "terminal"
        conversation = store.get_messages_as_conversation("s1")
        assert all(isinstance(m["content"], str) for m in conversation)
    code, out = run("show", "s1")
    assert code == 0 and "Run nginx -t" in out and "[TOOL:terminal]" in out
    with SessionStore(path, read_only=True) as store:  # the hit's neighbours, too
        hits = store.search_messages('"nginx config"', context=True)
        assert [hit["role"] for hit in hits] == ["user"]
        assert [row["content"] for row in hits[0]["context"]] == [
            "how do I deploy the nginx config?",
            "Run nginx -t, then deploy with reload é",
        ]
    code, out = run("show", "s1", "--json")
    assert code == 0 and "b'" not in out


def test_session_search_recalls_a_conversation_holding_a_blob(hermes_home: Path) -> None:
    from hermes_memory_builtin.session_search import SessionSearchTool

    _blob_rows(hermes_home / "state.db")
    tool = SessionSearchTool(hermes_home)
    try:
        answer = json.loads(tool({"query": "deploy nginx"}))
    finally:
        tool.close()
    assert answer["success"] is True, answer
    assert answer["count"] == 1 and answer["results"][0]["session_id"] == "s1"


# -- a prune while an agent writes ----------------------------------------------------------------


def test_an_agent_can_write_while_a_large_prune_runs(tmp_path: Path) -> None:
    """A prune of a long history deletes in batches: the agent's append waits a moment, not
    the whole prune (before, one transaction held the write lock past a writer's patience)."""
    path = tmp_path / "state.db"
    with SessionStore(path, semantic="off") as store:
        store.import_sessions(
            {
                "id": f"old{n:05d}",
                "started_at": 1_000_000.0 + n,
                "messages": [{"role": "user", "content": f"garden note {k}"} for k in range(10)],
            }
            for n in range(8000)
        )
        store.create_session("live", source="cli")
        store.append_message("live", "user", "the chat going on now")
    with sqlite3.connect(path) as raw:
        raw.execute("UPDATE sessions SET ended_at = started_at + 60 WHERE id <> 'live'")
    prune = subprocess.Popen(
        [sys.executable, "-c", PRUNE_SCRIPT, str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        watcher = sqlite3.connect(path, timeout=0, isolation_level=None)
        try:  # wait until the prune holds the write lock
            while prune.poll() is None:
                try:
                    watcher.execute("BEGIN IMMEDIATE")
                    watcher.execute("ROLLBACK")
                except sqlite3.OperationalError:
                    break
        finally:
            watcher.close()
        assert prune.poll() is None, "the prune ended before it could be watched"
        with SessionStore(path, semantic="off", write_patience=0.1) as agent:
            agent.append_message("live", "assistant", "written while the prune ran")
    finally:
        out, err = prune.communicate(timeout=300)
    assert prune.returncode == 0, err
    assert int(out) == 8000
    with SessionStore(path, read_only=True) as store:
        assert [row["id"] for row in store.list_sessions()] == ["live"]
        assert [m["content"] for m in store.get_messages("live")] == [
            "the chat going on now",
            "written while the prune ran",
        ]
        assert store.search_messages("garden") == []
    with SessionStore(path, semantic="off") as store:
        assert store.check() == []


PRUNE_SCRIPT = """
import sys
from hermes_core.sessions import SessionStore
with SessionStore(sys.argv[1], semantic="off") as store:
    store.prune_batch_messages = 5_000  # several batches of a small history
    print(len(store.prune_conversations(2_000_000.0)))
"""


# -- a foreign file where the vectors go -----------------------------------------------------------


def test_another_programs_database_at_the_vectors_path_is_left_alone(tmp_path: Path) -> None:
    from hermes_core.sessions.semantic import SemanticIndex, semantic_available, sidecar_path

    if not semantic_available():
        pytest.skip("the MiniLM encoder is not installed")
    with SessionStore(tmp_path / "state.db", semantic="off") as store:
        store.create_session("s1")
        store.append_message("s1", "user", "my cat Miso likes the window seat")
        sidecar = sidecar_path(store.path)
        with sqlite3.connect(sidecar) as other:  # e.g. a browser's history: meta(key, value)
            other.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
            other.execute("CREATE TABLE urls (id INTEGER PRIMARY KEY, url TEXT)")
            other.execute("INSERT INTO meta VALUES ('version', '42')")
            other.execute("INSERT INTO urls(url) VALUES ('https://example.org')")
        before = sidecar.read_bytes()
        index = SemanticIndex(store.path, store.layout)
        try:
            assert index.catch_up(store._read) == 1  # kept in memory for this process
        finally:
            index.close()
        assert sidecar.read_bytes() == before
        assert store.delete_conversation("s1") == ["s1"]  # forgetting vectors leaves it too
        assert sidecar.read_bytes() == before


def test_a_prefix_holding_a_nul_matches_no_id_it_does_not_start(tmp_path: Path) -> None:
    # SQLite reads a GLOB pattern up to its first NUL: "É\x00*" would match "É" alone.
    with SessionStore(tmp_path / "state.db", semantic="off") as store:
        store.create_session("É")
        store.create_session("Éa")
        assert store.session_ids_starting_with("É\x00") == []
        assert store.session_ids_starting_with("É") == ["É", "Éa"]
