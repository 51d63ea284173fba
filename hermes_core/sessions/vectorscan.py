"""The nearest records of a vector file to a question, without numpy.

A one-shot search (``hermes-memory sessions search``) would spend more importing numpy
than searching; this module scores the records of a
:class:`~hermes_core.sessions.vectorfile.Mapped` with simsimd (one C call over the mapped
float32 matrix, the question's vector padded with zeros over each record's id and checksum
words) and sorts only the rows above a score that a sample of the scores puts at about
twice as many rows as needed. It picks what :func:`~hermes_core.sessions.neighbours.best`
picks from numpy's scores (both through
:func:`~hermes_core.sessions.neighbours.best_messages`): the messages of the
highest-scoring rows, each by its best piece, ties in row order.
"""

from __future__ import annotations

import array
import heapq
from collections.abc import Sequence
from typing import Any, cast

from hermes_core.sessions.neighbours import best_messages
from hermes_core.sessions.vectorfile import TAIL_WORDS, Mapped

__all__ = ["nearest_records", "scores", "top"]


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
    return best_messages(
        len(similarity), n, lambda take: top(similarity, take), lambda row: (held.tail(row)[0], row)
    )


_STRIDE = 16
"""Every this many-th score is the sample that places the cut (:func:`top`)."""


def top(similarity: list[float], take: int) -> list[int]:
    """The rows of at least the *take* highest of *similarity* (all of them when *take* is
    their number), best first, ties in row order.

    The cut is the score of the ``2 * take / _STRIDE``-th best of every :data:`_STRIDE`-th
    score, so about twice *take* rows are sorted, not all; where that leaves fewer than
    *take*, the exact *take*-th score is taken."""
    if take >= len(similarity):
        rows = list(range(len(similarity)))
    else:
        sample = similarity[::_STRIDE]
        rank = 2 * take // _STRIDE + 1
        rows = []
        if rank < len(sample):
            cut = heapq.nlargest(rank, sample)[-1]
            rows = [row for row, score in enumerate(similarity) if score >= cut]
        if len(rows) < take:
            cut = heapq.nlargest(take, similarity)[-1]
            rows = [row for row, score in enumerate(similarity) if score >= cut]
    rows.sort(key=similarity.__getitem__, reverse=True)  # stable: ties stay in row order
    return rows
