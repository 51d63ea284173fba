"""Moving a session store to another backend: ``state.db`` → PostgreSQL, or back.

:func:`migrate_store` copies every session row (all columns) and every message
(its id kept, so ids in logs and exports still name the same message) into an
empty target, all or nothing:

* PostgreSQL: one transaction; a target holding sessions is refused;
* a SQLite file: written beside the target as ``<name>.migrating`` and renamed
  into place once verified; an existing target file is refused.

Then it verifies: the session and message counts match, and a sample of
messages is found in the target by searching a word of each.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes_core.errors import SessionStoreError
from hermes_core.sessions.backends import open_session_store
from hermes_core.sessions.batchinsert import insert_rows
from hermes_core.sessions.postgres import PostgresSessionStore, is_postgres_url, masked_url
from hermes_core.sessions.store import MESSAGE_COLUMNS as STORE_MESSAGE_COLUMNS
from hermes_core.sessions.store import SessionStore

__all__ = ["SESSION_COLUMNS", "MigrationReport", "migrate_store"]

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
    "message_count",
    "tool_call_count",
    "input_tokens",
    "output_tokens",
    "title",
    "last_activity_at",
    "cwd",
    "git_repo_root",
)
MESSAGE_COLUMNS = ("id", *STORE_MESSAGE_COLUMNS)
"""Read in this order; after ``id`` it is the row layout the stores insert."""
BATCH = 5_000
SAMPLE_SEARCHES = 20
VERIFY_LIMIT = 200
"""Hits asked of each sample search; a sample whose word fills them is inconclusive."""
_WORD = re.compile(r"[^\W\d_]{5,}")


@dataclass(frozen=True)
class MigrationReport:
    """What a migration copied and checked."""

    source: str
    target: str
    sessions: int
    messages: int
    searches_checked: int


def _select(columns: tuple[str, ...], present: frozenset[str] | None, table: str) -> str:
    chosen = [c if present is None or c in present else f"NULL AS {c}" for c in columns]
    return f"SELECT {', '.join(chosen)} FROM {table} ORDER BY id"


def _read_rows(store: Any, table: str, columns: tuple[str, ...]) -> Iterator[list[tuple[Any, ...]]]:
    """Batches of *table*'s rows of *store* (either backend), in id order."""
    present: frozenset[str] | None = None
    mark = "%s"
    if isinstance(store, SessionStore):
        layout = store.layout
        present = layout.session_columns if table == "sessions" else layout.message_columns
        mark = "?"
    sql = _select(columns, present, table)
    first = sql.replace(" ORDER BY id", f" ORDER BY id LIMIT {BATCH}")
    after = sql.replace(" ORDER BY id", f" WHERE id > {mark} ORDER BY id LIMIT {BATCH}")
    last: Any = None
    while True:

        def read(conn: Any, last: Any = last) -> list[Any]:
            rows: list[Any] = (
                conn.execute(first) if last is None else conn.execute(after, (last,))
            ).fetchall()
            return rows

        rows = store._read(read)
        if not rows:
            return
        yield [tuple(row) for row in rows]
        last = rows[-1][0]


def _copy_to_postgres(source: Any, target: PostgresSessionStore) -> tuple[int, int]:
    sessions = [row for batch in _read_rows(source, "sessions", SESSION_COLUMNS) for row in batch]

    def write(conn: Any) -> tuple[int, int]:
        if conn.execute("SELECT EXISTS (SELECT 1 FROM sessions)").fetchone()[0]:
            raise SessionStoreError(
                f"{target.path} already holds sessions; migrate into an empty database (or a "
                "new schema) so nothing is mixed or half-copied."
            )
        columns = ", ".join(SESSION_COLUMNS)
        with conn.cursor() as cur:
            with cur.copy(f"COPY sessions({columns}) FROM STDIN") as copy:
                for row in sessions:
                    copy.write_row((*row[:6], None, *row[7:]))
            cur.executemany(
                "UPDATE sessions SET parent_session_id = %s WHERE id = %s",
                [(row[6], row[0]) for row in sessions if row[6] is not None],
            )
            count = 0
            insert = (
                "COPY messages(id, session_id, role, content, content_parts, tool_call_id, "
                "tool_calls, tool_name, timestamp, token_count, finish_reason, name, "
                "client_token, search_text, cjk_grams, stems) FROM STDIN"
            )
            with cur.copy(insert) as copy:
                for batch in _read_rows(source, "messages", MESSAGE_COLUMNS):
                    prepared = target._message_rows(
                        [row[1:] for row in batch], [f"migrated-{row[0]}" for row in batch]
                    )
                    for row, values in zip(batch, prepared, strict=True):
                        copy.write_row((row[0], *values))
                    count += len(batch)
            cur.execute(
                "SELECT setval(pg_get_serial_sequence('messages', 'id'), "
                "COALESCE((SELECT MAX(id) FROM messages), 0) + 1, false)"
            )
            # The planner's statistics of the copy (autovacuum may be off, or not there yet):
            # without them it misjudges every search, and the search reads common words'
            # frequencies from them.
            cur.execute("ANALYZE sessions, messages")
        return len(sessions), count

    return target._write(write)


