"""The session fields every search hit carries, read once per session and database version.

A hit names its session's source, model, start time and title. Joining
``sessions`` for each of 50 hits is a large share of a fast search, and in a
file written by Hermes Agent the start time and title sit behind the
multi-kilobyte ``system_prompt`` column, so each join walks that column's
overflow pages. :class:`SessionInfo` reads the fields of the sessions not seen
yet in one statement and keeps them until the database changes: SQLite's
``PRAGMA data_version`` moves when another connection commits (the store reads
it once per search with :meth:`SessionInfo.sync`), and the store calls
:meth:`SessionInfo.invalidate` after its own writes.
"""

from __future__ import annotations

import itertools
import json
import sqlite3
import threading
from collections.abc import Iterable
from typing import Any

from hermes_core.sessions.layout import Layout

__all__ = ["SessionInfo"]

Fields = tuple[Any, Any, Any, Any]
"""``(source, model, started_at, title)``; ``None`` for a column the file lacks."""

_MISSING: Fields = (None, None, None, None)


class SessionInfo:
    """``session_id`` → :data:`Fields`, cached until the database changes (thread-safe)."""

    def __init__(self, layout: Layout, capacity: int = 20_000) -> None:
        model = "model" if "model" in layout.session_columns else "NULL"
        title = "title" if "title" in layout.session_columns else "NULL"
        self._sql = (
            f"SELECT id, source, {model}, started_at, {title} FROM sessions "
            "WHERE id IN (SELECT value FROM json_each(?))"
        )
        self._capacity = capacity
        self._fields: dict[str, Fields] = {}
        self._version: object = None
        self._lock = threading.Lock()

    def invalidate(self) -> None:
        """Forget everything (call after writing through the same connection)."""
        with self._lock:
            self._fields.clear()
            self._version = None

    def sync(self, conn: sqlite3.Connection) -> bool:
        """Drop what another connection's commit made stale; True if anything may have changed.

        Call it once per read on *conn*, before :meth:`fields`.
        """
        version = conn.execute("PRAGMA data_version").fetchone()[0]
        with self._lock:
            if version == self._version:
                return False
            self._fields.clear()
            self._version = version
            return True

    def fields(self, conn: sqlite3.Connection, session_ids: Iterable[str]) -> dict[str, Fields]:
        """The fields of each of *session_ids* (unknown sessions map to all ``None``).

        Cached fields are as fresh as the last :meth:`sync` or :meth:`invalidate`.
        """
        wanted = set(session_ids)
        with self._lock:
            version = self._version
            cached = self._fields
            missing = wanted.difference(cached)
            known = wanted - missing if missing else wanted
            found = {sid: cached[sid] for sid in known}
        if missing:
            fetched = {
                row[0]: (row[1], row[2], row[3], row[4])
                for row in conn.execute(self._sql, (json.dumps(list(missing)),))
            }
            with self._lock:
                if version == self._version:
                    if len(self._fields) + len(fetched) > self._capacity:
                        self._fields.clear()
                    self._fields.update(itertools.islice(fetched.items(), self._capacity))
            for sid in missing:
                found[sid] = fetched.get(sid, _MISSING)
        return found
