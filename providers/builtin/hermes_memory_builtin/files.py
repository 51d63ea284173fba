"""Reading and safely replacing a memory file.

Reads strip a UTF-8 byte-order mark (Notepad adds one) and decode strictly:
a file that is not valid UTF-8 is reported as unreadable rather than
silently mangled. Only regular files are read: a named pipe, a device or a
directory at the file's path is reported, never opened for a blocking read.
A symbolic link is followed (a memory file kept in a dotfiles repository
stays a link); a link to nothing is reported.

Writes go to a temporary file beside the real file (the end of the symlink
chain, see :func:`resolved_file`), are flushed and fsynced, then renamed
over it, so a reader (or a crash) only ever sees the complete old or the
complete new content. :func:`replace_if_unchanged` also refuses to replace a
file that changed since it was read: another program (a text editor saving
by rename, a sync tool) may write the file without taking our lock, and its
save must not be overwritten by a change computed from the older text. On
Linux the check and the rename are one atomic step
(``renameat2(RENAME_EXCHANGE)``); elsewhere the file is checked just before
the rename. The new file keeps the permission bits of the one it replaces (a
new file is private to its owner), and a file that is read-only for this
process is refused rather than replaced. An error raised after the new text
reached the file says so; "the file was left unchanged" is only ever said of
a write that replaced nothing.

Temporary files of a killed writer are swept by a later write, under the lock,
from the real file's folder only, and only once they are
:data:`STALE_TEMP_SECONDS` old (see :func:`remove_stale_temp_files`).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import stat
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from hermes_core.errors import MemoryStoreError

TEMP_PREFIX = ".mem_"
TEMP_SUFFIX = ".tmp"
STALE_TEMP_SECONDS = 600.0
"""Age past which a temporary file found under the lock is taken for a killed writer's."""

_READ_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)  # a FIFO opens at once instead of waiting for a writer
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)


_READ_ATTEMPTS = 3
_CHANGED_WHILE_READ = "it was being changed by another program while it was read"


class FileChangedError(MemoryStoreError):
    """The file changed on disk between reading it and replacing it; nothing was written."""


@dataclass(frozen=True)
class FileIdentity:
    """What distinguishes one version of a file from the next one."""

    device: int
    inode: int
    size: int
    mtime_ns: int

    @classmethod
    def of(cls, info: os.stat_result) -> FileIdentity:
        """The identity recorded in *info*."""
        return cls(info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)


@dataclass(frozen=True)
class FileRead:
    """The outcome of reading a memory file.

    ``text`` is ``""`` when the file is absent or unreadable; ``error`` says
    why it could not be read (``None`` when the read succeeded or the file
    does not exist). ``identity`` is the version that was read (``None`` when
    the file does not exist or could not be read).
    """

    text: str
    exists: bool
    error: str | None = None
    identity: FileIdentity | None = None

    @property
    def ok(self) -> bool:
        """The content is trustworthy: the file was read, or it does not exist."""
        return self.error is None


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a special file"


def _is_link(path: Path) -> bool:
    """Whether *path* is a symbolic link; ``False`` when it cannot even be looked at
    (missing, or a folder without search permission: opening it reports why)."""
    try:
        return stat.S_ISLNK(os.lstat(path).st_mode)
    except OSError:
        return False


def _dangling_link(path: Path) -> str | None:
    """Why *path* cannot be used when it is a symbolic link leading nowhere, else ``None``."""
    if not _is_link(path):
        return None
    target = Path(os.path.realpath(path))
    try:
        os.stat(target)
    except (FileNotFoundError, NotADirectoryError):
        return f"it is a symbolic link to {target}, which does not exist"
    except OSError:
        return None  # there, but out of reach: opening it reports why
    return None


def resolved_file(path: Path) -> Path:
    """The real file behind *path*: the end of its symlink chain (``os.path.realpath``)
    when *path* is a symbolic link that leads to something, else *path* itself.

    Two profiles whose ``MEMORY.md`` are links to one shared file get the same
    answer, so they take the same lock and their temporary files share one
    folder. A link to nothing, a loop or a chain that cannot be followed
    gives *path*: nothing is written through it, and reading it says why.
    """
    if not _is_link(path):
        return path
    try:
        os.stat(path)
    except OSError:
        return path
    return Path(os.path.realpath(path))


