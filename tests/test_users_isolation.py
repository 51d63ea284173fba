"""Per-user isolation: user A's writes never reach user B through a prompt, a tool or the CLI.

Two users share one HERMES_HOME (a gateway serving many people). Every layer
the builtin provider owns is checked: the MEMORY.md / USER.md snapshot, the
``memory`` tool, ``session_search``, the session store's reads, search,
lineage, titles and deletes, and the ``memory`` / ``sessions`` commands.
No user id keeps the single-user behaviour. The session-store cases run on both
backends (state.db and PostgreSQL through ``HERMES_SESSIONS_URL``, ``session_backend``).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from hermes_memory_builtin import BuiltinMemoryProvider
from hermes_memory_builtin.store import memory_dir_for
from hypothesis import given
from hypothesis import strategies as st

from hermes_core.cli import cli
from hermes_core.errors import ConfigError, SessionNotFoundError, SessionStoreError
from hermes_core.runtime.session import AgentSession
from hermes_core.sessions import SessionStore
from hermes_core.sessions.backends import open_session_store
from hermes_core.users import (
    MAX_USER_ID_CHARS,
    user_folder_name,
    user_id_of_folder,
    valid_user_id,
)
from tests.backend_kit import configured_store

ALICE, BOB = "telegram:1001", "telegram:2002"


# -- ids --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("", "empty"),
        ("   ", "empty"),
        (" alice", "whitespace"),
        ("a" * (MAX_USER_ID_CHARS + 1), "over the limit"),
        ("ali\x00ce", "U\\+0000"),
        ("ali\u200bce", "U\\+200B"),
        (["alice"], "must be text"),
        (True, "must be text"),
    ],
)
def test_unusable_user_ids_are_refused_with_the_reason(value: object, problem: str) -> None:
    with pytest.raises(ConfigError, match=problem):
        valid_user_id(value)


def test_a_user_id_never_leaves_its_folder(hermes_home: Path) -> None:
    for hostile in ("..", "../..", "../../etc", "/etc/passwd", "a/../../b", ".", "~root"):
        folder = memory_dir_for(hermes_home, hostile)
        assert folder.parent == hermes_home / "memories" / "users"
        assert folder.name not in (".", "..") and "/" not in folder.name


@given(st.text(min_size=1, max_size=40), st.text(min_size=1, max_size=40))
def test_folder_names_are_distinct_per_id_even_ignoring_case(first: str, second: str) -> None:
    """Two ids never share a folder, even on a case-insensitive disk (macOS, Windows)."""
    if first == second:
        return
    a, b = user_folder_name(first), user_folder_name(second)
    assert a.lower() != b.lower()
    assert "/" not in a and "\\" not in a and a not in (".", "..")
    assert a.isascii()


@given(st.text(min_size=1, max_size=40))
def test_a_folder_name_gives_back_its_user_id(user: str) -> None:
    """`memory migrate` finds the users by their folders: the escaping is undone exactly."""
    try:
        valid = valid_user_id(user)
    except ConfigError:
        return
    assert valid is not None and user_id_of_folder(user_folder_name(valid)) == valid


def test_folder_names_no_id_has_are_not_users() -> None:
    for name in ("Alice", "%4", "%ZZ", "a b", "%FF", "%41LICE", ""):
        assert user_id_of_folder(name) is None


def test_unicode_ids_get_their_own_folder(hermes_home: Path) -> None:
    assert memory_dir_for(hermes_home, "用户一") != memory_dir_for(hermes_home, "用户二")
    assert memory_dir_for(hermes_home, "Alice") != memory_dir_for(hermes_home, "alice")


# -- builtin provider: prompt and tools -------------------------------------------------------


def _provider(home: Path, session_id: str, user_id: str | None) -> BuiltinMemoryProvider:
    provider = BuiltinMemoryProvider()
    kwargs = {"hermes_home": str(home), "platform": "telegram"}
    if user_id is not None:
        kwargs["user_id"] = user_id
    provider.initialize(session_id, **kwargs)
    return provider


def _memory(provider: BuiltinMemoryProvider, **args: str) -> dict[str, object]:
    result: dict[str, object] = json.loads(provider.handle_tool_call("memory", args))
    return result


def test_one_users_memory_never_reaches_another_users_prompt(hermes_home: Path) -> None:
    alice = _provider(hermes_home, "a1", ALICE)
    assert _memory(alice, action="add", target="memory", content="Alice's vault code is 4471.")[
        "success"
    ]
    assert _memory(alice, action="add", target="user", content="Alice is allergic to walnuts.")[
        "success"
    ]
    bob = _provider(hermes_home, "b1", BOB)
    assert "4471" not in bob.system_prompt_block()
    assert "walnuts" not in bob.system_prompt_block()
    # nor through his memory tool: a replace of her entry finds nothing to replace
    result = _memory(bob, action="replace", target="memory", old_text="4471", content="x")
    assert not result["success"]
    assert result["current_entries"] == []
    # the single-user files (no user id) are another scope again
    assert "4471" not in _provider(hermes_home, "s1", None).system_prompt_block()
    # Alice's next session sees her own memory
    assert "4471" in _provider(hermes_home, "a2", ALICE).system_prompt_block()
    assert (memory_dir_for(hermes_home, ALICE) / "MEMORY.md").is_file()
    assert not (hermes_home / "memories" / "MEMORY.md").exists()


def test_without_a_user_id_memory_stays_where_it_was(hermes_home: Path) -> None:
    (hermes_home / "memories").mkdir()
    (hermes_home / "memories" / "MEMORY.md").write_text("Deploys go out on Fridays.\n")
    assert "Fridays" in _provider(hermes_home, "s", None).system_prompt_block()
    assert "Fridays" not in _provider(hermes_home, "s", ALICE).system_prompt_block()


def test_a_provider_reused_for_another_user_switches_files(hermes_home: Path) -> None:
    provider = _provider(hermes_home, "a1", ALICE)
    _memory(provider, action="add", target="memory", content="Alice parks in bay 12.")
    provider.initialize("b1", hermes_home=str(hermes_home), user_id=BOB)
    assert "bay 12" not in provider.system_prompt_block()
    assert provider.user_id == BOB


def test_an_unusable_user_id_stops_initialize_with_the_reason(hermes_home: Path) -> None:
    with pytest.raises(ConfigError, match="whitespace"):
        _provider(hermes_home, "x", " alice ")


@pytest.fixture
def sessions_at(session_backend: str, hermes_home: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The session store every layer of this home uses, on each backend."""
    return configured_store(session_backend, hermes_home, monkeypatch)


