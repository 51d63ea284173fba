"""The health of a PostgreSQL store's search indexes, for ``sessions check`` and ``doctor``.

A concurrent build (``CREATE INDEX CONCURRENTLY``, ``REINDEX INDEX CONCURRENTLY``) cut short
(a cancelled or killed backend) leaves an INVALID index (``pg_index.indisvalid``) that the
planner ignores: ``messages_tsv`` itself (full-text searches then read every message: a
problem), ``messages_trgm`` (substring searches read every message, finding the same rows: a
warning, as the next writable opening builds it again), or a reindex's copy
``<index>_ccnew`` (cut before the swap) or the old index ``<index>_ccold`` (cut after it),
which take disk space and, once ready, slow every write (a warning). ``sessions repair``
drops what is left and builds again. An invalid index whose build runs now (its
``pg_stat_progress_create_index`` row, which PostgreSQL shows for builds of the same role or
to ``pg_read_all_stats``) is reported as one under way, a warning.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from hermes_core.sessions.pgtrigram import MARKER, TRIGRAM_INDEX

__all__ = ["SEARCH_INDEX", "IndexFinding", "index_findings"]

SEARCH_INDEX = "messages_tsv"
"""The full-text (GIN) index of ``tsv``: every full-text search looks it up."""

_REPAIR = "run `hermes-memory sessions repair`"
_INDEXES = r"""
SELECT c.relname, c.oid, i.indisvalid FROM pg_index AS i JOIN pg_class AS c ON c.oid = i.indexrelid
WHERE i.indrelid = 'messages'::regclass
    AND c.relname ~ '^messages_(tsv|trgm)(_ccnew[0-9]*|_ccold[0-9]*)?$'
"""
_BUILDS = """
SELECT index_relid, pid, command FROM pg_stat_progress_create_index
WHERE relid = 'messages'::regclass AND pid <> pg_backend_pid()
"""


@dataclass(frozen=True)
class IndexFinding:
    """One thing wrong with a search index."""

    level: Literal["problem", "warning"]
    """``problem``: searches read every message (``sessions check`` exits 1); ``warning``:
    an accelerator or some disk space and write time, the results unchanged."""
    index: str
    """The index's name (``messages_tsv``, ``messages_trgm``, ``messages_tsv_ccnew`` ...)."""
    text: str
    """What is wrong, one sentence without its end."""
    fix: str
    """What to do about it."""


def index_findings(conn: Any) -> list[IndexFinding]:
    """What is wrong with the search indexes of *conn*'s store (its search path; read-only,
    nothing changed); ``[]`` when they are present and valid, or the store has no tables yet."""
    if conn.execute("SELECT to_regclass('messages')").fetchone()[0] is None:
        return []
    found = {name: (oid, valid) for name, oid, valid in conn.execute(_INDEXES).fetchall()}
    builds = {oid: (pid, command) for oid, pid, command in conn.execute(_BUILDS).fetchall()}

    def running(name: str) -> int | None:
        """The backend building *name* now (a reindex builds its copies under the index's)."""
        own = builds.get(found[name][0])
        if own is not None:
            return int(own[0])
        base = found.get(name.split("_cc", 1)[0])
        build = None if base is None else builds.get(base[0])
        return int(build[0]) if build is not None and "REINDEX" in build[1] else None

    findings = []
    for name, (_, valid) in sorted(found.items()):
        if valid and "_cc" not in name:
            continue
        pid = running(name)
        if pid is not None:
            findings.append(
                IndexFinding(
                    "warning",
                    name,
                    f"the index {name} is being built now (backend {pid}, concurrently); until "
                    "its build ends, searches do without it",
                    "check again when the build ends",
                )
            )
        elif "_cc" in name:
            findings.append(
                IndexFinding(
                    "warning",
                    name,
                    f"the index {name} is what a concurrent rebuild of {name.split('_cc')[0]} "
                    "cut short left (invalid, never used): it takes disk space and may slow "
                    "every write",
                    f"{_REPAIR} (it drops it)",
                )
            )
        elif name == SEARCH_INDEX:
            findings.append(
                IndexFinding(
                    "problem",
                    name,
                    f"the full-text index {name} is invalid (a concurrent build cut short): "
                    "searches read every message",
                    _REPAIR,
                )
            )
        else:
            findings.append(
                IndexFinding(
                    "warning",
                    name,
                    f"the trigram index {name} is invalid (a concurrent build cut short) and "
                    "still to build again: substring searches read every message (finding the "
                    "same ones) until then",
                    "start a process that opens the store for writing (an agent, `hermes-memory "
                    "chat`): it builds the index again concurrently; or "
                    + _REPAIR.removeprefix("run "),
                )
            )
    if SEARCH_INDEX not in found:
        findings.insert(
            0,
            IndexFinding(
                "problem",
                SEARCH_INDEX,
                f"the full-text index {SEARCH_INDEX} is missing: searches read every message",
                _REPAIR,
            ),
        )
    if TRIGRAM_INDEX not in found:
        findings += _no_trigram_index(conn)
    return findings


def _no_trigram_index(conn: Any) -> list[IndexFinding]:
    """The finding of a store without ``messages_trgm``: migration 6 left it to build, or
    ``pg_trgm`` could not be had (nothing before migration 6, which the next opening applies)."""
    if conn.execute("SELECT to_regclass('state_meta')").fetchone()[0] is not None:
        marked = conn.execute("SELECT 1 FROM state_meta WHERE key = %s", (MARKER,)).fetchone()
        if marked is not None:
            return [
                IndexFinding(
                    "warning",
                    TRIGRAM_INDEX,
                    f"the trigram index {TRIGRAM_INDEX} is still to build (migration 6, "
                    "unfinished): substring searches read every message until then",
                    "start a process that opens the store for writing: it builds the index "
                    "concurrently (writers go on)",
                )
            ]
    version = conn.execute(
        "SELECT max(version) FROM hermes_schema_migrations"
        if conn.execute("SELECT to_regclass('hermes_schema_migrations')").fetchone()[0]
        else "SELECT 0"
    ).fetchone()[0]
    if (version or 0) < 6:
        return []
    return [
        IndexFinding(
            "warning",
            TRIGRAM_INDEX,
            f"there is no trigram index {TRIGRAM_INDEX} (pg_trgm): substring searches (a "
            "question's word no message holds) read every message",
            "install PostgreSQL's contrib, run `CREATE EXTENSION pg_trgm` as a user allowed "
            "to, then `hermes-memory sessions repair`",
        )
    ]
