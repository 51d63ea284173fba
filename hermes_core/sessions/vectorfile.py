"""Message vectors as one flat file, memory-mapped by a search instead of read row by row.

``state.db.vectors.bin`` holds what the sidecar (``state.db.vectors``, SQLite) holds, in
the form a search multiplies: a 64-byte header (magic, dimensions, a random nonce), then
one record per vector piece, appended in the order the sidecar's rows were written. A
record is ``dims + 5`` float32 words (little-endian): the vector, then the message id (as
three whole numbers of at most 22 bits, low part first) and the checksum of the text
embedded (two of 16 bits, as in the sidecar). Every word is a finite float (a whole number
below 2**24 is one exactly), so the records are one float32 matrix that a scorer
multiplies as it is, by the question's vector padded with five zeros
(:mod:`~hermes_core.sessions.vectorscan`): no copy, no numpy.
The sidecar stays the source of truth: it records, in the transaction that writes its rows,
the file's :class:`Stamp` (nonce, records, size, modification time, and a weighted sum of
the records' bytes). A file that does not match its stamp (torn, truncated, replaced,
damaged, written by anyone else since, or appended to by a writer whose transaction then
failed) is not used, and is rebuilt from the sidecar. Checking the sum reads the file once
(a few milliseconds for 100,000 vectors, in simsimd); the search that maps it reads it
anyway.

numpy is imported only to write records (a writer has just embedded them with it);
mapping and checking a file needs simsimd alone.
"""

from __future__ import annotations

import array
import json
import mmap
import os
import secrets
import struct
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, cast

from hermes_core.sessions.connection import restrict_permissions

__all__ = [
    "HEADER_BYTES",
    "TAIL_WORDS",
    "Mapped",
    "Stamp",
    "append",
    "erase",
    "from_rows",
    "map_file",
    "record_bytes",
    "records_of",
    "unchanged",
    "vector_file_path",
    "write",
]

MAGIC = b"HMVEC\x00\x00\x02"
HEADER_BYTES = 64
_HEADER = struct.Struct("<8sI16s")  # magic, dims, nonce; the rest of the 64 bytes is zero
TAIL_WORDS = 5
"""Words after a record's vector: the message id in three parts, the checksum in two."""
_ID_BITS = 22
_TAIL = struct.Struct("<5f")


def vector_file_path(sidecar: str | os.PathLike[str]) -> Path:
    """The flat vector file of *sidecar*: ``<sidecar>.bin`` beside it."""
    path = Path(sidecar)
    return path.with_name(path.name + ".bin")


def record_bytes(dims: int) -> int:
    """Bytes per record: *dims* float32 values, then the id's and the checksum's words."""
    return 4 * (dims + TAIL_WORDS)


@dataclass(frozen=True)
class Stamp:
    """What the sidecar says its vector file is: a file that differs is not it."""

    nonce: str
    dims: int
    records: int
    size: int
    mtime_ns: int
    total: int
    """The records' weighted byte sum (:func:`_total`)."""

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


def records_of(ids: Any, checksums: Any, matrix: Any, dims: int) -> bytes:
    """*ids*, *checksums* and *matrix* rows (float32) as records (numpy: a writer's)."""
    import numpy as np

    count = len(ids)
    out = np.zeros((count, dims + TAIL_WORDS), dtype="<f4")
    out[:, :dims] = np.asarray(matrix, dtype=np.float32).reshape(count, dims)
    whole = np.asarray(ids, dtype=np.int64).view(np.uint64)
    mask = np.uint64((1 << _ID_BITS) - 1)
    for part in range(3):
        out[:, dims + part] = (whole >> np.uint64(_ID_BITS * part)) & mask
    check = np.asarray(checksums, dtype=np.uint32)
    out[:, dims + 3] = check & np.uint32(0xFFFF)
    out[:, dims + 4] = check >> np.uint32(16)
    return out.tobytes()


def _weights(width: int) -> memoryview:
    """The byte weights of the sum: fixed, all non-zero, varied so that damage to
    neighbouring bytes seldom cancels out."""
    signed = array.array("b", [((at * 73 + 41) % 251) - 125 or 1 for at in range(width)])
    return memoryview(signed).cast("B").cast("b", (1, width))


def _total(records: Any, width: int) -> int:
    """The weighted sum of *records* (a bytes-like of whole records of *width* bytes): each
    byte (signed) times its place's weight (:func:`_weights`), added up; exact (int32 sums
    per record, at most about 2**24 each)."""
    import simsimd

    view = memoryview(records).cast("B")
    count = len(view) // width
    if count == 0:
        return 0
    rows = view[: count * width].cast("b", (count, width))
    out: Any = simsimd.cdist(cast(Any, _weights(width)), cast(Any, rows), metric="dot")
    sums = memoryview(out).cast("B").cast("d")
    return int(sum(sums))


def write(path: Path, dims: int, ids: Any, checksums: Any, matrix: Any) -> Stamp:
    """Replace the file at *path* with these vectors, whole or not at all (a temporary
    file, synced, then renamed over it), and return its stamp."""
    nonce = secrets.token_hex(16)
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        with open(temporary, "wb") as out:
            restrict_permissions(temporary)  # vectors of private conversations
            out.write(_HEADER.pack(MAGIC, dims, bytes.fromhex(nonce)).ljust(HEADER_BYTES, b"\0"))
            records = records_of(ids, checksums, matrix, dims)
            out.write(records)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
    return _stamped(path, nonce, dims, len(ids), _total(records, record_bytes(dims)))


