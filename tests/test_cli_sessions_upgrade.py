"""The CJK index upgrade (schema 7) seen from the CLI: its progress, and `sessions stats`.

A command opening a version 6 state.db for writing draws the upgrade's progress on a
terminal (never on a pipe, nor with --quiet); `sessions stats` says how many CJK rows
the upgrade has left, and changes nothing.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from schema_kit import downgrade_to_version_6
from terminal_kit import run_on_a_terminal

from hermes_core.cli import cli
from hermes_core.sessions import SCHEMA_VERSION, SessionStore
from hermes_core.sessions.opening import GRAM_BATCH
from hermes_core.testing.openai_fake import FakeOpenAIServer

CLI = [sys.executable, "-c", "from hermes_core.cli import main; main()"]
ROWS = GRAM_BATCH + 2_000
"""CJK rows of the test store: more than one batch, so the upgrade shows its progress."""


def _build(path: Path, count: int) -> None:
    messages = [
        {"role": "user", "content": f"第{n}号 内存泄漏", "timestamp": 1e9} for n in range(count)
    ]
    with SessionStore(path, semantic="off") as store:
        store.import_sessions([{"id": "s", "source": "cli", "messages": messages}])


@pytest.fixture(scope="module")
def version_6(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A version 6 state.db of ROWS CJK messages (copy it: opening it writable upgrades it)."""
    path = tmp_path_factory.mktemp("v6") / "state.db"
    _build(path, ROWS)
    downgrade_to_version_6(path)
    return path


def _copy(source: Path, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / "state.db"
    shutil.copy(source, target)
    return target


def _stats(db: Path, *extra: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["sessions", "stats", "--db", str(db), *extra])
    return result.exit_code, result.output


def test_stats_of_a_current_store(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    _build(db, 3)
    code, out = _stats(db)
    assert code == 0, out
    assert "1 sessions, 3 messages" in out
    assert f"schema version {SCHEMA_VERSION}\n" in out
    assert "CJK index: up to date" in out
    code, out = _stats(db, "--json")
    assert code == 0 and json.loads(out) == {
        "path": str(db),
        "sessions": 1,
        "messages": 3,
        "schema_version": SCHEMA_VERSION,
        "written_by": "hermes-memory",
        "cjk_index_rows_left": 0,
    }


def test_stats_of_a_version_6_store_says_what_the_upgrade_will_do(
    version_6: Path, tmp_path: Path
) -> None:
    db = _copy(version_6, tmp_path)
    code, out = _stats(db)
    assert code == 0, out
    assert f"schema version 6 (upgraded to {SCHEMA_VERSION} when a writer next opens it)" in out
    assert f"CJK index upgrade: {ROWS:,} rows to re-tokenise" in out
    assert json.loads(_stats(db, "--json")[1])["cjk_index_rows_left"] == ROWS
    with SessionStore(db, read_only=True) as store:  # stats changed nothing
        assert store.layout.version == 6


def test_stats_of_an_interrupted_upgrade_counts_the_rows_left(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    _build(db, 40)
    conn = sqlite3.connect(db)  # an upgrade killed with 25 rows still queued
    conn.execute("INSERT INTO messages_cjk_pending(id) SELECT id FROM messages LIMIT 25")
    conn.commit()
    conn.close()
    code, out = _stats(db)
    assert code == 0, out
    assert "CJK index upgrade: 25 rows left; searches find them meanwhile" in out
    with SessionStore(db, semantic="off"):  # a writer's opening finishes it
        pass
    assert "CJK index: up to date" in _stats(db)[1]


def test_a_writing_command_shows_the_upgrade_on_a_terminal_only(
    version_6: Path, tmp_path: Path
) -> None:
    prune = ["sessions", "prune", "--older-than", "3650d", "--yes"]
    db = _copy(version_6, tmp_path / "tty")
    code, _, err = run_on_a_terminal([*CLI, *prune, "--db", str(db)])
    assert code == 0, err
    assert "\rUpgrading the CJK search index" in err
    assert f"100% {ROWS:,}/{ROWS:,} messages" in err
    assert "CJK index: up to date" in _stats(db)[1]

    db = _copy(version_6, tmp_path / "quiet")
    code, _, err = run_on_a_terminal([*CLI, *prune, "--db", str(db), "--quiet"])
    assert code == 0 and "Upgrading" not in err, err
    assert "CJK index: up to date" in _stats(db)[1]

    db = _copy(version_6, tmp_path / "pipe")
    piped = subprocess.run(
        [*CLI, *prune, "--db", str(db)], capture_output=True, text=True, timeout=300, check=False
    )
    assert piped.returncode == 0 and "Upgrading" not in piped.stderr, piped.stderr
    assert "CJK index: up to date" in _stats(db)[1]


def test_repair_shows_the_cjk_refill_on_a_terminal(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    _build(db, ROWS)
    code, _, err = run_on_a_terminal([*CLI, "sessions", "repair", "--db", str(db)])
    assert code == 0, err
    assert "\rIndexing the CJK text" in err and f"{ROWS:,}/{ROWS:,} messages" in err
    assert "CJK index: up to date" in _stats(db)[1]


def test_chat_shows_the_upgrade_before_its_first_prompt(version_6: Path, hermes_home: Path) -> None:
    db = _copy(version_6, hermes_home)
    with FakeOpenAIServer() as server:
        chat = [*CLI, "chat", "--base-url", server.base_url, "--model", "fake-model"]
        code, _, err = run_on_a_terminal(chat, typed="/exit\n")
    assert code == 0, err
    assert "\rUpgrading the CJK search index" in err
    assert f"100% {ROWS:,}/{ROWS:,} messages" in err
    assert err.index("Upgrading the CJK search index") < err.index("hermes-memory chat — session")
    assert "CJK index: up to date" in _stats(db)[1]