def _write_conversation(target: str, user_id: str | None, session_id: str, text: str) -> None:
    with open_session_store(target, user_id=user_id) as store:
        store.create_session(session_id, source="telegram", title="Groceries")
        store.append_message(session_id, "user", text)
        store.append_message(session_id, "assistant", "Noted.")


def test_session_search_returns_only_the_users_own_conversations(
    hermes_home: Path, sessions_at: str
) -> None:
    _write_conversation(sessions_at, ALICE, "alice-1", "my pharmacy is on Elm Street")
    _write_conversation(sessions_at, BOB, "bob-1", "my pharmacy is on Oak Avenue")
    bob = _provider(hermes_home, "bob-2", BOB)
    for args in ({"query": "pharmacy"}, {"query": "street"}, {}):
        text = bob.handle_tool_call("session_search", args)
        assert "Elm" not in text and "alice-1" not in text
    assert "Oak" in bob.handle_tool_call("session_search", {"query": "pharmacy"})
    alice = _provider(hermes_home, "alice-2", ALICE)
    found = alice.handle_tool_call("session_search", {"query": "pharmacy"})
    assert "Elm" in found and "Oak" not in found


def test_the_runtime_scopes_prompt_and_store_by_its_user(
    hermes_home: Path, sessions_at: str
) -> None:
    alice = AgentSession.open(hermes_home, client=None, user_id=ALICE)
    alice.start()
    assert alice.store.user_id == ALICE
    alice.manager.handle_tool_call(
        "memory", {"action": "add", "target": "user", "content": "Alice's cat is Miso."}
    )
    alice.close()
    bob = AgentSession.open(hermes_home, client=None, user_id=BOB)
    bob.start()
    try:
        assert "Miso" not in bob.system_prompt
        assert bob.store.list_sessions() == [
            row for row in bob.store.list_sessions() if row["user_id"] == BOB
        ]
        assert bob.store.get_session(alice.session_id) is None
    finally:
        bob.close()


