"""A consistent copy of a SQLite file that other processes keep writing.

SQLite's online backup API (:meth:`sqlite3.Connection.backup`) copies every
page inside one read transaction: under WAL the copy is the database as it
was at one instant, and writers go on meanwhile. The copy is written in one
step, since a step-by-step backup restarts whenever another process commits
and, with agents appending all the time, might never finish.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path
from urllib.parse import quote

from hermes_core.errors import SessionStoreError

__all__ = ["copy_database"]


def _read_only_uri(path: Path) -> str:
    return f"file:{quote(os.fsencode(path.resolve()))}?mode=ro"


def copy_database(source: Path, target: Path) -> None:
    """Copy the SQLite database *source* to the new file *target* (mode 0600), consistently.

    *target* is a self-contained file (rollback journal, no ``-wal`` beside it).
    Raises :class:`~hermes_core.errors.SessionStoreError` when *source* cannot
    be read; *target* is then removed.
    """
    if target.exists():
        raise SessionStoreError(f"{target} exists already; copy a database to a new path.")
    try:
        src = sqlite3.connect(_read_only_uri(source), uri=True, timeout=30)
    except sqlite3.Error as exc:
        raise SessionStoreError(f"Cannot open {source} to copy it: {exc}.") from exc
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.close(fd)
        dst = sqlite3.connect(target)
        try:
            src.backup(dst)  # all pages in one step: one snapshot of the source
            dst.execute("PRAGMA journal_mode = DELETE")
        finally:
            dst.close()
    except sqlite3.Error as exc:
        with contextlib.suppress(OSError):
            target.unlink()
        raise SessionStoreError(
            f"Cannot copy {source} ({exc}). If it is damaged, `hermes-memory sessions recover` "
            "salvages its readable rows."
        ) from exc
    except BaseException:
        with contextlib.suppress(OSError):
            target.unlink()
        raise
    finally:
        src.close()