def write_target(path: Path) -> Path:
    """The file a write to *path* must replace: the end of its symlink chain, or *path*.

    Raises :class:`MemoryStoreError` for a symbolic link that leads nowhere
    or cannot be followed (a loop).
    """
    problem = _dangling_link(path)
    if problem is not None:
        raise MemoryStoreError(
            f"Cannot write {path}: {problem}. Create that file (or remove the link), then retry."
        )
    if not _is_link(path):
        return path
    try:
        os.stat(path)
    except OSError as exc:
        raise MemoryStoreError(
            f"Cannot write {path}: it is a symbolic link that cannot be followed "
            f"({exc.strerror or exc}). Point it at a file (or remove it), then retry."
        ) from exc
    return Path(os.path.realpath(path))


def read_memory_file(path: Path) -> FileRead:
    """Read *path* as UTF-8 (BOM tolerated, strict decoding, regular files only).

    A file that changes while it is read (another program writing it in
    place) is read again, a few times, before it is reported as unreadable.
    """
    for _attempt in range(_READ_ATTEMPTS):
        read = _read_once(path)
        if read.error != _CHANGED_WHILE_READ:
            return read
    return read


def _read_once(path: Path) -> FileRead:
    problem = _dangling_link(path)
    if problem is not None:
        return FileRead("", exists=True, error=problem)
    try:
        fd = os.open(path, _READ_FLAGS)
    except FileNotFoundError:
        return FileRead("", exists=False)
    except OSError as exc:
        return FileRead("", exists=True, error=exc.strerror or str(exc))
    try:
        before = os.fstat(fd)
        if not stat.S_ISREG(before.st_mode):
            return FileRead(
                "", exists=True, error=f"it is {_kind(before.st_mode)}, not a regular file"
            )
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read()
        after = os.fstat(fd)
    except OSError as exc:
        return FileRead("", exists=True, error=exc.strerror or str(exc))
    finally:
        os.close(fd)
    if FileIdentity.of(before) != FileIdentity.of(after):
        return FileRead("", exists=True, error=_CHANGED_WHILE_READ)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return FileRead(
            "", exists=True, error=f"not valid UTF-8 at byte {exc.start} ({exc.reason})"
        )
    return FileRead(text, exists=True, identity=FileIdentity.of(after))


def temp_prefix_for(path: Path) -> str:
    """Prefix of the temporary files used while replacing *path*."""
    return f"{TEMP_PREFIX}{path.name}."


def remove_stale_temp_files(path: Path, *, min_age: float | None = None) -> list[Path]:
    """Delete temporary files a killed writer of *path* left behind; return them.

    Only the folder of the real file (:func:`resolved_file`) is swept, for
    the temporary files of that file, and only while holding its lock (the
    lock of the real file, whatever link it was reached by): every writer
    makes its temporary file while it holds that same lock, so none of them
    can be in the middle of a write. As a second guard, for a writer that
    does not take that lock (an older version, which locked beside the link),
    a file created or changed less than *min_age* seconds ago (default
    :data:`STALE_TEMP_SECONDS`; the newer of its modification and change
    times) is left alone: a live writer holds its temporary file for the time
    of one write and fsync, and a killed writer's leftover is only litter, so
    it can wait. Only regular files are removed.
    """
    limit = STALE_TEMP_SECONDS if min_age is None else min_age
    target = resolved_file(path)
    now = time.time()
    removed: list[Path] = []
    with contextlib.suppress(OSError):
        for stale in target.parent.glob(temp_prefix_for(target) + "*" + TEMP_SUFFIX):
            with contextlib.suppress(OSError):
                info = os.lstat(stale)
                if not stat.S_ISREG(info.st_mode):
                    continue
                if now - max(info.st_mtime, info.st_ctime) < limit:
                    continue  # possibly a live writer's: never pulled from under it
                stale.unlink()
                removed.append(stale)
    return removed


