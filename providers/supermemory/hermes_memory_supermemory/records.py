"""Plain records of what Supermemory returned, independent of the SDK's models."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

Metadata = dict[str, str | float | bool | Sequence[str]]
"""Document metadata as the API accepts it (values: text, number, boolean, list of text)."""


@dataclass(frozen=True)
class Memory:
    """One recalled memory or source chunk; ``similarity`` is 0-1."""

    id: str
    text: str
    similarity: float
    updated_at: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Profile:
    """The namespace profile: durable facts and recent context."""

    static: list[str]
    dynamic: list[str]


@dataclass(frozen=True)
class Recall:
    """What one background recall found: search hits and, when due, the profile."""

    memories: tuple[Memory, ...] = ()
    profile: Profile | None = None
