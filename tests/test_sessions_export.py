"""hermes-memory sessions export: JSONL that sessions import reads back to the same history.

Exports from and imports into both backends (state.db and PostgreSQL, ``session_backend``;
the CLI reaches PostgreSQL through ``HERMES_SESSIONS_URL``).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import textwrap
from pathlib import Path

import pytest
from child_kit import Child
from click.testing import CliRunner
from history_kit import dump, history
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_core.cli import cli
from hermes_core.sessions import SessionStore
from hermes_core.sessions import export as export_module
from hermes_core.sessions.backends import open_session_store
from tests.backend_kit import db_args


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["sessions", *args])
    return result.exit_code, result.output


def test_export_then_import_into_an_empty_home_holds_the_same_history(
    session_backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "a" / "state.db"
    history(source)
    out = tmp_path / "export.jsonl"
    code, text = run("export", str(out), "--db", str(source))
    assert code == 0, text
    assert "Exported 5 session(s), 8 message(s)" in text
    target = session_backend
    code, text = run("import", str(out), *db_args(target, monkeypatch))
    assert code == 0, text
    before, after = dump(source), dump(target)
    assert after == before
    assert after["s2"]["lineage"] == ["s1", "s2"]
    assert after["sub"]["row"]["parent_session_id"] == "s2"
    # The import's own search indexes work on what it imported.
    with open_session_store(target, read_only=True) as store:
        assert [h["session_id"] for h in store.search_messages("deploy")] == ["s1"]
        assert store.check() == []


def test_export_to_stdout_is_the_same_jsonl(
    session_backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    history(session_backend)
    args = db_args(session_backend, monkeypatch)
    result = CliRunner().invoke(cli, ["sessions", "export", *args])
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in result.stdout.split("\n") if line]
    assert [line["session_id"] for line in lines][:2] == ["s1", "s2"]  # parents first
    assert lines[1]["parent_session_id"] == "s1" and lines[1]["title"] == "Deploy plan #2"


def _ids(out: Path) -> list[str]:
    return [json.loads(line)["session_id"] for line in out.read_text().split("\n") if line]


def test_user_filter(session_backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    history(session_backend)
    args = db_args(session_backend, monkeypatch)
    out = tmp_path / "bob.jsonl"
    code, text = run("export", str(out), *args, "--user", "bob")
    assert code == 0, text
    assert _ids(out) == ["bob1"]
    code, text = run("export", str(out), *args, "--user", "nobody")
    assert code == 0 and "Exported 0 session(s)" in text and _ids(out) == []


def test_since_filter_brings_the_sessions_a_recent_one_continues(
    session_backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = session_backend
    with open_session_store(source) as store:
        store.create_session("old", source="cli", started_at=1000.0)
        store.append_message("old", "user", "long ago", timestamp=1000.0)
        store.create_session("root", source="cli", started_at=2000.0)
        store.append_message("root", "user", "the start", timestamp=2000.0)
        store.create_session("recent", source="tool", parent_session_id="root")
        store.append_message("recent", "user", "today")
    out = tmp_path / "since.jsonl"
    code, text = run("export", str(out), *db_args(source, monkeypatch), "--since", "1h")
    assert code == 0, text
    assert _ids(out) == ["root", "recent"]
    target = tmp_path / "t.db"
    assert run("import", str(out), "--db", str(target))[0] == 0
    assert dump(target) == {k: v for k, v in dump(source).items() if k != "old"}


def test_a_long_session_is_split_over_lines_and_still_imports(
    session_backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = session_backend
    history(source)
    monkeypatch.setattr(export_module, "INLINE_MAX_BYTES", 200)
    out = tmp_path / "split.jsonl"
    assert run("export", str(out), *db_args(source, monkeypatch))[0] == 0
    lines = [json.loads(line) for line in out.read_text().split("\n") if line]
    assert lines[0] == {**lines[0], "session_id": "s1", "messages": []}
    assert lines[1]["session_id"] == "s1" and lines[1]["role"] == "user"
    target = tmp_path / "t.db"
    code, text = run("import", str(out), "--db", str(target))
    assert code == 0, text
    assert dump(target) == dump(source)


def test_an_import_whose_parent_is_missing_is_refused_whole(
    session_backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "orphan.jsonl"
    path.write_text(
        json.dumps(
            {
                "session_id": "child",
                "parent_session_id": "gone",
                "messages": [{"role": "user", "content": "x"}],
            }
        )
    )
    target = session_backend
    code, text = run("import", str(path), *db_args(target, monkeypatch))
    assert code == 1 and "'gone'" in text and "nothing was imported" in text
    with open_session_store(target) as store:
        assert store.session_count() == 0


def test_bad_session_fields_are_named(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(
        json.dumps({"session_id": "a", "input_tokens": "many", "messages": []})
        + "\n"
        + json.dumps({"messages": []})
    )
    code, text = run("import", str(path), "--db", str(tmp_path / "t.db"))
    assert code == 1
    assert 'line 1: "input_tokens" must be a whole number' in text
    assert 'line 2: "messages" must be a non-empty list' in text


@pytest.mark.sqlite_only("a missing state.db file")
def test_export_refuses_a_missing_database(tmp_path: Path) -> None:
    code, text = run("export", str(tmp_path / "o.jsonl"), "--db", str(tmp_path / "none.db"))
    assert code == 1 and "No session database" in text
    assert not (tmp_path / "o.jsonl").exists()


TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    contents=st.lists(st.one_of(TEXT, st.none()), min_size=1, max_size=5),
    title=st.one_of(
        st.none(),
        st.text(
            st.characters(
                min_codepoint=0x20, max_codepoint=0x2FFF, blacklist_categories=("Cs", "Cf", "Cc")
            ),
            min_size=1,
            max_size=30,
        ),
    ),
    speaker=st.one_of(st.none(), TEXT),
)
@pytest.mark.sqlite_only("a fresh state.db per example; PostgreSQL stores NUL as U+FFFD")
def test_any_text_round_trips(
    tmp_path_factory: pytest.TempPathFactory,
    contents: list[str | None],
    title: str | None,
    speaker: str | None,
) -> None:
    folder = tmp_path_factory.mktemp("prop")
    source = folder / "a.db"
    with SessionStore(source) as store:
        try:
            store.create_session("p", source="cli", title=title)
        except Exception:  # a title the store refuses is not this test's concern
            store.create_session("p", source="cli")
        for n, content in enumerate(contents):
            store.append_message("p", "user" if n % 2 else "assistant", content, name=speaker)
    out = folder / "x.jsonl"
    code, text = run("export", str(out), "--db", str(source))
    assert code == 0, text
    code, text = run("import", str(out), "--db", str(folder / "b.db"))
    assert code == 0, text
    assert dump(folder / "b.db") == dump(source)


WRITER = textwrap.dedent(
    """
    import sys, time
    from hermes_core.sessions.backends import open_session_store
    path, stop, ready = sys.argv[1], sys.argv[2], sys.argv[3]
    import os
    with open_session_store(path) as store:
        for s in range(3):
            store.create_session(f"w{s}", source="cli")
        n = 0
        while not os.path.exists(stop) or n < 60:
            n += 1
            store.append_message(f"w{n % 3}", "user", f"message {n}")
            if n == 30:
                open(ready, "w").close()
    """
)


def test_export_while_another_process_appends_is_a_snapshot(
    session_backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = session_backend
    stop, ready = tmp_path / "stop", tmp_path / "ready"
    writer = Child(WRITER, source, stop, ready, stderr=tmp_path / "writer.err")
    args = db_args(source, monkeypatch)
    with writer:
        writer.wait_for(ready)
        for attempt in range(3):
            out = tmp_path / f"export{attempt}.jsonl"
            code, text = run("export", str(out), *args)
            assert code == 0, text
            numbers = sorted(
                int(message["content"].split()[1])
                for line in out.read_text().split("\n")
                if line
                for message in json.loads(line)["messages"]
            )
            # A snapshot: messages 1..N, none missing, though the writer never paused.
            assert numbers == list(range(1, len(numbers) + 1)) and len(numbers) >= 30
            target = tmp_path / f"import{attempt}.db"
            code, text = run("import", str(out), "--db", str(target))
            assert code == 0, text
            with SessionStore(target, read_only=True) as store:
                assert store.message_count() == len(numbers)
        stop.touch()
        writer.finish()
    code, text = run("export", str(tmp_path / "final.jsonl"), *args)
    assert code == 0, text
    assert run("import", str(tmp_path / "final.jsonl"), "--db", str(tmp_path / "f.db"))[0] == 0
    assert dump(tmp_path / "f.db") == dump(source)


@pytest.mark.sqlite_only("a Hermes Agent state.db layout")
def test_a_hermes_agent_file_exports_into_a_hermes_memory_store(tmp_path: Path) -> None:
    from test_sessions_hermes_db import E1_SQL

    hermes = tmp_path / "hermes.db"
    conn = sqlite3.connect(hermes)
    conn.executescript(E1_SQL)
    conn.execute(
        "INSERT INTO sessions(id, source, user_id, started_at, ended_at, end_reason) "
        "VALUES ('h1', 'telegram', 'u1', 1000, 1100, 'compression')"
    )
    conn.execute(
        "INSERT INTO sessions(id, source, parent_session_id, started_at) "
        "VALUES ('h2', 'telegram', 'h1', 1100)"
    )
    rows = [
        ("h1", "user", "what broke?", None, None, 1001),
        ("h1", "assistant", None, '[{"id": "c", "function": {"name": "logs", '
         '"arguments": "{}"}}]', None, 1002),
        ("h1", "tool", "disk full", None, "logs", 1003),
        ("h2", "assistant", "The disk was full.", None, None, 1101),
    ]  # fmt: skip
    conn.executemany(
        "INSERT INTO messages(session_id, role, content, tool_calls, tool_name, timestamp) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        rows,
    )
    conn.commit()
    conn.close()
    before = hashlib.sha256(hermes.read_bytes()).hexdigest()
    out = tmp_path / "hermes.jsonl"
    code, text = run("export", str(out), "--db", str(hermes))
    assert code == 0, text
    assert hashlib.sha256(hermes.read_bytes()).hexdigest() == before  # only read
    target = tmp_path / "ours.db"
    code, text = run("import", str(out), "--db", str(target))
    assert code == 0, text
    with SessionStore(target, read_only=True) as store:
        assert store.get_lineage("h2") == ["h1", "h2"]
        assert store.get_session("h1")["user_id"] == "u1"
        messages = store.get_messages("h1")
        assert [m["content"] for m in messages] == ["what broke?", None, "disk full"]
        assert messages[1]["tool_calls"][0]["function"]["name"] == "logs"
        assert messages[2]["tool_name"] == "logs"
        assert [h["session_id"] for h in store.search_messages("disk full")][:1] in (["h1"], ["h2"])


def test_two_users_with_the_same_title_round_trip(
    session_backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "a.db"
    with SessionStore(source) as store:
        for user in ("alice", "bob"):
            store.create_session(f"{user}-1", source="cli", user_id=user, title="Plans")
            store.append_message(f"{user}-1", "user", f"{user}'s plans")
    out = tmp_path / "users.jsonl"
    assert run("export", str(out), "--db", str(source))[0] == 0
    code, text = run("import", str(out), *db_args(session_backend, monkeypatch))
    assert code == 0, text
    assert dump(session_backend) == dump(source)
    bad = tmp_path / "same-user.jsonl"
    bad.write_text(
        "\n".join(
            json.dumps(
                {
                    "session_id": f"s{n}",
                    "user_id": "alice",
                    "title": "Plans",
                    "messages": [{"role": "user", "content": "x"}],
                }
            )
            for n in range(2)
        )
    )
    code, text = run("import", str(bad), "--db", str(tmp_path / "c.db"))
    assert code == 1 and "session title 'Plans' is already used on line 1" in text


def test_a_postgresql_store_exports_into_a_state_db(
    session_backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hermes_core.sessions.backends import open_session_store

    with open_session_store(session_backend) as store:
        store.create_session("p1", source="cli", user_id="alice", title="Plans")
        store.append_message("p1", "user", "where is the deploy script?")
        store.end_session("p1", "compression")
        store.create_session("p2", source="cli", user_id="alice", parent_session_id="p1")
        store.append_message("p2", "assistant", "In /srv/deploy.sh.", finish_reason="stop")
    if session_backend.startswith("postgresql"):
        monkeypatch.setenv("HERMES_SESSIONS_URL", session_backend)
        args: tuple[str, ...] = ()
    else:
        args = ("--db", session_backend)
    out = tmp_path / "e.jsonl"
    code, text = run("export", str(out), *args)
    assert code == 0, text
    target = tmp_path / "copy.db"
    code, text = run("import", str(out), "--db", str(target))
    assert code == 0, text
    with SessionStore(target, read_only=True) as copy, open_session_store(session_backend) as src:
        assert copy.get_lineage("p2") == ["p1", "p2"]
        for session_id in ("p1", "p2"):
            want, got = src.get_session(session_id), copy.get_session(session_id)
            for key in ("title", "user_id", "parent_session_id", "end_reason", "source"):
                assert got[key] == want[key]
            assert [(m["role"], m["content"]) for m in copy.get_messages(session_id)] == [
                (m["role"], m["content"]) for m in src.get_messages(session_id)
            ]
