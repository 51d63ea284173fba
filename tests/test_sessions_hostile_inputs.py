"""Hostile input to the session store and its commands: a clear error, never a traceback.

Arguments that are not UTF-8, paths that are not UTF-8 or not regular files,
files that are not session databases (or are damaged), a database locked by
another process, and import files shaped to break the reader. Each case runs
the real command on a real store and checks that nothing was written: the ``db``
cases on both backends (state.db and PostgreSQL, ``session_backend``), the cases
about SQLite files themselves on ``sqlite_db`` (marked ``sqlite_only``).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import tempfile
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_sessions_hermes_db import E1_SQL

from hermes_core.cli import cli
from hermes_core.errors import SessionImportError, SessionStoreError
from hermes_core.sessions import SessionStore, parse_query
from hermes_core.sessions.backends import open_session_store
from hermes_core.sessions.importer import MAX_LINE_BYTES, read_jsonl
from tests.backend_kit import configured_store, is_postgres
from tests.history_kit import dump


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def run(*args: str) -> tuple[int, str]:
    result = invoke("sessions", *args)
    assert not isinstance(result.exception, Exception) or isinstance(
        result.exception, SystemExit
    ), result.exception  # a handled error, not a traceback
    return result.exit_code, result.output


def digest(path: Path | str) -> str:
    """The file's bytes hashed; a PostgreSQL store: everything it holds."""
    if is_postgres(path):
        return hashlib.sha256(json.dumps(dump(path), sort_keys=True).encode()).hexdigest()
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _first_session(path: Path | str) -> None:
    with open_session_store(path) as store:
        store.create_session("s1", source="cli", title="First")
        store.append_message("s1", "user", "deploy the nginx config 记忆")


