"""Checking a ``state.db`` and rebuilding its full-text indexes.

Full-text indexes are derived data: when one drifts from ``messages`` (a crash
of an old writer, a file copied mid-write, a disk error) search quietly misses
rows or fails with "database disk image is malformed". :func:`check_database`
says what is wrong without changing anything (:func:`probe_database` is its
quick version, reading one row of each table); :func:`rebuild_indexes` rebuilds
the word and trigram indexes of a hermes-memory file from ``messages`` in one
transaction, so that part is all or nothing and other processes wait on the usual
write lock, and queues every CJK row for the gram index, which the store then
fills in batches (both read the whole file: on a large history, run them while
agents are idle).

Both work on rows: an index lacking a message, or holding one that is gone,
is reported with a count. FTS5's own ``integrity-check`` of an index's
structure needs a writable connection; on a file written by Hermes Agent
(read-only, its indexes built by rules of its own) only SQLite's
``quick_check`` runs.
"""

from __future__ import annotations

import sqlite3

from hermes_core.sessions.cjk import cjk_grams
from hermes_core.sessions.connection import is_busy
from hermes_core.sessions.gramqueue import gram_text_sql, tool_calls_text
from hermes_core.sessions.layout import GRAM_INDEX, TRIGRAM_INDEX, WORD_INDEX, Layout
from hermes_core.sessions.schema import TEXT_COLUMNS, apply_schema, has_cjk_sql, queue_cjk_rows

__all__ = [
    "OUR_INDEXES",
    "check_database",
    "index_rows",
    "probe_database",
    "rebuild_indexes",
]

OUR_INDEXES = (WORD_INDEX, TRIGRAM_INDEX, GRAM_INDEX)
"""The full-text indexes of a hermes-memory ``state.db``."""

_EXTERNAL_CONTENT = (WORD_INDEX, TRIGRAM_INDEX)
"""Indexes over a view of ``messages`` (``<name>_src``), filled from it."""
_COLUMNS = "content, tool_name, tool_calls"


def check_database(conn: sqlite3.Connection, layout: Layout, *, deep: bool) -> list[str]:
    """What is wrong with the file behind *conn*, one sentence each (``[]`` when healthy).

    Every check reads; *deep* (a writable connection to a hermes-memory file)
    adds FTS5's own ``integrity-check`` of each index's internal structure,
    which SQLite runs as a write statement.
    """
    problems: list[str] = []
    try:
        problems += [
            f"SQLite quick_check: {row[0]}"
            for row in conn.execute("PRAGMA quick_check")
            if row[0] != "ok"
        ]
        if not layout.ours:
            return problems
        for name in OUR_INDEXES:
            if name not in layout.indexes:
                problems.append(f"full-text index {name} is missing or unreadable")
                continue
            if deep:
                try:
                    conn.execute(f"INSERT INTO {name}({name}) VALUES ('integrity-check')")
                except sqlite3.DatabaseError as exc:
                    if is_busy(exc):
                        raise  # another writer, not damage
                    problems.append(f"full-text index {name} is damaged ({exc})")
                    continue
            problems += (
                _drift(conn, name) if name in _EXTERNAL_CONTENT else _gram_problems(conn, layout)
            )
    except sqlite3.DatabaseError as exc:
        if is_busy(exc):
            raise
        problems.append(f"reading the file failed: {exc}; the checks after it did not run")
    return problems


def probe_database(conn: sqlite3.Connection, layout: Layout) -> list[str]:
    """What stops the commands at once, one sentence each (``[]``: nothing found).

    Reads the first row of each table a command reads on every run and, on a
    hermes-memory file, looks for each full-text index; damage deeper in a
    table is found by :func:`check_database`, which reads everything.
    """
    tables = ["sessions", "messages"] + (
        ["messages_cjk_pending"] if layout.has_pending_grams else []
    )
    problems = []
    for table in tables:
        try:
            conn.execute(f"SELECT * FROM {table} LIMIT 1").fetchall()
        except sqlite3.DatabaseError as exc:
            if is_busy(exc):
                raise
            problems.append(f"table {table} cannot be read ({exc})")
    if layout.ours:
        problems += [
            f"full-text index {name} is missing or unreadable"
            for name in OUR_INDEXES
            if name not in layout.indexes
        ]
    return problems


