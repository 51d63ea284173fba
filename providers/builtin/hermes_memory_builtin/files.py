"""Reading and atomically replacing a memory file.

Reads strip a UTF-8 byte-order mark (Notepad adds one) and decode strictly:
a file that is not valid UTF-8 is reported as unreadable rather than
silently mangled. Writes go to a temporary file in the same folder, are
flushed and fsynced, then renamed over the target, so a reader (or a crash)
only ever sees the complete old or the complete new content.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from hermes_core.errors import MemoryStoreError

TEMP_PREFIX = ".mem_"
TEMP_SUFFIX = ".tmp"


@dataclass(frozen=True)
class FileRead:
    """The outcome of reading a memory file.

    ``text`` is ``""`` when the file is absent or unreadable; ``error`` says
    why it could not be read (``None`` when the read succeeded or the file
    does not exist).
    """

    text: str
    exists: bool
    error: str | None = None

    @property
    def ok(self) -> bool:
        """The content is trustworthy: the file was read, or it does not exist."""
        return self.error is None


def read_memory_file(path: Path) -> FileRead:
    """Read *path* as UTF-8 (BOM tolerated, strict decoding)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return FileRead("", exists=False)
    except OSError as exc:
        return FileRead("", exists=True, error=exc.strerror or str(exc))
    try:
        return FileRead(data.decode("utf-8-sig"), exists=True)
    except UnicodeDecodeError as exc:
        return FileRead(
            "", exists=True, error=f"not valid UTF-8 at byte {exc.start} ({exc.reason})"
        )


def temp_prefix_for(path: Path) -> str:
    """Prefix of the temporary files used while replacing *path*."""
    return f"{TEMP_PREFIX}{path.name}."


def remove_stale_temp_files(path: Path) -> None:
    """Delete temporary files a killed writer of *path* left behind.

    Only call this while holding *path*'s lock: then no other writer can be
    using them.
    """
    for stale in path.parent.glob(temp_prefix_for(path) + "*" + TEMP_SUFFIX):
        with contextlib.suppress(OSError):
            stale.unlink()


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


def atomic_write_text(path: Path, text: str) -> None:
    """Replace *path* with *text* (UTF-8, no BOM) atomically and durably.

    Raises :class:`MemoryStoreError` naming the file when the write fails;
    the original file is then untouched and no temporary file is left.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(
        prefix=temp_prefix_for(path), suffix=TEMP_SUFFIX, dir=path.parent
    )
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise MemoryStoreError(
                f"Failed to write memory file {path}: {exc}. The file was left unchanged."
            ) from exc
        raise
    _fsync_directory(path.parent)
