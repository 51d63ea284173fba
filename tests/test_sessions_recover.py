"""hermes-memory sessions recover: the readable rows of a damaged state.db, in a new file."""

from __future__ import annotations

import hashlib
import os
import random
import re
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from history_kit import dump

from hermes_core.cli import cli
from hermes_core.sessions import SessionStore


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["sessions", *args])
    return result.exit_code, result.output


def build(path: Path) -> None:
    """20 titled sessions of 100 messages, each continuing the one before."""
    with SessionStore(path, semantic=False) as store:
        for i in range(20):
            parent = f"s{i - 1}" if i else None
            store.create_session(
                f"s{i}", source="cli", title=f"Topic {i}", parent_session_id=parent
            )
            store.append_messages(
                f"s{i}",
                [
                    {
                        "role": "user" if j % 2 == 0 else "assistant",
                        "content": f"message {i}-{j} " + "lorem ipsum dolor " * 15,
                    }
                    for j in range(100)
                ],
            )
            store.end_session(f"s{i}", "compression")
    conn = sqlite3.connect(path)  # everything in the main file, as after a clean exit
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.close()


def leaf_pages(path: Path, table: str) -> list[int]:
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute(
            "SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY pageno",
            (table,),
        ).fetchall()
    except sqlite3.OperationalError:
        pytest.skip("this SQLite has no dbstat table to find a table's pages")
    finally:
        conn.close()
    return [row[0] for row in rows]


def damage(path: Path, page: int) -> None:
    """Overwrite the middle of *page* (1-based, 4 KiB pages) with noise."""
    with path.open("r+b") as stream:
        stream.seek((page - 1) * 4096 + 200)
        stream.write(random.Random(page).randbytes(3600))  # the same damage on every run


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def lost_count(out: str, what: str) -> int:
    match = re.search(rf"([\d,]+) {what}", out.split("Lost:")[1])
    assert match, out
    return int(match.group(1).replace(",", ""))


def test_damaged_message_pages_cost_only_their_rows(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    build(db)
    original = dump(db)
    pages = leaf_pages(db, "messages")
    damage(db, pages[len(pages) // 3])
    damage(db, pages[2 * len(pages) // 3])
    before = digest(db)
    new = tmp_path / "new.db"
    code, out = run("recover", "--db", str(db), "--out", str(new))
    assert code == 0, out
    assert digest(db) == before  # the damaged file is only read
    lost = lost_count(out, r"message\(s\)")
    assert lost_count(out, r"session row\(s\)") == 0
    recovered = dump(new)
    salvaged = sum(len(s["messages"]) for s in recovered.values())
    assert 0 < lost < 200 and salvaged + lost == 2000
    assert f"{salvaged:,} message(s)" in out
    for session_id, session in recovered.items():  # every salvaged row is an intact original
        assert session["row"]["title"] == original[session_id]["row"]["title"]
        assert (
            session["row"]["parent_session_id"] == original[session_id]["row"]["parent_session_id"]
        )
        originals = original[session_id]["messages"]
        assert all(message in originals for message in session["messages"])
    assert recovered["s19"]["lineage"] == [f"s{i}" for i in range(20)]
    with SessionStore(new, read_only=True) as store:
        assert store.check() == []
        assert store.search_messages("message 0-0 lorem")


def test_a_lost_session_row_comes_back_from_its_messages(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    build(db)
    (page,) = leaf_pages(db, "sessions")[:1]
    damage(db, page)
    new = tmp_path / "new.db"
    code, out = run("recover", "--db", str(db), "--out", str(new))
    assert code == 0, out
    assert lost_count(out, r"session row\(s\)") > 0 and "rebuilt from their messages" in out
    recovered = dump(new)
    assert sum(len(s["messages"]) for s in recovered.values()) == 2000
    assert any(s["row"]["source"] == "recovered" for s in recovered.values())


def test_repair_of_a_damaged_table_points_at_recover(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    build(db)
    pages = leaf_pages(db, "messages")
    damage(db, pages[len(pages) // 2])
    code, out = run("repair", "--db", str(db))
    assert code == 1 and "sessions recover" in out, out


def test_recover_refuses_an_existing_target_and_an_unreadable_file(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    build(db)
    taken = tmp_path / "taken.db"
    taken.write_text("mine")
    code, out = run("recover", "--db", str(db), "--out", str(taken))
    assert code == 1 and "exists already" in out and taken.read_text() == "mine"
    junk = tmp_path / "junk.db"
    junk.write_bytes(os.urandom(8192))
    code, out = run("recover", "--db", str(junk), "--out", str(tmp_path / "n.db"))
    assert code == 1 and "cannot be salvaged" in out
    assert not (tmp_path / "n.db").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["junk.db", "state.db", "taken.db"]


def test_an_intact_file_is_recovered_whole(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    build(db)
    code, out = run("recover", "--db", str(db))
    assert code == 0, out
    assert "Lost: 0 message(s), 0 session row(s)." in out
    (new,) = tmp_path.glob("state.recovered-*.db")
    assert dump(new) == dump(db)


def test_a_file_without_indexes_is_salvaged_whole_with_losses_unknown(tmp_path: Path) -> None:
    db = tmp_path / "plain.db"
    conn = sqlite3.connect(db)
    conn.executescript(
        """
        CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT, started_at REAL, title TEXT);
        CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, role TEXT,
                               content TEXT, timestamp REAL);
        """
    )
    conn.execute("INSERT INTO sessions VALUES ('a', 'cli', 1000, 'Plain')")
    for n in (1, 2, 3, 50_000, 50_001, 900_000):  # ids with wide gaps, as after deletes
        conn.execute("INSERT INTO messages VALUES (?, 'a', 'user', ?, ?)", (n, f"m{n}", 1000 + n))
    conn.commit()
    conn.close()
    new = tmp_path / "new.db"
    code, out = run("recover", "--db", str(db), "--out", str(new))
    assert code == 0, out
    assert "an unknown number of message(s)" in out
    recovered = dump(new)
    assert [m["content"] for m in recovered["a"]["messages"]] == [
        "m1", "m2", "m3", "m50000", "m50001", "m900000"
    ]  # fmt: skip
    assert recovered["a"]["row"]["title"] == "Plain"
