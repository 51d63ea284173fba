"""Checking a state.db and rebuilding its full-text indexes (sessions check / repair)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from hermes_core.cli import cli
from hermes_core.errors import SessionStoreError
from hermes_core.sessions import SessionStore


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["sessions", *args])
    return result.exit_code, result.output


@pytest.fixture
def db(hermes_home: Path) -> Path:
    path = hermes_home / "state.db"
    with SessionStore(path) as store:
        store.create_session("web", source="cli")
        store.append_messages(
            "web",
            [
                {"role": "user", "content": "nginx returns 502 after the upgrade"},
                {"role": "assistant", "content": "The upstream socket path changed."},
            ],
        )
        store.create_session("zh", source="telegram")
        store.append_message("zh", "user", "部署脚本又失败了")
    return path


def damage(path: Path, sql: str) -> None:
    """Change the file behind the store's back, as a crashed writer or a bad copy would."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute(sql)
    conn.close()


def word_index_hits(path: Path, word: str) -> list[int]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = conn.execute("SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?", (word,))
        return [row[0] for row in rows]
    finally:
        conn.close()


def test_a_healthy_file_checks_clean(db: Path) -> None:
    with SessionStore(db) as store:
        assert store.check() == []
    with SessionStore(db, read_only=True) as store:
        assert store.check() == []
    code, out = run("check")
    assert (
        code == 0 and "ok:" in out and "indexes checked against the messages and for damage" in out
    )
    code, out = run("check", "--json")
    assert code == 0 and json.loads(out) == {"path": str(db), "deep": True, "problems": []}


def test_a_drifted_word_index_is_found_and_rebuilt(db: Path) -> None:
    with SessionStore(db, read_only=True) as store:
        (hit,) = store.search_messages("nginx")
    damage(
        db,
        "INSERT INTO messages_fts(messages_fts, rowid, content, tool_name, tool_calls) "
        f"VALUES ('delete', {hit['id']}, 'nginx returns 502 after the upgrade', NULL, NULL)",
    )
    assert word_index_hits(db, "nginx") == []  # the row fell out of the index
    with SessionStore(db) as store:
        assert store.check() == ["full-text index messages_fts lacks 1 messages"]
    code, out = run("check")
    assert code == 1 and "problem: full-text index messages_fts" in out
    assert "sessions repair" in out

    code, out = run("repair")
    assert code == 0, out
    assert "messages_fts 3 rows" in out and "messages_cjk_grams 1 rows" in out
    assert word_index_hits(db, "nginx") == [hit["id"]]
    with SessionStore(db) as store:
        assert store.check() == []
        assert store.search_messages("部署")[0]["session_id"] == "zh"


def test_missing_and_stray_gram_rows_are_found_and_rebuilt(db: Path) -> None:
    damage(db, "DELETE FROM messages_cjk_grams")
    damage(db, "INSERT INTO messages_cjk_grams(rowid, grams) VALUES (999, '幽 灵 幽灵')")
    with SessionStore(db) as store:
        problems = store.check()
        assert any("lacks 1 messages with CJK text" in p for p in problems)
        assert any("holds 1 deleted or excluded messages" in p for p in problems)
        assert store.search_messages("部署") == []
        counts = store.rebuild_indexes()
        assert counts["messages_cjk_grams"] == 1
        assert store.check() == []
        assert store.search_messages("部署")[0]["session_id"] == "zh"


def test_an_unreadable_index_is_bypassed_reported_and_rebuilt(db: Path) -> None:
    damage(db, "UPDATE messages_fts_data SET block = x'00ff00ff00ff' WHERE id > 10")
    with SessionStore(db) as store:
        assert store.layout.word is None  # not used while damaged...
        assert store.search_messages("nginx")[0]["session_id"] == "web"  # ...trigram answers
        assert store.check() == ["full-text index messages_fts is missing or unreadable"]
        store.rebuild_indexes()
        assert store.layout.word is not None
        assert store.check() == []
    assert len(word_index_hits(db, "nginx")) == 1


def test_a_damaged_table_says_what_to_run(db: Path) -> None:
    with SessionStore(db) as store:
        store.append_messages(
            "web", [{"role": "user", "content": f"line {n} " + "x" * 1000} for n in range(50)]
        )
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'messages'").fetchone()[0]
    page = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    with db.open("r+b") as raw:  # a disk error in the messages table's root page
        raw.seek((root - 1) * page)
        raw.write(b"\xff" * page)
    with SessionStore(db, read_only=True) as store:
        with pytest.raises(SessionStoreError) as info:
            store.get_messages("web")
        assert str(db) in str(info.value) and "hermes-memory sessions check" in str(info.value)
        (problem,) = store.check()  # reported, not raised
        assert "database disk image is malformed" in problem
    code, out = run("check")
    assert code == 1 and "problem: reading the file failed" in out


def test_repair_refuses_what_it_must_not_touch(tmp_path: Path, db: Path) -> None:
    missing = tmp_path / "nope.db"
    code, out = run("repair", "--db", str(missing))
    assert code != 0 and str(missing) in out and not missing.exists()
    code, out = run("check", "--db", str(missing))
    assert code != 0 and str(missing) in out and not missing.exists()
    with (
        SessionStore(db, read_only=True) as store,
        pytest.raises(SessionStoreError, match="read-only"),
    ):
        store.rebuild_indexes()
