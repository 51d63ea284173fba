"""Reviewing and reverting curation: the log's history, and ``undo``.

Every move out of the prompt tier (an overflow add, a curator run) is one
row of the append-only log in ``archive.db``, holding the exact text of the
file before and after. :func:`undo` writes the *before* text back, byte for
byte, through the same commit protocol (so an undo is itself a logged,
crash-safe change), and the entries it moved leave the archive again. An
undo is refused when the file changed since (a later write would be lost):
undo the later changes first, newest first.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from hermes_core.errors import MemoryStoreError
from hermes_memory_builtin.archive import read_raw
from hermes_memory_builtin.archive_rows import AnyArchive, PostgresArchive
from hermes_memory_builtin.archive_tier import Change, digest
from hermes_memory_builtin.curator import CURATOR_LOCK_NAME
from hermes_memory_builtin.files import FileIdentity, read_memory_file, replace_if_unchanged
from hermes_memory_builtin.locking import exclusive_lock
from hermes_memory_builtin.targets import TARGETS

UNDOABLE_KINDS = frozenset({"overflow", "curate"})


class UndoError(MemoryStoreError):
    """A change cannot be undone; the message says why and what to do."""


def undo(archive: AnyArchive, change_id: int) -> Change:
    """Restore the file *change_id* changed to its exact earlier text; return the undo's row."""
    change = archive.get_change(change_id)
    if change is None:
        raise UndoError(f"There is no change #{change_id}. See `hermes-memory memory history`.")
    if change.kind not in UNDOABLE_KINDS:
        raise UndoError(
            f"Change #{change_id} is a {change.kind}, which changed no file: nothing to undo."
        )
    if isinstance(archive, PostgresArchive):
        return _undo_row(archive, change)
    memory_dir = archive.memory_dir
    path = memory_dir / TARGETS[change.target].filename
    with exclusive_lock(memory_dir / CURATOR_LOCK_NAME), exclusive_lock(path):
        archive.settle(change.target)
        if change_id not in archive.visible_changes():
            raise UndoError(f"Change #{change_id} is not in effect (already undone or aborted).")
        read = read_memory_file(path)
        current = read_raw(path)
        if digest(current) != digest(change.after_text):
            raise UndoError(
                f"{path.name} changed after change #{change_id}, so restoring it would lose "
                "those later writes. Undo the later changes first (newest first; see "
                "`hermes-memory memory history`), or edit the file by hand."
            )
        with archive.change(
            kind="undo",
            target=change.target,
            reason=f"undo of #{change_id} ({change.reason})",
            before_text=current,
            after_text=change.before_text,
            undoes=change_id,
        ) as undo_id:
            _restore(path, change.before_text, read.identity)
    restored = archive.get_change(undo_id)
    assert restored is not None
    return restored


def _undo_row(archive: PostgresArchive, change: Change) -> Change:
    """:func:`undo` for a document in PostgreSQL: the same checks under the row lock, the
    restored text and the undo's log row in one transaction."""
    documents = archive.documents
    spec = TARGETS[change.target]
    with documents.exclusive(CURATOR_LOCK_NAME), documents.locked(change.target) as (read, save):
        if change.id not in archive.visible_changes():
            raise UndoError(f"Change #{change.id} is not in effect (already undone or aborted).")
        if digest(read.text) != digest(change.after_text):
            raise UndoError(
                f"{spec.filename} changed after change #{change.id}, so restoring it would lose "
                "those later writes. Undo the later changes first (newest first; see "
                "`hermes-memory memory history`), or edit the row by hand."
            )
        with archive.change(
            kind="undo",
            target=change.target,
            reason=f"undo of #{change.id} ({change.reason})",
            before_text=documents.raw(change.target),
            after_text=change.before_text,
            undoes=change.id,
        ) as undo_id:
            save(change.before_text or "")
    restored = archive.get_change(undo_id)
    assert restored is not None
    return restored


def _restore(path: Path, text: str | None, identity: FileIdentity | None) -> None:
    if text is None:  # there was no file before the change
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        return
    replace_if_unchanged(path, text, identity)
