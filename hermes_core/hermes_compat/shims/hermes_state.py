"""``hermes_state``: the SQLite helper plugins borrow from Hermes Agent's session database.

Only :func:`apply_wal_with_fallback` is served; the session database itself
(``SessionDB``) is hermes-memory's :mod:`hermes_core.sessions`, with its own API.
"""

import logging
import sqlite3
from typing import NoReturn

from hermes_core.hermes_compat.finder import missing_attribute

__hermes_compat__ = True

__all__ = ["apply_wal_with_fallback"]

logger = logging.getLogger("hermes_core.hermes_compat")


def apply_wal_with_fallback(conn: sqlite3.Connection, db_label: str = "database") -> bool:
    """Switch *conn* to WAL journaling; keep the default journal where WAL is unsupported.

    Returns whether WAL is on (network file systems often refuse it).
    """
    try:
        mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()
    except sqlite3.DatabaseError as exc:
        logger.warning(
            "%s: WAL journaling unavailable (%s); using the default journal", db_label, exc
        )
        return False
    enabled = bool(mode) and str(mode[0]).lower() == "wal"
    if not enabled:
        logger.info("%s: WAL journaling not supported here; using %s", db_label, mode and mode[0])
    return enabled


def __getattr__(name: str) -> NoReturn:
    raise missing_attribute(__name__, name, __all__)
