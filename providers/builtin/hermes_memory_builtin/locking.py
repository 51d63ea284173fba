"""Cross-process exclusive lock beside a memory file.

The lock lives in a separate file (``MEMORY.md.lock``) so the data file itself
can be replaced atomically by a rename while the lock is held. When the memory
file is a symbolic link, the lock sits beside the real file at the end of the
link chain, not beside the link: two profiles whose ``MEMORY.md`` are links to
one shared file then take one lock. The lock file itself is opened without
following symlinks and kept at mode 0600. POSIX uses
``fcntl.flock``; Windows locks the first byte with ``msvcrt.locking``. Each
acquisition opens its own file descriptor, so threads of one process exclude
each other as well as other processes.
"""

from __future__ import annotations

import contextlib
import errno
import os
import time
from collections.abc import Iterator
from pathlib import Path

from hermes_core.errors import MemoryStoreError
from hermes_memory_builtin.files import resolved_file

try:  # POSIX
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

try:  # Windows
    import msvcrt
except ImportError:  # POSIX
    msvcrt = None  # type: ignore[assignment]

LOCK_SUFFIX = ".lock"
LOCK_MODE = 0o600

_OPEN_FLAGS = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


class LockError(MemoryStoreError):
    """The lock file could not be opened or locked."""


def lock_path_for(path: Path) -> Path:
    """The lock file that guards *path*: ``<name>.lock`` beside the real file
    (:func:`~hermes_memory_builtin.files.resolved_file`; *path* itself unless it is a
    symbolic link that leads to a file)."""
    real = resolved_file(path)
    return real.with_name(real.name + LOCK_SUFFIX)


def _open_lock_file(lock_path: Path) -> int:
    if not hasattr(os, "O_NOFOLLOW") and lock_path.is_symlink():  # pragma: no cover - Windows
        raise LockError(f"Refusing to use {lock_path}: it is a symbolic link. Delete it and retry.")
    try:
        fd = os.open(lock_path, _OPEN_FLAGS, LOCK_MODE)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise LockError(
                f"Refusing to use {lock_path}: it is a symbolic link, and a lock file is never "
                "followed to another place. Delete the link and retry."
            ) from exc
        raise LockError(
            f"Cannot open lock file {lock_path} ({exc.strerror or exc}). Nothing was changed. "
            f"Make sure {lock_path.parent} is a writable folder and {lock_path.name} is a "
            "regular file (or absent), then retry."
        ) from exc
    if hasattr(os, "fchmod"):
        with contextlib.suppress(OSError):
            os.fchmod(fd, LOCK_MODE)  # tighten a lock file created loose by an older version
    return fd


def _acquire(fd: int) -> None:
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_EX)
    elif msvcrt is not None:  # pragma: no cover - Windows
        while True:
            try:
                msvcrt.locking(fd, msvcrt.LK_LOCK, 1)  # retries for ~10 s, then raises
                return
            except OSError:
                time.sleep(0.05)


def _release(fd: int) -> None:
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_UN)
        elif msvcrt is not None:  # pragma: no cover - Windows
            os.lseek(fd, 0, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
    except OSError:
        pass  # closing the descriptor releases the lock anyway


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
    try:
        fd = _open_lock_file(lock_path)
    except LockError as exc:
        if real == path:
            raise
        raise LockError(
            f"{path} is a symbolic link to {real}; writes lock and replace that file in "
            f"its own folder. {exc}"
        ) from exc
    try:
        try:
            _acquire(fd)
        except OSError as exc:
            raise LockError(f"Cannot lock {lock_path}: {exc}.") from exc
        try:
            yield lock_path
        finally:
            _release(fd)
    finally:
        os.close(fd)
