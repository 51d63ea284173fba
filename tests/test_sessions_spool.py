"""A database outage mid-turn: appends kept in the local spool, written back once, in order.

The outage is real: the store talks to the real PostgreSQL server through a
loopback TCP proxy (hermes_core/testing/tcp_proxy.py) that the test cuts
(the port refuses connections, open ones drop) and restores.
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import re
import shutil
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_core.errors import SessionStoreError, SessionStoreUnavailableError
from hermes_core.sessions.backends import open_session_store
from hermes_core.sessions.postgres import PostgresSessionStore
from hermes_core.sessions.spool import SessionSpool, SpooledSessionStore, spool_path, with_spool
from hermes_core.testing.tcp_proxy import TCPProxy


@pytest.fixture
def pg_url() -> Iterator[str]:
    from hermes_core.testing.postgres import temporary_schema

    with temporary_schema() as url:
        yield url


# The store masks the password as ***; the runtime's log redaction, once installed by an
# earlier test in the process, shows it as [redacted]. Either way the URL is named, unmasked never.
MASKED = re.compile(r"postgresql://postgres:(\*\*\*|\[redacted\])@127\.0\.0\.1")


@pytest.fixture
def proxy(pg_url: str) -> Iterator[TCPProxy]:
    parts = urlsplit(pg_url)
    with TCPProxy(parts.hostname or "127.0.0.1", parts.port or 5432) as running:
        yield running


def _through(url: str, proxy: TCPProxy, password: str = "") -> str:
    parts = urlsplit(url)
    user = parts.username or "postgres"
    auth = f"{user}:{password}" if password else user
    return urlunsplit(parts._replace(netloc=f"{auth}@127.0.0.1:{proxy.port}"))


def _spooled(url: str, home: Path) -> SpooledSessionStore:
    store = PostgresSessionStore(url, connect_timeout=1)
    spool = SessionSpool(spool_path(home, store.path, store.user_id))
    return SpooledSessionStore(store, spool, retry_seconds=0)


def _wait_for_database(store: Any) -> None:
    """Read through *store* until its pool has reconnected (its retries back off)."""
    for _ in range(40):
        try:
            store.session_count()
            return
        except SessionStoreUnavailableError:
            continue
    raise AssertionError("the store never reconnected")


def _texts(url: str, session_id: str) -> list[str]:
    with open_session_store(url) as store:
        return [m["content"] for m in store.get_messages(session_id)]


def test_an_outage_keeps_the_messages_and_the_next_append_stores_them_in_order(
    pg_url: str, proxy: TCPProxy, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    url = _through(pg_url, proxy, password="s3cret")
    store = _spooled(url, tmp_path)
    store.create_session("s")
    store.append_message("s", "user", "before")
    proxy.stop()
    with caplog.at_level(logging.WARNING, logger="hermes_core.sessions.spool"):
        assert store.append_messages("s", [{"role": "assistant", "content": "during 1"}]) == []
        assert store.append_message("s", "user", "during 2") == 0
    warning = caplog.records[-1].getMessage()
    assert MASKED.search(warning) and "s3cret" not in warning
    assert str(store.spool.path) in warning
    assert store.spool.pending() == 2
    assert _texts(pg_url, "s") == ["before"]
    proxy.start()
    _wait_for_database(store)
    store.append_message("s", "assistant", "after")
    assert _texts(pg_url, "s") == ["before", "during 1", "during 2", "after"]
    assert store.spool.pending() == 0
    store.close()
    with open_session_store(pg_url) as check:
        assert check.get_session("s")["message_count"] == 4  # type: ignore[index]


def test_the_spool_is_written_back_when_a_store_opens(
    pg_url: str, proxy: TCPProxy, tmp_path: Path
) -> None:
    url = _through(pg_url, proxy)
    first = _spooled(url, tmp_path)
    first.create_session("s")
    proxy.stop()
    first.append_message("s", "user", "kept")
    first.close()  # still down: the spool stays
    proxy.start()
    assert _texts(pg_url, "s") == []
    second = _spooled(url, tmp_path)
    assert _texts(pg_url, "s") == ["kept"] and second.spool.pending() == 0
    second.close()


def test_a_write_that_committed_before_the_drop_is_not_stored_twice(
    pg_url: str, tmp_path: Path
) -> None:
    store = _spooled(pg_url, tmp_path)
    store.create_session("s")
    # The append reached the database, but its answer was lost: the caller spooled it too.
    store.append_messages("s", [{"role": "user", "content": "once"}], client_tokens=["tok-1"])
    store.spool.add("s", [{"role": "user", "content": "once"}], ["tok-1"])
    store.spool.add("s", [{"role": "assistant", "content": "reply"}], ["tok-2"])
    copy = tmp_path / "copy.jsonl"
    shutil.copy(store.spool.path, copy)
    assert store.drain() == 2
    # A crash after the writes but before the spool was emptied: the same records again.
    shutil.copy(copy, store.spool.path)
    store.drain()
    store.close()
    assert _texts(pg_url, "s") == ["once", "reply"]


def test_a_torn_last_line_is_ignored_and_later_records_still_count(tmp_path: Path) -> None:
    spool = SessionSpool(tmp_path / "spool" / "s.jsonl")
    spool.add("s", [{"role": "user", "content": "whole"}], ["t1"])
    with open(spool.path, "ab") as handle:
        handle.write(b'{"format":1,"session_id":"s","client_to')  # the crash
    assert spool.pending() == 1
    spool.add("s", [{"role": "user", "content": "next"}], ["t2"])
    seen: list[tuple[str, list[dict[str, Any]], list[str]]] = []
    assert spool.drain(lambda *record: seen.append(record)) == 2
    assert [m["content"] for _, messages, _ in seen for m in messages] == ["whole", "next"]
    assert spool.pending() == 0
    assert "client_to" in spool.rejected_path.read_text()  # kept aside, not lost


def test_a_drain_cut_short_keeps_the_rest_in_order(tmp_path: Path) -> None:
    spool = SessionSpool(tmp_path / "s.jsonl")
    for n, session_id in enumerate(["a", "a", "b", "b", "a"]):
        spool.add(session_id, [{"role": "user", "content": f"m{n}"}], [f"t{n}"])
    calls: list[tuple[str, list[str]]] = []

    def write(session_id: str, messages: list[dict[str, Any]], tokens: list[str]) -> None:
        if session_id == "b":
            raise SessionStoreUnavailableError("down again")
        calls.append((session_id, [m["content"] for m in messages]))

    with pytest.raises(SessionStoreUnavailableError):
        spool.drain(write)
    assert calls == [("a", ["m0", "m1"])]  # one session's run in one call
    lines = [json.loads(line) for line in spool.path.read_text().splitlines()]
    assert [record["client_tokens"] for record in lines] == [["t2"], ["t3"], ["t4"]]


def test_one_refused_record_of_a_run_is_set_aside_alone(tmp_path: Path) -> None:
    spool = SessionSpool(tmp_path / "s.jsonl")
    for n in range(3):
        spool.add("a", [{"role": "user", "content": f"m{n}"}], [f"t{n}"])
    stored: list[str] = []

    def write(session_id: str, messages: list[dict[str, Any]], tokens: list[str]) -> None:
        if "t1" in tokens:
            raise SessionStoreError("refused")
        stored.extend(m["content"] for m in messages)

    assert spool.drain(write) == 2
    assert stored == ["m0", "m2"] and spool.pending() == 0
    (rejected,) = spool.rejected_path.read_text().splitlines()
    assert json.loads(rejected)["client_tokens"] == ["t1"]


def test_a_refused_record_is_set_aside_and_the_rest_stored(pg_url: str, tmp_path: Path) -> None:
    store = _spooled(pg_url, tmp_path)
    store.create_session("kept")
    store.spool.add("gone", [{"role": "user", "content": "orphan"}], ["t1"])
    store.spool.add("kept", [{"role": "user", "content": "stored"}], ["t2"])
    assert store.drain() == 1
    store.close()
    assert _texts(pg_url, "kept") == ["stored"]
    assert "orphan" in store.spool.rejected_path.read_text()


def test_bad_messages_are_refused_at_once_not_spooled(
    pg_url: str, proxy: TCPProxy, tmp_path: Path
) -> None:
    store = _spooled(_through(pg_url, proxy), tmp_path)
    store.create_session("s")
    proxy.stop()
    with pytest.raises(SessionStoreError, match="without a role"):
        store.append_messages("s", [{"content": "no role"}])
    assert store.spool.pending() == 0
    proxy.start()
    store.close()


def _drain_in_process(url: str, home: str) -> None:
    _spooled(url, Path(home)).close()


def test_processes_draining_one_spool_store_each_message_once(pg_url: str, tmp_path: Path) -> None:
    with open_session_store(pg_url) as setup:
        setup.create_session("s")
        location = setup.path
    spool = SessionSpool(spool_path(tmp_path, location, None))
    for n in range(60):
        spool.add("s", [{"role": "user", "content": f"m{n}"}], [f"token-{n}"])
    context = multiprocessing.get_context("spawn")
    workers = [
        context.Process(target=_drain_in_process, args=(pg_url, str(tmp_path))) for _ in range(3)
    ]
    for process in workers:
        process.start()
    for process in workers:
        process.join(120)
        assert process.exitcode == 0
    assert _texts(pg_url, "s") == [f"m{n}" for n in range(60)]
    assert spool.pending() == 0


def test_a_turn_completes_when_the_database_drops_mid_turn(
    pg_url: str, proxy: TCPProxy, hermes_home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from hermes_core.llm import ChatClient
    from hermes_core.manager import MemoryManager
    from hermes_core.runtime import AgentSession
    from hermes_core.testing.openai_fake import FakeOpenAIServer

    def answer(body: dict[str, Any]) -> str:
        proxy.stop()  # the database goes away while the model thinks
        return "answered while the database was down"

    with FakeOpenAIServer(answer) as llm:
        store = _spooled(_through(pg_url, proxy, password="s3cret"), hermes_home)
        client = ChatClient(llm.base_url, llm.model, max_retries=1, timeout=10.0)
        session = AgentSession(MemoryManager(), store, client, hermes_home=hermes_home)  # type: ignore[arg-type]
        session_id = session.start()
        with caplog.at_level(logging.WARNING):
            result = session.run_turn("hello")
        assert result.content == "answered while the database was down"
        warnings = [r.getMessage() for r in caplog.records if "are kept in" in r.getMessage()]
        assert warnings and MASKED.search(warnings[0])
        assert "s3cret" not in " ".join(warnings)
        proxy.start()
        _wait_for_database(session.store)
        session.close()
    assert _texts(pg_url, session_id) == ["hello", "answered while the database was down"]


def test_a_state_db_is_not_wrapped(tmp_path: Path) -> None:
    with open_session_store(tmp_path / "state.db") as store:
        assert with_spool(store, tmp_path) is store


def _whole_json(line: bytes) -> bool:
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    contents=st.lists(_TEXT, min_size=1, max_size=6),
    cut=st.integers(min_value=0, max_value=10_000),
)
def test_a_spool_cut_anywhere_reads_as_its_whole_records(
    tmp_path: Path, contents: list[str], cut: int
) -> None:
    """A crash mid-write leaves a prefix of the file: the whole records in it are read, in
    order (a torn last one is not), and the next record written after it is read too."""
    spool = SessionSpool(tmp_path / f"cut-{uuid.uuid4().hex}.jsonl")
    for n, text in enumerate(contents):
        spool.add("s", [{"role": "user", "content": text}], [f"t{n}"])
    data = spool.path.read_bytes()
    cut = cut % (len(data) + 1)
    spool.path.write_bytes(data[:cut])
    whole = sum(1 for line in data[:cut].split(b"\n") if _whole_json(line))
    assert [r["messages"][0]["content"] for r in spool.records()] == contents[:whole]
    spool.add("s", [{"role": "user", "content": "after the crash"}], ["next"])
    assert [r["client_tokens"] for r in spool.records()] == [
        *[[f"t{n}"] for n in range(whole)],
        ["next"],
    ]


def test_an_outage_is_declared_after_one_wait_for_a_connection_not_three(
    pg_url: str, proxy: TCPProxy, caplog: pytest.LogCaptureFixture
) -> None:
    # The pool waits its whole connect timeout for a connection; once it gives up, the store
    # says the database is unreachable at once instead of waiting twice more ("retrying").
    store = PostgresSessionStore(_through(pg_url, proxy), connect_timeout=1)
    store.create_session("s")
    proxy.stop()
    # Connections the pool already holds die with the proxy; the first try may meet one.
    with (
        caplog.at_level(logging.WARNING, logger="hermes_core.sessions.postgres"),
        pytest.raises(SessionStoreUnavailableError, match="unreachable"),
    ):
        for _ in range(5):
            store.append_message("s", "user", "lost")
    retries = [r for r in caplog.records if "retrying" in r.getMessage()]
    assert len(retries) <= 1
    store.close()


# -- the other writes of a conversation -----------------------------------------------------------


def _row(url: str, session_id: str) -> dict[str, Any] | None:
    with open_session_store(url) as store:
        return store.get_session(session_id)


def test_a_whole_conversation_during_an_outage_is_stored_as_if_the_database_had_been_there(
    pg_url: str, proxy: TCPProxy, hermes_home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from hermes_core.llm import ChatClient
    from hermes_core.manager import MemoryManager
    from hermes_core.runtime import AgentSession
    from hermes_core.testing.openai_fake import FakeOpenAIServer

    with FakeOpenAIServer(lambda body: "an answer while it was down") as llm:
        url = _through(pg_url, proxy, password="s3cret")
        store = _spooled(url, hermes_home)
        proxy.stop()  # away before the conversation starts
        client = ChatClient(llm.base_url, llm.model, max_retries=1, timeout=10.0)
        session = AgentSession(MemoryManager(), store, client, hermes_home=hermes_home)  # type: ignore[arg-type]
        with caplog.at_level(logging.WARNING, logger="hermes_core.sessions.spool"):
            session_id = session.start()
            assert session.run_turn("plan the garden").content == "an answer while it was down"
            session.close()
        ended = time.time()
        kept = [r.getMessage() for r in caplog.records if "is kept in" in r.getMessage()]
        assert any("create_session" in line for line in kept)
        assert all(MASKED.search(line) and "s3cret" not in line for line in kept)
        assert _row(pg_url, session_id) is None  # nothing reached the database yet
        time.sleep(0.05)
        proxy.start()
        with _spooled(url, hermes_home) as later:  # opening writes it back
            assert later.spool.pending() == 0
    row = _row(pg_url, session_id)
    assert row is not None and row["end_reason"] == "user_exit"
    assert row["ended_at"] <= ended  # the time it ended, not the time it was written back
    assert row["title"] == "plan the garden"
    assert _texts(pg_url, session_id) == ["plan the garden", "an answer while it was down"]


def test_spooled_calls_written_back_twice_leave_the_rows_as_once(
    pg_url: str, proxy: TCPProxy, tmp_path: Path
) -> None:
    store = _spooled(_through(pg_url, proxy), tmp_path)
    proxy.stop()
    assert store.create_session("s", source="telegram", user_id="alice") == "s"
    assert store.set_session_title("s", "Garden")
    store.append_message("s", "user", "plan the garden")
    assert store.update_system_prompt("s", "You are a gardener.")
    assert store.end_session("s", "user_exit")
    assert store.reopen_session("s")
    assert store.end_session("s", "timeout", ended_at=1_700_000_000.0)
    assert store.spool.pending() == 7
    copy = tmp_path / "copy.jsonl"
    shutil.copy(store.spool.path, copy)
    proxy.start()
    _wait_for_database(store)
    store.drain()
    once = _row(pg_url, "s")
    shutil.copy(copy, store.spool.path)  # a crash before the spool was emptied
    store.drain()
    store.close()
    assert _row(pg_url, "s") == once
    assert once is not None and once["source"] == "telegram" and once["user_id"] == "alice"
    assert (once["title"], once["system_prompt"]) == ("Garden", "You are a gardener.")
    assert (once["end_reason"], once["ended_at"]) == ("timeout", 1_700_000_000.0)
    assert _texts(pg_url, "s") == ["plan the garden"]


def test_a_spooled_title_taken_meanwhile_is_set_aside_and_the_rest_stored(
    pg_url: str, proxy: TCPProxy, tmp_path: Path
) -> None:
    store = _spooled(_through(pg_url, proxy), tmp_path)
    store.create_session("s")
    with open_session_store(pg_url) as other:
        other.create_session("elsewhere", title="Garden")
    proxy.stop()
    store.set_session_title("s", "Garden")
    store.append_message("s", "user", "after the title")
    proxy.start()
    _wait_for_database(store)
    store.drain()
    store.close()
    assert _row(pg_url, "s")["title"] is None  # type: ignore[index]
    assert _texts(pg_url, "s") == ["after the title"]
    (rejected,) = store.spool.rejected_path.read_text().splitlines()
    assert json.loads(rejected)["call"] == {
        "method": "set_session_title",
        "arguments": {"title": "Garden"},
    }


def test_bad_calls_are_refused_at_once_not_spooled(
    pg_url: str, proxy: TCPProxy, tmp_path: Path
) -> None:
    store = _spooled(_through(pg_url, proxy), tmp_path)
    proxy.stop()
    with pytest.raises(SessionStoreError):
        store.create_session("")
    with pytest.raises(SessionStoreError):
        store.set_session_title("s", "x" * 1000)
    assert store.spool.pending() == 0
    with pytest.raises(ValueError, match="not a call the spool keeps"):
        store.spool.add_call("s", "delete_session", {})
    proxy.start()
    store.close()


def test_a_call_stays_in_order_with_the_messages_around_it(tmp_path: Path) -> None:
    spool = SessionSpool(tmp_path / "s.jsonl")
    spool.add("a", [{"role": "user", "content": "m0"}], ["t0"])
    spool.add_call("a", "set_session_title", {"title": "T"})
    spool.add("a", [{"role": "user", "content": "m1"}], ["t1"])
    seen: list[Any] = []
    assert (
        spool.drain(lambda sid, messages, tokens: seen.append([m["content"] for m in messages]))
        == 1
    )
    assert seen == [["m0"]]  # a drain that cannot replay calls stops at the first one
    assert [r.get("call", {}).get("method") for r in spool.records()] == ["set_session_title", None]
    assert (
        spool.drain(
            lambda sid, messages, tokens: seen.append([m["content"] for m in messages]),
            lambda sid, method, arguments: seen.append((method, arguments)),
        )
        == 1
    )
    assert seen == [["m0"], ("set_session_title", {"title": "T"}), ["m1"]]
