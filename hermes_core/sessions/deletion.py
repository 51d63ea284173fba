"""Deleting sessions: removing them with their messages, and choosing a prune's next batch."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from hermes_core.sessions import lineage

PRUNE_BATCH_MESSAGES = 20_000
"""Messages a prune deletes per transaction (about half a second of holding the write
lock); a conversation longer than this is still deleted in one."""
PRUNE_PAUSE = 0.15
"""Seconds a prune leaves the write lock free between batches: longer than a waiting
writer's longest sleep between tries (SQLite's busy handler: 100 ms), so it gets in."""


def delete_sessions(conn: sqlite3.Connection, session_ids: Sequence[str]) -> list[int]:
    """Delete *session_ids* and their messages in the open write transaction, zeroing the
    freed pages; their other children lose the parent link. Returns the message ids."""
    if not session_ids:
        return []
    conn.execute("PRAGMA secure_delete = ON")
    try:
        ids = json.dumps(list(session_ids))
        chosen = "IN (SELECT value FROM json_each(?))"
        messages = [
            row[0]
            for row in conn.execute(f"SELECT id FROM messages WHERE session_id {chosen}", (ids,))
        ]
        conn.execute(
            f"UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id {chosen} "
            f"AND id NOT {chosen}",
            (ids, ids),
        )
        conn.execute(f"DELETE FROM messages WHERE session_id {chosen}", (ids,))
        conn.execute(f"DELETE FROM sessions WHERE id {chosen}", (ids,))
    finally:
        conn.execute("PRAGMA secure_delete = OFF")
    return messages


def prune_batch(
    conn: sqlite3.Connection,
    cutoff: float,
    *,
    source: str | None,
    kept: set[str],
    max_messages: int,
    user_id: str | None = None,
) -> tuple[list[str], list[int]]:
    """Delete the next conversations, oldest first, whose sessions all ended before
    *cutoff* (and, with *source*, that started from it), stopping once about
    *max_messages* messages are chosen; each goes whole. Conversations found going on
    (or of another source) are added to *kept* and skipped on later batches.
    With *user_id*, only that user's conversations are considered.
    Returns the deleted session ids and message ids."""
    ended = "ended_at IS NOT NULL AND ended_at < ?"
    mine = "" if user_id is None else " AND user_id = ?"
    sql = f"SELECT id FROM sessions WHERE {ended}{mine} ORDER BY started_at, id"
    first: tuple[object, ...] = (cutoff,) if user_id is None else (cutoff, user_id)
    doomed: list[str] = []
    seen: set[str] = set()
    messages = 0
    for (candidate,) in conn.execute(sql, first):
        if candidate in seen or candidate in kept:
            continue
        chain = lineage.compression_chain(conn, candidate, max_hops=None)
        seen.update(chain)
        chosen = json.dumps(chain)
        row = conn.execute(
            "SELECT count(*), sum(ended_at IS NOT NULL AND ended_at < ?) "
            "FROM sessions WHERE id IN (SELECT value FROM json_each(?))",
            (cutoff, chosen),
        ).fetchone()
        goes_on = row[0] != row[1]  # part of it is open or recent
        if user_id is not None:  # a chain reaching another user's session is left alone
            goes_on = (
                goes_on
                or conn.execute(
                    "SELECT count(*) FROM sessions WHERE id IN (SELECT value FROM json_each(?)) "
                    "AND user_id IS NOT ?",
                    (chosen, user_id),
                ).fetchone()[0]
                > 0
            )
        other_source = source is not None and conn.execute(
            "SELECT source FROM sessions WHERE id = ?", (chain[0],)
        ).fetchone() != (source,)
        if goes_on or other_source:
            kept.update(chain)
            continue
        doomed += chain
        messages += conn.execute(
            "SELECT count(*) FROM messages WHERE session_id IN (SELECT value FROM json_each(?))",
            (chosen,),
        ).fetchone()[0]
        if messages >= max_messages:
            break
    return doomed, delete_sessions(conn, doomed)
