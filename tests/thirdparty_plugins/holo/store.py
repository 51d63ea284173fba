"""SQLite fact store for holo."""

import sqlite3
import threading
from pathlib import Path

try:
    from . import vectors as vec
except ImportError:
    import vectors as vec  # type: ignore[no-redef]


class FactStore:
    def __init__(self, db_path):
        self.db_path = Path(db_path).expanduser()
        self.db_path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._conn = sqlite3.connect(str(self.db_path), check_same_thread=False, isolation_level=None)
        self._conn.row_factory = sqlite3.Row
        self._init_db()

    def _init_db(self):
        from hermes_state import apply_wal_with_fallback
        apply_wal_with_fallback(self._conn, db_label="holo.db")
        self._conn.executescript(
            """
            CREATE TABLE IF NOT EXISTS facts (
                fact_id INTEGER PRIMARY KEY AUTOINCREMENT,
                content TEXT NOT NULL UNIQUE,
                signature TEXT
            );
            CREATE VIRTUAL TABLE IF NOT EXISTS facts_fts USING fts5(content, content=facts, content_rowid=fact_id);
            CREATE TRIGGER IF NOT EXISTS facts_ai AFTER INSERT ON facts BEGIN
                INSERT INTO facts_fts(rowid, content) VALUES (new.fact_id, new.content);
            END;
            """
        )

    def add_fact(self, content):
        content = (content or "").strip()
        if not content:
            raise ValueError("content must not be empty")
        with self._lock:
            try:
                cur = self._conn.execute(
                    "INSERT INTO facts (content, signature) VALUES (?, ?)", (content, vec.signature(content))
                )
                return int(cur.lastrowid)
            except sqlite3.IntegrityError:
                row = self._conn.execute("SELECT fact_id FROM facts WHERE content = ?", (content,)).fetchone()
                return int(row["fact_id"])

    def search_facts(self, query, limit=10):
        from plugins.memory.holo.retrieval import Retriever  # lazy, avoids an import cycle
        match = Retriever.sanitize_fts_query(query)
        if not match:
            return []
        with self._lock:
            rows = self._conn.execute(
                "SELECT f.fact_id, f.content FROM facts_fts JOIN facts f ON f.fact_id = facts_fts.rowid "
                "WHERE facts_fts MATCH ? ORDER BY facts_fts.rank LIMIT ?",
                (match, limit),
            ).fetchall()
        return [dict(r) for r in rows]

    def count(self):
        with self._lock:
            return self._conn.execute("SELECT COUNT(*) FROM facts").fetchone()[0]

    def close(self):
        with self._lock:
            self._conn.close()
