"""``SessionStore``: every conversation, message by message, in ``$HERMES_HOME/state.db``.

The runtime writes through it (sessions, messages, titles, compression
splits); ``session_search`` and the CLI read through it. A file written by
Hermes Agent itself opens read-only (``read_only=True``): nothing is migrated
or written, and search adapts to whichever full-text tables it has.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from hermes_core.config import get_hermes_home
from hermes_core.errors import (
    SessionNotFoundError,
    SessionStoreError,
    SessionTitleError,
)
from hermes_core.sessions import lineage
from hermes_core.sessions import listing as listing_module
from hermes_core.sessions.arguments import epoch as _epoch
from hermes_core.sessions.batchinsert import insert_rows
from hermes_core.sessions.bulk import (
    missing_parent_error,
    prepare_import,
    session_exists_error,
    title_taken_error,
)
from hermes_core.sessions.connection import (
    READ_BUSY_TIMEOUT_MS,
    WRITE_BUSY_TIMEOUT_MS,
    WriteLock,
    is_busy,
    is_undecodable,
    lenient_text,
    restrict_permissions,
)
from hermes_core.sessions.deletion import (
    PRUNE_BATCH_MESSAGES,
    PRUNE_PAUSE,
    delete_sessions,
    prune_batch,
)
from hermes_core.sessions.facade import (
    DEFAULT_SEMANTIC_BUDGET,
    Listing,
    NewSession,
    SearchPage,
    StoreFacade,
)
from hermes_core.sessions.gramqueue import WRITE_BACKLOG, drain_gram_queue, queued_gram_rows
from hermes_core.sessions.layout import Layout
from hermes_core.sessions.maintenance import (
    check_database,
    index_rows,
    probe_database,
    rebuild_indexes,
)
from hermes_core.sessions.opening import (
    UpgradeProgress,
    connect,
    damage_hint,
    drain_in_batches,
    inspect,
    prepare,
)
from hermes_core.sessions.records import (
    as_conversation,
    decode_message,
    encode_messages,
    name_results_of_earlier_calls,
    not_utf8_error,
    row_dict,
    sane_timestamp,
    scrub,
)
from hermes_core.sessions.schema import GRAM_TRIGRAMS_VERSION
from hermes_core.sessions.scope import UserScope
from hermes_core.sessions.search import (
    Nearest,
    SearchFilters,
    search_messages,
)
from hermes_core.sessions.semantic import (
    SemanticIndex,
    count_not_embedded,
    forget_vectors,
    semantic_mode,
)
from hermes_core.sessions.sessioninfo import SessionInfo
from hermes_core.sessions.statements import SESSION_TITLE_HOLDER, UPSERT_SESSION
from hermes_core.sessions.titles import next_title, sanitize_title

__all__ = ["SessionStore", "default_db_path"]

log = logging.getLogger(__name__)

T = TypeVar("T")

MESSAGE_COLUMNS = (
    "session_id",
    "role",
    "content",
    "content_parts",
    "tool_call_id",
    "tool_calls",
    "tool_name",
    "timestamp",
    "token_count",
    "finish_reason",
    "name",
)
"""The ``messages`` columns of an ``encode_messages`` row, in order."""


def default_db_path() -> Path:
    """``$HERMES_HOME/state.db`` (resolved now, so a changed HERMES_HOME is honoured)."""
    return get_hermes_home() / "state.db"


def _now() -> float:
    return time.time()


class SessionStore(StoreFacade):
    """Sessions and messages in one SQLite file (WAL, FTS5).

    Thread-safe: one connection guarded by a lock. Several processes may write
    the same file at once. ``read_only=True`` opens with a ``mode=ro`` URI and
    never writes — use it for files written by Hermes Agent.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        read_only: bool = False,
        write_patience: float = 30.0,
        semantic: str | bool | None = None,
        user_id: str | None = None,
        upgrade_progress: UpgradeProgress | None = None,
    ) -> None:
        """Open (creating when writable and missing) the file at *path*.

        A writable open brings an older file up to date first; *upgrade_progress*
        gets (rows done, rows in all) while it re-tokenises queued CJK rows (the
        upgrade to schema version 7 queues every one), a batch at a time.
        """
        self.path = Path(path) if path is not None else default_db_path()
        self.read_only = read_only
        self.scope = UserScope(user_id, mark="?")
        self.user_id = self.scope.user_id
        """Whose sessions this store reads and writes (``None``: every session, the
        single-user case). A scoped store tags what it creates with this id and
        treats other users' sessions as absent in every read, search and delete."""
        self.semantic_mode = semantic_mode(semantic)
        """``auto``, ``on`` or ``off``: whether questions also search by meaning
        (:mod:`~hermes_core.sessions.semantic`; default ``$HERMES_SEMANTIC_SEARCH``)."""
        self.semantic_budget = DEFAULT_SEMANTIC_BUDGET
        """Seconds a search may spend embedding messages not embedded yet."""
        self.prune_batch_messages = PRUNE_BATCH_MESSAGES
        """Messages :meth:`prune_conversations` deletes per transaction."""
        self._semantic = None
        self._semantic_failed = False
        self._semantic_lock = threading.Lock()
        self._conn, created = connect(self.path, read_only=read_only)
        self._writer = WriteLock(self._conn, self.path, write_patience)
        self._closed = False
        try:
            self.layout: Layout = prepare(
                self._conn, self.path, self._writer, read_only, upgrade_progress
            )
        except BaseException:
            self._conn.close()
            raise
        if self.user_id is not None and "user_id" not in self.layout.session_columns:
            self._conn.close()
            raise SessionStoreError(
                f"{self.path} has no user_id column, so it cannot keep users apart; open it "
                "without a user id."
            )
        self._session_info = SessionInfo(self.layout)
        # Rows await the gram index; checked again whenever the database may have changed.
        self._pending_grams = False
        if created:
            restrict_permissions(self.path)

    # -- plumbing -----------------------------------------------------------------
    def _read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        if self._closed:
            raise SessionStoreError(f"The session store for {self.path} is closed.")
        with self._writer.lock:
            try:
                try:
                    return fn(self._conn)
                except sqlite3.OperationalError as exc:
                    if not is_undecodable(exc):
                        raise
                    with lenient_text(self._conn):  # a row another program wrote as non-UTF-8
                        return fn(self._conn)
            except sqlite3.DatabaseError as exc:
                if is_busy(exc):
                    raise SessionStoreError(f"{self.path} is busy: {exc}; retry.") from exc
                raise SessionStoreError(
                    f"Reading {self.path} failed: {exc}.{damage_hint(exc)}"
                ) from exc
            except UnicodeEncodeError as exc:
                raise not_utf8_error(exc) from exc

    def _write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        if self._closed:
            raise SessionStoreError(f"The session store for {self.path} is closed.")
        if self.read_only:
            raise SessionStoreError(
                f"{self.path} is open read-only; writes go to a store opened without "
                "read_only=True."
            )
        try:
            return self._writer.run(fn)
        except sqlite3.IntegrityError as exc:
            raise SessionStoreError(f"Write to {self.path} rejected: {exc}") from exc
        except sqlite3.DatabaseError as exc:
            raise SessionStoreError(
                f"Write to {self.path} failed: {exc}.{damage_hint(exc)}"
            ) from exc
        except UnicodeEncodeError as exc:
            raise not_utf8_error(exc) from exc
        finally:
            # data_version only moves for other connections' commits
            self._session_info.invalidate()

    def _open_index(self) -> SemanticIndex:
        return SemanticIndex(self.path, self.layout, user_id=self.user_id)

    def _count_not_embedded(self) -> int:
        return count_not_embedded(self.path, self.layout, self._read)

    def _busy(self, exc: Exception) -> bool:
        return isinstance(exc, sqlite3.OperationalError) and is_busy(exc)

    def close(self) -> None:
        """Checkpoint passively and close the connection (idempotent)."""
        if self._closed:
            return
        with self._writer.lock:
            self._closed = True
            if not self.read_only:
                # Another process may hold the lock; its own checkpoint will do.
                with contextlib.suppress(sqlite3.Error):
                    self._conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
            self._conn.close()
            if self._semantic is not None:
                self._semantic.close()

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- sessions: writes -----------------------------------------------------------
    def _create_session(self, new: NewSession) -> str:
        session_id, parent_session_id = new.id, new.parent_session_id

        def write(conn: sqlite3.Connection) -> str:
            if (
                self.user_id is not None
                and self._exists(conn, session_id)
                and not self.scope.sees(conn, session_id)
            ):
                raise SessionStoreError(
                    f"Session id {session_id!r} is taken in {self.path}; create the "
                    "session under a new id."
                )
            if parent_session_id is not None and not self.scope.sees(conn, parent_session_id):
                raise SessionStoreError(
                    f"Parent session {parent_session_id!r} does not exist in {self.path}; "
                    "create it first."
                )
            conn.execute(UPSERT_SESSION, new.row())
            if new.title is not None:
                current = conn.execute(
                    "SELECT title FROM sessions WHERE id = ?", (session_id,)
                ).fetchone()[0]
                if current is None:
                    self._set_title(conn, session_id, new.title)
            return session_id

        return self._write(write)

    def ensure_session(
        self, session_id: str, *, source: str = "unknown", model: str | None = None
    ) -> str:
        """Create *session_id* if missing (used when an earlier create was lost)."""
        return self.create_session(session_id, source=source, model=model)

    def end_session(
        self, session_id: str, end_reason: str, *, ended_at: float | None = None
    ) -> bool:
        """Mark a session ended (at *ended_at*, default now); the first end wins (later calls
        change nothing)."""
        when = sane_timestamp(ended_at, _now())

        def write(conn: sqlite3.Connection) -> bool:
            cursor = conn.execute(
                "UPDATE sessions SET ended_at = ?, end_reason = ? "
                f"WHERE id = ? AND ended_at IS NULL AND {self.scope.sql()}",
                (when, end_reason, session_id, *self.scope.params()),
            )
            return cursor.rowcount > 0

        return self._write(write)

    def reopen_session(self, session_id: str) -> bool:
        """Clear a session's end so it can be ended again."""
        return self._write(
            lambda conn: (
                conn.execute(
                    "UPDATE sessions SET ended_at = NULL, end_reason = NULL "
                    f"WHERE id = ? AND {self.scope.sql()}",
                    (session_id, *self.scope.params()),
                ).rowcount
                > 0
            )
        )

    def update_system_prompt(self, session_id: str, prompt: str | None) -> bool:
        """Store the system prompt a session was run with."""
        return self._write(
            lambda conn: (
                conn.execute(
                    f"UPDATE sessions SET system_prompt = ? WHERE id = ? AND {self.scope.sql()}",
                    (None if prompt is None else scrub(prompt), session_id, *self.scope.params()),
                ).rowcount
                > 0
            )
        )

    def _count_tokens(
        self, session_id: str, tokens: tuple[int, int], model: str | None, absolute: bool
    ) -> bool:
        op = "?" if absolute else "COALESCE({col}, 0) + ?"
        sql = (
            f"UPDATE sessions SET input_tokens = {op.format(col='input_tokens')}, "
            f"output_tokens = {op.format(col='output_tokens')}, "
            f"model = COALESCE(model, ?) WHERE id = ? AND {self.scope.sql()}"
        )
        return self._write(
            lambda conn: (
                conn.execute(
                    sql,
                    (*tokens, model, session_id, *self.scope.params()),
                ).rowcount
                > 0
            )
        )

    def set_session_title(self, session_id: str, title: str | None) -> bool:
        """Set (or with ``""``/``None`` clear) a title; False when the session is missing.

        Raises :class:`SessionTitleError` for a title over 100 characters or one
        already used by another session.
        """
        clean = sanitize_title(title)

        def write(conn: sqlite3.Connection) -> bool:
            if not self.scope.sees(conn, session_id):
                return False
            self._set_title(conn, session_id, clean)
            return True

        return self._write(write)

    def _set_title(self, conn: sqlite3.Connection, session_id: str, title: str | None) -> None:
        if title is not None:
            other = conn.execute(SESSION_TITLE_HOLDER, (session_id, title)).fetchone()
            if other is not None:
                raise SessionTitleError(
                    f"Title {title!r} is already in use by session {other[0]}; pick another "
                    "or use next_title_in_lineage()."
                )
        conn.execute("UPDATE sessions SET title = ? WHERE id = ?", (title, session_id))

    def delete_session(self, session_id: str) -> bool:
        """Delete a session and its messages (and their vectors for semantic search); its
        children lose their parent link."""

        def write(conn: sqlite3.Connection) -> list[int] | None:
            if not self.scope.sees(conn, session_id):
                return None
            return delete_sessions(conn, [session_id])

        deleted = self._write(write)
        if deleted is None:
            return False
        forget_vectors(self.path, deleted)
        return True

    def delete_conversation(self, session_id: str) -> list[str]:
        """Delete the conversation *session_id* belongs to: every session of its compression
        chain, their messages and those messages' vectors.

        Returns the deleted session ids, root first (``[]`` for an unknown id). Freed
        pages are zeroed (``secure_delete``); other children of those sessions
        (subagents, branches) stay, without a parent link.
        """

        def write(conn: sqlite3.Connection) -> tuple[list[str], list[int]]:
            if not self.scope.sees(conn, session_id):
                return [], []
            chain = self.scope.visible(
                conn, lineage.compression_chain(conn, session_id, max_hops=None)
            )
            return chain, delete_sessions(conn, chain)

        chain, messages = self._write(write)
        self._forget(messages)
        return chain

    def prune_conversations(self, ended_before: float, *, source: str | None = None) -> list[str]:
        """Delete every conversation whose sessions all ended before *ended_before* (epoch
        seconds), like :meth:`delete_conversation`; with *source*, only conversations
        started from it (``cli``, ``telegram`` …).

        A conversation with a session still open, or one that ended later, is kept
        whole. Returns the deleted session ids. Conversations are deleted a batch
        at a time (about :attr:`prune_batch_messages` messages, one transaction
        each, with a pause between), so an agent writing meanwhile waits a moment,
        not the whole prune; each conversation goes whole or not at all, even if
        the prune is stopped.
        """
        cutoff = _epoch(ended_before, "ended_before")
        if cutoff is None:
            raise SessionStoreError("ended_before must be epoch seconds (a number), got None.")
        kept: set[str] = set()  # conversations found going on (or of another source)
        deleted: list[str] = []
        removed: list[int] = []
        try:
            while True:
                if deleted:
                    time.sleep(PRUNE_PAUSE)  # an agent waiting to write goes first
                doomed, messages = self._write(
                    lambda conn: prune_batch(
                        conn,
                        cutoff,
                        source=source,
                        kept=kept,
                        max_messages=self.prune_batch_messages,
                        user_id=self.user_id,
                    )
                )
                if not doomed:
                    break
                deleted += doomed
                removed += messages
                forget_vectors(self.path, messages)
        finally:
            if removed:  # their vectors went batch by batch; no copy of the text may linger
                self._truncate_wal()
        return deleted

    def _forget(self, message_ids: list[int]) -> None:
        """After deleting *message_ids*: drop their vectors, and let no copy of their text
        linger in the write-ahead log."""
        forget_vectors(self.path, message_ids)
        if message_ids:
            self._truncate_wal()

    def _truncate_wal(self) -> None:
        """Checkpoint and empty the write-ahead log (best effort: readers may hold it a while)."""
        with self._writer.lock, contextlib.suppress(sqlite3.Error):
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    @staticmethod
    def _exists(conn: sqlite3.Connection, session_id: str) -> bool:
        return (
            conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone()
            is not None
        )

    # -- messages: writes -------------------------------------------------------------
    def append_messages(self, session_id: str, messages: Iterable[Mapping[str, Any]]) -> list[int]:
        """Append messages to one session, all or nothing; returns their ids in order.

        Each mapping takes ``role``, ``content`` (text, or OpenAI content parts),
        and optionally ``tool_calls``, ``tool_call_id``, ``tool_name``, ``name``,
        ``token_count``, ``finish_reason``, ``timestamp``. ``name`` is the speaker of
        a user or assistant message, and the tool of a tool result without
        ``tool_name`` (OpenAI's convention); a result with neither takes the name
        of the call it answers, among *messages* or the session's last
        assistant messages with tool calls.
        """
        rows, calls = encode_messages(session_id, messages)
        if not rows:
            return []

        def write(conn: sqlite3.Connection) -> list[int]:
            if self.user_id is not None and not self.scope.sees(conn, session_id):
                raise SessionNotFoundError(
                    f"Session {session_id!r} does not exist in {self.path} for user "
                    f"{self.user_id!r}; call create_session() first."
                )
            name_results_of_earlier_calls(conn, rows)
            try:
                ids = self._insert_messages(conn, rows)
            except sqlite3.IntegrityError as exc:
                if "FOREIGN KEY" not in str(exc):
                    raise
                raise SessionNotFoundError(
                    f"Session {session_id!r} does not exist in {self.path}; "
                    "call create_session() first."
                ) from exc
            conn.execute(
                "UPDATE sessions SET message_count = COALESCE(message_count, 0) + ?, "
                "tool_call_count = COALESCE(tool_call_count, 0) + ?, last_activity_at = ? "
                "WHERE id = ?",
                (len(rows), calls, rows[-1][7], session_id),
            )
            drain_gram_queue(conn, WRITE_BACKLOG, own_from=ids[0])
            return ids

        return self._write(write)

    @staticmethod
    def _insert_messages(conn: sqlite3.Connection, rows: list[tuple[Any, ...]]) -> list[int]:
        if len(rows) == 1:
            marks = ", ".join("?" for _ in MESSAGE_COLUMNS)
            sql = f"INSERT INTO messages({', '.join(MESSAGE_COLUMNS)}) VALUES ({marks})"
            return [int(conn.execute(sql, rows[0]).lastrowid or 0)]
        insert_rows(conn, "messages", MESSAGE_COLUMNS, rows)
        # AUTOINCREMENT under our write lock: the new ids are the last len(rows).
        last = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'messages'").fetchone()[0]
        return list(range(int(last) - len(rows) + 1, int(last) + 1))

    def import_sessions(self, sessions: Iterable[Mapping[str, Any]]) -> int:
        """Bulk-load whole sessions in one transaction; returns the number of messages.

        Each mapping has ``id`` and ``messages`` and optionally ``source``,
        ``title``, ``model``, ``started_at``, ``ended_at``, ``end_reason``,
        ``parent_session_id``, ``user_id``, ``system_prompt``, ``model_config``,
        ``input_tokens``, ``output_tokens``, ``cwd``, ``git_repo_root``. Sessions
        that already exist are refused (nothing is written); a parent must be
        among *sessions* (in any order) or in the file already.
        """
        batch = prepare_import(sessions, self.scope)
        session_rows, message_rows, titles, ids = (
            batch.session_rows,
            batch.message_rows,
            batch.titles,
            batch.ids,
        )

        def write(conn: sqlite3.Connection) -> int:
            clash = conn.execute(
                "SELECT id FROM sessions WHERE id IN (SELECT value FROM json_each(?)) LIMIT 1",
                (json.dumps(ids),),
            ).fetchone()
            if clash is not None:
                raise session_exists_error(clash[0], self.path)
            taken = conn.execute(
                "SELECT title, id FROM sessions WHERE title IN (SELECT value FROM json_each(?)) "
                f"AND {self.scope.sql()} LIMIT 1",
                (json.dumps([title for title, _ in titles]), *self.scope.params()),
            ).fetchone()
            if taken is not None:
                raise title_taken_error(taken[0], taken[1], self.path)
            parents = {row[4] for row in session_rows if row[4] is not None} - set(ids)
            for parent in sorted(parents):
                if not self._exists(conn, parent):
                    raise missing_parent_error(parent, self.path)
            conn.execute("PRAGMA defer_foreign_keys = ON")  # a parent may come after its child
            conn.executemany(
                "INSERT INTO sessions(id, source, user_id, model, parent_session_id, started_at, "
                "ended_at, end_reason, message_count, tool_call_count, last_activity_at, "
                "system_prompt, model_config, input_tokens, output_tokens, cwd, git_repo_root) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                session_rows,
            )
            for title, session_id in titles:
                self._set_title(conn, session_id, title)
            own = self._insert_messages(conn, message_rows)[0] if message_rows else None
            drain_gram_queue(conn, WRITE_BACKLOG, own_from=own)
            return len(message_rows)

        return self._write(write)

    # -- meta -------------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        """A value from ``state_meta`` (``None`` when absent)."""

        def read(conn: sqlite3.Connection) -> str | None:
            row = conn.execute("SELECT value FROM state_meta WHERE key = ?", (key,)).fetchone()
            return None if row is None else row[0]

        return self._read(read)

    def set_meta(self, key: str, value: str) -> None:
        """Insert or replace a ``state_meta`` value."""
        self._write(
            lambda conn: conn.execute(
                "INSERT INTO state_meta(key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, value),
            )
        )

    # -- reads -------------------------------------------------------------------------
    def get_session(self, session_id: str) -> dict[str, Any] | None:
        """The session's row as a dict, or ``None``."""

        def read(conn: sqlite3.Connection) -> dict[str, Any] | None:
            cursor = conn.execute(
                f"SELECT * FROM sessions WHERE id = ? AND {self.scope.sql()}",
                (session_id, *self.scope.params()),
            )
            row = cursor.fetchone()
            return None if row is None else row_dict(cursor, row)

        return self._read(read)

    def resolve_session_id(self, prefix: str) -> str | None:
        """An exact id, else the one id starting with *prefix*; ``None`` if none or several."""

        if not prefix:
            return None
        if self._read(lambda conn: self.scope.sees(conn, prefix)):
            return prefix
        found = self.session_ids_starting_with(prefix, limit=2)
        return found[0] if len(found) == 1 else None

    def session_ids_starting_with(self, prefix: str, limit: int = 5) -> list[str]:
        """Up to *limit* session ids that start with *prefix* (case-sensitive, as ids are
        compared), in id order."""
        # GLOB, unlike LIKE, tells case apart (``ABC`` must not name ``abc123`` for a
        # delete) and reads the primary key from the prefix on; its wildcards are bracketed.
        # SQLite reads a pattern up to its first NUL ("É\x00*" would match "É" alone), so
        # what it returns is checked against the whole prefix.
        escaped = re.sub(r"[*?\[]", lambda match: f"[{match.group()}]", prefix)
        return self._read(
            lambda conn: [
                row[0]
                for row in conn.execute(
                    f"SELECT id FROM sessions WHERE id GLOB ? AND {self.scope.sql()} "
                    "ORDER BY id LIMIT ?",
                    (escaped + "*", *self.scope.params(), int(limit)),
                )
                if row[0].startswith(prefix)
            ]
        )

    def get_messages(self, session_id: str) -> list[dict[str, Any]]:
        """Every visible message of the session in order, ``tool_calls`` decoded."""

        def read(conn: sqlite3.Connection) -> list[dict[str, Any]]:
            if self.user_id is not None and not self.scope.sees(conn, session_id):
                return []
            cursor = conn.execute(
                f"SELECT * FROM messages AS m WHERE m.session_id = ? AND "
                f"{self.layout.visible_rows_sql('m')} ORDER BY m.id",
                (session_id,),
            )
            return [decode_message(row_dict(cursor, row)) for row in cursor.fetchall()]

        return self._read(read)

    def get_messages_as_conversation(self, session_id: str) -> list[dict[str, Any]]:
        """The session as OpenAI chat messages (``role``, ``content``, ``name``, tool fields).

        Leaked ``<memory-context>`` blocks are removed from user and assistant text.
        """
        return as_conversation(self.get_messages(session_id))

    def message_count(self, session_id: str | None = None) -> int:
        """Messages in one session, or in the whole file (a scoped store: of its user)."""
        if session_id is None and self.user_id is None:
            return self._read(
                lambda c: int(c.execute("SELECT COUNT(*) FROM messages").fetchone()[0])
            )
        if session_id is None:
            return self._read(
                lambda c: int(
                    c.execute(
                        "SELECT COUNT(*) FROM messages WHERE session_id IN "
                        "(SELECT id FROM sessions WHERE user_id = ?)",
                        (self.user_id,),
                    ).fetchone()[0]
                )
            )
        return self._read(
            lambda c: int(
                c.execute(
                    "SELECT COUNT(*) FROM messages WHERE session_id = ? AND session_id IN "
                    f"(SELECT id FROM sessions WHERE {self.scope.sql()})",
                    (session_id, *self.scope.params()),
                ).fetchone()[0]
            )
        )

    def session_count(self, source: str | None = None) -> int:
        """Sessions in the file (a scoped store: of its user), optionally of one source."""
        where, params = self.scope.sql(), self.scope.params()
        if source is not None:
            where, params = f"{where} AND source = ?", (*params, source)
        return self._read(
            lambda c: int(
                c.execute(f"SELECT COUNT(*) FROM sessions WHERE {where}", params).fetchone()[0]
            )
        )

    # -- lineage and titles --------------------------------------------------------------
    def get_compression_tip(self, session_id: str) -> str:
        """The newest compression continuation of *session_id* (itself if none)."""

        def read(conn: sqlite3.Connection) -> str:
            if self.user_id is not None and not self.scope.sees(conn, session_id):
                return session_id
            tip = lineage.compression_tip(conn, session_id)
            return tip if self.scope.visible(conn, [tip]) else session_id

        return self._read(read)

    def get_lineage(self, session_id: str, *, whole: bool = False) -> list[str]:
        """The conversation *session_id* belongs to, root first: its compression chain
        (at most :data:`~hermes_core.sessions.lineage.MAX_HOPS` sessions each way, unless
        *whole*: what :meth:`delete_conversation` deletes)."""
        hops = None if whole else lineage.MAX_HOPS

        def read(conn: sqlite3.Connection) -> list[str]:
            if self.user_id is not None and not self.scope.sees(conn, session_id):
                return [session_id]
            return self.scope.visible(conn, lineage.compression_chain(conn, session_id, hops))

        return self._read(read)

    def get_lineage_root(self, session_id: str) -> str:
        """The root of *session_id*'s tree of sessions (of this store's user)."""

        def read(conn: sqlite3.Connection) -> str:
            if self.user_id is None:
                return lineage.lineage_root(conn, session_id)
            if not self.scope.sees(conn, session_id):
                return session_id
            chain = lineage.ancestors(conn, session_id)
            return lineage.owned_root(chain, set(self.scope.visible(conn, chain)), session_id)

        return self._read(read)

    def get_lineage_members(self, session_id: str) -> set[str]:
        """Every session in *session_id*'s tree (root, compression chain, subagents, branches)."""

        def read(conn: sqlite3.Connection) -> set[str]:
            if self.user_id is not None and not self.scope.sees(conn, session_id):
                return {session_id}
            members = lineage.lineage_members(conn, session_id)
            return set(self.scope.visible(conn, members)) | {session_id}

        return self._read(read)

    def next_title_in_lineage(self, title: str) -> str:
        """The next free numbered title: ``X`` → ``X #2`` → ``X #3``."""
        return self._read(lambda conn: next_title(conn, title, user_id=self.user_id))

    def get_session_by_title(self, title: str) -> dict[str, Any] | None:
        """The session with exactly this title, or ``None``."""

        def read(conn: sqlite3.Connection) -> dict[str, Any] | None:
            if "title" not in self.layout.session_columns:
                return None
            cursor = conn.execute(
                f"SELECT * FROM sessions WHERE title = ? AND {self.scope.sql()} "
                "ORDER BY user_id IS NOT NULL, id LIMIT 1",
                (title, *self.scope.params()),
            )
            row = cursor.fetchone()
            return None if row is None else row_dict(cursor, row)

        return self._read(read)

    # -- listing -----------------------------------------------------------------------
    def _list_sessions(self, listing: Listing) -> list[dict[str, Any]]:
        return self._read(
            lambda conn: listing_module.list_sessions(
                conn,
                self.layout,
                limit=listing.limit,
                offset=listing.offset,
                source=listing.source,
                exclude_sources=listing.exclude_sources,
                collapse_lineage=listing.collapse_lineage,
                order_by_last_active=listing.order_by_last_active,
                active_since=listing.active_since,
                active_until=listing.active_until,
                user_id=self.user_id,
            )
        )

    def last_activity(self) -> float | None:
        """The latest session start or activity on record (epoch seconds; ``None``: none)."""
        return self._read(
            lambda conn: listing_module.last_activity(conn, self.layout, self.user_id)
        )

    # -- maintenance -------------------------------------------------------------------
    def check(self) -> list[str]:
        """What is wrong with the file, one sentence each; ``[]`` when it is healthy.

        Compares every index with the messages it was made from; a writable
        store of a hermes-memory file also runs FTS5's structural check of each
        index (a write statement: it briefly takes the write lock). A Hermes Agent
        file gets SQLite's ``quick_check`` only. Reads the whole file.
        """
        deep = not self.read_only and self.layout.ours

        def read(conn: sqlite3.Connection) -> list[str]:
            # FTS5's check is a write statement: wait for a writer as a reader would.
            conn.execute(f"PRAGMA busy_timeout = {READ_BUSY_TIMEOUT_MS}")
            try:
                return check_database(conn, self.layout, deep=deep)
            except sqlite3.OperationalError as exc:
                if not is_busy(exc):
                    raise
                raise SessionStoreError(
                    f"Could not check {self.path}: the database is locked by another process "
                    "(a write in progress), which says nothing about damage; try again when "
                    "it is idle."
                ) from exc
            finally:
                timeout = READ_BUSY_TIMEOUT_MS if self.read_only else WRITE_BUSY_TIMEOUT_MS
                conn.execute(f"PRAGMA busy_timeout = {timeout}")

        return self._read(read)

    def probe(self) -> list[str]:
        """What stops the commands at once, one sentence each; ``[]`` when nothing is found.

        Reads one row of each table read on every run (``check()`` reads everything).
        """
        return self._read(lambda conn: probe_database(conn, self.layout))

    def rebuild_indexes(self, progress: UpgradeProgress | None = None) -> dict[str, int]:
        """Rebuild every full-text index from ``messages``; returns the rows each holds.

        The word and trigram indexes are rebuilt all or nothing, in one transaction;
        the CJK gram index is emptied there with every CJK row queued, and then
        refilled in batches like an upgrade (*progress* gets (rows done, rows in
        all)), so an interrupted rebuild leaves rows queued, still found by search,
        for the next opening to finish. Only for a hermes-memory file opened
        writable; a Hermes Agent file is never modified.
        """
        if self.read_only or not self.layout.ours:
            raise SessionStoreError(
                f"{self.path} is open read-only or was written by Hermes Agent; its indexes "
                "are rebuilt by the program that owns it."
            )
        try:
            self._write(rebuild_indexes)
        except SessionStoreError as exc:
            cause = exc.__cause__
            if not isinstance(cause, sqlite3.DatabaseError) or is_busy(cause):
                raise
            raise SessionStoreError(
                f"Could not rebuild the search indexes of {self.path} ({cause}); nothing was "
                "changed. The damage is in pages a rebuild cannot replace, outside the search "
                "indexes: restore state.db from a backup. Until then its conversations can "
                "still be read (`hermes-memory sessions list`, `sessions show ID --json`)."
            ) from cause
        self.layout = inspect(self._conn, self.path)
        self.drain_gram_backlog(progress)
        return self._read(index_rows)

    def drain_gram_backlog(self, progress: UpgradeProgress | None = None) -> int:
        """Tokenise every row queued for the CJK gram index, a batch per write transaction.

        What opening a store does; for rows queued since (another program's writes, a
        rebuild). *progress* gets (rows done, rows in all). Returns the rows tokenised.
        """
        if self.read_only or not self.layout.has_pending_grams:
            return 0
        if self._closed:
            raise SessionStoreError(f"The session store for {self.path} is closed.")
        try:
            return drain_in_batches(self._conn, self.path, self._writer, progress)
        except sqlite3.DatabaseError as exc:
            raise SessionStoreError(
                f"Write to {self.path} failed: {exc}.{damage_hint(exc)}"
            ) from exc
        finally:
            self._session_info.invalidate()

    def gram_backlog(self) -> int:
        """CJK rows not in the gram index yet: queued, or (a file older than version 7,
        opened read-only) to be re-tokenised when a writer first opens it.

        Search finds them all meanwhile (a scan of the queued rows; a version 6 file is
        searched by its bigrams).
        """

        def read(conn: sqlite3.Connection) -> int:
            if not self.layout.has_pending_grams:  # no gram index yet (before version 2)
                return 0
            queued = queued_gram_rows(conn)
            if not self.layout.ours or self.layout.version >= GRAM_TRIGRAMS_VERSION:
                return queued
            indexed = conn.execute(
                "SELECT count(*) FROM messages_cjk_grams WHERE rowid NOT IN "
                "(SELECT id FROM messages_cjk_pending)"
            ).fetchone()[0]
            return queued + int(indexed)

        return self._read(read)

    # -- search ------------------------------------------------------------------------
    def _search(
        self, query: object, filters: SearchFilters, page: SearchPage
    ) -> list[dict[str, Any]]:
        limit, offset, context, snippets, semantic = (
            page.limit,
            page.offset,
            page.context,
            page.snippets,
            page.semantic,
        )
        nearest = self._nearest(query, force=semantic is True) if semantic is not False else None

        def read(conn: sqlite3.Connection) -> list[dict[str, Any]]:
            if self._session_info.sync(conn):  # another commit may have queued CJK rows
                self._pending_grams = self.layout.has_pending_grams and (
                    conn.execute("SELECT 1 FROM messages_cjk_pending LIMIT 1").fetchone()
                    is not None
                )
            return search_messages(
                conn,
                self.layout,
                query,
                filters=filters,
                limit=limit,
                offset=offset,
                context=context,
                snippets=snippets,
                pending_grams=self._pending_grams,
                session_info=self._session_info,
                nearest=nearest,
                passages=nearest is not None and self._reads_passages(),
            )

        return self._read(read)

    def _nearest(self, query: object, force: bool = False) -> Nearest | None:
        """Semantic neighbours for a question (see :meth:`StoreFacade._meaning_index`)."""
        index = self._meaning_index(query, force)
        if index is None:
            return None

        def nearest(text: str, k: int) -> list[int]:
            try:
                return index.nearest(lambda fn: fn(self._conn), text, k)
            except sqlite3.OperationalError:
                raise  # locked or undecodable: the store's read retries or reports it
            except Exception as exc:  # the encoder: full-text hits still answer
                log.warning("semantic search failed (%s); using full-text search only", exc)
                return []

        return nearest
