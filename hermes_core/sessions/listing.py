"""Listing sessions the way a person thinks of them: one row per conversation.

A long conversation is stored as a chain of sessions joined by compression;
subagents are child sessions too. The listing hides those children and shows
a compressed conversation through its newest continuation (its *tip*) while
keeping the root's start time, so the list order does not jump when a
conversation is compressed.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from hermes_core.sessions import lineage
from hermes_core.sessions.layout import Layout
from hermes_core.sessions.records import LEGACY_JSON_PREFIX

__all__ = ["PREVIEW_CHARS", "last_activity", "list_sessions", "preview"]

PREVIEW_CHARS = 60
_HANDOFF_PREFIXES = ("[CONTEXT COMPACTION", "[CONTEXT SUMMARY]:")
_PROJECTED = (
    "id",
    "ended_at",
    "end_reason",
    "message_count",
    "tool_call_count",
    "model",
    "system_prompt",
)

_FORK_MARKED = (
    "(CASE WHEN json_valid(s.model_config) THEN"
    " json_extract(s.model_config, '$._branched_from') IS NOT NULL"
    " OR json_extract(s.model_config, '$._reset_from') IS NOT NULL ELSE 0 END)"
)
_VISIBLE = (
    f"(s.parent_session_id IS NULL OR p.id IS NULL OR p.end_reason = 'branched' OR {_FORK_MARKED})"
)


def _text(content: Any) -> str:
    if not isinstance(content, str):
        return ""
    if content.startswith(LEGACY_JSON_PREFIX):
        try:
            parts = json.loads(content[len(LEGACY_JSON_PREFIX) :])
        except (ValueError, RecursionError):
            return ""
        items = parts if isinstance(parts, list) else [parts]
        return " ".join(
            item["text"]
            for item in items
            if isinstance(item, dict) and isinstance(item.get("text"), str)
        )
    return content


def preview(conn: sqlite3.Connection, session_id: str) -> str:
    """The first user message of a session on one line, cut to 60 characters + '...'."""
    rows = conn.execute(
        "SELECT content FROM messages WHERE session_id = ? AND role = 'user' ORDER BY id LIMIT 8",
        (session_id,),
    ).fetchall()
    for (content,) in rows:
        text = " ".join(_text(content).split())
        if not text or text.startswith(_HANDOFF_PREFIXES):
            continue
        return text if len(text) <= PREVIEW_CHARS else text[:PREVIEW_CHARS] + "..."
    return ""


def _activity_sql(layout: Layout, alias: str) -> str:
    latest = f"(SELECT MAX(timestamp) FROM messages WHERE session_id = {alias}.id)"
    if "last_activity_at" in layout.session_columns:
        return f"COALESCE({alias}.last_activity_at, {latest}, {alias}.started_at)"
    return f"COALESCE({latest}, {alias}.started_at)"


def _filters(
    source: str | None, exclude_sources: Sequence[str], params: list[Any], user_id: str | None
) -> str:
    parts = []
    if user_id is not None:
        parts.append("s.user_id = ?")
        params.append(user_id)
    if source is not None:
        parts.append("s.source = ?")
        params.append(source)
    if exclude_sources:
        parts.append(f"s.source NOT IN ({', '.join('?' for _ in exclude_sources)})")
        params.extend(exclude_sources)
    return " AND ".join(parts) or "1"


def _row(conn: sqlite3.Connection, session_id: str) -> dict[str, Any]:
    cursor = conn.execute("SELECT * FROM sessions WHERE id = ?", (session_id,))
    row = cursor.fetchone()
    return {col[0]: value for col, value in zip(cursor.description, row, strict=True)}


def _last_active(conn: sqlite3.Connection, layout: Layout, ids: Sequence[str]) -> float | None:
    row = conn.execute(
        f"SELECT MAX({_activity_sql(layout, 's')}) FROM sessions AS s "
        "WHERE s.id IN (SELECT value FROM json_each(?))",
        (json.dumps(list(ids)),),
    ).fetchone()
    return None if row is None else row[0]


def last_activity(
    conn: sqlite3.Connection, layout: Layout, user_id: str | None = None
) -> float | None:
    """The latest session start or last activity on record (``None``: no sessions), of
    *user_id*'s sessions when given.

    Reads ``sessions`` only (a file without ``last_activity_at`` gives the
    latest start); values that are not numbers are skipped.
    """
    mine = "" if user_id is None else " AND user_id = ?"
    params = () if user_id is None else (user_id,)
    columns = ["started_at"]
    if "last_activity_at" in layout.session_columns:
        columns.append("last_activity_at")
    found = [
        conn.execute(
            f"SELECT MAX({column}) FROM sessions "
            f"WHERE typeof({column}) IN ('integer', 'real'){mine}",
            params,
        ).fetchone()[0]
        for column in columns
    ]
    numbers = [float(value) for value in found if value is not None]
    return max(numbers) if numbers else None


def list_sessions(
    conn: sqlite3.Connection,
    layout: Layout,
    *,
    limit: int = 20,
    offset: int = 0,
    source: str | None = None,
    exclude_sources: Sequence[str] = (),
    collapse_lineage: bool = True,
    order_by_last_active: bool = False,
    active_since: float | None = None,
    active_until: float | None = None,
    user_id: str | None = None,
) -> list[dict[str, Any]]:
    """Session rows with ``preview`` and ``last_active`` (see ``SessionStore.list_sessions``);
    with *user_id*, that user's sessions only."""
    params: list[Any] = []
    where = _filters(source, exclude_sources, params, user_id)
    if active_until is not None:
        where += " AND s.started_at < ?"
        params.append(float(active_until))
    if collapse_lineage:
        where += f" AND {_VISIBLE}"
    base = f"FROM sessions AS s LEFT JOIN sessions AS p ON p.id = s.parent_session_id WHERE {where}"
    activity = _activity_sql(layout, "s")
    tail: list[Any] = [int(limit), max(0, int(offset))]
    if active_since is not None:
        tail.insert(0, float(active_since))
    if collapse_lineage and (order_by_last_active or active_since is not None):
        # A conversation is as recent as the newest session of its compression chain.
        having = f" HAVING MAX({activity}) >= ?" if active_since is not None else ""
        order = f"MAX({activity})" if order_by_last_active else "MAX(r.started_at)"
        sql = (
            f"WITH RECURSIVE chain(root, id) AS (SELECT s.id, s.id {base} "
            "UNION SELECT chain.root, c.id FROM chain JOIN sessions AS pp ON pp.id = chain.id "
            "JOIN sessions AS c ON c.parent_session_id = pp.id "
            "WHERE pp.end_reason = 'compression' AND COALESCE(c.source, '') <> 'tool') "
            "SELECT chain.root FROM chain JOIN sessions AS s ON s.id = chain.id "
            f"JOIN sessions AS r ON r.id = chain.root GROUP BY chain.root{having} "
            f"ORDER BY {order} DESC, chain.root DESC LIMIT ? OFFSET ?"
        )
    else:
        if active_since is not None:
            base += f" AND {activity} >= ?"
        order = activity if order_by_last_active else "s.started_at"
        sql = f"SELECT s.id {base} ORDER BY {order} DESC, s.id DESC LIMIT ? OFFSET ?"
    ids = [row[0] for row in conn.execute(sql, [*params, *tail])]
    results = []
    for session_id in ids:
        row = _row(conn, session_id)
        chain = [session_id]
        if collapse_lineage and row.get("end_reason") == "compression":
            tip = lineage.compression_tip(conn, session_id)
            if tip != session_id:
                chain = lineage.compression_chain(conn, tip)
                tip_row = _row(conn, tip)
                for key in _PROJECTED:
                    if key in tip_row:
                        row[key] = tip_row[key]
                if "title" in row:
                    row["title"] = tip_row.get("title") or row["title"]
                row["lineage_root_id"] = session_id
                row["lineage_ids"] = chain
        row["preview"] = preview(conn, row["id"])
        row["last_active"] = _last_active(conn, layout, chain)
        results.append(row)
    return results
