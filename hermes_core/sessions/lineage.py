"""Session lineage: parents, compression chains and their tips.

Sessions form trees through ``parent_session_id``. A *compression* edge joins a
session that ended with ``end_reason = 'compression'`` to the child that
continues the same conversation; delegation (subagent), branch and reset
children hang off the same column. Children carrying the lineage markers
``_delegate_from``, ``_branched_from`` or ``_reset_from`` in ``model_config``
are never compression continuations. Every walk is cycle-safe and bounded.
"""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Sequence

__all__ = [
    "MAX_HOPS",
    "ancestors",
    "compression_chain",
    "compression_tip",
    "lineage_members",
    "lineage_root",
    "owned_root",
]

MAX_HOPS = 1000

_NOT_A_FORK = (
    "CASE WHEN json_valid({c}.model_config) THEN"
    " json_extract({c}.model_config, '$._delegate_from') IS NULL"
    " AND json_extract({c}.model_config, '$._branched_from') IS NULL"
    " AND json_extract({c}.model_config, '$._reset_from') IS NULL"
    " ELSE 1 END"
)

_NEXT_IN_CHAIN = f"""
SELECT c.id FROM sessions AS c JOIN sessions AS p ON p.id = c.parent_session_id
WHERE c.parent_session_id = ? AND p.end_reason = 'compression'
  AND COALESCE(c.source, '') <> 'tool' AND {_NOT_A_FORK.format(c="c")}
ORDER BY (c.end_reason = 'compression') DESC,
         (c.started_at >= COALESCE(p.ended_at, 0)) DESC,
         (c.ended_at IS NULL) DESC,
         c.started_at DESC, c.id DESC
LIMIT 1
"""


def _parent(conn: sqlite3.Connection, session_id: str) -> str | None:
    row = conn.execute(
        "SELECT parent_session_id FROM sessions WHERE id = ?", (session_id,)
    ).fetchone()
    return row[0] if row and row[0] else None


def ancestors(conn: sqlite3.Connection, session_id: str) -> list[str]:
    """*session_id* and its ancestors, root first (cycle-safe)."""
    chain = [session_id]
    seen = {session_id}
    current = session_id
    for _ in range(MAX_HOPS):
        parent = _parent(conn, current)
        if parent is None or parent in seen:
            break
        chain.append(parent)
        seen.add(parent)
        current = parent
    chain.reverse()
    return chain


def lineage_root(
    conn: sqlite3.Connection, session_id: str, cache: dict[str, str] | None = None
) -> str:
    """The root of *session_id*'s tree (itself when it has no parent)."""
    if cache is not None and session_id in cache:
        return cache[session_id]
    chain = ancestors(conn, session_id)
    root = chain[0]
    if cache is not None:
        for member in chain:
            cache[member] = root
    return root


def lineage_members(conn: sqlite3.Connection, session_id: str) -> set[str]:
    """Every session in *session_id*'s tree: its root and all the root's descendants."""
    root = lineage_root(conn, session_id)
    rows = conn.execute(
        """
        WITH RECURSIVE tree(id) AS (
            SELECT ?
            UNION
            SELECT s.id FROM sessions AS s JOIN tree ON s.parent_session_id = tree.id
        )
        SELECT id FROM tree
        """,
        (root,),
    ).fetchall()
    return {row[0] for row in rows} | {session_id}


def compression_tip(conn: sqlite3.Connection, session_id: str) -> str:
    """The newest continuation of *session_id* through compression (itself if none)."""
    current = session_id
    seen = {current}
    for _ in range(MAX_HOPS):
        row = conn.execute(_NEXT_IN_CHAIN, (current,)).fetchone()
        if row is None or row[0] in seen:
            break
        current = row[0]
        seen.add(current)
    return current


def compression_chain(
    conn: sqlite3.Connection, session_id: str, max_hops: int | None = MAX_HOPS
) -> list[str]:
    """The conversation *session_id* belongs to: compression ancestors, itself, continuations.

    Root first. Ancestors are followed only across compression edges, so a
    subagent's chain starts at the subagent, not at the session that spawned it.
    At most *max_hops* sessions each way; ``None`` walks the whole chain (what a
    delete needs: a conversation compressed more often must not be left half there).
    """
    hops = range(max_hops) if max_hops is not None else itertools.count()
    back = [session_id]
    seen = {session_id}
    current = session_id
    for _ in hops:
        row = conn.execute(
            "SELECT p.id, p.end_reason FROM sessions AS c JOIN sessions AS p "
            "ON p.id = c.parent_session_id WHERE c.id = ?",
            (current,),
        ).fetchone()
        if row is None or row[1] != "compression" or row[0] in seen:
            break
        if conn.execute(_NEXT_IN_CHAIN, (row[0],)).fetchone() != (current,):
            break  # a subagent or branch of that session, not its continuation
        back.append(row[0])
        seen.add(row[0])
        current = row[0]
    back.reverse()
    forward: list[str] = []
    current = session_id
    hops = range(max_hops) if max_hops is not None else itertools.count()
    for _ in hops:
        row = conn.execute(_NEXT_IN_CHAIN, (current,)).fetchone()
        if row is None or row[0] in seen:
            break
        forward.append(row[0])
        seen.add(row[0])
        current = row[0]
    return back + forward


def owned_root(chain: Sequence[str], owned: set[str], session_id: str) -> str:
    """The root of *session_id*'s tree for one user: the furthest of its *chain* of
    ancestors (root first, ending with itself) reached through sessions in *owned*."""
    root = session_id
    for member in reversed(chain):  # the nearest ancestors of this user's
        if member not in owned:
            break
        root = member
    return root
