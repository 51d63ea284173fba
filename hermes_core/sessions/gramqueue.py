"""Filling the CJK gram index from its queue.

Triggers cannot tokenise, so an insert or update of a row holding CJK text
only queues its id in ``messages_cjk_pending``; :func:`drain_gram_queue` then
turns the queued rows into gram tokens (:func:`~hermes_core.sessions.cjk.cjk_grams`)
in the same write transaction. A file written by another program may hold
queued rows; the store drains them when it opens the file for writing, and a
read-only reader still finds them by a ``LIKE`` over the queue.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping

from hermes_core.sessions.cjk import LONGEST_GRAM, cjk_grams
from hermes_core.sessions.connection import lenient_text
from hermes_core.sessions.schema import indexed_name_sql

__all__ = ["drain_gram_queue", "gram_text_sql", "tool_calls_text"]


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


def drain_gram_queue(conn: sqlite3.Connection, limit: int | None = None) -> int:
    """Tokenise rows queued for the CJK gram index (inside a write transaction).

    *limit* bounds how many queued rows (the oldest first) this call takes; the
    rest stay queued. Returns how many rows were taken off the queue.
    """
    if conn.execute("SELECT 1 FROM messages_cjk_pending LIMIT 1").fetchone() is None:
        return 0
    bound = "" if limit is None else f" ORDER BY q.id LIMIT {int(limit)}"
    with lenient_text(conn):  # a row another program wrote as non-UTF-8 must not stop writes
        rows = conn.execute(
            f"SELECT q.id, {gram_text_sql('m')} FROM messages_cjk_pending AS q "
            f"LEFT JOIN messages AS m ON m.id = q.id{bound}"
        ).fetchall()
    entries = [
        (mid, grams)
        for mid, content, name, tool_calls in rows
        if (grams := cjk_grams((content, name, tool_calls_text(tool_calls)), LONGEST_GRAM))
    ]
    conn.executemany(
        "INSERT OR REPLACE INTO messages_cjk_grams(rowid, grams) VALUES (?, ?)", entries
    )
    if limit is None:
        conn.execute("DELETE FROM messages_cjk_pending")
    else:
        conn.executemany("DELETE FROM messages_cjk_pending WHERE id = ?", [(r[0],) for r in rows])
    return len(rows)
