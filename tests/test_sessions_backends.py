"""The session store's public behaviour, run on both backends: state.db and PostgreSQL.

Every test gets a fresh store from ``session_backend`` (a state.db path, or a
PostgreSQL schema of its own). The PostgreSQL cases skip without a server,
unless CI=true or HERMES_REQUIRE_POSTGRES=1 (see hermes_core/testing/postgres.py).
"""

from __future__ import annotations

import logging
import multiprocessing
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_core.errors import SessionNotFoundError, SessionStoreError, SessionTitleError
from hermes_core.sessions import SessionStore
from hermes_core.sessions.backends import open_session_store

ALICE, BOB = "telegram:1001", "telegram:2002"


@pytest.fixture
def store(session_backend: str) -> Iterator[SessionStore]:
    with open_session_store(session_backend) as opened:
        yield opened


def _ids(hits: list[dict[str, Any]]) -> list[int]:
    return [hit["id"] for hit in hits]


def _chat(store: SessionStore, session_id: str, *texts: str, **session: Any) -> list[int]:
    store.create_session(session_id, **session)
    return store.append_messages(
        session_id,
        [
            {"role": "user" if n % 2 == 0 else "assistant", "content": text}
            for n, text in enumerate(texts)
        ],
    )


# -- sessions and messages --------------------------------------------------------------------