def append(path: Path, stamp: Stamp, ids: Any, checksums: Any, matrix: Any) -> Stamp | None:
    """Add records after the *stamp*'s, synced to disk, and return the new stamp; ``None``
    (and nothing written) when the file is not the stamped one. The caller records the new
    stamp in the transaction that wrote the rows."""
    try:
        with open(path, "r+b") as out:
            if not stamp.matches(os.fstat(out.fileno())) or _nonce(out) != stamp.nonce:
                return None
            out.seek(0, os.SEEK_END)
            records = records_of(ids, checksums, matrix, stamp.dims)
            out.write(records)
            out.flush()
            os.fsync(out.fileno())
    except OSError:
        return None
    total = stamp.total + _total(records, record_bytes(stamp.dims))
    return _stamped(path, stamp.nonce, stamp.dims, stamp.records + len(ids), total)


def _tail_id(words: tuple[float, ...]) -> int:
    """The message id held in a record's first three tail words."""
    whole = sum(int(word) << (_ID_BITS * part) for part, word in enumerate(words[:3]))
    return whole - (1 << 64) if whole >= 1 << 63 else whole


def erase(path: Path, ids: set[int]) -> int:
    """Overwrite with zeros, in place and synced, the vector and checksum of every record
    of the messages *ids* (their vectors go with the deleted messages); how many. Imports
    nothing; a file that is not one of ours, or is gone, is left alone. The caller drops the
    file's stamp: the file no longer sums to it, and is written again without them before
    it is used."""
    try:
        with open(path, "r+b") as handle:
            header = handle.read(_HEADER.size)
            if len(header) < _HEADER.size or _HEADER.unpack(header)[0] != MAGIC:
                return 0
            dims = _HEADER.unpack(header)[1]
            width = record_bytes(dims)
            size = os.fstat(handle.fileno()).st_size
            if size <= HEADER_BYTES:
                return 0
            with mmap.mmap(handle.fileno(), size) as view:
                erased = 0
                for at in range(HEADER_BYTES, size - width + 1, width):
                    tail = at + 4 * dims
                    if _tail_id(_TAIL.unpack_from(view, tail)) in ids:
                        view[at:tail] = bytes(4 * dims)
                        view[tail + 12 : at + width] = bytes(8)
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
    """Records held for searching: *count* whole records of *dims* dimensions from *offset*
    of *buffer* (the file mapped read-only, or the sidecar's rows in memory) and the file's
    *stamp* (``None`` for rows in memory)."""

    stamp: Stamp | None
    buffer: Any
    offset: int
    count: int
    dims: int

    @property
    def width(self) -> int:
        """Float32 words per record."""
        return self.dims + TAIL_WORDS

    @property
    def records(self) -> memoryview:
        """The records' bytes (a view, not a copy)."""
        start = self.offset
        return memoryview(self.buffer)[start : start + self.count * 4 * self.width]

    def tail(self, row: int) -> tuple[int, int]:
        """``(message id, checksum)`` of the record at *row*."""
        at = self.offset + row * 4 * self.width + 4 * self.dims
        words = _TAIL.unpack_from(self.buffer, at)
        return _tail_id(words), int(words[3]) | int(words[4]) << 16

    def arrays(self) -> tuple[Any, Any, Any]:
        """``(ids, checksums, matrix)`` as numpy views of the records (int64, uint32,
        float32 rows): what :mod:`~hermes_core.sessions.neighbours` multiplies."""
        import numpy as np

        if self.count == 0:
            empty = np.zeros((0, self.dims), dtype=np.float32)
            return np.zeros(0, np.int64), np.zeros(0, np.uint32), empty
        shape, strides = (self.count, self.dims), (4 * self.width, 4)
        matrix = np.ndarray(shape, "<f4", self.buffer, self.offset, strides)
        at = self.offset + 4 * self.dims
        tail = np.ndarray((self.count, TAIL_WORDS), "<f4", self.buffer, at, strides)
        parts = tail.astype(np.uint64)
        whole = parts[:, 0] | parts[:, 1] << np.uint64(22) | parts[:, 2] << np.uint64(44)
        checksums = (parts[:, 3] | parts[:, 4] << np.uint64(16)).astype(np.uint32)
        return whole.view(np.int64), checksums, matrix


def from_rows(ids: Any, checksums: Any, matrix: Any, dims: int) -> Mapped:
    """Records held in memory (where the file cannot be written), searched as a file is."""
    return Mapped(None, records_of(ids, checksums, matrix, dims), 0, len(ids), dims)


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
    width = record_bytes(stamp.dims)
    try:
        with open(path, "rb") as handle:
            if not stamp.matches(os.fstat(handle.fileno())) or _nonce(handle) != stamp.nonce:
                return None
            if stamp.size != HEADER_BYTES + stamp.records * width:
                return None
            if stamp.records == 0:
                return Mapped(stamp, b"", 0, 0, stamp.dims)
            view = mmap.mmap(handle.fileno(), stamp.size, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None
    start, total = HEADER_BYTES, stamp.total
    same = checked is not None and (checked.nonce, checked.dims) == (stamp.nonce, stamp.dims)
    if checked is not None and same and checked.records <= stamp.records:
        start += checked.records * width
        total = stamp.total - checked.total
    if _total(memoryview(view)[start:], width) != total:
        return None
    return Mapped(stamp, view, HEADER_BYTES, stamp.records, stamp.dims)
