"""SQLite FTS5 storage for the ledger plugin."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from .text.normalize import fts_query


class LedgerStore:
    def __init__(self, db_path: Path):
        db_path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._conn = sqlite3.connect(str(db_path), check_same_thread=False)
        self._conn.row_factory = sqlite3.Row
        with self._lock:
            self._conn.executescript(
                """
                CREATE TABLE IF NOT EXISTS entries (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    text TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    session_id TEXT DEFAULT ''
                );
                CREATE VIRTUAL TABLE IF NOT EXISTS entries_fts
                    USING fts5(text, content=entries, content_rowid=id);
                CREATE TRIGGER IF NOT EXISTS entries_ai AFTER INSERT ON entries BEGIN
                    INSERT INTO entries_fts(rowid, text) VALUES (new.id, new.text);
                END;
                """
            )
            self._conn.commit()

    def add(self, text: str, *, kind: str, session_id: str = "") -> int:
        text = (text or "").strip()
        if not text:
            return 0
        with self._lock:
            cur = self._conn.execute(
                "INSERT INTO entries (text, kind, session_id) VALUES (?, ?, ?)", (text, kind, session_id)
            )
            self._conn.commit()
            return int(cur.lastrowid)

    def search(self, query: str, limit: int = 10) -> list:
        match = fts_query(query)
        if not match:
            return []
        with self._lock:
            rows = self._conn.execute(
                "SELECT e.id, e.text, e.kind FROM entries_fts f JOIN entries e ON e.id = f.rowid "
                "WHERE entries_fts MATCH ? ORDER BY f.rank LIMIT ?",
                (match, limit),
            ).fetchall()
        return [dict(row) for row in rows]

    def count(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM entries").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()
