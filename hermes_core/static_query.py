"""The static encoder's vector of one text, in pure Python: a search's question encoded
without importing numpy.

:class:`~hermes_core.embeddings.StaticEncoder` sums a text's token rows (int8, each times
its token's scale) and divides by the sum's length, in numpy's float32. A question has a
few dozen tokens, so the same sums are cheap in Python; each step here rounds to float32
as numpy does (products one at a time, the rows and the squares added pairwise as numpy's
``reduceat`` and ``add.reduce`` add them), so the vector is bit for bit the encoder's. The
token rows are read from the memory-mapped ``vectors.npy``; nothing else of it is loaded.
"""

from __future__ import annotations

import array
import json
import math
import mmap
import re
import threading
from collections.abc import Callable, Sequence
from itertools import repeat
from operator import add, mul
from pathlib import Path
from typing import ClassVar, TypeVar

from hermes_core.asciipieces import AsciiPieces
from hermes_core.embeddings import STATIC_DIR, LazyTokenizer, _WordPieces
from hermes_core.errors import ConfigError

__all__ = ["StaticQuery"]

T = TypeVar("T")

_NPY_HEADER = re.compile(rb"'descr': '([^']+)', 'fortran_order': False, 'shape': \(([\d, ]+)\)")
_PAIRWISE_BLOCK = 128
"""numpy's ``PW_BLOCKSIZE``: longer runs are halved before they are summed."""


def _npy(path: Path, descr: str) -> tuple[mmap.mmap, int, tuple[int, ...]]:
    """*path* (a ``.npy`` file of *descr* values in C order) mapped: the mapping, where its
    data starts, and its shape."""
    with open(path, "rb") as handle:
        view = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    if view[:6] != b"\x93NUMPY":
        raise ConfigError(f"{path} is not a .npy file")
    if view[6] == 1:
        length, start = int.from_bytes(view[8:10], "little"), 10
    else:
        length, start = int.from_bytes(view[8:12], "little"), 12
    found = _NPY_HEADER.search(view[start : start + length])
    if found is None or found.group(1).decode() != descr:
        raise ConfigError(f"{path} does not hold {descr} values in C order")
    shape = tuple(int(n) for n in found.group(2).split(b",") if n.strip())
    return view, start + length, shape


def _f32(value: float) -> float:
    return array.array("f", (value,))[0]


def _pairwise(items: Sequence[T], plus: Callable[[T, T], T], zero: T) -> T:
    """*items* added as numpy's pairwise summation (``pairwise_sum``) adds them: short runs
    one by one, up to :data:`_PAIRWISE_BLOCK` in eight lanes, longer ones halved."""
    count = len(items)
    if count < 8:
        total = zero
        for item in items:
            total = plus(total, item)
        return total
    if count <= _PAIRWISE_BLOCK:
        lanes = list(items[:8])
        end = count - count % 8
        for at in range(8, end, 8):
            lanes = [plus(lane, item) for lane, item in zip(lanes, items[at : at + 8], strict=True)]
        total = plus(
            plus(plus(lanes[0], lanes[1]), plus(lanes[2], lanes[3])),
            plus(plus(lanes[4], lanes[5]), plus(lanes[6], lanes[7])),
        )
        for item in items[end:]:
            total = plus(total, item)
        return total
    half = count // 2
    half -= half % 8
    return plus(_pairwise(items[:half], plus, zero), _pairwise(items[half:], plus, zero))


def _add_f32(a: float, b: float) -> float:
    return _f32(a + b)


def _add_rows(a: array.array[float], b: array.array[float]) -> array.array[float]:
    return array.array("f", map(add, a, b))


class StaticQuery:
    """The vectors of single texts by the static encoder in *directory* (its shipped files
    by default). :meth:`vector` is thread-safe."""

    _shared: ClassVar[dict[Path, StaticQuery]] = {}
    _shared_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory or STATIC_DIR
        manifest = json.loads((self.directory / "manifest.json").read_text(encoding="utf-8"))
        self.name = str(manifest["encoder"])
        self._vectors, self._start, shape = _npy(self.directory / "vectors.npy", "|i1")
        scales, at, (tokens,) = _npy(self.directory / "scales.npy", "<f4")
        self._scales = array.array("f", scales[at : at + 4 * tokens])
        if len(shape) != 2 or shape[0] != tokens:
            raise ConfigError(f"the static encoder's files in {self.directory} do not match")
        self.dims = shape[1]
        self._ascii = AsciiPieces.read(self.directory / "tokenizer.json")
        self._pieces: _WordPieces | bool | None = False  # read for the first other text
        self._tokenizer = LazyTokenizer(self.directory / "tokenizer.json")
        self._lock = threading.Lock()

    @classmethod
    def load(cls, directory: Path | None = None) -> StaticQuery:
        """The process-wide instance for *directory*."""
        key = (directory or STATIC_DIR).resolve()
        with cls._shared_lock:
            found = cls._shared.get(key)
            if found is None:
                found = cls._shared[key] = cls(directory)
            return found

    def token_ids(self, text: str) -> list[int]:
        """The tokenizer's ids of *text* (as :meth:`StaticEncoder.token_ids` gives them)."""
        ids = self._ascii.ids(text) if self._ascii is not None else None
        if ids is not None:
            return ids
        with self._lock:
            if self._pieces is False:
                self._pieces = _WordPieces.read(self.directory / "tokenizer.json")
        if isinstance(self._pieces, _WordPieces):
            ids = self._pieces.ids(text)
            if ids is not None:
                return ids
        return self._tokenizer.ids([text])[0]

    def vector(self, text: str) -> array.array[float]:
        """*text*'s unit vector (float32, ``dims`` values; zeros for a text without tokens),
        equal to ``StaticEncoder.encode([text])[0]``."""
        dims = self.dims
        rows = []
        for token in self.token_ids(str(text)):
            at = self._start + token * dims
            row = array.array("b", self._vectors[at : at + dims])
            rows.append(array.array("f", map(mul, row, repeat(self._scales[token]))))
        if not rows:
            return array.array("f", bytes(4 * dims))
        # numpy's reduceat: the first row, plus the others summed pairwise.
        zero = array.array("f", bytes(4 * dims))
        summed = _add_rows(rows[0], _pairwise(rows[1:], _add_rows, zero))
        squares = array.array("f", map(mul, summed, summed))
        norm = max(_f32(math.sqrt(_pairwise(squares, _add_f32, 0.0))), _f32(1e-12))
        return array.array("f", [value / norm for value in summed])
