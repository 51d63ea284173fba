"""Message vectors as one flat file, memory-mapped by a search instead of read row by row.

``state.db.vectors.bin`` holds what the sidecar (``state.db.vectors``, SQLite) holds, in
the form a search multiplies: a 64-byte header (magic, dimensions, a random nonce), then
one record per vector piece: the message id (int64), the checksum of the text embedded
(uint32, as in the sidecar), four bytes of padding, then the vector (float32; everything
little-endian, the record padded to whole 64-bit words), appended in the order the
sidecar's rows were written.
The sidecar stays the source of truth: it records, in the transaction that writes its rows,
the file's :class:`Stamp` (nonce, records, size, modification time, and the sum of the
records as 64-bit words). A file that does not match its stamp (torn, truncated, replaced,
damaged, written by anyone else since, or appended to by a writer whose transaction then
failed) is not used, and is rebuilt from the sidecar. Checking the sum reads the file once
(a few milliseconds for 100,000 vectors); the search that maps it reads it anyway.

numpy is imported by the functions that need it, so importing this module costs nothing.
"""

from __future__ import annotations

import json
import mmap
import os
import secrets
import struct
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from hermes_core.sessions.connection import restrict_permissions

__all__ = [
    "HEADER_BYTES",
    "Mapped",
    "Stamp",
    "append",
    "erase",
    "map_file",
    "unchanged",
    "vector_file_path",
    "write",
]

MAGIC = b"HMVEC\x00\x00\x01"
HEADER_BYTES = 64
_HEADER = struct.Struct("<8sI16s")  # magic, dims, nonce; the rest of the 64 bytes is zero


def vector_file_path(sidecar: str | os.PathLike[str]) -> Path:
    """The flat vector file of *sidecar*: ``<sidecar>.bin`` beside it."""
    path = Path(sidecar)
    return path.with_name(path.name + ".bin")


_VECTOR_AT = 16
"""Where a record's vector starts (after the id, the checksum and the padding)."""


def record_bytes(dims: int) -> int:
    """Bytes per record: id, checksum and *dims* float32 values, in whole 64-bit words."""
    return (_VECTOR_AT + 4 * dims + 7) // 8 * 8


@dataclass(frozen=True)
class Stamp:
    """What the sidecar says its vector file is: a file that differs is not it."""

    nonce: str
    dims: int
    records: int
    size: int
    mtime_ns: int
    total: int
    """The records' 64-bit little-endian words summed modulo 2**64."""

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str | None) -> Stamp | None:
        """The stamp written by :meth:`to_json`; ``None`` for anything else."""
        if not text:
            return None
        try:
            fields = json.loads(text)
            stamp = cls(**{name: fields[name] for name in cls.__dataclass_fields__})
        except (ValueError, TypeError, KeyError):
            return None
        if stamp.records < 0 or stamp.dims <= 0:
            return None
        return stamp

    def matches(self, status: os.stat_result) -> bool:
        """Whether a file with *status* is the one stamped (size and time unchanged)."""
        return (status.st_size, status.st_mtime_ns) == (self.size, self.mtime_ns)


def _stamped(path: Path, nonce: str, dims: int, records: int, total: int) -> Stamp:
    status = os.stat(path)
    return Stamp(nonce, dims, records, status.st_size, status.st_mtime_ns, total)


def _records(ids: Any, checksums: Any, matrix: Any, dims: int) -> bytes:
    """*ids*, *checksums* and *matrix* rows (float32) as records."""
    import numpy as np

    layout = np.dtype(
        {
            "names": ["id", "checksum", "vector"],
            "formats": ["<i8", "<u4", ("<f4", (dims,))],
            "offsets": [0, 8, _VECTOR_AT],
            "itemsize": record_bytes(dims),
        }
    )
    out = np.zeros(len(ids), dtype=layout)
    out["id"] = ids
    out["checksum"] = checksums
    out["vector"] = matrix
    return out.tobytes()


def _total(records: Any) -> int:
    """The sum of *records* (a bytes-like of whole records) as 64-bit words, mod 2**64."""
    import numpy as np

    return int(np.add.reduce(np.frombuffer(records, dtype="<u8"), dtype=np.uint64))


def write(path: Path, dims: int, ids: Any, checksums: Any, matrix: Any) -> Stamp:
    """Replace the file at *path* with these vectors, whole or not at all (a temporary
    file, synced, then renamed over it), and return its stamp."""
    nonce = secrets.token_hex(16)
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        with open(temporary, "wb") as out:
            restrict_permissions(temporary)  # vectors of private conversations
            out.write(_HEADER.pack(MAGIC, dims, bytes.fromhex(nonce)).ljust(HEADER_BYTES, b"\0"))
            records = _records(ids, checksums, matrix, dims)
            out.write(records)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
    return _stamped(path, nonce, dims, len(ids), _total(records))


