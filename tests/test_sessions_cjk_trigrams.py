"""CJK terms of every length on SQLite: the gram index with trigrams (schema version 7).

Covers what each length of query finds, mixed CJK/Latin queries, and the upgrade of a
version 6 file (bigrams only): data intact, every row re-tokenised, an interrupted
upgrade resumed, two processes upgrading at once.
"""

from __future__ import annotations

import multiprocessing
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from schema_kit import downgrade_to_version_6

from hermes_core.sessions import SCHEMA_VERSION, SessionStore
from hermes_core.sessions.cjk import cjk_grams, query_grams
from hermes_core.sessions.gramqueue import drain_gram_queue
from hermes_core.sessions.schema import apply_schema

TEXTS = {
    "leak": "内存泄漏的问题已经修复了",
    "rollback": "部署回滚失败，需要检查日志",
    "rift": "记忆断裂",
    "glued": "检查 Agent通信 的 log 输出",
    "memory": "我们讨论了内存",
    "split": "内存，泄漏",  # the same letters, not adjacent
    "english": "the memory leak is fixed",
}


def _fill(path: Path) -> dict[str, int]:
    ids = {}
    with SessionStore(path, semantic="off") as store:
        store.create_session("s1", source="cli")
        for key, text in TEXTS.items():
            ids[key] = store.append_message("s1", role="user", content=text)
    return ids


def _found(store: SessionStore, query: str, ids: dict[str, int]) -> set[str]:
    by_id = {v: k for k, v in ids.items()}
    hits = store.search_messages(query, limit=50, snippets=False)
    return {by_id[h["id"]] for h in hits[:1]}  # the best hit (a short result is topped up)


@pytest.fixture
def filled(tmp_path: Path) -> tuple[Path, dict[str, int]]:
    path = tmp_path / "state.db"
    return path, _fill(path)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("泄", {"leak", "split"}),  # 1 character: a unigram
        ("内存", {"leak", "memory", "split"}),  # 2: a bigram
        ("内存泄", {"leak"}),  # 3: one trigram
        ("内存泄漏", {"leak"}),  # 4: two overlapping trigrams in a row
        ("内存泄漏的问", {"leak"}),  # 6: four trigrams in a row
        ("回滚失败", {"rollback"}),
        ("记忆断裂", {"rift"}),
        ("Agent通信", {"glued"}),  # CJK glued to Latin: the trigram index
        ("检查 log", {"glued"}),  # mixed terms on two indexes
        ("内存泄漏 OR memory", {"leak", "english"}),
    ],
)
def test_each_length_of_cjk_query_finds_exactly_its_messages(
    filled: tuple[Path, dict[str, int]], query: str, expected: set[str]
) -> None:
    path, ids = filled
    by_id = {v: k for k, v in ids.items()}
    with SessionStore(path, semantic="off") as store:
        hits = [by_id[h["id"]] for h in store.search_messages(query, limit=50, snippets=False)]
    # Every message holding the term comes first; a short CJK result may be topped up after
    # them with messages holding part of it (never one without any of its letters).
    assert set(hits[: len(expected)]) == expected
    assert "english" not in hits or "memory" in query


def test_a_four_character_term_is_two_trigrams_not_three_bigrams() -> None:
    assert query_grams("内存泄漏", 3) == ["内存泄", "存泄漏"]
    assert query_grams("内存泄漏", 2) == ["内存", "存泄", "泄漏"]
    assert query_grams("内存泄", 3) == ["内存泄"]
    assert cjk_grams(["记忆断裂"], 2) == "记 忆 断 裂 记忆 忆断 断裂"
    assert cjk_grams(["记忆断裂"], 3) == "记 忆 断 裂 记忆 忆断 断裂 记忆断 忆断裂"


