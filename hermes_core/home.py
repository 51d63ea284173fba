"""``HERMES_HOME``, and replacing the files in it safely.

``HERMES_HOME`` is resolved at call time (never cached at import) so profiles
and tests can switch it; it defaults to ``~/.hermes``. The writers of
``config.yaml`` and ``.env`` build on :func:`replacing`, :func:`file_lock` and
:func:`write_text_atomically`.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from hermes_core.errors import ConfigError, LockError
from hermes_core.locking import exclusive_lock, lock_path_beside

__all__ = ["file_lock", "get_hermes_home", "replacing", "write_text_atomically"]


def get_hermes_home() -> Path:
    """Return the active ``HERMES_HOME`` (``$HERMES_HOME`` or ``~/.hermes``)."""
    value = os.environ.get("HERMES_HOME", "").strip()
    if value:
        return Path(value).expanduser()
    return Path.home() / ".hermes"


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold ``<path>.lock`` (mode 0600): writers of *path* in any thread or process take turns.

    Raises :class:`ConfigError` naming the lock file when it cannot be taken.
    """
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(exclusive_lock(lock_path_beside(path)))
        except LockError as exc:
            raise ConfigError(str(exc)) from exc
        yield


@contextlib.contextmanager
def replacing(path: Path) -> Iterator[Path]:
    """*path* to be rewritten: followed through a symlink, its folder created.

    An ``OSError`` inside the block becomes a :class:`ConfigError` saying the
    file was not changed (use it around :func:`write_text_atomically`).
    """
    if path.is_symlink():
        path = Path(os.path.realpath(path))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        yield path
    except OSError as exc:
        raise ConfigError(
            f"Cannot write {path}: {exc.strerror or exc}. Check that {path.parent} is a "
            "writable folder with free space; the file was not changed."
        ) from exc


def write_text_atomically(path: Path, text: str, *, mode: int | None = None) -> None:
    """Replace *path* with *text*: a temp file in its directory, fsynced, renamed over it.

    Readers see the old file or the new one, never a part. *mode* sets the
    permissions of the new file (``0o600`` for secrets); a failure leaves no temp file.
    """
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        if mode is not None:
            os.fchmod(fd, mode)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
