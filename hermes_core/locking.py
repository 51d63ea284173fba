"""Cross-process exclusive locks held on a lock file, on the ``filelock`` library.

Every writer of a shared file (``config.yaml``, ``.env``, ``MEMORY.md``) takes
turns on a separate lock file beside it, so the data file itself can be
replaced by a rename while the lock is held. ``filelock`` locks it with
``flock`` on POSIX and ``msvcrt.locking`` on Windows, each acquisition on its
own descriptor, so threads of one process exclude each other as well as other
processes. The lock file is opened without following a symbolic link (a link
there is refused, its target untouched) and kept at mode 0600, and it stays in
place after release so every waiter locks the same file.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from pathlib import Path

from hermes_core.errors import LockError

LOCK_SUFFIX = ".lock"
LOCK_MODE = 0o600
POLL_SECONDS = 0.01
"""How often a waiting writer retries the lock (``filelock`` polls a non-blocking lock)."""

_OPEN_FLAGS = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def lock_path_beside(path: Path) -> Path:
    """``<name>.lock`` in *path*'s folder: the lock file guarding *path*."""
    return path.with_name(path.name + LOCK_SUFFIX)


def _link_refused(lock_path: Path) -> LockError:
    return LockError(
        f"Refusing to use {lock_path}: it is a symbolic link, and a lock file is never "
        "followed to another place. Delete the link and retry."
    )


def _prepare_lock_file(lock_path: Path) -> None:
    """Create *lock_path* (or tighten it) at mode 0600; refuse a symbolic link there."""
    if not hasattr(os, "O_NOFOLLOW") and lock_path.is_symlink():  # pragma: no cover - Windows
        raise LockError(f"Refusing to use {lock_path}: it is a symbolic link. Delete it and retry.")
    try:
        fd = os.open(lock_path, _OPEN_FLAGS, LOCK_MODE)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _link_refused(lock_path) from exc
        raise LockError(
            f"Cannot open lock file {lock_path} ({exc.strerror or exc}). Nothing was changed. "
            f"Make sure {lock_path.parent} is a writable folder and {lock_path.name} is a "
            "regular file (or absent), then retry."
        ) from exc
    try:
        if hasattr(os, "fchmod"):
            with contextlib.suppress(OSError):
                os.fchmod(fd, LOCK_MODE)  # tighten a lock file created loose by an older version
    finally:
        os.close(fd)


@contextlib.contextmanager
def exclusive_lock(lock_path: Path) -> Iterator[Path]:
    """Hold the exclusive lock on *lock_path* for the duration of the block; yield it.

    Waits as long as another thread or process holds it. Raises
    :class:`~hermes_core.errors.LockError` (nothing locked) when the lock file is
    a symbolic link or cannot be opened or locked; the folder must exist.
    """
    from filelock import FileLock  # imported here: commands that never write skip its cost

    _prepare_lock_file(lock_path)
    lock = FileLock(lock_path, mode=LOCK_MODE, poll_interval=POLL_SECONDS)
    try:
        lock.acquire()
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # replaced by a link since it was prepared
            raise _link_refused(lock_path) from exc
        raise LockError(f"Cannot lock {lock_path}: {exc}.") from exc
    try:
        yield lock_path
    finally:
        lock.release()