# -- session store ----------------------------------------------------------------------------


@pytest.fixture
def shared_db(sessions_at: str) -> str:
    _write_conversation(sessions_at, ALICE, "alice-1", "the launch code is tangerine")
    _write_conversation(sessions_at, BOB, "bob-1", "the launch code is avocado")
    return sessions_at


def test_a_scoped_store_sees_only_its_users_sessions(shared_db: str) -> None:
    with open_session_store(shared_db, user_id=BOB) as bob:
        assert [row["id"] for row in bob.list_sessions()] == ["bob-1"]
        assert bob.session_count() == 1 and bob.message_count() == 2
        assert bob.get_session("alice-1") is None
        assert bob.get_messages("alice-1") == []
        assert bob.message_count("alice-1") == 0
        assert bob.resolve_session_id("alice") is None
        assert bob.session_ids_starting_with("a") == []
        assert bob.get_session_by_title("Groceries")["id"] == "bob-1"  # type: ignore[index]
        hits = bob.search_messages("launch code")
        assert {hit["session_id"] for hit in hits} == {"bob-1"}
        assert bob.search_messages("tangerine") == []
        assert bob.search_messages("tangerine", session_ids=["alice-1"]) == []
        assert bob.get_lineage("alice-1") == ["alice-1"]
        assert bob.get_lineage_members("alice-1") == {"alice-1"}
    with open_session_store(shared_db) as everyone:
        assert {row["id"] for row in everyone.list_sessions()} == {"alice-1", "bob-1"}
        assert everyone.message_count() == 4


def test_titles_are_unique_per_user(shared_db: str) -> None:
    # both fixtures' sessions are titled "Groceries": each user has their own namespace
    with open_session_store(shared_db, user_id=BOB) as bob:
        assert bob.next_title_in_lineage("Groceries") == "Groceries #2"
        bob.create_session("bob-2")
        assert bob.set_session_title("bob-2", "Groceries #2")
    with open_session_store(shared_db, user_id=ALICE) as alice:
        assert alice.next_title_in_lineage("Groceries") == "Groceries #2"
        alice.create_session("alice-2", title="Groceries #2")
        assert alice.get_session("alice-2")["title"] == "Groceries #2"  # type: ignore[index]


def test_a_scoped_store_cannot_change_or_delete_another_users_sessions(shared_db: str) -> None:
    with open_session_store(shared_db, user_id=BOB) as bob:
        with pytest.raises(SessionNotFoundError):
            bob.append_message("alice-1", "user", "injected")
        assert not bob.end_session("alice-1", "user_exit")
        assert not bob.set_session_title("alice-1", "mine now")
        assert not bob.update_system_prompt("alice-1", "x")
        assert not bob.update_token_counts("alice-1", 5, 5)
        assert not bob.delete_session("alice-1")
        assert bob.delete_conversation("alice-1") == []
        with pytest.raises(SessionStoreError, match="taken"):
            bob.create_session("alice-1")
        with pytest.raises(SessionStoreError, match="does not exist"):
            bob.create_session("bob-child", parent_session_id="alice-1")
        with pytest.raises(SessionStoreError, match="scoped to user"):
            bob.create_session("bob-3", user_id=ALICE)
        with pytest.raises(SessionStoreError, match="scoped to user"):
            bob.import_sessions([{"id": "imp", "user_id": ALICE, "messages": []}])
        bob.end_session("bob-1", "user_exit")
        assert bob.prune_conversations(ended_before=9e9) == ["bob-1"]
    with open_session_store(shared_db, user_id=ALICE) as alice:
        session = alice.get_session("alice-1")
        assert session is not None and session["title"] == "Groceries"
        assert session["ended_at"] is None
        assert alice.message_count("alice-1") == 2