def append(path: Path, stamp: Stamp, ids: Any, checksums: Any, matrix: Any) -> Stamp | None:
    """Add records after the *stamp*'s, synced to disk, and return the new stamp; ``None``
    (and nothing written) when the file is not the stamped one. The caller records the new
    stamp in the transaction that wrote the rows."""
    try:
        with open(path, "r+b") as out:
            if not stamp.matches(os.fstat(out.fileno())) or _nonce(out) != stamp.nonce:
                return None
            out.seek(0, os.SEEK_END)
            records = _records(ids, checksums, matrix, stamp.dims)
            out.write(records)
            out.flush()
            os.fsync(out.fileno())
    except OSError:
        return None
    total = (stamp.total + _total(records)) % 2**64
    return _stamped(path, stamp.nonce, stamp.dims, stamp.records + len(ids), total)


def erase(path: Path, ids: set[int]) -> int:
    """Overwrite with zeros, in place and synced, every record of the messages *ids* (their
    vectors go with the deleted messages); how many. Imports nothing; a file that is not
    one of ours, or is gone, is left alone. The caller drops the file's stamp: the file no
    longer sums to it, and is written again without them before it is used."""
    try:
        with open(path, "r+b") as handle:
            header = handle.read(_HEADER.size)
            if len(header) < _HEADER.size or _HEADER.unpack(header)[0] != MAGIC:
                return 0
            width = record_bytes(_HEADER.unpack(header)[1])
            size = os.fstat(handle.fileno()).st_size
            if size <= HEADER_BYTES:
                return 0
            with mmap.mmap(handle.fileno(), size) as view:
                blank = bytes(width - 8)
                erased = 0
                for at in range(HEADER_BYTES, size - width + 1, width):
                    if struct.unpack_from("<q", view, at)[0] in ids:
                        view[at + 8 : at + width] = blank
                        erased += 1
                view.flush()
    except (OSError, ValueError):
        return 0
    return erased


def _nonce(handle: Any) -> str | None:
    handle.seek(0)
    header = handle.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    magic, _, nonce = _HEADER.unpack(header)
    return nonce.hex() if magic == MAGIC else None


@dataclass
class Mapped:
    """The stamped records of a vector file, mapped read-only: ``ids`` (int64),
    ``checksums`` (uint32) and ``matrix`` (float32, one row per record) are views of the
    mapping, not copies."""

    stamp: Stamp
    ids: Any
    checksums: Any
    matrix: Any


def unchanged(path: Path, stamp: Stamp) -> bool:
    """Whether the file at *path* is still the stamped one (one ``stat``, nothing read)."""
    try:
        return stamp.matches(os.stat(path))
    except OSError:
        return False


def map_file(path: Path, stamp: Stamp, checked: Stamp | None = None) -> Mapped | None:
    """The file at *path* mapped, when it is the one *stamp* describes; else ``None``.

    *checked*: an earlier stamp of the same file (its nonce) whose records this process
    already summed; only the records appended after them are summed again."""
    import numpy as np

    width = record_bytes(stamp.dims)
    try:
        with open(path, "rb") as handle:
            if not stamp.matches(os.fstat(handle.fileno())) or _nonce(handle) != stamp.nonce:
                return None
            if stamp.size != HEADER_BYTES + stamp.records * width:
                return None
            if stamp.records == 0:
                empty = np.zeros((0, stamp.dims), dtype=np.float32)
                return Mapped(stamp, np.zeros(0, np.int64), np.zeros(0, np.uint32), empty)
            view = mmap.mmap(handle.fileno(), stamp.size, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None
    start, total = HEADER_BYTES, stamp.total
    same = checked is not None and (checked.nonce, checked.dims) == (stamp.nonce, stamp.dims)
    if checked is not None and same and checked.records <= stamp.records:
        start += checked.records * width
        total = (stamp.total - checked.total) % 2**64
    if _total(memoryview(view)[start:]) != total:
        return None
    ids = np.ndarray((stamp.records,), "<i8", view, HEADER_BYTES, (width,))
    checksums = np.ndarray((stamp.records,), "<u4", view, HEADER_BYTES + 8, (width,))
    at = HEADER_BYTES + _VECTOR_AT
    matrix = np.ndarray((stamp.records, stamp.dims), "<f4", view, at, (width, 4))
    return Mapped(stamp, ids, checksums, matrix)