def test_messages_round_trip_with_tool_calls(store: SessionStore) -> None:
    store.create_session("s", source="telegram", model="m1", title="First")
    calls = [{"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]
    ids = store.append_messages(
        "s",
        [
            {"role": "user", "content": "list the files", "name": "ana"},
            {"role": "assistant", "content": None, "tool_calls": calls},
            {"role": "tool", "tool_call_id": "c1", "content": "a.txt b.txt"},
        ],
    )
    assert ids == sorted(ids) and len(set(ids)) == 3
    messages = store.get_messages("s")
    assert [m["role"] for m in messages] == ["user", "assistant", "tool"]
    assert messages[1]["tool_calls"] == calls
    assert messages[2]["tool_name"] == "ls"  # named after the call it answers
    assert messages[0]["name"] == "ana"
    session = store.get_session("s")
    assert session is not None
    assert (session["source"], session["model"], session["title"]) == ("telegram", "m1", "First")
    assert (session["message_count"], session["tool_call_count"]) == (3, 1)
    conversation = store.get_messages_as_conversation("s")
    assert conversation[2] == {
        "role": "tool",
        "content": "a.txt b.txt",
        "tool_call_id": "c1",
        "name": "ls",
    }


def test_appending_to_a_missing_session_is_refused(store: SessionStore) -> None:
    with pytest.raises(SessionNotFoundError):
        store.append_message("nope", "user", "hello")
    assert store.message_count() == 0


def test_a_bad_message_in_a_batch_writes_nothing(store: SessionStore) -> None:
    store.create_session("s")
    with pytest.raises(SessionStoreError):
        store.append_messages("s", [{"role": "user", "content": "ok"}, {"content": "no role"}])
    assert store.message_count("s") == 0


def test_end_reopen_prompt_and_tokens(store: SessionStore) -> None:
    store.create_session("s")
    assert store.end_session("s", "user_exit")
    assert not store.end_session("s", "again")  # the first end wins
    assert store.get_session("s")["end_reason"] == "user_exit"  # type: ignore[index]
    assert store.reopen_session("s")
    assert store.get_session("s")["ended_at"] is None  # type: ignore[index]
    assert store.update_system_prompt("s", "You are helpful.")
    assert store.update_token_counts("s", 10, 5, model="m2")
    assert store.update_token_counts("s", 1, 1)
    row = store.get_session("s")
    assert row is not None
    assert (row["input_tokens"], row["output_tokens"], row["model"]) == (11, 6, "m2")
    assert not store.end_session("missing", "x")


def test_titles_are_unique_and_numbered(store: SessionStore) -> None:
    store.create_session("a", title="Plan")
    store.create_session("b")
    with pytest.raises(SessionTitleError, match="already in use"):
        store.set_session_title("b", "Plan")
    assert store.next_title_in_lineage("Plan") == "Plan #2"
    assert store.set_session_title("b", "Plan #2")
    assert store.next_title_in_lineage("Plan #2") == "Plan #3"
    assert store.get_session_by_title("Plan #2")["id"] == "b"  # type: ignore[index]
    assert store.set_session_title("b", None)
    assert store.get_session_by_title("Plan #2") is None


def test_prefixes_resolve_case_sensitively(store: SessionStore) -> None:
    for sid in ("abc123", "abd456", "ABC789"):
        store.create_session(sid)
    assert store.resolve_session_id("abc") == "abc123"
    assert store.resolve_session_id("ab") is None  # two match
    assert store.session_ids_starting_with("ab") == ["abc123", "abd456"]
    assert store.resolve_session_id("ABC") == "ABC789"


def test_compression_lineage_and_listing(store: SessionStore) -> None:
    _chat(store, "root", "we talk about the garden", "yes", title="Garden")
    store.end_session("root", "compression")
    _chat(store, "cont", "more about tomatoes", "ok", parent_session_id="root")
    store.set_session_title("cont", "Garden #2")
    _chat(store, "other", "unrelated chat", "fine")
    assert store.get_compression_tip("root") == "cont"
    assert store.get_lineage("cont") == ["root", "cont"]
    assert store.get_lineage_root("cont") == "root"
    assert store.get_lineage_members("root") == {"root", "cont"}
    rows = store.list_sessions()
    assert [row["id"] for row in rows] == ["other", "cont"]
    garden = rows[1]
    assert garden["lineage_root_id"] == "root" and garden["lineage_ids"] == ["root", "cont"]
    assert garden["title"] == "Garden #2"
    assert garden["preview"] == "more about tomatoes"  # the newest continuation's
    assert {row["id"] for row in store.list_sessions(collapse_lineage=False)} == {
        "root",
        "cont",
        "other",
    }
    assert store.session_count() == 3
    assert store.last_activity() is not None


def test_delete_conversation_and_prune(store: SessionStore) -> None:
    _chat(store, "root", "first part", title="Chain")
    store.end_session("root", "compression")
    _chat(store, "cont", "second part", parent_session_id="root")
    store.end_session("cont", "user_exit")
    _chat(store, "open", "still going")
    assert store.delete_conversation("cont") == ["root", "cont"]
    assert store.get_session("root") is None and store.message_count() == 1
    assert store.search_messages("part") == []
    _chat(store, "old", "ended long ago")
    store.end_session("old", "user_exit")
    assert store.prune_conversations(ended_before=9e9) == ["old"]
    assert [row["id"] for row in store.list_sessions()] == ["open"]
    assert not store.delete_session("old")


def test_import_is_all_or_nothing(store: SessionStore) -> None:
    sessions = [
        {"id": "i1", "title": "Imported", "messages": [{"role": "user", "content": "alpha"}]},
        {"id": "i2", "parent_session_id": "i1", "messages": [{"role": "user", "content": "beta"}]},
    ]
    assert store.import_sessions(sessions) == 2
    assert store.get_session("i2")["parent_session_id"] == "i1"  # type: ignore[index]
    with pytest.raises(SessionStoreError, match="already exists"):
        store.import_sessions([{"id": "i3", "messages": []}, {"id": "i1", "messages": []}])
    assert store.get_session("i3") is None
    assert len(store.search_messages("alpha")) == 1


def test_meta_values(store: SessionStore) -> None:
    assert store.get_meta("k") is None
    store.set_meta("k", "v1")
    store.set_meta("k", "v2")
    assert store.get_meta("k") == "v2"


# -- search -----------------------------------------------------------------------------------


@pytest.fixture
def searchable(store: SessionStore) -> SessionStore:
    _chat(
        store,
        "dev",
        "We deployed the billing service to production yesterday",
        "The deploy script lives in scripts/deploy.sh",
        "Kubernetes networking broke after the upgrade",
        "记忆断裂的问题已经修好了",
        source="cli",
    )
    _chat(
        store,
        "chat",
        "Let's talk about the garden and tomatoes",
        "Tomatoes need sun",
        source="telegram",
    )
    return store


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("deploy", {1, 2}),  # stemmed: deployed
        ("deploy*", {1, 2}),
        ('"billing service"', {1}),
        ("deploy NOT billing", {2}),
        ("garden OR kubernetes", {3, 5}),
        ("deploy.sh", {2}),
        ("tomatoes", {5, 6}),
        ("记", {4}),
        ("断裂", {4}),
        ("记忆断裂", {4}),
        ("C++ TODO: fix", set()),
        ("", set()),
        ("AND OR NOT", set()),
    ],
)
def test_query_forms_find_the_same_messages(
    searchable: SessionStore, query: str, expected: set[int]
) -> None:
    assert set(_ids(searchable.search_messages(query))) == expected


