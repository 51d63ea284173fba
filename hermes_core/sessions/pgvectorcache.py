"""A local copy of a PostgreSQL store's message vectors, mapped by every process of the
machine instead of each holding its own copy in memory.

A process reads ``message_vectors`` once and then only the rows added since (by ``seq``).
This file keeps those vectors in ``$HERMES_HOME/cache/``: the vectors in the flat format of
:mod:`~hermes_core.sessions.vectorfile` (``pgvectors-<key>.bin``, memory-mapped: the
operating system keeps one copy of its pages for every process that maps it) and beside it
what they are (``.json``): the encoder row's id and nonce, the highest ``seq`` held and the
file's :class:`~hermes_core.sessions.vectorfile.Stamp`. A process trusts it only as far as
the database agrees: the encoder row must still carry that nonce (a table emptied or
restored gives it a new one) and hold rows up to that ``seq``; a file that is not as its
stamp says (torn, truncated, replaced, damaged) is not used, and is written again.

Writers take an exclusive lock (``.lock``) and either append records after the stamped
ones (:func:`~hermes_core.sessions.vectorfile.append`, then a new ``.json`` put in place
by a rename) or write a new file (renamed over the old one): a process that mapped the
file before keeps seeing the records it validated, never a torn one. Readers take the
lock shared, so they never see a file longer than its stamp (where the system has no
shared ``flock``, as on Windows, they take the writers' lock, the core's
:func:`~hermes_core.locking.exclusive_lock`). It is a cache: deleting it costs one full
read; a folder where it cannot be written only logs.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from hermes_core import locking
from hermes_core.errors import LockError
from hermes_core.home import get_hermes_home
from hermes_core.sessions import vectorfile
from hermes_core.sessions.connection import restrict_permissions

__all__ = ["Cached", "VectorCache"]

try:
    import fcntl
except ImportError:  # no shared flock (Windows): readers take the writers' lock
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger(__name__)


class Cached(NamedTuple):
    """Vectors of the local copy: the encoder row they belong to, the highest seq held, the
    file's stamp and the mapped arrays (read-only views of the file)."""

    encoding: tuple[int, str]
    seen: int
    stamp: vectorfile.Stamp
    ids: Any
    checksums: Any
    matrix: Any


class VectorCache:
    """The local copy of encoder *model*'s vectors of the database at *url* (its password is
    not part of the file name; the name is a digest)."""

    def __init__(self, url: str, model: str, home: Path | None = None) -> None:
        key = hashlib.sha256(f"{url}\0{model}".encode()).hexdigest()[:20]
        folder = (home or get_hermes_home()) / "cache"
        self.path = folder / f"pgvectors-{key}.bin"
        self.meta = folder / f"pgvectors-{key}.json"
        self._looked: tuple[int, int, int] | None = None  # the .json last read or written

    def _status(self) -> tuple[int, int, int] | None:
        try:
            status = os.stat(self.meta)
        except OSError:
            return None
        return (status.st_ino, status.st_mtime_ns, status.st_size)

    def changed(self) -> bool:
        """Whether the copy was written since this process last read or wrote it (one
        ``stat``)."""
        return self._status() != self._looked

    @contextlib.contextmanager
    def _locked(self, exclusive: bool) -> Iterator[None]:
        if exclusive:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            lock = _lock(self.meta.with_suffix(".lock"), exclusive)
        except OSError:
            if exclusive:
                raise
            yield  # a folder this process cannot write: read without the lock
            return
        with lock:
            yield

    def locked(self) -> contextlib.AbstractContextManager[None]:
        """Hold the writers' lock (raises :class:`OSError` when the folder is not writable)."""
        return self._locked(exclusive=True)

    def load(
        self, encoding: tuple[int, str], checked: vectorfile.Stamp | None = None
    ) -> Cached | None:
        """The copy's vectors of *encoding* (the encoder row's id and nonce), mapped, or
        ``None``; *checked* is the stamp of the copy this process mapped before (only the
        records appended since are checked again)."""
        try:
            with self._locked(exclusive=False):
                return self.load_locked(encoding, checked)
        except OSError:
            return None

    def load_locked(
        self, encoding: tuple[int, str], checked: vectorfile.Stamp | None = None
    ) -> Cached | None:
        """:meth:`load`, for a caller that holds :meth:`locked`."""
        self._looked = self._status()
        try:
            meta = json.loads(self.meta.read_text(encoding="utf-8"))
            stamp = vectorfile.Stamp.from_json(json.dumps(meta["file"]))
            if stamp is None or [meta["encoder"], meta["nonce"]] != list(encoding):
                return None
            seen = int(meta["seen"])
            mapped = vectorfile.map_file(self.path, stamp, checked)
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if mapped is None:
            return None
        return Cached(encoding, seen, stamp, *mapped.arrays())

    def write(
        self, encoding: tuple[int, str], seen: int, ids: Any, checksums: Any, matrix: Any
    ) -> Cached | None:
        """Replace the copy with these vectors (whole or not at all) and map it; the caller
        holds :meth:`locked`."""
        stamp = vectorfile.write(self.path, matrix.shape[1], ids, checksums, matrix)
        return self._record(encoding, seen, stamp)

    def append(
        self, cached: Cached, seen: int, ids: Any, checksums: Any, matrix: Any
    ) -> Cached | None:
        """Add these vectors (those of seq up to *seen*) after *cached*'s and map the file
        again; ``None`` (nothing written) when the file is no longer *cached*'s. The caller
        holds :meth:`locked`."""
        stamp = vectorfile.append(self.path, cached.stamp, ids, checksums, matrix)
        return None if stamp is None else self._record(cached.encoding, seen, stamp)

    def _record(
        self, encoding: tuple[int, str], seen: int, stamp: vectorfile.Stamp
    ) -> Cached | None:
        fields = {
            "encoder": encoding[0],
            "nonce": encoding[1],
            "seen": int(seen),
            "file": json.loads(stamp.to_json()),
        }
        temporary = self.meta.with_name(f"{self.meta.name}.{os.getpid()}.tmp")
        try:
            temporary.write_text(json.dumps(fields), encoding="utf-8")
            restrict_permissions(temporary)
            os.replace(temporary, self.meta)
        finally:
            with contextlib.suppress(OSError):
                temporary.unlink()
        return self.load_locked(encoding, stamp)  # written here: nothing to check again


def _lock(path: Path, exclusive: bool) -> contextlib.AbstractContextManager[Any]:
    """*path* locked, shared unless *exclusive* where the system has shared locks (held
    until the returned context ends); :class:`OSError` when it cannot be opened."""
    if fcntl is None:
        stack = contextlib.ExitStack()
        try:
            stack.enter_context(locking.exclusive_lock(path))
        except LockError as exc:
            raise OSError(str(exc)) from exc
        return stack
    lock = open(path, "a")  # noqa: SIM115
    try:
        fcntl.flock(lock, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
    except OSError:
        lock.close()
        raise
    return lock