def _drift(conn: sqlite3.Connection, name: str) -> list[str]:
    """Rows an index over a view of ``messages`` lacks, or holds but should not."""
    # Each indexed row has one entry in the index's docsize table.
    missing = conn.execute(
        f"SELECT count(*) FROM {name}_src WHERE id NOT IN (SELECT id FROM {name}_docsize)"
    ).fetchone()[0]
    stray = conn.execute(
        f"SELECT count(*) FROM {name}_docsize WHERE id NOT IN (SELECT id FROM {name}_src)"
    ).fetchone()[0]
    problems = []
    if missing:
        problems.append(f"full-text index {name} lacks {missing} messages")
    if stray:
        problems.append(f"full-text index {name} holds {stray} deleted or excluded messages")
    return problems


def _gram_problems(conn: sqlite3.Connection, layout: Layout) -> list[str]:
    """Rows the gram index lacks or holds wrongly (it is filled by Python, not FTS5)."""
    speaker = "name" in layout.message_columns  # a read-only file older than version 3 lacks it
    columns = tuple(c for c in TEXT_COLUMNS if speaker or c != "name")
    escaped = layout.version >= 4  # older files never indexed CJK written as \uXXXX
    problems = []
    stray = conn.execute(
        f"SELECT count(*) FROM {GRAM_INDEX} WHERE rowid NOT IN (SELECT id FROM messages)"
    ).fetchone()[0]
    if stray:
        problems.append(f"full-text index {GRAM_INDEX} holds {stray} deleted or excluded messages")
    candidates = conn.execute(
        f"SELECT {gram_text_sql('m', speaker)} FROM messages AS m WHERE "
        f"({has_cjk_sql('m', columns, escaped)}) AND m.id NOT IN (SELECT rowid FROM {GRAM_INDEX}) "
        "AND m.id NOT IN (SELECT id FROM messages_cjk_pending)"
    )
    missing = sum(1 for row in candidates if cjk_grams((row[0], row[1], tool_calls_text(row[2]))))
    if missing:
        problems.append(f"full-text index {GRAM_INDEX} lacks {missing} messages with CJK text")
    return problems


def rebuild_indexes(conn: sqlite3.Connection) -> None:
    """Drop, recreate and refill the full-text indexes (inside a write transaction).

    Dropping first also clears an index whose own pages are damaged, which no
    in-place rebuild could read. The word and trigram indexes are refilled here; the
    gram index is left empty with every CJK row queued, for the store to tokenise in
    batches (:func:`~hermes_core.sessions.opening.drain_in_batches`): one transaction
    tokenising every CJK row would hold the write lock that much longer.
    """
    for name in OUR_INDEXES:
        conn.execute(f"DROP TABLE IF EXISTS {name}")
    apply_schema(conn)  # recreates them, empty
    for name in _EXTERNAL_CONTENT:
        # What the insert triggers do row by row (FTS5's 'rebuild' cannot read
        # these views: their tool_calls column is a json_each subquery).
        conn.execute(f"INSERT INTO {name}(rowid, {_COLUMNS}) SELECT id, {_COLUMNS} FROM {name}_src")
    conn.execute("DELETE FROM messages_cjk_pending")  # rows of deleted messages go too
    queue_cjk_rows(conn)


def index_rows(conn: sqlite3.Connection) -> dict[str, int]:
    """The rows each full-text index of a hermes-memory file holds."""
    return {
        name: conn.execute(f"SELECT count(*) FROM {name}_docsize").fetchone()[0]
        for name in OUR_INDEXES
    }
