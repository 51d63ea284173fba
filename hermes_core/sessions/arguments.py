"""Arguments of the session stores' public methods: limits, times, id and name lists.

Shared by both backends, so a bad value is refused with the same message on each.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hermes_core.errors import SessionStoreError
from hermes_core.sessions.records import MAX_TIMESTAMP

__all__ = ["MAX_ROWS", "count", "epoch", "ids", "names"]

MAX_ROWS = 1_000_000_000
"""A limit or offset above this is read as this (SQLite's integers stop at 2**63)."""


def count(value: Any, what: str) -> int:
    """A limit or offset as a whole number in [0, MAX_ROWS]."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise SessionStoreError(f"{what} must be a number of rows, got {value!r:.40}.")
    return int(max(0, min(value, MAX_ROWS)))


def epoch(value: Any, what: str) -> float | None:
    """A time filter as epoch seconds (``None`` when absent)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise SessionStoreError(f"{what} must be epoch seconds (a number), got {value!r:.40}.")
    return float(max(-MAX_TIMESTAMP, min(value, MAX_TIMESTAMP)))


def ids(value: Sequence[str] | str) -> tuple[str, ...]:
    """Session ids: a list of them, or one id (never split into characters)."""
    return (value,) if isinstance(value, str) else tuple(str(item) for item in value)


def names(value: Sequence[str] | str | None) -> tuple[str, ...]:
    if value is None:
        return ()
    items = value.split(",") if isinstance(value, str) else list(value)
    return tuple(str(item).strip() for item in items if str(item).strip())
