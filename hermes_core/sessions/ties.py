"""The order of full-text hits whose BM25 scores tie, the same on both backends.

FTS5's ``bm25()`` and PostgreSQL's BM25 (:mod:`~hermes_core.sessions.pgsearch`) sum the
same terms in a different order, so two messages of equal score may differ in the last
bits, and each engine returns equal scores in an order of its own. Scores within
:data:`TIE_TOLERANCE` of each other (relative) are a tie, and a tie goes to the earlier
message (the lower id).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["TIE_TOLERANCE", "break_ties"]

TIE_TOLERANCE = 1e-9
"""Scores this close (relative to the larger) are equal: the backends' float differences
are about 1e-16 of a score, a real difference far above 1e-9."""


def _score(row: tuple[Any, ...]) -> float | None:
    value = row[1]
    return float(value) if isinstance(value, (int, float)) else None


def _tied(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return False
    return abs(a - b) <= TIE_TOLERANCE * max(abs(a), abs(b))


def break_ties(rows: Sequence[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """*rows* (``(id, score, …)``, best first) with each run of adjacent tied scores (each
    within the tolerance of the run's first) ordered by id, lowest first; every other row
    keeps its place (rows without a score too)."""
    out: list[tuple[Any, ...]] = []
    run: list[tuple[Any, ...]] = []
    for row in rows:
        if run and not _tied(_score(run[0]), _score(row)):
            out += sorted(run, key=lambda r: r[0])
            run = []
        run.append(row)
    return out + sorted(run, key=lambda r: r[0])