def _copy_to_sqlite(source: Any, target: SessionStore) -> tuple[int, int]:
    sessions = [row for batch in _read_rows(source, "sessions", SESSION_COLUMNS) for row in batch]

    def write(conn: Any) -> tuple[int, int]:
        marks = ", ".join("?" for _ in SESSION_COLUMNS)
        conn.executemany(
            f"INSERT INTO sessions({', '.join(SESSION_COLUMNS)}) VALUES ({marks})",
            [(*row[:6], None, *row[7:]) for row in sessions],
        )
        conn.executemany(
            "UPDATE sessions SET parent_session_id = ? WHERE id = ?",
            [(row[6], row[0]) for row in sessions if row[6] is not None],
        )
        count = 0
        for batch in _read_rows(source, "messages", MESSAGE_COLUMNS):
            insert_rows(conn, "messages", MESSAGE_COLUMNS, batch)
            count += len(batch)
        return len(sessions), count

    copied = target._write(write)
    target.drain_gram_backlog()  # the CJK rows the copy queued, a batch per transaction
    return copied


def _samples(source: Any, total: int) -> list[tuple[int, str, str]]:
    """Up to :data:`SAMPLE_SEARCHES` (message id, session id, a word of it), spread evenly."""
    picked: list[tuple[int, str, str]] = []
    step = max(1, total // (SAMPLE_SEARCHES * 2))
    seen = 0
    for batch in _read_rows(source, "messages", MESSAGE_COLUMNS):
        for row in batch:
            seen += 1
            if seen % step or len(picked) >= SAMPLE_SEARCHES:
                continue
            content = row[3] if isinstance(row[3], str) else ""
            words = _WORD.findall(content)
            if words:
                picked.append((row[0], row[1], max(words, key=len)))
    return picked


def _verify(source: Any, target: Any, sessions: int, messages: int) -> int:
    counts = (target.session_count(), target.message_count())
    if counts != (sessions, messages):
        raise SessionStoreError(
            f"The copy holds {counts[0]} sessions and {counts[1]} messages, not the {sessions} "
            f"and {messages} read; it was removed. Retry; report it if it happens again."
        )
    checked = 0
    for message_id, session_id, word in _samples(source, messages):
        hits = target.search_messages(
            word, session_ids=[session_id], limit=VERIFY_LIMIT, snippets=False
        )
        if message_id in {hit["id"] for hit in hits}:
            checked += 1
            continue
        if len(hits) >= VERIFY_LIMIT:
            # The word is too common in that session to tell; this sample proves nothing.
            continue
        raise SessionStoreError(
            f"Message {message_id} of session {session_id!r} is in the copy but a search "
            f"for {word!r} does not find it there; the copy was removed."
        )
    return checked


def migrate_store(
    source: str | os.PathLike[str],
    target: str | os.PathLike[str],
    *,
    progress: Callable[[str], None] | None = None,
) -> MigrationReport:
    """Copy the whole store at *source* into the empty store at *target* and verify it.

    Either may be a ``state.db`` path or a ``postgresql://`` URL. Raises
    :class:`SessionStoreError` (nothing is left at the target) when the target is
    not empty, or the copy does not verify.
    """
    say = progress or (lambda text: None)
    if str(source) == str(target):
        raise SessionStoreError("The source and the target are the same store; name another.")
    with open_session_store(source, read_only=True, semantic="off") as src:
        source_name = masked_url(str(source)) if is_postgres_url(source) else str(source)
        if is_postgres_url(target):
            with PostgresSessionStore(str(target)) as dst:
                say(f"Copying into {dst.path}")
                sessions, messages = _copy_to_postgres(src, dst)
                try:
                    checked = _verify(src, dst, sessions, messages)
                except SessionStoreError:
                    dst._write(lambda conn: conn.execute("TRUNCATE messages, sessions"))
                    raise
                return MigrationReport(source_name, dst.path, sessions, messages, checked)
        path = Path(target)
        if path.exists() or path.is_symlink():
            raise SessionStoreError(
                f"{path} already exists; migrate into a new file so nothing is mixed or "
                "half-copied."
            )
        partial = path.with_name(path.name + ".migrating")
        leftovers = [partial, *(partial.with_name(partial.name + end) for end in ("-wal", "-shm"))]
        for leftover in leftovers:
            leftover.unlink(missing_ok=True)
        try:
            with SessionStore(partial, semantic="off") as dst:
                say(f"Copying into {path}")
                sessions, messages = _copy_to_sqlite(src, dst)
                checked = _verify(src, dst, sessions, messages)
                dst._truncate_wal()  # every page in the file itself before it is moved
            os.replace(partial, path)
        finally:
            for leftover in leftovers:
                leftover.unlink(missing_ok=True)
        return MigrationReport(source_name, str(path), sessions, messages, checked)
