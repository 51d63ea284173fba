"""Filling the CJK gram index from its queue.

Triggers cannot tokenise, so an insert or update of a row holding CJK text
only queues its id in ``messages_cjk_pending``; :func:`drain_gram_queue` then
turns the queued rows into gram tokens (:func:`~hermes_core.sessions.cjk.cjk_grams`)
in the same write transaction: its own rows, and a bounded number of others
(:data:`WRITE_BACKLOG`). A file written by another program, or upgraded to
version 7, may hold many queued rows; the store drains them in batches when it
opens the file for writing, and meanwhile every reader still finds them by a
``LIKE`` over the queue.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping

from hermes_core.sessions.cjk import LONGEST_GRAM, cjk_grams
from hermes_core.sessions.connection import lenient_text
from hermes_core.sessions.schema import indexed_name_sql

__all__ = [
    "WRITE_BACKLOG",
    "drain_gram_queue",
    "gram_text_sql",
    "queued_gram_rows",
    "tool_calls_text",
]


def gram_text_sql(row: str, speaker: bool = True) -> str:
    """The columns of message *row* the gram index reads: text, name, tool calls.

    The name is the tool's, else the speaker's (*speaker*: the file has the
    ``name`` column, added in schema version 3).
    """
    name = indexed_name_sql(row) if speaker else f"{row}.tool_name"
    return f"{row}.content, {name}, {row}.tool_calls"


def _decoded(text: str) -> object:
    """*text* parsed as JSON when it is a JSON object or array, else *text* itself."""
    if not text.lstrip().startswith(("{", "[")):
        return text
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return text


def tool_calls_text(raw: str | None) -> str:
    """Every string inside a stored ``tool_calls`` JSON value, space-separated.

    Arguments stored as JSON text are decoded too, so CJK a client wrote as
    ``\\uXXXX`` escapes (``json.dumps``' default) is seen as the letters it is.
    """
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except (ValueError, RecursionError):
        return raw or ""
    if isinstance(value, str) or value is None:
        return value or ""
    strings: list[str] = []

    pending = [value]  # an explicit stack: any nesting depth the JSON reader accepted
    while pending:
        node = pending.pop()
        if isinstance(node, str):
            inner = _decoded(node)
            if isinstance(inner, str):
                strings.append(inner)
            else:
                pending.append(inner)
        elif isinstance(node, Mapping):
            pending.extend(reversed([*node.keys(), *node.values()]))
        elif isinstance(node, list):
            pending.extend(reversed(node))
    return " ".join(strings)


WRITE_BACKLOG = 200
"""Queued rows of others a write tokenises besides its own (a few milliseconds of work).

A write never takes the whole queue: an upgrade queues every CJK row of the store, and
tokenising them all inside one append would hold the write lock for as long as the
upgrade's batches together. Bounded, a long-running writer still finishes a queue an
interrupted upgrade left, a little per write.
"""


def drain_gram_queue(conn: sqlite3.Connection, limit: int, *, own_from: int | None = None) -> int:
    """Tokenise rows queued for the CJK gram index (inside a write transaction).

    Takes every queued row whose id is *own_from* or above (the rows this write has just
    inserted: ids only grow, and the write lock keeps other writers out) and at most
    *limit* of the other queued rows, the oldest first; the rest stay queued, and search
    still finds them. Returns how many rows were taken off the queue.
    """
    if conn.execute("SELECT 1 FROM messages_cjk_pending LIMIT 1").fetchone() is None:
        return 0
    select = (
        f"SELECT q.id, {gram_text_sql('m')} FROM messages_cjk_pending AS q "
        "LEFT JOIN messages AS m ON m.id = q.id"
    )
    with lenient_text(conn):  # a row another program wrote as non-UTF-8 must not stop writes
        rows = []
        if own_from is not None:
            rows += conn.execute(f"{select} WHERE q.id >= ?", (own_from,)).fetchall()
        older = "" if own_from is None else " WHERE q.id < ?"
        rows += conn.execute(
            f"{select}{older} ORDER BY q.id LIMIT ?",
            (limit,) if own_from is None else (own_from, limit),
        ).fetchall()
    entries = [
        (mid, grams)
        for mid, content, name, tool_calls in rows
        if (grams := cjk_grams((content, name, tool_calls_text(tool_calls)), LONGEST_GRAM))
    ]
    conn.executemany(
        "INSERT OR REPLACE INTO messages_cjk_grams(rowid, grams) VALUES (?, ?)", entries
    )
    conn.executemany("DELETE FROM messages_cjk_pending WHERE id = ?", [(r[0],) for r in rows])
    return len(rows)


def queued_gram_rows(conn: sqlite3.Connection) -> int:
    """How many rows wait in the CJK gram index's queue (the file must have one)."""
    return int(conn.execute("SELECT count(*) FROM messages_cjk_pending").fetchone()[0])
