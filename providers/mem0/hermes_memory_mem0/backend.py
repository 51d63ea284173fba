"""What the provider needs from a mem0 deployment, whichever mode serves it."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from hermes_core.fencing import clean_text

__all__ = ["AddResult", "Mem0Backend", "MemoryHit", "parse_hits"]


@dataclass(frozen=True)
class MemoryHit:
    """One stored memory as search returns it."""

    id: str
    memory: str
    score: float | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    user_id: str | None = None


@dataclass(frozen=True)
class AddResult:
    """What an ``add`` did: ids stored now, or an event id when the platform queued it."""

    memory_ids: tuple[str, ...] = ()
    event_id: str | None = None

    @property
    def queued(self) -> bool:
        """True when the write was accepted for asynchronous processing."""
        return self.event_id is not None and not self.memory_ids


class Mem0Backend(Protocol):
    """The five operations both the platform API and the local engine provide.

    Every method raises :class:`~hermes_memory_mem0.errors.Mem0BackendError` (or a
    subclass) on failure and :class:`~hermes_memory_mem0.errors.Mem0ClientError`
    when mem0 refused the request itself. ``update`` and ``delete`` only touch
    memories owned by *user_id*.
    """

    mode: str

    def open(self) -> None:
        """Connect (platform: the SDK's ping) or start the engine; idempotent."""
        ...

    def search(
        self,
        query: str,
        *,
        user_id: str,
        top_k: int,
        rerank: bool = False,
        threshold: float | None = None,
    ) -> list[MemoryHit]: ...

    def add(
        self,
        messages: Sequence[Mapping[str, str]],
        *,
        user_id: str,
        agent_id: str,
        infer: bool,
        metadata: Mapping[str, Any],
    ) -> AddResult: ...

    def update(self, memory_id: str, text: str, *, user_id: str) -> None: ...

    def delete(self, memory_id: str, *, user_id: str) -> None: ...

    def close(self) -> None: ...


def parse_hits(data: Any) -> list[MemoryHit] | None:
    """Memories from a search or list reply (``{"results": [...]}`` or a bare list).

    Returns ``None`` when the reply does not have that shape at all.
    """
    items = data.get("results") if isinstance(data, Mapping) else data
    if not isinstance(items, list):
        return None
    hits = []
    for item in items:
        if not isinstance(item, Mapping):
            continue
        memory_id, text = item.get("id"), item.get("memory")
        if not isinstance(memory_id, str | int) or not isinstance(text, str) or not text.strip():
            continue
        score = item.get("score")
        metadata = item.get("metadata")
        user_id = item.get("user_id")
        hits.append(
            MemoryHit(
                id=str(memory_id),
                memory=clean_text(text),
                score=_score(score),
                metadata=dict(metadata) if isinstance(metadata, Mapping) else {},
                user_id=str(user_id) if isinstance(user_id, str) else None,
            )
        )
    return hits


def _score(value: Any) -> float | None:
    """A relevance score as a finite number; ``None`` when missing or not one (NaN, text)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None