def _fsync_directory(directory: Path) -> None:
    if os.name != "posix":  # pragma: no cover - directories cannot be opened on Windows
        return
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write_failure(path: Path, target: Path, exc: OSError) -> MemoryStoreError:
    """The error for a write that failed *before* anything was replaced."""
    link = f" (a symbolic link to {target})" if target != path else ""
    return MemoryStoreError(
        f"Failed to write memory file {path}{link}: {exc.strerror or exc}. The file was left "
        f"unchanged. Check that {target.parent} is a writable folder with free space, then "
        "retry."
    )


def _existing_mode(path: Path, target: Path) -> int | None:
    """The permission bits of *target* (``None`` when it does not exist yet).

    Raises :class:`MemoryStoreError` when the file is read-only for this
    process: a rename would replace it anyway, but the owner made it
    read-only to keep it as it is.
    """
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode) & 0o777
    except OSError:
        return None
    if not os.access(target, os.W_OK):
        raise MemoryStoreError(
            f"Cannot write {path}: the file is read-only. Nothing was changed. Make it "
            f"writable (chmod u+w {target}) to let memory change it, or leave it read-only "
            "to keep it as it is."
        )
    return mode


_FileKey = tuple[int, int]
"""(device, inode): which file a path names at a given moment."""


def _key(path: Path) -> _FileKey | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return (info.st_dev, info.st_ino)