def test_a_question_finds_the_answer_first(searchable: SessionStore) -> None:
    hits = searchable.search_messages("What did we deploy to production?")
    assert hits and hits[0]["id"] == 1
    assert ">>>" in hits[0]["snippet"]
    assert hits[0]["session_id"] == "dev" and hits[0]["source"] == "cli"
    assert hits[0]["rank"] == 0


def test_filters(searchable: SessionStore) -> None:
    assert _ids(searchable.search_messages("tomatoes", role_filter="assistant")) == [6]
    assert _ids(searchable.search_messages("tomatoes", source_filter=["cli"])) == []
    assert set(_ids(searchable.search_messages("tomatoes", exclude_sources="cli"))) == {5, 6}
    assert _ids(searchable.search_messages("deploy", session_ids="chat")) == []
    assert _ids(searchable.search_messages("deploy", exclude_session_ids=["dev"])) == []
    assert _ids(searchable.search_messages("deploy", until=0)) == []
    assert len(searchable.search_messages("deploy", limit=1)) == 1
    assert len(searchable.search_messages("deploy", limit=1, offset=1)) == 1
    hit = searchable.search_messages("Kubernetes", context=True)[0]
    assert [part["role"] for part in hit["context"]] == ["assistant", "user", "assistant"]
    with pytest.raises(SessionStoreError):
        searchable.search_messages("deploy", limit=-1 if False else "ten")  # type: ignore[arg-type]