@settings(max_examples=40, deadline=None)
@given(st.text(alphabet="内存泄漏部署回滚日志", min_size=1, max_size=8), st.integers(0, 7))
def test_any_substring_of_a_cjk_run_is_found(
    tmp_path_factory: pytest.TempPathFactory, run: str, start: int
) -> None:
    path = tmp_path_factory.mktemp("sub") / "state.db"
    with SessionStore(path, semantic="off") as store:
        store.create_session("s", source="cli")
        mid = store.append_message("s", role="user", content=f"前 {run} 后")
        other = store.append_message("s", role="user", content="完全无关的句子")
        query = run[start % len(run) :][:6]
        hits = {h["id"] for h in store.search_messages(query, limit=50, snippets=False)}
        assert mid in hits and other not in hits


def _grams(path: Path) -> dict[int, str]:
    conn = sqlite3.connect(path)
    try:
        return dict(conn.execute("SELECT rowid, grams FROM messages_cjk_grams"))
    finally:
        conn.close()


def _messages(path: Path) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT * FROM messages ORDER BY id").fetchall()
    finally:
        conn.close()


def test_a_version_6_file_is_read_with_bigrams_then_upgraded_to_trigrams(
    filled: tuple[Path, dict[str, int]],
) -> None:
    path, ids = filled
    fresh = _grams(path)
    messages = _messages(path)
    downgrade_to_version_6(path)
    assert all(len(g) <= 2 for grams in _grams(path).values() for g in grams.split())
    with SessionStore(path, read_only=True, semantic="off") as reader:  # read as it is
        assert _found(reader, "内存泄漏", ids) == {"leak"}
        assert _found(reader, "内存泄", ids) == {"leak"}
    with SessionStore(path, semantic="off") as store:
        assert _found(store, "内存泄漏的问", ids) == {"leak"}
    assert _grams(path) == fresh  # the same tokens as a file created at version 7
    assert _messages(path) == messages
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT version FROM schema_version").fetchone()[0] == SCHEMA_VERSION
    assert conn.execute("SELECT count(*) FROM messages_cjk_pending").fetchone()[0] == 0
    conn.close()


def test_an_interrupted_upgrade_is_searchable_and_resumes(
    filled: tuple[Path, dict[str, int]],
) -> None:
    path, ids = filled
    fresh = _grams(path)
    downgrade_to_version_6(path)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    apply_schema(conn)  # what opening does first: queue every gram row
    conn.execute("COMMIT")
    conn.execute("BEGIN IMMEDIATE")
    assert drain_gram_queue(conn, 2) == 2  # one batch, then the process dies
    conn.execute("COMMIT")
    left = conn.execute("SELECT count(*) FROM messages_cjk_pending").fetchone()[0]
    conn.close()
    assert left == len(fresh) - 2
    with SessionStore(path, read_only=True, semantic="off") as reader:
        for query, expected in [("内存泄漏", {"leak"}), ("断裂", {"rift"}), ("内存泄", {"leak"})]:
            assert _found(reader, query, ids) == expected
    with SessionStore(path, semantic="off") as store:  # the next opening finishes it
        assert _found(store, "记忆断裂", ids) == {"rift"}
    assert _grams(path) == fresh


def _open_and_search(path: str) -> list[int]:
    with SessionStore(path, semantic="off") as store:
        return [h["id"] for h in store.search_messages("内存泄漏", limit=50, snippets=False)]


def test_two_processes_upgrading_at_once_both_open_and_agree(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    messages = [  # more than two batches of the upgrade, written in one import
        {
            "role": "user",
            "content": f"第{n}号 内存泄漏 报告" if n % 3 else "x",
            "timestamp": 1e9 + n,
        }
        for n in range(12_000)
    ]
    with SessionStore(path, semantic="off") as store:
        store.import_sessions([{"id": "s", "source": "cli", "messages": messages}])
    fresh = _grams(path)
    downgrade_to_version_6(path)
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        results = pool.map(_open_and_search, [str(path)] * 2)
    assert results[0] == results[1] and len(results[0]) == 50
    assert _grams(path) == fresh
