"""The nearest records of a vector file to a question, without numpy.

A one-shot search (``hermes-memory sessions search``) would spend more importing numpy
than searching; this module scores the records of a
:class:`~hermes_core.sessions.vectorfile.Mapped` with simsimd (one C call over the mapped
float32 matrix, the question's vector padded with zeros over each record's id and checksum
words) and picks the best with :mod:`heapq`. It picks what
:func:`~hermes_core.sessions.neighbours.best` picks from numpy's scores: the messages of
the highest-scoring rows, each by its best piece, ties in row order.
"""

from __future__ import annotations

import array
import heapq
from collections.abc import Sequence
from typing import Any, cast

from hermes_core.sessions.neighbours import MAX_CHUNKS
from hermes_core.sessions.vectorfile import TAIL_WORDS, Mapped

__all__ = ["nearest_records", "scores"]


def scores(held: Mapped, query: Sequence[float]) -> list[float]:
    """Each record's dot product with *query* (``held.dims`` floats), in record order."""
    import simsimd

    if held.count == 0:
        return []
    padded = array.array("f", query)
    padded.extend([0.0] * TAIL_WORDS)
    vector = memoryview(padded).cast("B").cast("f", (1, held.width))
    matrix = held.records.cast("f", (held.count, held.width))
    out: Any = simsimd.cdist(
        cast(Any, vector), cast(Any, matrix), metric="dot", out_dtype="float32"
    )
    return cast(list[float], memoryview(out).cast("B").cast("f").tolist())


def nearest_records(held: Mapped, query: Sequence[float], n: int) -> list[tuple[int, int]]:
    """The *n* messages of *held* nearest to *query* (by their best piece), best first:
    ``(message id, row)``."""
    similarity = scores(held, query)
    take = min(len(similarity), n * MAX_CHUNKS)  # at most MAX_CHUNKS rows per message, mostly
    while take:
        top = heapq.nlargest(take, range(len(similarity)), key=similarity.__getitem__)
        found: list[tuple[int, int]] = []
        seen: set[int] = set()
        for row in top:
            mid = held.tail(row)[0]
            if mid not in seen:
                seen.add(mid)
                found.append((mid, row))
                if len(found) >= n:
                    return found
        if take >= len(similarity):
            return found
        take = min(len(similarity), 2 * take)
    return []
