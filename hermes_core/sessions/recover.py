"""Salvaging the readable rows of a damaged ``state.db`` into a new file.

SQLite answers a read that meets a damaged page with an error for the whole
statement. :func:`recover_database` therefore reads ``sessions`` and
``messages`` by ranges of row ids, halving a range that fails down to single
rows, so one bad page costs only the rows stored on it. What was there is
counted from the indexes beside the tables (``idx_messages_session_id`` holds
every message's id, the primary-key index every session's), which usually sit
on other pages; the difference is what was lost.

The salvaged rows go into a new store through :class:`SessionStore`'s own
writes (``import_sessions``, ``create_session``, ``append_messages``), so its
tables, full-text indexes and counters are built afresh. A session whose row
was lost but whose messages were read comes back as a ``recovered`` session
under its id.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from hermes_core.errors import SessionStoreError
from hermes_core.sessions.records import decode_message, valid_session_id
from hermes_core.sessions.store import SessionStore
from hermes_core.sessions.titles import sanitize_title

__all__ = ["RecoveryReport", "recover_database"]

RANGE_ROWS = 512
"""Rows read per statement while nothing fails."""
MESSAGE_BATCH = 2_000
"""Salvaged messages written per transaction of the new store."""
RECOVERED_SOURCE = "recovered"
"""Source of a session rebuilt from its messages (its own row was lost)."""

SESSION_COLUMNS = (
    "id",
    "source",
    "user_id",
    "model",
    "model_config",
    "system_prompt",
    "parent_session_id",
    "started_at",
    "ended_at",
    "end_reason",
    "title",
    "input_tokens",
    "output_tokens",
    "cwd",
    "git_repo_root",
)
MESSAGE_COLUMNS = (
    "session_id",
    "role",
    "timestamp",
    "tool_name",
    "name",
    "tool_call_id",
    "token_count",
    "finish_reason",
    "content",
    "content_parts",
    "tool_calls",
)


@dataclass
class RecoveryReport:
    """What a recovery salvaged, and what it could not.

    ``*_expected`` is what the damaged file's indexes say it held (``None``
    when they could not be read either); ``sessions_rebuilt`` counts sessions
    whose row was lost but whose messages came back.
    """

    sessions_salvaged: int = 0
    sessions_expected: int | None = None
    sessions_rebuilt: int = 0
    messages_salvaged: int = 0
    messages_expected: int | None = None
    unreadable_ranges: int = 0

    @property
    def sessions_lost(self) -> int | None:
        """Sessions of the damaged file whose row could not be read (``None``: unknown)."""
        if self.sessions_expected is None:
            return None
        return max(self.sessions_expected - self.sessions_salvaged, 0)

    @property
    def messages_lost(self) -> int | None:
        """Messages of the damaged file that could not be read (``None``: unknown)."""
        if self.messages_expected is None:
            return None
        return max(self.messages_expected - self.messages_salvaged, 0)


def _open_damaged(path: Path) -> sqlite3.Connection:
    uri = f"file:{quote(os.fsencode(path.resolve()))}?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=5, isolation_level=None)
        conn.text_factory = lambda raw: raw.decode("utf-8", "replace")
        conn.execute("PRAGMA cell_size_check = ON")  # report damage rather than read garbage
        columns = {
            table: {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
            for table in ("sessions", "messages")
        }
    except sqlite3.DatabaseError as exc:
        raise SessionStoreError(
            f"{path} cannot be salvaged: even its list of tables is unreadable ({exc}). "
            "Restore it from a backup (`hermes-memory restore`)."
        ) from exc
    if not columns["sessions"] or not columns["messages"]:
        conn.close()
        raise SessionStoreError(
            f"{path} holds no sessions and messages tables to salvage; check the path (--db)."
        )
    return conn


def _ids(conn: sqlite3.Connection, sql: str) -> set[Any] | None:
    try:
        return {row[0] for row in conn.execute(sql)}
    except sqlite3.DatabaseError:
        return None


SESSION_INDEXES = (
    "SELECT id FROM sessions INDEXED BY sqlite_autoindex_sessions_1",
    "SELECT rowid FROM sessions INDEXED BY idx_sessions_started",
    "SELECT rowid FROM sessions INDEXED BY idx_sessions_source",
)
"""Ways to list the sessions a file held without reading the table, tried in turn."""
MESSAGE_INDEXES = (
    "SELECT id FROM messages INDEXED BY idx_messages_session_id",
    "SELECT id FROM messages_fts_docsize",
)
"""Ways to list the messages a file held without reading the table, tried in turn."""


def _first_readable(conn: sqlite3.Connection, queries: tuple[str, ...]) -> set[Any] | None:
    """The ids the first readable of *queries* lists (``None`` when none is)."""
    for sql in queries:
        found = _ids(conn, sql)
        if found is not None:
            return found
    return None


def _rowids(conn: sqlite3.Connection, session_ids: set[Any] | None) -> set[Any] | None:
    """The row ids of the sessions the indexes list (theirs are ids, not row ids)."""
    if session_ids is None or all(isinstance(i, int) for i in session_ids):
        return session_ids
    return _ids(conn, "SELECT rowid FROM sessions INDEXED BY sqlite_autoindex_sessions_1")


def _upper_bound(conn: sqlite3.Connection, table: str, known: set[Any] | None) -> int:
    """The largest row id worth reading in *table*: the largest the indexes list, else what
    the table and ``sqlite_sequence`` say."""
    if known and all(isinstance(i, int) for i in known):
        return max(known)
    bounds = [0]
    for sql in (
        f"SELECT max(rowid) FROM {table}",
        f"SELECT seq FROM sqlite_sequence WHERE name = '{table}'",
    ):
        try:
            row = conn.execute(sql).fetchone()
        except sqlite3.DatabaseError:
            continue
        if row and isinstance(row[0], int):
            bounds.append(row[0])
    return max(bounds)


def _reader(
    conn: sqlite3.Connection, table: str, columns: tuple[str, ...], report: RecoveryReport
) -> Callable[[int, int], Iterator[tuple[int, dict[str, Any]]]]:
    """A function reading the rows of *table* with row ids in [low, high), skipping damage."""
    present = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
    wanted = [c for c in columns if c in present]
    select = (
        f"SELECT rowid, {', '.join(wanted)} FROM {table} "
        "WHERE rowid >= ? AND rowid < ? ORDER BY rowid"
    )

    def read(low: int, high: int) -> Iterator[tuple[int, dict[str, Any]]]:
        try:
            found = conn.execute(select, (low, high)).fetchall()
        except sqlite3.DatabaseError:
            if high - low <= 1:
                report.unreadable_ranges += 1
                return
            middle = (low + high) // 2
            yield from read(low, middle)
            yield from read(middle, high)
            return
        for row in found:
            yield row[0], dict(zip(wanted, row[1:], strict=True))

    return read


def _next_rowid(conn: sqlite3.Connection, table: str) -> Callable[[int], int | None]:
    """A function giving the first row id of *table* at or after one (``None``: no more)."""

    def following(rowid: int) -> int | None:
        try:
            row = conn.execute(f"SELECT min(rowid) FROM {table} WHERE rowid >= ?", (rowid,))
            found = row.fetchone()[0]
        except sqlite3.DatabaseError:
            return rowid  # unknown: go on reading range by range
        return found if isinstance(found, int) else None

    return following


def _scan(
    read: Callable[[int, int], Iterator[tuple[int, dict[str, Any]]]],
    following: Callable[[int], int | None],
    upper: int,
    expected: set[Any] | None,
    progress: Callable[[int, int], None] | None,
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Every readable row with a row id up to *upper*, in order.

    A range read stops early when a damaged page holds a cell whose row id
    reads as a larger one, so the row ids of a range that did not come back
    are then looked up one by one: the *expected* ones, when the indexes listed
    them (a row id they do not list is taken for damage and dropped), else all
    of a range that returned rows. Without *expected*, a stretch of no rows is
    skipped by asking for the next row id.
    """
    wanted = None if expected is None else {i for i in expected if isinstance(i, int)}
    low = 0
    while low <= upper:
        high = min(low + RANGE_ROWS, upper + 1)
        rows = dict(read(low, high))
        if wanted is not None:
            missing: Iterable[int] = sorted(i for i in wanted if low <= i < high and i not in rows)
        else:
            missing = [i for i in range(low, high) if i not in rows] if rows else []
        for rowid in missing:
            rows.update(read(rowid, rowid + 1))
        for rowid in sorted(rows):
            if wanted is None or rowid in wanted:
                yield rowid, rows[rowid]
        if progress is not None:
            progress(high, upper + 1)
        low = high
        if wanted is None and not rows:
            after = following(high)
            if after is None:
                break
            low = max(high, after)
    if wanted is None:
        yield from read(upper + 1, 2**63 - 1)  # rows past every bound found (best effort)


