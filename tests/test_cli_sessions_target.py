"""``--db`` takes a state.db path or a PostgreSQL URL, with the same behaviour as the
configured store (``HERMES_SESSIONS_URL`` / ``$HERMES_HOME/state.db``) on both backends,
and no message shows a URL's password."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from history_kit import dump, history

from hermes_core.cli import cli
from hermes_core.sessions.backends import open_session_store
from hermes_core.sessions.semantic import semantic_available
from tests.backend_kit import is_postgres

SECRET = "s3cret-pw"

READS = [
    ("list",),
    ("list", "--json", "--all"),
    ("search", "deploy"),
    ("search", "deploy", "--json", "--group"),
    ("show", "s1"),
    ("show", "Deploy plan", "--json"),
    ("check",),
    ("check", "--json"),
    ("export",),
]


def _with_password(url: str) -> str:
    """*url* with a password (the test server trusts loopback, so any password works)."""
    return url.replace("postgresql://postgres@", f"postgresql://postgres:{SECRET}@", 1)


def _run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["sessions", *args], env=env)
    return result.exit_code, result.output


@pytest.fixture
def stores(
    session_backend: str, hermes_home: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[str, dict[str, str]]:
    """The store as ``--db`` names it, and the environment that configures the same store."""
    monkeypatch.delenv("HERMES_SESSIONS_URL", raising=False)
    if is_postgres(session_backend):
        url = _with_password(session_backend)
        history(url)
        return url, {"HERMES_SESSIONS_URL": url}
    path = hermes_home / "state.db"
    history(path)
    return str(path), {}


@pytest.mark.parametrize("args", READS, ids=" ".join)
def test_every_reading_command_says_the_same_through_db_and_the_configured_store(
    stores: tuple[str, dict[str, str]], args: tuple[str, ...]
) -> None:
    target, env = stores
    explicit = _run(*args, "--db", target)
    configured = _run(*args, env=env)
    assert explicit == configured
    assert SECRET not in explicit[1]


@pytest.mark.parametrize("command", ["recover"])
def test_file_only_commands_say_what_to_use_for_a_url_through_db_as_when_configured(
    stores: tuple[str, dict[str, str]], command: str
) -> None:
    target, env = stores
    if not is_postgres(target):
        pytest.skip("PostgreSQL only (on a state.db they write: tests/test_sessions_*.py)")
    explicit = _run(command, "--db", target)
    assert explicit == _run(command, env=env)
    assert explicit[0] == 1 and "PostgreSQL database postgresql://postgres:***@" in explicit[1]
    assert SECRET not in explicit[1]


@pytest.mark.skipif(not semantic_available(), reason="no encoder installed")
def test_index_embeds_into_the_url_through_db_as_when_configured(
    stores: tuple[str, dict[str, str]],
) -> None:
    target, env = stores
    if not is_postgres(target):
        pytest.skip("PostgreSQL here (a state.db's index: tests/test_sessions_semantic.py)")
    code, text = _run("index", "--db", target)
    assert code == 0, text
    assert "Embedded" in text and "postgresql://postgres:***@" in text
    code, again = _run("index", env=env)
    assert code == 0 and "is embedded" in again
    assert SECRET not in text + again


def test_db_wins_over_the_configured_store(stores: tuple[str, dict[str, str]]) -> None:
    target, _ = stores
    elsewhere = {"HERMES_SESSIONS_URL": "postgresql://nobody:x@127.0.0.1:1/elsewhere"}
    code, text = _run("list", "--json", "--all", "--db", target, env=elsewhere)
    assert code == 0, text
    assert {row["id"] for row in json.loads(text)} >= {"s1", "s2"}


def test_delete_and_prune_through_db_change_that_store(
    stores: tuple[str, dict[str, str]],
) -> None:
    target, _ = stores
    code, text = _run("delete", "s2", "--db", target, "--yes")
    assert code == 0, text
    assert "Deleted the conversation 'Deploy plan" in text and SECRET not in text
    assert "s1" not in dump(target) and "s2" not in dump(target)
    code, text = _run("prune", "--older-than", "0s", "--db", target, "--yes", "--quiet")
    assert code == 0 and SECRET not in text, text
    with open_session_store(target, read_only=True) as store:
        assert all(row["ended_at"] is None for row in store.list_sessions(collapse_lineage=False))


def test_import_and_repair_through_db(stores: tuple[str, dict[str, str]], tmp_path: Path) -> None:
    target, _ = stores
    before = dump(target)
    out = tmp_path / "all.jsonl"
    assert _run("export", str(out), "--db", target)[0] == 0
    with open_session_store(target) as store:
        for session_id in list(before):
            store.delete_session(session_id)
    code, text = _run("import", str(out), "--db", target, "--no-embed", "--quiet")
    assert code == 0 and SECRET not in text, text
    assert dump(target) == before
    code, text = _run("repair", "--db", target, "--quiet")
    assert code == 0 and SECRET not in text, text
    assert _run("search", "deploy", "--json", "--db", target)[1].count('"session_id": "s1"') >= 1


def test_an_unreachable_url_through_db_is_named_with_its_password_masked() -> None:
    url = f"postgresql://hermes:{SECRET}@127.0.0.1:1/nowhere"
    for args in (("list",), ("search", "x"), ("show", "s1"), ("check",), ("delete", "s", "-y")):
        code, text = _run(*args, "--db", url)
        assert code == 1, (args, text)
        assert "postgresql://hermes:***@127.0.0.1:1/nowhere" in text and SECRET not in text
