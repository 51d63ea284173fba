"""A session store taken back to schema version 6, as the release before the CJK trigrams
wrote it: for the tests of the upgrade to version 7."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from hermes_core.sessions.cjk import cjk_grams
from hermes_core.sessions.gramqueue import gram_text_sql, tool_calls_text


def to_bigrams(conn: sqlite3.Connection) -> None:
    """Every row of the gram index as version 6 tokenised it (unigrams and bigrams)."""
    rows = conn.execute(
        f"SELECT m.id, {gram_text_sql('m')} FROM messages AS m "
        "WHERE m.id IN (SELECT rowid FROM messages_cjk_grams)"
    ).fetchall()
    conn.executemany(
        "UPDATE messages_cjk_grams SET grams = ? WHERE rowid = ?",
        [(cjk_grams((c, n, tool_calls_text(t)), 2), mid) for mid, c, n, t in rows],
    )


def downgrade_to_version_6(path: Path) -> None:
    """The file at *path* as version 6 wrote it, in one write transaction (another process
    may have it open)."""
    conn = sqlite3.connect(path, isolation_level=None, timeout=30)
    try:
        conn.execute("BEGIN IMMEDIATE")
        to_bigrams(conn)
        conn.execute("UPDATE schema_version SET version = 6")
        conn.execute("UPDATE state_meta SET value = '6' WHERE key = 'hermes_memory.schema'")
        conn.execute("COMMIT")
    finally:
        conn.close()