def _session(row: dict[str, Any]) -> dict[str, Any] | None:
    """A salvaged session row for ``import_sessions``; ``None`` when it is unusable."""
    try:
        session_id = valid_session_id(row.get("id"))
    except SessionStoreError:
        return None
    session = {key: row.get(key) for key in SESSION_COLUMNS if row.get(key) is not None}
    session["id"] = session_id
    config = session.get("model_config")
    if config is not None:
        try:
            decoded = json.loads(config) if isinstance(config, str) else None
        except ValueError:
            decoded = None
        session["model_config"] = decoded if isinstance(decoded, dict) else None
    for key in ("input_tokens", "output_tokens"):
        if not isinstance(session.get(key), int):
            session.pop(key, None)
    for key in ("started_at", "ended_at"):
        if not isinstance(session.get(key), (int, float)):
            session.pop(key, None)
    try:
        session["title"] = sanitize_title(session.get("title"))
    except SessionStoreError:
        session.pop("title", None)
    return session


def _message(row: dict[str, Any]) -> dict[str, Any] | None:
    """A salvaged message row for ``append_messages``; ``None`` when it is unusable."""
    if not isinstance(row.get("role"), str) or not row["role"]:
        return None
    message = decode_message(dict(row))
    message.pop("session_id", None)
    for key in ("tool_name", "name", "tool_call_id", "finish_reason"):
        if message.get(key) is not None and not isinstance(message[key], str):
            message[key] = str(message[key])
    if not isinstance(message.get("token_count"), (int, type(None))):
        message["token_count"] = None
    return message


