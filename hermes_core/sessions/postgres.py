"""``PostgresSessionStore``: the session store in a PostgreSQL database (``[postgres]`` extra).

The same public methods and results as :class:`~hermes_core.sessions.store.SessionStore`
(``state.db``), for several gateway processes on several machines writing one
database. Connections come from a ``psycopg_pool`` pool; the schema is created
and migrated by the store itself (:mod:`~hermes_core.sessions.pgschema`).

Appends are idempotent: every message gets a client token before the first
try, a write that loses its connection is retried with the same tokens, and
rows already stored are found, not inserted again. Text PostgreSQL cannot hold
(NUL characters) is stored with U+FFFD. Semantic search follows SQLite's rule (the
same ``semantic_mode``, coverage and fusion); its vectors are rows of the database
(:mod:`~hermes_core.sessions.pgsemantic`).
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from operator import itemgetter
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

from hermes_core.embeddings import model_name
from hermes_core.errors import (
    ConfigError,
    HermesMemoryError,
    SessionNotFoundError,
    SessionStoreError,
    SessionStoreUnavailableError,
    SessionTitleError,
    first_line,
)
from hermes_core.sessions import pgsearch
from hermes_core.sessions.arguments import epoch as _epoch
from hermes_core.sessions.bulk import (
    IMPORT_SESSION_COLUMNS,
    missing_parent_error,
    prepare_import,
    session_exists_error,
    title_taken_error,
)
from hermes_core.sessions.cjk import cjk_grams
from hermes_core.sessions.facade import Listing, NewSession, SearchPage, StoreFacade
from hermes_core.sessions.fetch import SearchFilters
from hermes_core.sessions.hits import hit_dicts
from hermes_core.sessions.lineage import owned_root
from hermes_core.sessions.listing import PREVIEW_CHARS
from hermes_core.sessions.opening import UpgradeProgress
from hermes_core.sessions.pgbackfill import backfill_stems
from hermes_core.sessions.pgindexes import IndexFinding, index_findings
from hermes_core.sessions.pgschema import migrate
from hermes_core.sessions.pgsemantic import PgSemanticIndex, count_not_embedded, reopen_range
from hermes_core.sessions.pgtrigram import build_trigram_index
from hermes_core.sessions.pgvectorcache import VectorCache
from hermes_core.sessions.porter import index_stems
from hermes_core.sessions.query import parse_query
from hermes_core.sessions.records import (
    LEGACY_JSON_PREFIX,
    as_conversation,
    called_tools,
    decode_message,
    encode_messages,
    not_utf8_error,
    sane_timestamp,
    scrub,
)
from hermes_core.sessions.records import (
    client_tokens as client_tokens_for,
)
from hermes_core.sessions.scope import UserScope
from hermes_core.sessions.search import Nearest
from hermes_core.sessions.semantic import semantic_mode
from hermes_core.sessions.statements import SESSION_TITLE_HOLDER, UPSERT_SESSION, for_postgres
from hermes_core.sessions.titles import next_title_from, sanitize_title, split_number
from hermes_core.sessions.transcript import describe_tool_calls

__all__ = [
    "PostgresSessionStore",
    "connect_kwargs",
    "is_postgres_url",
    "masked_url",
    "search_columns",
]

log = logging.getLogger(__name__)

T = TypeVar("T")

RETRIES = 3
"""Tries of one operation whose connection is lost (an append is never stored twice)."""
MAX_HOPS = 1000
IMPORT_CHUNK = 1_000
"""Messages of an import stemmed at a time, while the server takes in the ones before."""
ANALYZE_SHARE = 0.1
"""An import after which the messages changed since the last ``ANALYZE`` pass 50 + this share
of the table is followed by one (autovacuum's default ``autovacuum_analyze_scale_factor``)."""
STATISTICS_SECONDS = 30.0
"""How long the message count and mean length BM25 uses are reused before re-reading."""
APPLICATION = "hermes-memory"
"""``application_name`` of the store's connections (``pg_stat_activity`` shows it), unless
the URL names its own (``?application_name=gateway-3``)."""
_HANDOFF_PREFIXES = ("[CONTEXT COMPACTION", "[CONTEXT SUMMARY]:")
_FORKS = ("_delegate_from", "_branched_from", "_reset_from")


def is_postgres_url(value: object) -> bool:
    """Whether *value* names a PostgreSQL database (``postgresql://`` or ``postgres://``)."""
    return isinstance(value, str) and value.split("://", 1)[0].lower() in ("postgresql", "postgres")


def connect_kwargs(url: str, connect_timeout: float) -> dict[str, Any]:
    """The connection options of *url*'s connections: the timeout, and :data:`APPLICATION`
    as ``application_name`` unless *url* names its own."""
    import psycopg
    from psycopg.conninfo import conninfo_to_dict

    kwargs: dict[str, Any] = {"connect_timeout": max(1, int(connect_timeout))}
    try:
        named = "application_name" in conninfo_to_dict(url)
    except psycopg.Error:  # connecting says what is wrong with the URL
        named = False
    if not named:
        kwargs["application_name"] = APPLICATION
    return kwargs


def masked_url(url: str) -> str:
    """*url* with its password replaced by ``***`` (for messages and logs)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<an unparseable PostgreSQL URL>"
    if parts.password is None:
        return url
    user = parts.username or ""
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}{port}"))


def _pg_text(value: Any) -> Any:
    """Text PostgreSQL can store: NUL becomes U+FFFD."""
    return value.replace("\x00", "\ufffd") if isinstance(value, str) and "\x00" in value else value


def _search_text(content: Any, tool_name: Any, name: Any, tool_calls: Any) -> str:
    """What full-text search reads of a message: its text, who spoke it, its tool calls
    (decoded arguments can hold an escaped lone surrogate: it becomes U+FFFD, as stored)."""
    text = content if isinstance(content, str) else ""
    if text.startswith(LEGACY_JSON_PREFIX):
        text = text[len(LEGACY_JSON_PREFIX) :]
    parts = [text, tool_name or name or "", describe_tool_calls(tool_calls) if tool_calls else ""]
    return _pg_text(scrub(" ".join(part for part in parts if isinstance(part, str) and part)))


def search_columns(searches: Sequence[str]) -> list[tuple[str, str | None, str]]:
    """What the full-text index is built from, for each search text: the text, its CJK grams
    and the word index's stems of it (:func:`~hermes_core.sessions.porter.index_stems`)."""
    return [
        (search, cjk_grams([search]) or None, stems)
        for search, stems in zip(searches, index_stems(searches), strict=True)
    ]


def _load_psycopg() -> Any:
    try:
        import psycopg
        import psycopg_pool
    except ImportError as exc:
        raise ConfigError(
            "A PostgreSQL session store needs psycopg 3 and psycopg_pool: "
            "pip install 'hermes-memory-core[postgres]'."
        ) from exc
    return psycopg, psycopg_pool


class PostgresSessionStore(StoreFacade):
    """Sessions and messages in PostgreSQL; see :class:`~hermes_core.sessions.SessionStore`.

    *url* is a libpq URL (``postgresql://user:pass@host:5432/db``). A server that
    refuses the connection raises one :class:`SessionStoreError` naming the URL
    with its password masked. *user_id* scopes the store as for SQLite. A writable open
    first finishes what a migration left to do in batches (migration 4's stems,
    :mod:`~hermes_core.sessions.pgbackfill`), reporting (rows done, rows in all) to
    *upgrade_progress*, then builds migration 6's trigram index concurrently
    (:mod:`~hermes_core.sessions.pgtrigram`), unless another process is doing it, reporting
    (blocks done, blocks in all) to *index_progress*.
    """

    def __init__(
        self,
        url: str,
        *,
        read_only: bool = False,
        user_id: str | None = None,
        semantic: str | bool | None = None,
        pool_size: int = 4,
        connect_timeout: float = 10.0,
        upgrade_progress: UpgradeProgress | None = None,
        index_progress: UpgradeProgress | None = None,
    ) -> None:
        psycopg, psycopg_pool = _load_psycopg()
        self._psycopg = psycopg
        self._pool_timeout = psycopg_pool.PoolTimeout
        self.url = url
        self.path = masked_url(url)
        """Where the store is, as messages name it (the URL, password masked)."""
        self.read_only = read_only
        self.scope = UserScope(user_id, mark="%s")
        self.user_id = self.scope.user_id
        self.semantic_mode = semantic_mode(semantic)
        """``auto``, ``on`` or ``off``, as for SQLite (default ``$HERMES_SEMANTIC_SEARCH``)."""
        self._semantic_lock = threading.Lock()
        self.prune_batch_messages = 20_000
        try:
            first = psycopg.connect(url, **connect_kwargs(url, connect_timeout))
        except psycopg.Error as exc:
            raise SessionStoreUnavailableError(
                f"Cannot connect to the session database {self.path}: "
                f"{first_line(exc)}. Check "
                "that the server runs and accepts this user, or fix sessions.url / "
                "HERMES_SESSIONS_URL."
            ) from exc
        try:
            if not read_only:
                migrate(first)
            elif first.execute("SELECT to_regclass('messages')").fetchone()[0] is None:
                raise SessionStoreError(f"{self.path} holds no session tables yet.")
            first.commit()
            if not read_only:
                backfill_stems(first, upgrade_progress, where=self.path)
                build_trigram_index(first, index_progress, where=self.path)
        except RuntimeError as exc:
            raise SessionStoreError(f"{self.path}: {exc}.") from exc
        except psycopg.Error as exc:
            raise SessionStoreError(f"Cannot prepare {self.path}: {exc}") from exc
        finally:
            first.close()
        self._pool = psycopg_pool.ConnectionPool(
            url,
            min_size=1,
            max_size=max(1, int(pool_size)),
            kwargs=connect_kwargs(url, connect_timeout),
            check=psycopg_pool.ConnectionPool.check_connection,
            timeout=max(1.0, float(connect_timeout)),
            open=True,
        )
        self._closed = False
        self._stats: tuple[float, pgsearch.Statistics] | None = None
        self._snapshot = threading.local()

    # -- plumbing -------------------------------------------------------------------------
    @contextmanager
    def read_snapshot(self) -> Iterator[None]:
        """Reads of this thread inside the block see one snapshot of the database (a
        read-only ``REPEATABLE READ`` transaction), however many other writers commit:
        what ``sessions export`` reads a store through. Writes inside it are refused."""
        if getattr(self._snapshot, "conn", None) is not None:
            yield
            return
        with self._pool.connection() as conn, conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            self._snapshot.conn = conn
            try:
                yield
            finally:
                self._snapshot.conn = None

    def _run(self, fn: Callable[[Any], T], *, write: bool) -> T:
        if self._closed:
            raise SessionStoreError(f"The session store for {self.path} is closed.")
        if write and self.read_only:
            raise SessionStoreError(f"{self.path} is open read-only.")
        psycopg = self._psycopg
        pinned = getattr(self._snapshot, "conn", None)
        if pinned is not None:
            if write:
                raise SessionStoreError(f"{self.path} is being read as a snapshot; write later.")
            try:
                return fn(pinned)
            except UnicodeEncodeError as exc:
                raise not_utf8_error(exc) from exc
            except psycopg.Error as exc:
                raise SessionStoreError(f"The session database {self.path} failed: {exc}") from exc
        for attempt in range(RETRIES):
            try:
                with self._pool.connection() as conn, conn.transaction():
                    return fn(conn)
            except self._pool_timeout as exc:
                # The pool has already tried for the whole connect timeout: trying again
                # would hold the turn for that long once more before the spool takes over.
                raise SessionStoreUnavailableError(
                    f"The session database {self.path} is unreachable: {exc}"
                ) from exc
            except psycopg.OperationalError as exc:
                if attempt == RETRIES - 1:
                    raise SessionStoreUnavailableError(
                        f"The session database {self.path} is unreachable: {exc}"
                    ) from exc
                log.warning("session database connection lost (%s); retrying", exc)
                time.sleep(0.2 * (attempt + 1))
            except UnicodeEncodeError as exc:
                raise not_utf8_error(exc) from exc
            except psycopg.errors.UniqueViolation as exc:
                raise SessionStoreError(f"Write to {self.path} rejected: {exc}") from exc
            except psycopg.errors.ForeignKeyViolation as exc:
                raise SessionStoreError(f"Write to {self.path} rejected: {exc}") from exc
            except psycopg.Error as exc:
                raise SessionStoreError(f"The session database {self.path} failed: {exc}") from exc
        raise AssertionError("unreachable")

    def _read(self, fn: Callable[[Any], T]) -> T:
        return self._run(fn, write=False)

    def _write(self, fn: Callable[[Any], T]) -> T:
        return self._run(fn, write=True)

    def close(self) -> None:
        """Close the pool (idempotent)."""
        if not self._closed:
            self._closed = True
            self._pool.close()
            if self._semantic is not None:
                self._semantic.close()

    def __enter__(self) -> PostgresSessionStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- sessions: writes -------------------------------------------------------------------
    def _text(self, value: Any) -> str:
        """Text as PostgreSQL stores it: NUL becomes U+FFFD too."""
        return str(_pg_text(scrub(str(value))))

    def _create_session(self, new: NewSession) -> str:
        session_id, parent_session_id = new.id, new.parent_session_id

        def write(conn: Any) -> str:
            existing = conn.execute(
                "SELECT user_id FROM sessions WHERE id = %s FOR UPDATE", (session_id,)
            ).fetchone()
            if existing is not None and self.user_id is not None and existing[0] != self.user_id:
                raise SessionStoreError(
                    f"Session id {session_id!r} is taken in {self.path}; create the session "
                    "under a new id."
                )
            if parent_session_id is not None and not self.scope.sees(conn, parent_session_id):
                raise SessionStoreError(
                    f"Parent session {parent_session_id!r} does not exist in {self.path}; "
                    "create it first."
                )
            conn.execute(_UPSERT_SESSION, new.row())
            if new.title is not None:
                current = conn.execute(
                    "SELECT title FROM sessions WHERE id = %s", (session_id,)
                ).fetchone()[0]
                if current is None:
                    self._set_title(conn, session_id, new.title)
            return session_id

        return self._write(write)

    def ensure_session(
        self, session_id: str, *, source: str = "unknown", model: str | None = None
    ) -> str:
        """Create *session_id* if missing."""
        return self.create_session(session_id, source=source, model=model)

    def _update(self, sql: str, params: Sequence[Any]) -> bool:
        return self._write(
            lambda conn: (
                conn.execute(
                    f"{sql} AND {self.scope.sql()}", (*params, *self.scope.params())
                ).rowcount
                > 0
            )
        )

    def end_session(
        self, session_id: str, end_reason: str, *, ended_at: float | None = None
    ) -> bool:
        """Mark a session ended (at *ended_at*, default now); the first end wins."""
        return self._update(
            "UPDATE sessions SET ended_at = %s, end_reason = %s WHERE id = %s AND ended_at IS NULL",
            (sane_timestamp(ended_at, time.time()), end_reason, session_id),
        )

    def reopen_session(self, session_id: str) -> bool:
        """Clear a session's end so it can be ended again."""
        return self._update(
            "UPDATE sessions SET ended_at = NULL, end_reason = NULL WHERE id = %s", (session_id,)
        )

    def update_system_prompt(self, session_id: str, prompt: str | None) -> bool:
        """Store the system prompt a session was run with."""
        text = None if prompt is None else _pg_text(scrub(prompt))
        return self._update(
            "UPDATE sessions SET system_prompt = %s WHERE id = %s", (text, session_id)
        )

    def _count_tokens(
        self, session_id: str, tokens: tuple[int, int], model: str | None, absolute: bool
    ) -> bool:
        op = "%s" if absolute else "COALESCE({col}, 0) + %s"
        sql = (
            f"UPDATE sessions SET input_tokens = {op.format(col='input_tokens')}, "
            f"output_tokens = {op.format(col='output_tokens')}, "
            "model = COALESCE(model, %s) WHERE id = %s"
        )
        return self._update(sql, (*tokens, model, session_id))

    def set_session_title(self, session_id: str, title: str | None) -> bool:
        """Set (or clear) a title; False when the session is missing."""
        clean = sanitize_title(title)

        def write(conn: Any) -> bool:
            if not self.scope.sees(conn, session_id):
                return False
            self._set_title(conn, session_id, clean)
            return True

        return self._write(write)

    def _set_title(self, conn: Any, session_id: str, title: str | None) -> None:
        if title is not None:
            other = conn.execute(_SESSION_TITLE_HOLDER, (session_id, title)).fetchone()
            if other is not None:
                raise SessionTitleError(
                    f"Title {title!r} is already in use by session {other[0]}; pick another "
                    "or use next_title_in_lineage()."
                )
        conn.execute("UPDATE sessions SET title = %s WHERE id = %s", (title, session_id))

    # -- deletes ------------------------------------------------------------------------------
    @staticmethod
    def _delete(conn: Any, session_ids: list[str]) -> int:
        if not session_ids:
            return 0
        conn.execute(
            "UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id = ANY(%s) "
            "AND NOT id = ANY(%s)",
            (session_ids, session_ids),
        )
        count = conn.execute("DELETE FROM messages WHERE session_id = ANY(%s)", (session_ids,))
        conn.execute("DELETE FROM sessions WHERE id = ANY(%s)", (session_ids,))
        return int(count.rowcount)

    def delete_session(self, session_id: str) -> bool:
        """Delete a session and its messages; its children lose their parent link."""

        def write(conn: Any) -> bool:
            if not self.scope.sees(conn, session_id):
                return False
            self._delete(conn, [session_id])
            return True

        return self._write(write)

    def delete_conversation(self, session_id: str) -> list[str]:
        """Delete every session of *session_id*'s compression chain; returns them, root first."""

        def write(conn: Any) -> list[str]:
            if not self.scope.sees(conn, session_id):
                return []
            chain = self.scope.visible(conn, self._chain(conn, session_id, None))
            self._delete(conn, chain)
            return chain

        return self._write(write)

    def prune_conversations(self, ended_before: float, *, source: str | None = None) -> list[str]:
        """Delete every conversation whose sessions all ended before *ended_before*."""
        cutoff = _epoch(ended_before, "ended_before")
        if cutoff is None:
            raise SessionStoreError("ended_before must be epoch seconds (a number), got None.")

        def write(conn: Any) -> list[str]:
            doomed: list[str] = []
            seen: set[str] = set()
            candidates = conn.execute(
                "SELECT id, source FROM sessions WHERE ended_at IS NOT NULL AND ended_at < %s "
                f"AND {self.scope.sql()} ORDER BY started_at, id",
                (cutoff, *self.scope.params()),
            ).fetchall()
            for candidate, _ in candidates:
                if candidate in seen:
                    continue
                chain = self._chain(conn, candidate, None)
                seen.update(chain)
                rows = conn.execute(
                    "SELECT id, source, user_id, ended_at FROM sessions WHERE id = ANY(%s)",
                    (chain,),
                ).fetchall()
                info = {row[0]: row for row in rows}
                if any(row[3] is None or row[3] >= cutoff for row in rows):
                    continue
                if self.user_id is not None and any(row[2] != self.user_id for row in rows):
                    continue
                if source is not None and info[chain[0]][1] != source:
                    continue
                doomed += chain
            self._delete(conn, doomed)
            return doomed

        return self._write(write)

    # -- messages -------------------------------------------------------------------------------
    def append_messages(
        self,
        session_id: str,
        messages: Iterable[Mapping[str, Any]],
        *,
        client_tokens: Sequence[str] | None = None,
    ) -> list[int]:
        """Append messages to one session, all or nothing; returns their ids in order.

        Each message carries a client token (*client_tokens*, else new ones): a
        retry of the same append, by this store after a lost connection or by the
        caller with the same tokens, returns the stored ids instead of adding rows.
        """
        rows, calls = encode_messages(session_id, messages)
        if not rows:
            return []
        tokens = client_tokens_for(client_tokens, len(rows))
        prepared = self._message_rows(rows, tokens)

        def write(conn: Any) -> list[int]:
            owner = conn.execute(
                "SELECT user_id FROM sessions WHERE id = %s FOR UPDATE", (session_id,)
            ).fetchone()
            if owner is None or (self.user_id is not None and owner[0] != self.user_id):
                raise SessionNotFoundError(
                    f"Session {session_id!r} does not exist in {self.path}"
                    + (f" for user {self.user_id!r}" if self.user_id is not None else "")
                    + "; call create_session() first."
                )
            self._name_results(conn, session_id, prepared)
            known = dict(
                conn.execute(
                    "SELECT client_token, id FROM messages WHERE session_id = %s "
                    "AND client_token = ANY(%s)",
                    (session_id, tokens),
                ).fetchall()
            )
            fresh = [row for row in prepared if row[11] not in known]
            if fresh:
                with conn.cursor() as cur:
                    cur.executemany(_INSERT_MESSAGE, fresh, returning=True)
                    new_ids: list[int] = []
                    while True:
                        new_ids.append(int(cur.fetchone()[0]))
                        if not cur.nextset():
                            break
                known.update(zip((row[11] for row in fresh), new_ids, strict=True))
                conn.execute(
                    "UPDATE sessions SET message_count = COALESCE(message_count, 0) + %s, "
                    "tool_call_count = COALESCE(tool_call_count, 0) + %s, last_activity_at = %s "
                    "WHERE id = %s",
                    (
                        len(fresh),
                        calls if len(fresh) == len(prepared) else 0,
                        rows[-1][7],
                        session_id,
                    ),
                )
            return [known[token] for token in tokens]

        return self._write(write)

    @staticmethod
    def _message_rows(
        rows: Sequence[tuple[Any, ...]], tokens: Sequence[str]
    ) -> list[tuple[Any, ...]]:
        """``encode_messages`` rows plus client token and :func:`search_columns`."""
        encoded = [tuple(_pg_text(value) for value in row) for row in rows]
        searches = [_search_text(row[2], row[6], row[10], row[5]) for row in encoded]
        return [
            (*values, token, *columns)
            for values, token, columns in zip(
                encoded, tokens, search_columns(searches), strict=True
            )
        ]

    @staticmethod
    def _name_results(conn: Any, session_id: str, rows: list[tuple[Any, ...]]) -> None:
        """Nameless tool results take the name of a call stored earlier (as SQLite does)."""
        wanting = [
            n for n, row in enumerate(rows) if row[1] == "tool" and row[6] is None and row[4]
        ]
        if not wanting:
            return
        called: dict[str, str] = {}
        for (tool_calls,) in conn.execute(
            "SELECT tool_calls FROM messages WHERE session_id = %s AND role = 'assistant' "
            "AND tool_calls IS NOT NULL ORDER BY id DESC LIMIT 20",
            (session_id,),
        ):
            called = {**called_tools(tool_calls), **called}
        for n in wanting:
            if rows[n][4] in called:
                name = called[rows[n][4]]
                row = rows[n]
                search = _search_text(row[2], name, row[10], row[5])
                rows[n] = (*row[:6], name, *row[7:12], *search_columns([search])[0])

    def import_sessions(self, sessions: Iterable[Mapping[str, Any]]) -> int:
        """Bulk-load whole sessions in one transaction; returns the number of messages
        (the same fields and refusals as :meth:`SessionStore.import_sessions`)."""
        batch = prepare_import(sessions, self.scope)
        ids = batch.ids
        rows = batch.message_rows
        tokens = [uuid.uuid4().hex for _ in rows]
        prepared: list[tuple[Any, ...]] = []

        def message_rows() -> Iterator[tuple[Any, ...]]:
            # Stemmed a chunk at a time while the server takes in the rows before (the COPY
            # is sent by a thread of its own); kept, so that a retry stems nothing twice.
            yield from prepared
            for start in range(len(prepared), len(rows), IMPORT_CHUNK):
                chunk = self._message_rows(
                    rows[start : start + IMPORT_CHUNK], tokens[start : start + IMPORT_CHUNK]
                )
                prepared.extend(chunk)
                yield from chunk

        def write(conn: Any) -> tuple[int, int]:
            # Every id this import takes is above every id stored now.
            below = int(conn.execute("SELECT COALESCE(max(id), 0) FROM messages").fetchone()[0])
            clash = conn.execute("SELECT id FROM sessions WHERE id = ANY(%s) LIMIT 1", (ids,))
            found = clash.fetchone()
            if found is not None:
                raise session_exists_error(found[0], self.path)
            taken = conn.execute(
                "SELECT title, id FROM sessions WHERE title = ANY(%s) "
                f"AND {self.scope.sql()} LIMIT 1",
                ([title for title, _ in batch.titles], *self.scope.params()),
            ).fetchone()
            if taken is not None:
                raise title_taken_error(taken[0], taken[1], self.path)
            parents = {row[4] for row in batch.session_rows if row[4] is not None} - set(ids)
            for parent in sorted(parents):
                if not self.scope.sees(conn, parent):
                    raise missing_parent_error(parent, self.path)
            marks = ", ".join(["%s"] * 17)
            with conn.cursor() as cur:
                # Parents are linked after every row is in: a child may come before its parent.
                cur.executemany(
                    f"INSERT INTO sessions({IMPORT_SESSION_COLUMNS}) VALUES ({marks})",
                    [(*row[:4], None, *row[5:]) for row in batch.session_rows],
                )
                cur.executemany(
                    "UPDATE sessions SET parent_session_id = %s WHERE id = %s",
                    [(row[4], row[0]) for row in batch.session_rows if row[4] is not None],
                )
                for title, session_id in batch.titles:
                    self._set_title(conn, session_id, title)
                if rows:
                    from psycopg.copy import QueuedLibpqWriter

                    with cur.copy(_COPY_MESSAGES, writer=QueuedLibpqWriter(cur)) as copy:
                        for row in message_rows():
                            copy.write_row(row)
            return len(rows), below

        count, below = self._write(write)
        if count:
            # Committed: an indexer may have read past these ids meanwhile (pgsemantic.py).
            self._write_vectors(lambda conn: reopen_range(conn, below))
        self._analyze_after(count)
        return count

    def _analyze_after(self, imported: int) -> None:
        """``ANALYZE messages`` once this import, or the changes since the last ``ANALYZE``
        the server has counted, pass autovacuum's own threshold (50 + 10 % of the table):
        the planner and the search's statistics
        (:func:`~hermes_core.sessions.pgsearch.statistics`) then know a large import at
        once, with autovacuum off too. A failure is logged; the import stands."""
        if imported <= 0:
            return

        def analyze(conn: Any) -> bool:
            known, changed = conn.execute(_CHANGED_SINCE_ANALYZE).fetchone()
            if max(float(changed or 0), imported) < 50 + ANALYZE_SHARE * max(float(known or 0), 0):
                return False
            conn.execute("ANALYZE messages")
            return True

        try:
            if self._write(analyze):
                self._stats = None
        except SessionStoreError as exc:
            log.warning(
                "ANALYZE after an import into %s failed (%s); run it by hand", self.path, exc
            )

    # -- meta ------------------------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        """A value from ``state_meta``."""
        row = self._read(
            lambda conn: conn.execute(
                "SELECT value FROM state_meta WHERE key = %s", (key,)
            ).fetchone()
        )
        return None if row is None else row[0]

    def set_meta(self, key: str, value: str) -> None:
        """Insert or replace a ``state_meta`` value."""
        self._write(
            lambda conn: conn.execute(
                "INSERT INTO state_meta(key, value) VALUES (%s, %s) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, value),
            )
        )

    # -- reads -----------------------------------------------------------------------------------
    @staticmethod
    def _dicts(cursor: Any) -> list[dict[str, Any]]:
        names = [col.name for col in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    def get_session(self, session_id: str) -> dict[str, Any] | None:
        """The session's row as a dict, or ``None``."""

        def read(conn: Any) -> dict[str, Any] | None:
            rows = self._dicts(
                conn.execute(
                    f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE id = %s AND {self.scope.sql()}",
                    (session_id, *self.scope.params()),
                )
            )
            return rows[0] if rows else None

        return self._read(read)

    def resolve_session_id(self, prefix: str) -> str | None:
        """An exact id, else the one id starting with *prefix*."""
        if not prefix:
            return None
        if self._read(lambda conn: self.scope.sees(conn, prefix)):
            return prefix
        found = self.session_ids_starting_with(prefix, limit=2)
        return found[0] if len(found) == 1 else None

    def session_ids_starting_with(self, prefix: str, limit: int = 5) -> list[str]:
        """Up to *limit* session ids that start with *prefix* (case-sensitive), in id order."""
        return self._read(
            lambda conn: [
                row[0]
                for row in conn.execute(
                    f"SELECT id FROM sessions WHERE starts_with(id, %s) AND {self.scope.sql()} "
                    'ORDER BY id COLLATE "C" LIMIT %s',
                    (prefix, *self.scope.params(), int(limit)),
                )
            ]
        )

    def get_messages(self, session_id: str) -> list[dict[str, Any]]:
        """Every message of the session in order, ``tool_calls`` decoded."""

        def read(conn: Any) -> list[dict[str, Any]]:
            if not self.scope.sees(conn, session_id):
                return []
            cursor = conn.execute(
                f"SELECT {_MESSAGE_COLUMNS} FROM messages WHERE session_id = %s ORDER BY id",
                (session_id,),
            )
            return [decode_message(row) for row in self._dicts(cursor)]

        return self._read(read)

    def get_messages_as_conversation(self, session_id: str) -> list[dict[str, Any]]:
        """The session as OpenAI chat messages (leaked memory-context blocks removed)."""
        return as_conversation(self.get_messages(session_id))

    def message_count(self, session_id: str | None = None) -> int:
        """Messages in one session, or in the whole store (a scoped store: of its user)."""
        where = f"session_id IN (SELECT id FROM sessions WHERE {self.scope.sql()})"
        params: tuple[Any, ...] = self.scope.params()
        if session_id is not None:
            where, params = f"session_id = %s AND {where}", (session_id, *params)
        elif self.user_id is None:
            where = "TRUE"
        return self._read(
            lambda conn: int(
                conn.execute(f"SELECT COUNT(*) FROM messages WHERE {where}", params).fetchone()[0]
            )
        )

    def session_count(self, source: str | None = None) -> int:
        """Sessions in the store, optionally of one source."""
        where, params = self.scope.sql(), self.scope.params()
        if source is not None:
            where, params = f"{where} AND source = %s", (*params, source)
        return self._read(
            lambda conn: int(
                conn.execute(f"SELECT COUNT(*) FROM sessions WHERE {where}", params).fetchone()[0]
            )
        )

    # -- lineage and titles ---------------------------------------------------------------------
    @staticmethod
    def _next_in_chain(conn: Any, session_id: str) -> str | None:
        forks = " AND ".join(
            f"NOT (COALESCE(c.model_config, '') LIKE '%%\"{key}\"%%')" for key in _FORKS
        )
        row = conn.execute(
            "SELECT c.id FROM sessions AS c JOIN sessions AS p ON p.id = c.parent_session_id "
            "WHERE c.parent_session_id = %s AND p.end_reason = 'compression' "
            f"AND COALESCE(c.source, '') <> 'tool' AND {forks} "
            "ORDER BY (c.end_reason = 'compression') DESC NULLS LAST, "
            "(c.started_at >= COALESCE(p.ended_at, 0)) DESC, (c.ended_at IS NULL) DESC, "
            "c.started_at DESC, c.id DESC LIMIT 1",
            (session_id,),
        ).fetchone()
        return None if row is None else row[0]

    def _tip(self, conn: Any, session_id: str) -> str:
        current, seen = session_id, {session_id}
        for _ in range(MAX_HOPS):
            following = self._next_in_chain(conn, current)
            if following is None or following in seen:
                break
            current = following
            seen.add(current)
        return current

    def _chain(self, conn: Any, session_id: str, max_hops: int | None = MAX_HOPS) -> list[str]:
        hops = max_hops if max_hops is not None else 10**9
        back, seen, current = [session_id], {session_id}, session_id
        for _ in range(hops):
            row = conn.execute(
                "SELECT p.id, p.end_reason FROM sessions AS c JOIN sessions AS p "
                "ON p.id = c.parent_session_id WHERE c.id = %s",
                (current,),
            ).fetchone()
            if row is None or row[1] != "compression" or row[0] in seen:
                break
            if self._next_in_chain(conn, row[0]) != current:
                break
            back.append(row[0])
            seen.add(row[0])
            current = row[0]
        back.reverse()
        forward: list[str] = []
        current = session_id
        for _ in range(hops):
            following = self._next_in_chain(conn, current)
            if following is None or following in seen:
                break
            forward.append(following)
            seen.add(following)
            current = following
        return back + forward

    def get_compression_tip(self, session_id: str) -> str:
        """The newest compression continuation of *session_id* (itself if none)."""

        def read(conn: Any) -> str:
            if not self.scope.sees(conn, session_id):
                return session_id
            tip = self._tip(conn, session_id)
            return tip if self.scope.visible(conn, [tip]) else session_id

        return self._read(read)

    def get_lineage(self, session_id: str, *, whole: bool = False) -> list[str]:
        """The conversation *session_id* belongs to, root first."""

        def read(conn: Any) -> list[str]:
            if not self.scope.sees(conn, session_id):
                return [session_id]
            return self.scope.visible(
                conn, self._chain(conn, session_id, None if whole else MAX_HOPS)
            )

        return self._read(read)

    def _ancestors(self, conn: Any, session_id: str) -> list[str]:
        chain, seen, current = [session_id], {session_id}, session_id
        for _ in range(MAX_HOPS):
            row = conn.execute(
                "SELECT parent_session_id FROM sessions WHERE id = %s", (current,)
            ).fetchone()
            if row is None or not row[0] or row[0] in seen:
                break
            chain.append(row[0])
            seen.add(row[0])
            current = row[0]
        chain.reverse()
        return chain

    def get_lineage_root(self, session_id: str) -> str:
        """The root of *session_id*'s tree of sessions (of this store's user)."""

        def read(conn: Any) -> str:
            if not self.scope.sees(conn, session_id):
                return session_id
            chain = self._ancestors(conn, session_id)
            return owned_root(chain, set(self.scope.visible(conn, chain)), session_id)

        return self._read(read)

    def get_lineage_members(self, session_id: str) -> set[str]:
        """Every session in *session_id*'s tree."""
        root = self.get_lineage_root(session_id)

        def read(conn: Any) -> set[str]:
            if not self.scope.sees(conn, session_id):
                return {session_id}
            rows = conn.execute(
                "WITH RECURSIVE tree(id) AS (SELECT %s::text UNION "
                "SELECT s.id FROM sessions AS s JOIN tree ON s.parent_session_id = tree.id) "
                "SELECT id FROM tree",
                (root,),
            ).fetchall()
            return set(self.scope.visible(conn, [row[0] for row in rows])) | {session_id}

        return self._read(read)

    def next_title_in_lineage(self, title: str) -> str:
        """The next free numbered title: ``X`` → ``X #2`` → ``X #3``."""
        base, _ = split_number(title)

        def read(conn: Any) -> list[str]:
            return [
                row[0]
                for row in conn.execute(
                    "SELECT title FROM sessions WHERE (title = %s OR starts_with(title, %s)) "
                    f"AND {self.scope.sql()}",
                    (base, base + " #", *self.scope.params()),
                )
            ]

        return next_title_from(title, self._read(read))

    def get_session_by_title(self, title: str) -> dict[str, Any] | None:
        """The session with exactly this title, or ``None``."""
        rows = self._read(
            lambda conn: self._dicts(
                conn.execute(
                    f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE title = %s "
                    f"AND {self.scope.sql()} ORDER BY user_id IS NOT NULL, id LIMIT 1",
                    (title, *self.scope.params()),
                )
            )
        )
        return rows[0] if rows else None

    # -- listing ------------------------------------------------------------------------------
    def _list_sessions(self, listing: Listing) -> list[dict[str, Any]]:
        """Recent sessions with ``preview`` and ``last_active`` (as for SQLite)."""
        limit, offset, source = listing.limit, listing.offset, listing.source
        exclude_sources, collapse_lineage = listing.exclude_sources, listing.collapse_lineage
        active_since, active_until = listing.active_since, listing.active_until
        order_by_last_active = listing.order_by_last_active
        where = [self.scope.sql("s")]
        params: list[Any] = list(self.scope.params())
        if source is not None:
            where.append("s.source = %s")
            params.append(source)
        if exclude_sources:
            where.append("NOT s.source = ANY(%s)")
            params.append(list(exclude_sources))
        if active_until is not None:
            where.append("s.started_at < %s")
            params.append(float(active_until))
        if collapse_lineage:
            forks = " OR ".join(
                f"COALESCE(s.model_config, '') LIKE '%%\"{k}\"%%'" for k in _FORKS[1:]
            )
            where.append(
                "(s.parent_session_id IS NULL OR p.id IS NULL OR p.end_reason = 'branched' "
                f"OR {forks})"
            )
        activity = (
            "COALESCE(s.last_activity_at, (SELECT MAX(timestamp) FROM messages "
            "WHERE session_id = s.id), s.started_at)"
        )

        def read(conn: Any) -> list[dict[str, Any]]:
            sql = (
                f"SELECT s.id FROM sessions AS s LEFT JOIN sessions AS p "
                f"ON p.id = s.parent_session_id WHERE {' AND '.join(where)}"
            )
            candidates = [row[0] for row in conn.execute(sql, params)]
            results = []
            for session_id in candidates:
                row = self._dicts(
                    conn.execute(
                        f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE id = %s", (session_id,)
                    )
                )[0]
                chain = [session_id]
                if collapse_lineage and row.get("end_reason") == "compression":
                    tip = self._tip(conn, session_id)
                    if tip != session_id:
                        chain = self._chain(conn, tip)
                        tip_row = self._dicts(
                            conn.execute(
                                f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE id = %s", (tip,)
                            )
                        )[0]
                        for key in (
                            "id",
                            "ended_at",
                            "end_reason",
                            "message_count",
                            "tool_call_count",
                            "model",
                            "system_prompt",
                        ):
                            row[key] = tip_row[key]
                        row["title"] = tip_row.get("title") or row["title"]
                        row["lineage_root_id"] = session_id
                        row["lineage_ids"] = chain
                last = conn.execute(
                    f"SELECT MAX({activity}) FROM sessions AS s WHERE s.id = ANY(%s)", (chain,)
                ).fetchone()[0]
                row["last_active"] = last
                row["_root_started"] = row["started_at"]
                results.append(row)
            if active_since is not None:
                results = [r for r in results if (r["last_active"] or 0) >= float(active_since)]
            key = "last_active" if order_by_last_active else "_root_started"
            results.sort(
                key=lambda r: (r[key] or 0, r.get("lineage_root_id") or r["id"]), reverse=True
            )
            page = results[max(0, int(offset)) : max(0, int(offset)) + int(limit)]
            for row in page:
                row.pop("_root_started")
                row["preview"] = self._preview(conn, row["id"])
            return page

        return self._read(read)

    @staticmethod
    def _preview(conn: Any, session_id: str) -> str:
        for (content,) in conn.execute(
            "SELECT content FROM messages WHERE session_id = %s AND role = 'user' "
            "ORDER BY id LIMIT 8",
            (session_id,),
        ):
            text = " ".join((content or "").split()) if isinstance(content, str) else ""
            if not text or text.startswith(_HANDOFF_PREFIXES):
                continue
            return text if len(text) <= PREVIEW_CHARS else text[:PREVIEW_CHARS] + "..."
        return ""

    def last_activity(self) -> float | None:
        """The latest session start or activity on record (epoch seconds)."""
        row = self._read(
            lambda conn: conn.execute(
                "SELECT MAX(GREATEST(started_at, COALESCE(last_activity_at, started_at))) "
                f"FROM sessions WHERE {self.scope.sql()}",
                self.scope.params(),
            ).fetchone()
        )
        return None if row is None or row[0] is None else float(row[0])

    # -- maintenance -------------------------------------------------------------------------
    def check(self) -> list[str]:
        """What is wrong with the database, one sentence each (PostgreSQL keeps its own
        integrity; this checks the full-text index: missing, or invalid after a concurrent
        build cut short). :meth:`index_findings` has these with the warnings too."""
        return [f.text for f in self.index_findings() if f.level == "problem"]

    def index_findings(self) -> list[IndexFinding]:
        """What is wrong with the search indexes (:mod:`~hermes_core.sessions.pgindexes`):
        problems (searches read every message) and warnings, each with what to do."""
        return self._read(index_findings)

    def probe(self) -> list[str]:
        """What stops the commands at once; ``[]`` when the database answers."""
        return self.check()

    def _open_index(self) -> PgSemanticIndex:
        exists = self._read(
            lambda conn: conn.execute("SELECT to_regclass('message_vectors')").fetchone()[0]
        )
        if exists is None:
            raise ConfigError(
                f"{self.path} has no table message_vectors yet (a schema before version 5); "
                "open it once with a writable store (any hermes-memory command that writes) "
                "to migrate it."
            )
        cache = None
        try:
            cache = VectorCache(self.url, model_name())
        except HermesMemoryError as exc:  # no usable HERMES_HOME: every vector from the server
            log.info("no local copy of the message vectors (%s)", exc)
        return PgSemanticIndex(
            self.url, self._read, self._write_vectors, self.path, self.user_id, cache=cache
        )

    def _write_vectors(self, fn: Callable[[Any], T]) -> T:
        """Write message vectors, even through a store opened read-only: as ``state.db``'s
        sidecar, they are a cache derived from the messages, which stay unchanged."""
        if getattr(self._snapshot, "conn", None) is not None:
            raise SessionStoreError(f"{self.path} is being read as a snapshot; write later.")
        return self._run(fn, write=False)

    def _count_not_embedded(self) -> int:
        return count_not_embedded(self._read)

    # -- search ----------------------------------------------------------------------------
    def _search(
        self, query: object, filters: SearchFilters, page: SearchPage
    ) -> list[dict[str, Any]]:
        """Messages matching *query*, best first; never raises for a query string."""
        limit, offset, context, snippets = page.limit, page.offset, page.context, page.snippets
        index = None
        if page.semantic is not False:
            index = self._meaning_index(query, force=page.semantic is True)
        parsed = parse_query(query)
        if parsed.empty or limit <= 0:
            return []
        need = offset + limit
        if isinstance(index, PgSemanticIndex):
            index.refresh(self._read)  # the rows added since: before the search's statements

        def read(conn: Any) -> list[dict[str, Any]]:
            nearest = None if index is None else self._nearest(index, conn)
            plan, rows = pgsearch.search_rows(
                conn, parsed, need, filters, self._statistics, nearest, self._reads_passages()
            )
            page = rows[offset:need]
            if not page:
                return []
            ids = list({row[3] for row in page})
            sessions = {
                row[0]: (row[1], row[2], row[3], row[4])
                for row in conn.execute(
                    "SELECT id, source, model, started_at, title FROM sessions WHERE id = ANY(%s)",
                    (ids,),
                )
            }
            # Keyword hits mark every term, as FTS5's snippet() does for state.db.
            hits = hit_dicts(
                page,
                sessions,
                plan.primary.terms,
                snippets,
                offset,
                mark_every=plan.mode != "question",
            )
            if context:
                for hit in hits:
                    hit["context"] = self._context(conn, hit)
            return hits

        try:
            return self._read(read)
        except SessionStoreError as exc:
            if isinstance(exc.__cause__, self._psycopg.OperationalError):
                raise
            log.warning(
                "search for %r failed in PostgreSQL (%s); returning no hits", parsed.text, exc
            )
            return []

    def _nearest(self, index: Any, conn: Any) -> Nearest:
        """Semantic neighbours read on the search's connection *conn*."""

        def nearest(text: str, k: int) -> list[int]:
            try:
                return list(index.nearest(lambda fn: fn(conn), text, k))
            except self._psycopg.Error:
                raise  # the transaction failed: the store's read retries or reports it
            except Exception as exc:  # the encoder: full-text hits still answer
                log.warning("semantic search failed (%s); using full-text search only", exc)
                return []

        return nearest

    def _statistics(self, conn: Any) -> pgsearch.Statistics:
        """BM25's statistics (:func:`~hermes_core.sessions.pgsearch.statistics`), re-read every
        :data:`STATISTICS_SECONDS`."""
        now = time.monotonic()
        if self._stats is None or now - self._stats[0] > STATISTICS_SECONDS:
            self._stats = (now, pgsearch.statistics(conn))
        return self._stats[1]

    @staticmethod
    def _context(conn: Any, hit: dict[str, Any]) -> list[dict[str, str]]:
        rows = conn.execute(
            "(SELECT id, role, left(content, 200) FROM messages WHERE session_id = %s AND id < %s "
            "ORDER BY id DESC LIMIT 1) UNION ALL "
            "(SELECT id, role, left(content, 200) FROM messages WHERE id = %s) UNION ALL "
            "(SELECT id, role, left(content, 200) FROM messages WHERE session_id = %s AND id > %s "
            "ORDER BY id LIMIT 1)",
            (hit["session_id"], hit["id"], hit["id"], hit["session_id"], hit["id"]),
        ).fetchall()
        return [
            {"role": role, "content": text or ""}
            for _, role, text in sorted(rows, key=itemgetter(0))
        ]


_UPSERT_SESSION = for_postgres(UPSERT_SESSION)
_SESSION_TITLE_HOLDER = for_postgres(SESSION_TITLE_HOLDER)
_SESSION_COLUMNS = (
    "id, source, user_id, model, model_config, system_prompt, parent_session_id, started_at, "
    "ended_at, end_reason, message_count, tool_call_count, input_tokens, output_tokens, title, "
    "last_activity_at, cwd, git_repo_root"
)
_MESSAGE_COLUMNS = (
    "id, session_id, role, timestamp, tool_name, name, tool_call_id, token_count, "
    "finish_reason, content, content_parts, tool_calls"
)
_MESSAGE_INSERT_COLUMNS = (
    "session_id, role, content, content_parts, tool_call_id, tool_calls, tool_name, timestamp, "
    "token_count, finish_reason, name, client_token, search_text, cjk_grams, stems"
)
_INSERT_MESSAGE = (
    f"INSERT INTO messages({_MESSAGE_INSERT_COLUMNS}) "
    f"VALUES ({', '.join(['%s'] * 15)}) RETURNING id"
)
_COPY_MESSAGES = f"COPY messages({_MESSAGE_INSERT_COLUMNS}) FROM STDIN"
_CHANGED_SINCE_ANALYZE = (
    "SELECT c.reltuples, s.n_mod_since_analyze FROM pg_class AS c "
    "LEFT JOIN pg_stat_user_tables AS s ON s.relid = c.oid WHERE c.oid = to_regclass('messages')"
)