_HOSTILE = st.text(
    alphabet=st.one_of(
        st.sampled_from(
            [*"\"*()[]{}:^+-~|&!?'%\\/.,;_ \t\nabc019", "\x00", "\ud800", "记", "忆", "🚀"]
        ),
        st.characters(),
    ),
    max_size=60,
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(query=_HOSTILE)
def test_hostile_queries_never_raise(searchable: SessionStore, query: str) -> None:
    """Any text is searched without an error, and without the backend rejecting what the
    sanitiser made of it (a rejection is logged as a warning and gives no hits)."""
    warned: list[str] = []

    class Recorder(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            warned.append(record.getMessage())

    recorder = Recorder(logging.WARNING)
    loggers = [logging.getLogger(f"hermes_core.sessions.{n}") for n in ("search", "postgres")]
    for logger in loggers:
        logger.addHandler(recorder)
    try:
        assert isinstance(searchable.search_messages(query, limit=5), list)
        assert isinstance(searchable.search_messages(query + "?", limit=5), list)
    finally:
        for logger in loggers:
            logger.removeHandler(recorder)
    assert not warned, (query, warned)


# -- users ------------------------------------------------------------------------------------


def test_users_never_see_each_other(session_backend: str) -> None:
    with open_session_store(session_backend, user_id=ALICE) as alice:
        _chat(alice, "a1", "my pharmacy is on Elm Street", title="Errands")
    with open_session_store(session_backend, user_id=BOB) as bob:
        _chat(bob, "b1", "my pharmacy is on Oak Avenue", title="Errands")  # titles per user
        assert [row["id"] for row in bob.list_sessions()] == ["b1"]
        assert {hit["session_id"] for hit in bob.search_messages("pharmacy")} == {"b1"}
        assert bob.get_session("a1") is None and bob.get_messages("a1") == []
        assert bob.get_lineage("a1") == ["a1"] and bob.session_count() == 1
        with pytest.raises(SessionNotFoundError):
            bob.append_message("a1", "user", "sneaky")
        assert not bob.delete_session("a1") and bob.delete_conversation("a1") == []
        with pytest.raises(SessionStoreError, match="taken"):
            bob.create_session("a1")
    with open_session_store(session_backend) as everyone:
        assert {row["id"] for row in everyone.list_sessions()} == {"a1", "b1"}
        assert everyone.message_count("a1") == 1


# -- PostgreSQL only ----------------------------------------------------------------------------


@pytest.fixture
def pg_url(session_backend: str) -> str:
    if not session_backend.startswith("postgresql"):
        pytest.skip("PostgreSQL only")
    return session_backend


def test_a_retried_append_with_the_same_tokens_is_stored_once(pg_url: str) -> None:
    with open_session_store(pg_url) as store:
        store.create_session("s")
        batch = [{"role": "user", "content": "once"}, {"role": "assistant", "content": "only"}]
        first = store.append_messages("s", batch, client_tokens=["t1", "t2"])  # type: ignore[call-arg]
        again = store.append_messages("s", batch, client_tokens=["t1", "t2"])  # type: ignore[call-arg]
        assert first == again and store.message_count("s") == 2
        assert store.get_session("s")["message_count"] == 2  # type: ignore[index]


def test_a_lost_connection_is_reconnected_without_duplicates(pg_url: str) -> None:
    from hermes_core.testing.postgres import admin_connection

    # The URL names the connections, so only this store's are killed (other runs share the
    # server, and the store's own name would reach their connections too).
    name = f"hermes-memory-test-{uuid.uuid4().hex[:12]}"
    with open_session_store(f"{pg_url}&application_name={name}") as store:
        store.create_session("s")
        store.append_message("s", "user", "before")
        admin = admin_connection()
        # Kill every connection of this store's pool (the server restarting, a proxy dropping).
        killed = admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = %s",
            (name,),
        ).fetchall()
        admin.close()
        assert killed
        store.append_message("s", "user", "after")
        assert [m["content"] for m in store.get_messages("s")] == ["before", "after"]


def test_a_refused_connection_names_the_url_with_the_password_masked() -> None:
    url = "postgresql://hermes:s3cret@127.0.0.1:1/nowhere"
    with pytest.raises(SessionStoreError) as caught:
        open_session_store(url)
    message = str(caught.value)
    assert "postgresql://hermes:***@127.0.0.1:1/nowhere" in message and "s3cret" not in message


def test_the_schema_is_versioned_and_migrated_once(pg_url: str) -> None:
    from hermes_core.sessions.pgschema import MIGRATIONS
    from hermes_core.testing.postgres import admin_connection

    for _ in range(2):
        open_session_store(pg_url).close()
    admin = admin_connection()
    schema = pg_url.rsplit("%3D", 1)[-1]
    rows = admin.execute(
        f"SELECT version FROM {schema}.hermes_schema_migrations ORDER BY version"
    ).fetchall()
    admin.close()
    assert rows == [(version,) for version in sorted(MIGRATIONS)]  # each applied once


def _append_many(url: str, worker: int, count: int) -> None:
    with open_session_store(url) as store:
        for n in range(count):
            store.append_message("shared", "user", f"worker {worker} message {n}")


def test_processes_appending_at_once_lose_and_duplicate_nothing(pg_url: str) -> None:
    with open_session_store(pg_url) as store:
        store.create_session("shared")
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_append_many, args=(pg_url, w, 40)) for w in range(4)]
    for process in workers:
        process.start()
    for process in workers:
        process.join(120)
        assert process.exitcode == 0
    with open_session_store(pg_url) as store:
        texts = [m["content"] for m in store.get_messages("shared")]
        assert len(texts) == 160 == len(set(texts))
        assert store.get_session("shared")["message_count"] == 160  # type: ignore[index]