def test_prune_of_one_user_keeps_the_others(shared_db: str) -> None:
    for user, session_id in ((ALICE, "alice-1"), (BOB, "bob-1")):
        with open_session_store(shared_db, user_id=user) as store:
            assert store.end_session(session_id, "done")
    with open_session_store(shared_db, user_id=ALICE) as alice:
        assert alice.prune_conversations(ended_before=9e9) == ["alice-1"]
    with open_session_store(shared_db) as everyone:
        assert [row["id"] for row in everyone.list_sessions()] == ["bob-1"]


@pytest.mark.sqlite_only("a version-5 state.db and its migration")
def test_an_older_state_db_is_migrated_in_place(hermes_home: Path) -> None:
    """A version-5 file (one title namespace) opens, keeps its rows and gains per-user titles."""
    db = hermes_home / "state.db"
    with SessionStore(db) as store:
        store.create_session("old", title="Groceries")
        store.append_message("old", "user", "the old conversation")
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("DROP INDEX idx_sessions_user_title_unique")
    conn.execute(
        "CREATE UNIQUE INDEX idx_sessions_title_unique ON sessions(title) WHERE title IS NOT NULL"
    )
    conn.execute("UPDATE schema_version SET version = 5")
    conn.close()
    with SessionStore(db, user_id=ALICE) as alice:
        alice.create_session("a", title="Groceries")
        assert alice.search_messages("old conversation") == []
    with SessionStore(db) as everyone:
        assert everyone.get_session("old")["title"] == "Groceries"  # type: ignore[index]
        assert len(everyone.search_messages("old conversation")) == 1
    names = {
        row[0]
        for row in sqlite3.connect(db).execute("SELECT name FROM sqlite_master WHERE type='index'")
    }
    assert "idx_sessions_title_unique" not in names


# -- CLI --------------------------------------------------------------------------------------


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def test_the_sessions_commands_honour_user(shared_db: str) -> None:
    code, out = _run("sessions", "list", "--user", BOB, "--json")
    assert code == 0 and [row["id"] for row in json.loads(out)] == ["bob-1"]
    code, out = _run("sessions", "search", "--user", BOB, "launch code", "--json")
    assert code == 0 and "tangerine" not in out and "avocado" in out
    code, out = _run("sessions", "show", "--user", BOB, "alice-1")
    assert code != 0 and "tangerine" not in out
    code, out = _run("sessions", "delete", "--user", BOB, "alice-1", "--yes")
    assert code != 0
    code, out = _run("sessions", "list", "--json")
    assert {row["id"] for row in json.loads(out)} == {"alice-1", "bob-1"}
    code, out = _run("sessions", "list", "--user", " bad", "--json")
    assert code != 0 and "whitespace" in out


def test_the_memory_commands_honour_user(hermes_home: Path) -> None:
    assert _run("memory", "add", "--user", ALICE, "Alice's locker is 31.")[0] == 0
    code, out = _run("memory", "show", "--user", BOB, "--json")
    assert code == 0 and "locker" not in out
    code, out = _run("memory", "show", "--json")
    assert code == 0 and "locker" not in out
    code, out = _run("memory", "show", "--user", ALICE, "--json")
    assert code == 0 and "locker is 31" in out
    code, out = _run("memory", "remove", "--user", BOB, "locker")
    assert code != 0
    assert "locker is 31" in _run("memory", "show", "--user", ALICE)[1]