def _write_temp(target: Path, text: str, mode: int | None) -> tuple[Path, _FileKey]:
    """*text* in a new fsynced temporary file beside *target*, with permission bits *mode*
    (default: private to the owner); returns its path and its (device, inode)."""
    fd, tmp_name = tempfile.mkstemp(
        prefix=temp_prefix_for(target), suffix=TEMP_SUFFIX, dir=target.parent
    )
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            if mode is not None and hasattr(os, "fchmod"):
                os.fchmod(fd, mode)  # a shared (0640) file stays shared after the rename
            handle.write(text.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
            info = os.fstat(handle.fileno())
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp, (info.st_dev, info.st_ino)


def _discard(tmp: Path, ours: _FileKey) -> None:
    """Remove *tmp* if it is still the temporary file this write made (never another
    program's version that an exchange left at that name)."""
    if _key(tmp) == ours:
        with contextlib.suppress(OSError):
            tmp.unlink()


def atomic_write_text(path: Path, text: str) -> None:
    """Replace *path* with *text* (UTF-8, no BOM) atomically and durably.

    A symbolic link is written through (it stays a link). Raises
    :class:`MemoryStoreError` naming the file when the write fails; the
    original file is then untouched and no temporary file is left.
    """
    target = write_target(path)
    mode = _existing_mode(path, target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp, ours = _write_temp(target, text, mode)
    except OSError as exc:
        raise _write_failure(path, target, exc) from exc
    try:
        os.replace(tmp, target)
    except BaseException as exc:
        _discard(tmp, ours)
        if isinstance(exc, OSError):
            raise _write_failure(path, target, exc) from exc
        raise
    _fsync_directory(target.parent)


# -- replacing only the version that was read -------------------------------------------------

_RENAME_NOREPLACE = 1
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100
_UNSUPPORTED = frozenset(
    {errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, getattr(errno, "ENOTSUP", errno.EOPNOTSUPP)}
)


@functools.lru_cache(maxsize=1)
def _renameat2() -> Callable[..., int] | None:
    """libc's ``renameat2`` (Linux, glibc 2.28+), or ``None``."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes  # imported on the first write, not when the provider is listed

    try:
        function: Callable[..., int] = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None
    return function


def _rename_with_flags(source: Path, destination: Path, flags: int) -> bool:
    """``renameat2(source, destination, flags)``; False when the system cannot do it.

    Raises :class:`OSError` for a failure of the rename itself (``EEXIST``, ``ENOENT`` …).
    """
    function = _renameat2()
    if function is None:
        return False
    result = function(_AT_FDCWD, os.fsencode(source), _AT_FDCWD, os.fsencode(destination), flags)
    if result == 0:
        return True
    import ctypes

    code = ctypes.get_errno()
    if code in _UNSUPPORTED:
        return False
    raise OSError(code, os.strerror(code), str(destination))


def _identity(path: Path) -> FileIdentity | None:
    try:
        return FileIdentity.of(os.stat(path))
    except FileNotFoundError:
        return None


def _changed(path: Path) -> FileChangedError:
    return FileChangedError(
        f"{path.name} was changed by another program while this write was being made. "
        "Nothing was written; retry."
    )


def _swap_in(tmp: Path, target: Path, expected: FileIdentity | None, ours: _FileKey) -> None:
    """Put *tmp* at *target* if *target* is still the version *expected*; else raise.

    Raises :class:`OSError` only when nothing was replaced, and
    :class:`FileChangedError` when the file changed (none of this write is at
    *target* then). Once the new text is at *target*, the only error is a
    :class:`MemoryStoreError` that says so.
    """
    if expected is None:
        try:
            if _rename_with_flags(tmp, target, _RENAME_NOREPLACE):
                return
        except FileExistsError:
            raise _changed(target) from None
        if _identity(target) is not None:
            raise _changed(target)
        os.replace(tmp, target)
        return
    # Checked first, so a change made while the new text was being written is refused
    # without ever showing that text at target (another program could read it there).
    if _identity(target) != expected:
        raise _changed(target)
    try:
        exchanged = _rename_with_flags(tmp, target, _RENAME_EXCHANGE)
    except FileNotFoundError:
        raise _changed(target) from None  # deleted since it was read
    if not exchanged:
        os.replace(tmp, target)
        return
    _settle_exchange(tmp, target, expected, ours)


def _settle_exchange(tmp: Path, target: Path, expected: FileIdentity, ours: _FileKey) -> None:
    """After the exchange: the new text is at *target*, and *tmp* names what it displaced."""
    try:
        displaced = _identity(tmp)
    except OSError:
        displaced = None
    if displaced == expected:
        with contextlib.suppress(OSError):  # a leftover is swept by a later write
            tmp.unlink()
        return
    if displaced is None:
        # Removed at its temporary name by someone else (a cleaner that does not take
        # our lock). The new text is in place, so the write is done; what it displaced
        # was, but for a save in the last instant, the version read (checked just before
        # the exchange), and can no longer be put back anyway.
        return
    # Another program saved between the check and the exchange: put its save back.
    try:
        if not _rename_with_flags(tmp, target, _RENAME_EXCHANGE):
            raise OSError(errno.ENOSYS, "renameat2 is no longer available")
    except OSError as exc:
        raise MemoryStoreError(
            f"{target.name} was saved by another program while this write was being made, "
            f"and that version could not be put back ({exc.strerror or exc}): this change "
            f"WAS saved to {target}, and the other program's version is at {tmp}. Compare "
            "the two and keep what is needed before writing again."
        ) from exc
    if _key(tmp) == ours:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise _changed(target)
    # It saved yet again in between, over this write: keep that newer save, not lost.
    keep = target.with_name(f"{target.name}.conflict.{time.time_ns()}")
    try:
        os.replace(tmp, keep)
    except OSError as exc:
        keep = tmp
        detail = f" ({exc.strerror or exc})"
    else:
        detail = ""
    raise FileChangedError(
        f"{target.name} was saved by another program several times while this write was "
        f"being made. Nothing was written; a displaced version was kept as {keep}{detail}. "
        "Retry."
    )


def replace_if_unchanged(path: Path, text: str, expected: FileIdentity | None) -> None:
    """Replace *path* with *text*, unless it is no longer the version *expected*.

    *expected* is the identity from :func:`read_memory_file` (``None``: the file
    did not exist). A symbolic link is written through: the file at the end
    of its chain is replaced, and the link stays a link. Raises
    :class:`FileChangedError` when another program wrote or removed the file
    since, and :class:`MemoryStoreError` when the write fails; the message
    says whether the new text reached the file (an error after the
    replacement never claims the file was left unchanged). No temporary file
    of this write is left behind.
    """
    target = write_target(path)
    mode = _existing_mode(path, target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp, ours = _write_temp(target, text, mode)
    except OSError as exc:
        raise _write_failure(path, target, exc) from exc
    try:
        _swap_in(tmp, target, expected, ours)
    except BaseException as exc:
        _discard(tmp, ours)
        if isinstance(exc, OSError):  # raised only before anything was replaced
            raise _write_failure(path, target, exc) from exc
        raise
    _fsync_directory(target.parent)
