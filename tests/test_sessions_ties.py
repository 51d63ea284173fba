"""Ties in BM25 score: within the tolerance, the earlier message (lower id) first."""

from __future__ import annotations

from hermes_core.sessions.ties import TIE_TOLERANCE, break_ties


def test_scores_equal_but_for_float_noise_are_ordered_by_id() -> None:
    # SQLite's bm25() is negative (lower is better), PostgreSQL's positive: both tie alike.
    for sign in (-1.0, 1.0):
        rows = [
            (7, sign * 2.5),
            (5, sign * 1.4089084305104185e-06),
            (2, sign * 1.408908430510419e-06),
        ]
        assert [row[0] for row in break_ties(rows)] == [7, 2, 5]


def test_a_real_difference_in_score_keeps_its_order() -> None:
    rows = [(9, 1.0), (3, 1.0 - 10 * TIE_TOLERANCE), (1, 0.5)]
    assert [row[0] for row in break_ties(rows)] == [9, 3, 1]


def test_rows_without_a_score_keep_their_place() -> None:
    rows = [(8, None), (4, None), (6, 1.0), (2, 1.0)]
    assert [row[0] for row in break_ties(rows)] == [8, 4, 2, 6]
