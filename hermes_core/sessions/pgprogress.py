"""The progress of a concurrent index build of ``messages``, read from PostgreSQL.

``CREATE INDEX CONCURRENTLY`` and ``REINDEX INDEX CONCURRENTLY`` go through the same phases,
which ``pg_stat_progress_create_index`` shows for the backend running them: waiting for the
writers of the moment, a scan of the table (blocks), waiting for writers again, a validation
that reads the new index (tuples) and the table again (blocks), then waiting for older
snapshots (and for a reindex, for readers of the old index). :func:`run_watched` runs such a
statement while a second connection reads that view every :data:`POLL_SECONDS`, and reports
(blocks done, blocks in all) with twice the table's blocks in all (:func:`build_progress`):
the scan's, then the validation's; the phases in between hold the count where it is.
"""

from __future__ import annotations

import threading
from typing import Any

from hermes_core.sessions.opening import UpgradeProgress

__all__ = ["POLL_SECONDS", "build_progress", "run_watched"]

POLL_SECONDS = 0.2
"""How often a build's progress is read from ``pg_stat_progress_create_index``."""


def build_progress(phase: str, blocks_done: int, blocks_total: int, blocks: int) -> int:
    """How many of ``2 * blocks`` (the table's blocks, read by the build's scan and again by its
    validation) a concurrent build has done at one row of ``pg_stat_progress_create_index``:
    its *phase* and the blocks done of the blocks to read in that phase."""
    if phase.startswith("building index"):
        return min(blocks, blocks_done) if blocks_total else 0
    if phase == "index validation: scanning table":
        return blocks + min(blocks, blocks_done)
    if phase.startswith(("waiting for writers before validation", "index validation")):
        return blocks
    if phase.startswith("waiting for") and phase != "waiting for writers before build":
        return 2 * blocks  # the old snapshots, after the validation
    return 0  # initializing, or waiting for the writers before the build


_PROGRESS = (
    "SELECT phase, blocks_done, blocks_total FROM pg_stat_progress_create_index WHERE pid = %s"
)
_BLOCKS = "SELECT pg_relation_size('messages') / current_setting('block_size')::bigint"


def run_watched(conn: Any, statement: str, progress: UpgradeProgress) -> None:
    """Run *statement* (``CREATE INDEX CONCURRENTLY``, ``REINDEX … CONCURRENTLY``) on *conn*
    (autocommit) in a thread of its own while this one reads its progress on a second
    connection and reports it to *progress*, never backwards; an interruption here (Ctrl-C)
    cancels the build, which leaves an invalid index for the next build to drop."""
    import psycopg

    blocks = max(1, int(conn.execute(_BLOCKS).fetchone()[0]))
    progress(0, 2 * blocks)
    failed: list[BaseException] = []

    def create() -> None:
        try:
            conn.execute(statement)
        except BaseException as exc:  # handed to the caller's thread
            failed.append(exc)

    builder = threading.Thread(target=create, name="index-build", daemon=True)
    pid = conn.info.backend_pid
    done = 0
    try:
        watch = psycopg.connect(conn.info.dsn, password=conn.info.password or None, autocommit=True)
    except psycopg.Error:  # progress unseen, the build goes on
        watch = None
    try:
        builder.start()
        while builder.is_alive():
            builder.join(POLL_SECONDS)
            if watch is None:
                continue
            try:
                row = watch.execute(_PROGRESS, (pid,)).fetchone()
            except psycopg.Error:  # the watching connection lost: the build goes on unseen
                watch.close()
                watch = None
                continue
            if row is None:
                continue
            phase, blocks_done, blocks_total = row[0], int(row[1] or 0), int(row[2] or 0)
            if phase.startswith("building index") and blocks_total > blocks:
                blocks = blocks_total  # the table grew since it was measured
            reached = build_progress(phase, blocks_done, blocks_total, blocks)
            if reached > done:
                done = reached
                progress(done, 2 * blocks)
    except BaseException:
        conn.cancel_safe()
        builder.join()
        raise
    finally:
        if watch is not None:
            watch.close()
    if failed:
        raise failed[0]
    progress(2 * blocks, 2 * blocks)
