"""Deleting conversations: ``delete_conversation``, ``prune_conversations`` and the CLI,
on both backends (state.db and PostgreSQL, ``session_backend``)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from hermes_core.cli import cli
from hermes_core.errors import SessionStoreError
from hermes_core.sessions import SessionStore
from hermes_core.sessions.backends import open_session_store
from tests.backend_kit import configured_store, raw_sql

SECRET = "the vault code is 4417 and the spare key sits under the blue flowerpot"
DAY = 86_400.0


def _conversations(store: SessionStore) -> None:
    """chat1 (compressed) -> chat2 (open), a subagent of chat1, and an unrelated chat."""
    store.create_session("chat1", title="Garden shed", started_at=1000.0)
    store.append_message("chat1", "user", f"Remember: {SECRET}.", timestamp=1001.0)
    store.create_session("sub1", source="tool", parent_session_id="chat1", started_at=1002.0)
    store.append_message("sub1", "user", "measure the shed door")
    store.end_session("sub1", "delegation_complete")
    store.end_session("chat1", "compression")
    store.create_session("chat2", parent_session_id="chat1", started_at=time.time() + 1)
    store.append_message("chat2", "user", "Which flowerpot was it again?")
    store.create_session("other", title="Bread", started_at=2000.0)
    store.append_message("other", "user", "My sourdough starter smells of acetone.")


def _backdate(target: str | Path, days: float, *session_ids: str) -> None:
    """End *session_ids* that many days ago (as a history kept for months would have them)."""
    for sid in session_ids:
        raw_sql(
            target,
            "UPDATE sessions SET ended_at = ?, end_reason = COALESCE(end_reason, 'done') "
            "WHERE id = ?",
            (time.time() - days * DAY, sid),
        )


@pytest.fixture
def store(session_backend: str) -> Iterator[SessionStore]:
    with open_session_store(session_backend, semantic="off") as store:
        _conversations(store)
        yield store


def test_deleting_a_conversation_takes_its_whole_compression_chain(store: SessionStore) -> None:
    assert store.search_messages("flowerpot")
    assert store.delete_conversation("chat2") == ["chat1", "chat2"]  # any part names it
    assert store.get_session("chat1") is None and store.get_session("chat2") is None
    assert store.search_messages("flowerpot") == [] and store.search_messages("vault") == []
    sub = store.get_session("sub1")  # the subagent's own work stays, unlinked
    assert sub is not None and sub["parent_session_id"] is None
    assert [m["content"] for m in store.get_messages("other")]
    assert store.check() == []  # every index agrees with what is left
    assert store.delete_conversation("chat1") == []  # already gone


@pytest.mark.sqlite_only("the bytes of state.db and its WAL")
def test_deleted_text_does_not_linger_in_the_files(store: SessionStore) -> None:
    for n in range(30):  # more history after it, as in a real file
        store.append_message("other", "user", f"a later message, number {n}, about bread")
    store.delete_conversation("chat1")
    # Checked while the store is open: closing it would checkpoint the log away anyway.
    for name in (store.path.name, f"{store.path.name}-wal"):
        leftover = store.path.with_name(name)
        if leftover.exists():
            assert SECRET.encode() not in leftover.read_bytes(), name


def test_prune_keeps_a_conversation_that_goes_on(store: SessionStore, session_backend: str) -> None:
    _backdate(session_backend, 200, "chat1", "sub1", "other")
    # chat2 continues chat1 and is still open: the conversation is kept whole.
    assert sorted(store.prune_conversations(time.time() - 90 * DAY)) == ["other", "sub1"]
    assert store.get_session("chat1") is not None
    store.end_session("chat2", "user_exit")  # ended just now: still too recent
    assert store.prune_conversations(time.time() - 90 * DAY) == []
    _backdate(session_backend, 100, "chat2")
    assert store.prune_conversations(time.time() - 90 * DAY) == ["chat1", "chat2"]
    assert store.list_sessions() == []


def test_prune_by_source(store: SessionStore, session_backend: str) -> None:
    _backdate(session_backend, 200, "chat1", "sub1", "other", "chat2")
    assert store.prune_conversations(time.time(), source="tool") == ["sub1"]
    assert sorted(store.prune_conversations(time.time(), source="cli")) == [
        "chat1",
        "chat2",
        "other",
    ]


@pytest.mark.parametrize("bad", [None, "90d", float("nan"), True])
def test_prune_needs_a_time(store: SessionStore, bad: object) -> None:
    with pytest.raises(SessionStoreError, match="ended_before must be epoch seconds"):
        store.prune_conversations(bad)  # type: ignore[arg-type]
    assert store.get_session("other") is not None


def _cli(*args: str, stdin: str | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["sessions", *args], input=stdin)
    return result.exit_code, " ".join(result.output.split())


def test_delete_command_asks_first(
    session_backend: str, hermes_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with open_session_store(
        configured_store(session_backend, hermes_home, monkeypatch), semantic="off"
    ) as store:
        _conversations(store)
    code, out = _cli("delete", "Garden shed")  # no terminal to ask on
    assert code == 1 and "pass --yes to confirm" in out and "Nothing was deleted" in out
    assert "'Garden shed' (chat1 -> chat2): 2 sessions, 2 messages" in out
    assert "Its last session has not ended" in out  # chat2 may be open in a chat
    code, out = _cli("delete", "chat2", "--yes")
    assert code == 0, out
    assert "Deleted the conversation 'Garden shed' (chat1 -> chat2)" in out
    code, out = _cli("show", "chat1")
    assert code == 1 and "No session matches 'chat1'" in out
    code, out = _cli("delete", "nosuch", "--yes")
    assert code == 1 and "No session matches 'nosuch'" in out


def test_prune_command(
    session_backend: str, hermes_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = configured_store(session_backend, hermes_home, monkeypatch)
    with open_session_store(target, semantic="off") as store:
        _conversations(store)
    _backdate(target, 200, "other")
    code, out = _cli("prune", "--older-than", "90d", "--yes")
    assert code == 0, out
    assert "Deleted 1 session(s) that ended before" in out
    code, out = _cli("prune", "--older-than", "90d", "--yes")
    assert code == 0 and "nothing was deleted" in out
    code, out = _cli("prune", "--older-than", "a while", "--yes")
    assert code == 2 and "'--older-than'" in out and "duration" in out
