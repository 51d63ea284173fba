"""``hermes-memory doctor`` finds the problems a new user runs into, each with what to do."""

from __future__ import annotations

import importlib.util
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from plugin_kit import folder_plugin, provider_source

from hermes_core.cli import cli
from hermes_core.hermes_compat.dotenv import restore_environ
from hermes_core.sessions import SessionStore


def doctor() -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["doctor"])
    return result.exit_code, result.output


def configure(home: Path, text: str) -> None:
    (home / "config.yaml").write_text(text, encoding="utf-8")


@pytest.fixture
def notes(hermes_home: Path) -> Iterator[Path]:
    """An installed folder provider called notes."""
    folder_plugin(hermes_home / "plugins", "notes", provider_source("notes"))
    yield hermes_home
    restore_environ()


def test_a_memory_file_far_over_its_budget_is_a_problem_with_how_far(hermes_home: Path) -> None:
    memories = hermes_home / "memories"
    memories.mkdir()
    (memories / "MEMORY.md").write_text("x" * 10_465_796, encoding="utf-8")
    code, output = doctor()
    assert code == 1
    assert (
        "MEMORY.md holds 10,465,796 characters, 4,757.2× its budget of 2,200 "
        "(memory.memory_char_limit; 475,718%)"
    ) in output
    assert "hermes-memory memory show --target memory" in output
    shown = CliRunner().invoke(cli, ["memory", "show", "--target", "memory"])
    assert "475,718% — 10,465,796/2,200 chars" in shown.output  # not capped at 100 %
    assert "over its budget" in shown.output


def test_memory_files_within_budget_are_reported_ok(hermes_home: Path) -> None:
    memories = hermes_home / "memories"
    memories.mkdir()
    (memories / "USER.md").write_text("Prefers short answers.", encoding="utf-8")
    code, output = doctor()
    assert code == 0, output
    assert "USER.md prompt tier: 1% — 22/1,375 chars" in output


def test_no_model_says_which_commands_need_one(hermes_home: Path) -> None:
    code, output = doctor()
    assert code == 0
    assert "model.* settings are usable" not in output
    assert "no model is configured (model.base_url and model.model not set)" in output
    assert "`hermes-memory chat` refuses to start without one" in output
    configure(hermes_home, "model:\n  base_url: http://127.0.0.1:9/v1\n")
    assert "no model is configured (model.model not set)" in doctor()[1]
    configure(hermes_home, "model:\n  base_url: http://127.0.0.1:9/v1\n  model: tiny\n")
    assert "model.* settings are usable: tiny at http://127.0.0.1:9/v1" in doctor()[1]


def test_a_misspelt_provider_gets_did_you_mean(notes: Path) -> None:
    configure(notes, "memory:\n  provider: ntoes\n")
    code, output = doctor()
    assert code == 1
    assert "did you mean notes? set memory.provider: notes in config.yaml" in output


def test_a_misspelt_own_provider_gets_did_you_mean_and_its_install_line(
    hermes_home: Path,
) -> None:
    configure(hermes_home, "memory:\n  provider: mem00\n")
    code, output = doctor()
    assert code == 1
    assert "did you mean mem0?" in output


@pytest.mark.skipif(
    importlib.util.find_spec("hermes_memory_supermemory") is not None,
    reason="supermemory is installed here",
)
def test_a_known_provider_not_installed_gets_its_install_line(hermes_home: Path) -> None:
    configure(hermes_home, "memory:\n  provider: supermemory\n")
    code, output = doctor()
    assert code == 1
    assert "install it: pip install hermes-memory-supermemory" in output


def test_a_provider_installed_but_not_activated_is_flagged(notes: Path) -> None:
    code, output = doctor()
    assert code == 0
    assert "installed but memory.provider is not set, so only builtin memory is used" in output
    assert "notes" in output.split("installed but memory.provider")[0].splitlines()[-1]
    assert "hermes-memory setup notes --activate" in output
    configure(notes, "memory:\n  provider: notes\n")
    assert "installed but memory.provider is not set" not in doctor()[1]


def _sessions_db(path: Path) -> None:
    with SessionStore(path) as store:
        for number in range(300):
            session = f"s{number:04d}"
            store.create_session(session, source="cli", title=f"talk {number}")
            for turn in range(4):
                store.append_message(session, "user", f"message {turn} of talk {number} " * 20)


def test_a_database_with_damaged_pages_points_at_sessions_recover(hermes_home: Path) -> None:
    path = hermes_home / "state.db"
    _sessions_db(path)
    data = bytearray(path.read_bytes())
    page = 4096
    for start in range(3 * page, len(data) - page, 7 * page):  # every seventh page, from page 4
        data[start : start + page] = b"\xa5" * page
    path.write_bytes(bytes(data))
    code, output = doctor()
    assert code == 1
    assert "hermes-memory sessions recover" in output


def test_a_file_that_is_no_database_points_at_sessions_recover(hermes_home: Path) -> None:
    (hermes_home / "state.db").write_bytes(b"\x00garbage" * 1000)
    code, output = doctor()
    assert code == 1
    assert "state.db cannot be opened" in output
    assert "`hermes-memory sessions recover` to salvage" in output
    with pytest.raises(sqlite3.DatabaseError):
        sqlite3.connect(hermes_home / "state.db").execute("SELECT * FROM sqlite_master").fetchall()