def recover_database(
    damaged: Path, target: Path, *, progress: Callable[[int, int], None] | None = None
) -> RecoveryReport:
    """Salvage every readable session and message of *damaged* into the new store *target*.

    *damaged* is only read. *progress* gets (row ids scanned, row ids to scan)
    of the messages table. Raises :class:`~hermes_core.errors.SessionStoreError`
    when *target* exists or *damaged* is unreadable from its first page.
    """
    if target.exists():
        raise SessionStoreError(f"{target} exists already; recover into a new file.")
    report = RecoveryReport()
    conn = _open_damaged(damaged)
    try:
        session_ids = _first_readable(conn, SESSION_INDEXES)
        message_ids = _first_readable(conn, MESSAGE_INDEXES)
        report.sessions_expected = None if session_ids is None else len(session_ids)
        report.messages_expected = None if message_ids is None else len(message_ids)
        read_sessions = _reader(conn, "sessions", SESSION_COLUMNS, report)
        sessions: dict[str, dict[str, Any]] = {}
        session_rowids = _rowids(conn, session_ids)
        upper = _upper_bound(conn, "sessions", session_rowids)
        following = _next_rowid(conn, "sessions")
        for _, row in _scan(read_sessions, following, upper, session_rowids, None):
            session = _session(row)
            if session is not None and session["id"] not in sessions:
                sessions[session["id"]] = session
        for session in sessions.values():
            if session.get("parent_session_id") not in sessions:
                session.pop("parent_session_id", None)
        report.sessions_salvaged = len(sessions)
        with SessionStore(target, semantic=False) as store:
            store.import_sessions({**s, "messages": []} for s in sessions.values())
            read_messages = _reader(conn, "messages", MESSAGE_COLUMNS, report)
            batch: list[tuple[str, dict[str, Any]]] = []
            upper = _upper_bound(conn, "messages", message_ids)
            following = _next_rowid(conn, "messages")
            for _, row in _scan(read_messages, following, upper, message_ids, progress):
                message = _message(row)
                try:
                    owner = valid_session_id(row.get("session_id"))
                except SessionStoreError:
                    message = None
                if message is None:
                    continue
                if owner not in sessions:
                    store.create_session(
                        owner, source=RECOVERED_SOURCE, started_at=message.get("timestamp")
                    )
                    sessions[owner] = {"id": owner}
                    report.sessions_rebuilt += 1
                batch.append((owner, message))
                if len(batch) >= MESSAGE_BATCH:
                    report.messages_salvaged += _write(store, batch)
                    batch = []
            report.messages_salvaged += _write(store, batch)
    except BaseException:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{target}{suffix}").unlink(missing_ok=True)
        raise
    finally:
        conn.close()
    return report


def _write(store: SessionStore, batch: list[tuple[str, dict[str, Any]]]) -> int:
    """Append *batch* (in order) to the sessions it names; returns how many were written."""
    written = 0
    start = 0
    for end in range(1, len(batch) + 1):
        if end == len(batch) or batch[end][0] != batch[start][0]:
            messages = [message for _, message in batch[start:end]]
            written += len(store.append_messages(batch[start][0], messages))
            start = end
    return written
