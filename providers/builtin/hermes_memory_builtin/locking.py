"""The cross-process exclusive lock beside a memory file.

The lock lives in a separate file (``MEMORY.md.lock``) so the data file itself
can be replaced atomically by a rename while the lock is held. When the memory
file is a symbolic link, the lock sits beside the real file at the end of the
link chain, not beside the link: two profiles whose ``MEMORY.md`` are links to
one shared file then take one lock. Locking itself is the core's
:func:`hermes_core.locking.exclusive_lock` (a lock file opened without following
symlinks, kept at mode 0600; threads and processes exclude each other).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from hermes_core import errors, locking
from hermes_core.errors import MemoryStoreError
from hermes_memory_builtin.files import resolved_file


class LockError(MemoryStoreError, errors.LockError):
    """The lock file of a memory file could not be opened or locked."""


def lock_path_for(path: Path) -> Path:
    """The lock file that guards *path*: ``<name>.lock`` beside the real file
    (:func:`~hermes_memory_builtin.files.resolved_file`; *path* itself unless it is a
    symbolic link that leads to a file)."""
    return locking.lock_path_beside(resolved_file(path))


@contextlib.contextmanager
def exclusive_lock(path: Path) -> Iterator[Path]:
    """Hold the exclusive lock guarding *path* for the duration of the block.

    Creates the folder and the lock file when needed and yields the lock
    file's path (see :func:`lock_path_for`: beside the real file when *path*
    is a symbolic link). Raises :class:`LockError` when the lock file is a
    symlink or cannot be opened.
    """
    real = resolved_file(path)
    lock_path = lock_path_for(real)
    try:
        lock_path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise LockError(
            f"Cannot create the memory folder {lock_path.parent} ({exc.strerror or exc}). "
            "Nothing was changed. Make sure it is a writable folder, not a file, then retry."
        ) from exc
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(locking.exclusive_lock(lock_path))
        except errors.LockError as exc:
            if real == path:
                raise LockError(str(exc)) from exc
            raise LockError(
                f"{path} is a symbolic link to {real}; writes lock and replace that file in "
                f"its own folder. {exc}"
            ) from exc
        yield lock_path