@pytest.fixture
def db(session_backend: str, hermes_home: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The store the commands use, on each backend, holding one session."""
    target = configured_store(session_backend, hermes_home, monkeypatch)
    _first_session(target)
    return target


@pytest.fixture
def sqlite_db(hermes_home: Path) -> Path:
    """``$HERMES_HOME/state.db`` holding one session, for the cases about the file."""
    path = hermes_home / "state.db"
    _first_session(path)
    return path


@pytest.fixture
def one_line(tmp_path: Path) -> Path:
    path = tmp_path / "one.jsonl"
    path.write_text('{"role": "user", "content": "hello there"}\n', encoding="utf-8")
    return path


# -- 1. arguments that are not UTF-8 --------------------------------------------------


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (("show", "id\udcff"), "SESSION_ID"),
        (("list", "--source", "\udcff"), "--source"),
        (("search", "hello", "--source", "\udce9t\udce9"), "--source"),
        (("search", "hello", "--role", "\udcff"), "--role"),
        (("search", "caf\udce9"), "QUERY"),
        (("import", "{one}", "--session-id", "caf\udce9"), "--session-id"),
        (("import", "{one}", "--session-id", "x2", "--source", "\udcff"), "--source"),
        (("import", "{one}", "--title", "t\udce9"), "--title"),
    ],
)
def test_arguments_that_are_not_utf8_are_named(
    db: str, one_line: Path, args: tuple[str, ...], option: str
) -> None:
    before = digest(db)
    code, out = run(*(str(one_line) if arg == "{one}" else arg for arg in args))
    assert code == 2, out
    assert f"Invalid value for '{option}'" in out and "is not valid UTF-8 text" in out
    assert digest(db) == before  # no import happened


def test_store_refuses_text_that_is_not_utf8(db: str) -> None:
    with open_session_store(db) as store:
        with pytest.raises(SessionStoreError, match="not valid UTF-8"):
            store.get_session("id\udcff")
        with pytest.raises(SessionStoreError, match="not valid UTF-8"):
            store.set_session_title("s1\udcff", "x")
        with pytest.raises(SessionStoreError, match="not UTF-8"):
            store.create_session("caf\udce9")
        assert store.session_count() == 1


# -- 2. paths that are not UTF-8 ---------------------------------------------------------


@pytest.mark.sqlite_only("a state.db path that is not UTF-8")
def test_database_path_that_is_not_utf8_works(tmp_path: Path, one_line: Path) -> None:
    path = tmp_path / "st\udce9.db"
    code, out = run("import", str(one_line), "--db", str(path), "--session-id", "a")
    assert code == 0, out
    assert os.path.exists(os.fsencode(tmp_path) + b"/st\xe9.db")
    with SessionStore(path, read_only=True) as store:
        assert [hit["session_id"] for hit in store.search_messages("hello")] == ["a"]


@pytest.mark.sqlite_only("a state.db under a HERMES_HOME that is not UTF-8")
def test_hermes_home_that_is_not_utf8_works(
    tmp_path: Path, one_line: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home_\udcfe"
    home.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(home))
    code, out = run("import", str(one_line), "--session-id", "a")
    assert code == 0, out
    code, out = run("show", "a")
    assert code == 0 and "hello there" in out


def test_working_directory_that_is_not_utf8_is_stored_with_replacements(db: str) -> None:
    with open_session_store(db) as store:
        store.create_session("w", cwd="/srv/proj_\udcff", git_repo_root="/srv/\udce9")
        session = store.get_session("w")
    assert session is not None
    assert (session["cwd"], session["git_repo_root"]) == ("/srv/proj_\ufffd", "/srv/\ufffd")


# -- 3. and 8. files that are not (readable) session databases ---------------------------


@pytest.mark.sqlite_only("state.db's schema_version table")
def test_schema_version_that_is_not_a_number(sqlite_db: Path) -> None:
    conn = sqlite3.connect(sqlite_db)
    conn.execute("UPDATE schema_version SET version = 'v5'")
    conn.commit()
    conn.close()
    before = digest(sqlite_db)
    for command in (("list",), ("search", "nginx"), ("show", "s1"), ("check",), ("repair",)):
        code, out = run(*command)
        assert code == 1, (command, out)
        assert str(sqlite_db) in out and "schema_version holds 'v5', not a version number" in out
    with pytest.raises(SessionStoreError, match="corrupt or not a session database"):
        SessionStore(sqlite_db)
    assert digest(sqlite_db) == before
    doctor = invoke("doctor").output
    assert f"[FAIL] {sqlite_db} is corrupt or not a session database" in doctor
    assert "state.sqlite_db opens" not in doctor


def _foreign(path: Path) -> Path:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE sessions (token TEXT, expires INT)")
    conn.execute("CREATE TABLE messages (id INTEGER, body TEXT)")
    conn.execute("INSERT INTO messages VALUES (1, 'deploy nginx')")
    conn.commit()
    conn.close()
    return path


@pytest.mark.sqlite_only("another program's SQLite file")
def test_another_programs_sessions_and_messages_tables(hermes_home: Path, one_line: Path) -> None:
    path = _foreign(hermes_home / "state.db")
    before = digest(path)
    for command in (("check",), ("search", "deploy"), ("list",), ("show", "1")):
        code, out = run(*command)
        assert code == 1, (command, out)
        assert str(path) in out and "table sessions has no column id, source" in out
        assert "table messages has no column session_id" in out
    code, out = run("import", str(one_line))
    assert code == 1 and "table sessions has no column id" in out
    assert digest(path) == before
    doctor = invoke("doctor").output
    assert "[FAIL]" in doctor and "table sessions has no column id" in doctor


@pytest.mark.sqlite_only("a Hermes Agent state.db layout")
def test_hermes_shaped_file_lacking_a_column(hermes_home: Path) -> None:
    path = hermes_home / "state.db"
    conn = sqlite3.connect(path)
    conn.executescript(E1_SQL.replace("timestamp REAL NOT NULL, ", ""))
    conn.execute("INSERT INTO sessions (id, source, started_at) VALUES ('s1', 'cli', 1.7e9)")
    conn.execute("INSERT INTO messages (session_id, role, content) VALUES ('s1', 'user', 'deploy')")
    conn.commit()
    conn.close()
    for command in (("search", "deploy"), ("list",), ("check",)):
        code, out = run(*command)
        assert code == 1, (command, out)
        assert f"{path} is corrupt or not a session database: table messages has no column " + (
            "timestamp"
        ) in " ".join(out.split())


@pytest.mark.sqlite_only("state.db files doctor inspects")
def test_doctor_warns_about_files_sessions_cannot_be_recorded_in(hermes_home: Path) -> None:
    path = hermes_home / "state.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (x)")
    conn.close()
    doctor = invoke("doctor").output
    assert f"[WARN] {path} opens but holds no sessions" in doctor
    path.unlink()
    conn = sqlite3.connect(path)
    conn.executescript(E1_SQL)
    conn.close()
    doctor = invoke("doctor").output
    assert f"[WARN] {path} was written by Hermes Agent" in doctor
    assert "point HERMES_HOME at another folder" in doctor


@pytest.mark.sqlite_only("the Hermes Agent state.db layouts")
def test_every_real_hermes_layout_still_reads(tmp_path: Path) -> None:
    path = tmp_path / "early.db"
    conn = sqlite3.connect(path)
    conn.executescript(E1_SQL)
    conn.close()
    with SessionStore(path, read_only=True) as store:
        assert store.layout.problems == () and store.probe() == []


# -- 4. a damaged gram queue -------------------------------------------------------------


def _zero_queue_root(path: Path) -> None:
    conn = sqlite3.connect(path)
    root = conn.execute(
        "SELECT rootpage FROM sqlite_master WHERE name = 'messages_cjk_pending'"
    ).fetchone()[0]
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    with path.open("r+b") as handle:
        handle.seek((root - 1) * size)
        handle.write(b"\0" * size)


@pytest.mark.sqlite_only("a damaged page of state.db")
def test_damaged_gram_queue_gives_the_corruption_error(sqlite_db: Path, one_line: Path) -> None:
    _zero_queue_root(sqlite_db)
    code, out = run("import", str(one_line))
    assert code == 1
    assert "database disk image is malformed" in out and "hermes-memory sessions check" in out
    code, out = run("search", "记忆")
    assert code == 1 and "malformed" in out and "sessions repair" in out
    code, out = run("check")
    assert code == 1 and "problem: " in out and "malformed" in out
    doctor = invoke("doctor").output
    assert f"[FAIL] {sqlite_db} is damaged: table messages_cjk_pending cannot be read" in doctor
    before = digest(sqlite_db)
    code, out = run("repair")
    assert code == 1 and "nothing was changed" in out
    assert "restore state.db from a backup" in out
    assert digest(sqlite_db) == before
    code, out = run("show", "s1", "--json")  # what the error says still works
    assert code == 0 and "记忆" in out


# -- 5. benchmark files with values of the wrong type ---------------------------------------


@pytest.mark.parametrize(
    ("turn", "where"),
    [
        ({"speaker": ["A"], "text": "hi"}, "session_1, turn 1"),
        ({"speaker": {"A": 1}, "text": "hi"}, "session_1, turn 1"),
        ({"speaker": "A", "text": ["hi"]}, "session_1, turn 1"),
    ],
)
def test_locomo_turn_with_values_that_are_not_text(
    tmp_path: Path, turn: dict[str, object], where: str
) -> None:
    path = tmp_path / "locomo.json"
    sample = {"conversation": {"speaker_a": "A", "speaker_b": "B", "session_1": [turn]}}
    path.write_text(json.dumps(sample), encoding="utf-8")
    code, out = run("import", str(path))
    assert code == 1 and where in out and "needs a 'speaker' (A or B)" in out


@pytest.mark.parametrize(
    ("data", "where"),
    [
        (
            {"sample_id": ["x"], "conversation": {"speaker_a": "A", "speaker_b": "B"}},
            "sample_id must be text or a whole number",
        ),
        (
            [{"haystack_sessions": [[]], "haystack_session_ids": [{"a": 1}]}],
            "haystack_session_ids[0] must be text",
        ),
        (
            [{"question_id": 1.5, "haystack_sessions": []}],
            "question_id must be text or a whole number",
        ),
    ],
)
def test_benchmark_ids_that_are_not_text(tmp_path: Path, data: object, where: str) -> None:
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(SessionImportError, match="nothing was imported") as info:
        read_jsonl(path)
    assert where in str(info.value)


def test_locomo_session_keys_with_leading_zeros_are_not_sessions(tmp_path: Path) -> None:
    path = tmp_path / "locomo.json"
    turns = [{"speaker": "A", "text": "hi"}]
    sample = {
        "sample_id": "c",
        "conversation": {
            "speaker_a": "A",
            "speaker_b": "B",
            "session_07": turns,
            "session_2": turns,
        },
    }
    path.write_text(json.dumps(sample), encoding="utf-8")
    assert [s["id"] for s in read_jsonl(path)] == ["c_session_2"]


def _containers(inner: st.SearchStrategy[object]) -> st.SearchStrategy[object]:
    return st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    _containers,
    max_leaves=6,
)


def _maybe(value: object) -> st.SearchStrategy[object]:
    """*value*, or any JSON value in its place."""
    return st.just(value) | _JSON


@st.composite
def _benchmark(draw: st.DrawFn) -> object:
    """A LoCoMo or LongMemEval document with any field possibly of the wrong type."""
    if draw(st.booleans()):
        turn = st.fixed_dictionaries(
            {"speaker": _maybe("A"), "text": _maybe("hi"), "blip_caption": _maybe("a cat")}
        )
        conversation = st.fixed_dictionaries(
            {
                "speaker_a": _maybe("A"),
                "speaker_b": _maybe("B"),
                "session_1": _maybe(draw(st.lists(turn, max_size=3))),
                "session_1_date_time": _maybe("2:10 pm on 9 May, 2023"),
            }
        )
        return draw(
            st.lists(
                st.fixed_dictionaries({"sample_id": _maybe("c"), "conversation": conversation}),
                min_size=1,
                max_size=2,
            )
        )
    message = st.fixed_dictionaries({"role": _maybe("user"), "content": _maybe("hello")})
    instance = st.fixed_dictionaries(
        {
            "question_id": _maybe("q"),
            "haystack_sessions": _maybe(draw(st.lists(st.lists(message, max_size=2), max_size=2))),
            "haystack_session_ids": _maybe(["s1", "s2"]),
            "haystack_dates": _maybe(["2023/05/20 (Sat) 02:21", None]),
        }
    )
    return draw(st.lists(instance, min_size=1, max_size=2))


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=_benchmark())
@pytest.mark.sqlite_only("a fresh state.db per hypothesis example")
def test_benchmark_shaped_json_is_imported_or_refused_clearly(tmp_path: Path, data: object) -> None:
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    path = folder / "bench.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    try:
        sessions = read_jsonl(path)
    except SessionImportError:
        return
    with SessionStore(folder / "state.db") as store:
        try:
            count = store.import_sessions(sessions)
        except SessionStoreError:
            assert store.session_count() == 0  # all or nothing
            return
        assert store.message_count() == count


# -- 6. paths that are not regular files -------------------------------------------------------


@pytest.mark.sqlite_only("what lies at the state.db path")
def test_device_fifo_or_directory_as_database(tmp_path: Path, one_line: Path) -> None:
    code, out = run("import", str(one_line), "--db", "/dev/null")
    assert code == 1 and "/dev/null is a character device, not a regular file" in out
    fifo = tmp_path / "pipe.db"
    os.mkfifo(fifo)
    for read_only in (True, False):
        with pytest.raises(SessionStoreError, match="is a named pipe, not a regular file"):
            SessionStore(fifo, read_only=read_only)
    folder = tmp_path / "folder.db"
    folder.mkdir()
    for read_only in (True, False):
        with pytest.raises(SessionStoreError, match="is a directory, not a regular file"):
            SessionStore(folder, read_only=read_only)
    assert list(folder.iterdir()) == []


@pytest.mark.sqlite_only("what lies at the state.db path")
def test_state_db_that_is_a_directory(hermes_home: Path, one_line: Path) -> None:
    (hermes_home / "state.db").mkdir()
    for command in (("import", str(one_line)), ("list",), ("search", "hello")):
        code, out = run(*command)
        assert code == 1 and f"{hermes_home / 'state.db'} is a directory" in out, out


# -- 7. a database locked by another process -----------------------------------------------


@pytest.mark.sqlite_only("SQLite's write lock")
def test_check_while_another_process_writes_is_not_damage(sqlite_db: Path) -> None:
    writer = sqlite3.connect(sqlite_db, isolation_level=None, check_same_thread=False)
    writer.execute("BEGIN IMMEDIATE")
    try:
        code, out = run("check")
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert code == 1
    assert "locked by another process" in out and "try again" in out
    assert "damaged" not in out.replace("says nothing about damage", "") and "repair" not in out
    code, out = run("check")
    assert code == 0 and out.startswith("ok: ")


@pytest.mark.sqlite_only("SQLite's write lock")
def test_check_waits_for_a_short_write(sqlite_db: Path) -> None:
    writer = sqlite3.connect(sqlite_db, isolation_level=None, check_same_thread=False)
    writer.execute("BEGIN IMMEDIATE")
    release = threading.Timer(0.5, lambda: writer.execute("ROLLBACK"))
    release.start()
    try:
        code, out = run("check")
    finally:
        release.join()
        writer.close()
    assert code == 0, out


# -- 9. --session-id and --title ---------------------------------------------------------------


def test_title_and_id_name_a_files_one_conversation(
    session_backend: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, hermes_home: Path
) -> None:
    target = configured_store(session_backend, hermes_home, monkeypatch)
    first = tmp_path / "a.jsonl"
    first.write_text('{"title": "Weekly sync", "messages": [{"role": "user", "content": "a"}]}\n')
    second = tmp_path / "b.jsonl"
    second.write_text('{"title": "Weekly sync", "messages": [{"role": "user", "content": "b"}]}\n')
    assert run("import", str(first))[0] == 0
    code, out = run("import", str(second))
    assert code == 1 and "already used by session" in out and "--title" in out
    code, out = run("import", str(second), "--title", "Weekly sync (2)", "--session-id", "sync2")
    assert code == 0, out
    with open_session_store(target, read_only=True) as store:
        session = store.get_session("sync2")
        assert session is not None and session["title"] == "Weekly sync (2)"
    own = tmp_path / "own.jsonl"
    own.write_text('{"session_id": "x", "role": "user", "content": "c"}\n')
    code, out = run("import", str(own), "--session-id", "mine", "--title", "Mine")
    assert code == 0, out
    with open_session_store(target, read_only=True) as store:
        session = store.get_session("mine")
        assert store.get_session("x") is None
        assert session is not None and session["title"] == "Mine"
    code, out = run("import", str(own))
    assert code == 0
    code, out = run("import", str(own))
    assert code == 1 and "already exists" in out and "--session-id" in out


def test_title_and_id_are_refused_for_several_named_conversations(tmp_path: Path, db: str) -> None:
    path = tmp_path / "two.jsonl"
    path.write_text(
        '{"messages": [{"role": "user", "content": "a"}]}\n'
        '{"session_id": "b", "role": "user", "content": "b"}\n'
    )
    before = digest(db)
    for option in ("--title", "--session-id"):
        code, out = run("import", str(path), option, "x")
        assert code == 1 and "holds 2 conversations" in out and "without them" in out
    assert digest(db) == before


# -- 10. smaller things --------------------------------------------------------------------------


def test_unknown_role_is_refused_like_the_tool_does(db: str) -> None:
    code, out = run("search", "nginx", "--role", "asistant")
    assert code == 2 and "'asistant' is not a role" in out and "assistant" in out
    code, out = run("search", "nginx", "--role", "User,assistant", "--json")
    assert code == 0 and [hit["session_id"] for hit in json.loads(out)] == ["s1"]


def test_inverted_time_range_is_refused(db: str) -> None:
    code, out = run("search", "nginx", "--since", "2030-01-01", "--until", "2020-01-01")
    assert code == 2 and "--since 2030-01-01 is not before --until 2020-01-01" in out


def test_endless_line_is_refused_without_reading_it_all(db: str) -> None:
    before = digest(db)
    code, out = run("import", "/dev/zero")
    assert code == 1 and f"line 1 is longer than {MAX_LINE_BYTES // 2**20} MiB" in out
    assert digest(db) == before


def test_import_message_counts_are_singular_for_one(one_line: Path, db: str) -> None:
    code, out = run("import", str(one_line))
    assert code == 0 and "Imported 1 message in 1 session into" in out


def test_show_prints_the_text_before_the_calls(db: str) -> None:
    with open_session_store(db) as store:
        store.append_message(
            "s1",
            "assistant",
            "Let me look.",
            tool_calls=[{"id": "c", "function": {"name": "read_file", "arguments": "{}"}}],
        )
    code, out = run("show", "s1")
    assert code == 0
    assert out.index("[ASSISTANT]: Let me look.") < out.index("[ASSISTANT]: [Called: read_file]")


def test_jsonl_shapes_that_are_refused_or_normalised(
    session_backend: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, hermes_home: Path
) -> None:
    target = configured_store(session_backend, hermes_home, monkeypatch)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"role": "user", "content": {"a": 1}}\n'
        '{"session_id": "", "role": "user", "content": "x"}\n'
        '{"session_id": "a\\u0000b", "role": "user", "content": "x"}\n'
    )
    code, out = run("import", str(bad))
    assert code == 1
    assert 'line 1: "content" must be text, a list of parts or null, got an object' in out
    assert "line 2: \"session_id\" must be non-empty text, got ''" in out
    assert "line 3: \"session_id\" 'a\\x00b' holds '\\x00', a control character" in out
    good = tmp_path / "good.jsonl"
    call = {"id": "c", "function": {"name": "search", "arguments": {"q": "记忆"}}}
    good.write_text(json.dumps({"role": "assistant", "content": "", "tool_calls": [call]}))
    code, out = run("import", str(good), "--session-id", "g")
    assert code == 0, out
    with open_session_store(target, read_only=True) as store:
        stored = store.get_messages("g")[0]["tool_calls"][0]["function"]["arguments"]
        assert stored == '{"q": "记忆"}'
        assert [hit["session_id"] for hit in store.search_messages("记忆")] == ["g"]


@pytest.mark.parametrize("bad_id", ["", "   ", "a\x00b", "a\nb", "a\x1b[2Jb"])
def test_store_refuses_empty_or_control_session_ids(db: str, bad_id: str) -> None:
    with open_session_store(db) as store:
        with pytest.raises(SessionStoreError, match="session id"):
            store.create_session(bad_id)
        with pytest.raises(SessionStoreError, match="imported session's id"):
            store.import_sessions([{"id": bad_id, "messages": [{"role": "user", "content": "x"}]}])
        assert store.session_count() == 1


# -- 11. queries made only of symbols ------------------------------------------------------------


@pytest.mark.parametrize("query", ["🔥", "€", "★★★", "🔥 €", "❤️"])
def test_symbol_only_queries_find_the_symbols(db: str, query: str) -> None:
    with open_session_store(db) as store:
        store.create_session("sym", source="cli")
        store.append_message("sym", "user", "the build is 🔥 ❤️ and costs 5€ ★★★ ok")
    code, out = run("search", query, "--json")
    assert code == 0, out
    assert [hit["session_id"] for hit in json.loads(out)] == ["sym"]
    code, out = run("search", "★★★★", "--json")
    assert code == 0 and json.loads(out) == []


@pytest.mark.sqlite_only("a Hermes Agent state.db without a trigram index")
def test_symbols_in_a_hermes_file_without_a_trigram_index(tmp_path: Path) -> None:
    path = tmp_path / "early.db"
    conn = sqlite3.connect(path)
    conn.executescript(E1_SQL)
    conn.execute("INSERT INTO sessions (id, source, started_at) VALUES ('h', 'cli', 1.7e9)")
    conn.execute(
        "INSERT INTO messages (session_id, role, content, timestamp) "
        "VALUES ('h', 'user', 'price is 5€ ★★★', 1.7e9)"
    )
    conn.commit()
    conn.close()
    with SessionStore(path, read_only=True) as store:
        for query in ("€", "★★★"):
            assert [hit["session_id"] for hit in store.search_messages(query)] == ["h"]


def test_words_beside_symbols_are_searched_as_before() -> None:
    parsed = parse_query("is the build 🔥?")
    assert [term.text for term in parsed.terms] == ["is", "the", "build"]
    assert parse_query("?!").empty


# JSON lets a string hold U+2028, U+2029 and U+0085 as they are (json.dumps(ensure_ascii=False)
# writes them so); str.splitlines() cuts at them, which broke such a line in pieces.
_LINE_LIKE = st.sampled_from(["\u2028", "\u2029", "\x85", "\u000b", "\u000c", "\x1c", "\x1d"])


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    texts=st.lists(
        st.lists(st.one_of(_LINE_LIKE, st.text(min_size=1, max_size=8)), min_size=1, max_size=6)
        .map("".join)
        .filter(lambda text: text.strip()),
        min_size=1,
        max_size=4,
    ),
    crlf=st.booleans(),
)
def test_text_holding_unicode_line_separators_is_imported_whole(
    tmp_path_factory: pytest.TempPathFactory, texts: list[str], crlf: bool
) -> None:
    folder = tmp_path_factory.mktemp("separators")
    path = folder / "history.jsonl"
    end = "\r\n" if crlf else "\n"
    lines = [json.dumps({"role": "user", "content": text}, ensure_ascii=False) for text in texts]
    path.write_bytes((end.join(lines) + end).encode("utf-8"))
    sessions = read_jsonl(path)
    assert [message["content"] for message in sessions[0]["messages"]] == texts


def test_a_line_with_a_line_separator_in_its_text_is_not_split(
    session_backend: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, hermes_home: Path
) -> None:
    target = configured_store(session_backend, hermes_home, monkeypatch)
    path = tmp_path / "history.jsonl"
    text = "first\u2028still the first \x85 message\u2029end"
    path.write_text(
        json.dumps({"role": "user", "content": text}, ensure_ascii=False)
        + "\n"
        + '{"role": "assistant", "content": 5}\n',
        encoding="utf-8",
    )
    code, out = run("import", str(path))
    assert code == 1
    assert 'line 2: "content" must be text' in out and "line 3" not in out  # numbered right
    path.write_text(
        json.dumps({"role": "user", "content": text}, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    code, out = run("import", str(path), "--session-id", "sep")
    assert code == 0, out
    with open_session_store(target, read_only=True) as store:
        assert [m["content"] for m in store.get_messages("sep")] == [text]


@pytest.mark.parametrize("stamp", ["1700000000", " 1.7e9 ", "2023"])
def test_a_timestamp_that_is_a_number_in_quotes_says_so(
    tmp_path: Path, db: str, stamp: str
) -> None:
    before = digest(db)
    path = tmp_path / "stamps.jsonl"
    path.write_text(
        json.dumps({"role": "user", "content": "hi", "timestamp": stamp})
        + "\n"
        + json.dumps({"messages": [{"role": "user", "content": "x"}], "started_at": stamp})
        + "\n"
    )
    code, out = run("import", str(path))
    assert code == 1
    assert f'line 1: "timestamp" {stamp!r} is a number written as text' in out
    assert f'line 2: "started_at" {stamp!r} is a number written as text' in out
    assert "without quotes" in out
    assert digest(db) == before
