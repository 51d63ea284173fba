"""Held memory writes: staged for the user's review, never in the prompt.

A write the detector puts in its review band (or that repeats untrusted text) is
not stored: it is appended to ``HELD.json`` beside MEMORY.md (with
``memory.url``: rows of ``memory_held``, see :mod:`~hermes_memory_builtin.held_rows`)
with its target, origin and score. The snapshot never reads it, so a held write cannot
reach a system prompt. ``hermes-memory memory review`` lists held writes and
accepts (stores through the normal path, every check but the detector again)
or rejects each.

A batch (the ``memory`` tool's ``operations``) with one operation that must be
held is held whole, as one write: nothing of it is applied until the user
accepts it, and then it is applied all together or not at all, as any batch.
"""

from __future__ import annotations

import hashlib
import json
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any

from hermes_core.errors import MemoryStoreError
from hermes_memory_builtin.side_documents import SideDocument

__all__ = [
    "HELD_FILE",
    "ORIGINS",
    "HeldStore",
    "HeldWrite",
    "Quarantine",
    "held_id",
    "held_text",
    "parse_held",
]

HELD_FILE = "HELD.json"
ORIGINS = ("user", "model", "tool", "client")
"""Where an entry's content came from: said by the user this turn, written by the
model, derived from tool output (web pages, files, e-mails, other agents), or
written through a client whose tool results memory cannot see (an MCP client that
has not described its turns with ``note_turn``: the entry may repeat untrusted
text nobody showed to memory)."""


@dataclass(frozen=True)
class HeldWrite:
    """One staged write."""

    id: str
    target: str
    content: str
    origin: str
    score: float
    reason: str
    held_at: float
    replaces: str = ""
    """For a held ``replace``: the old_text of the entry it would replace."""
    operations: list[dict[str, Any]] = field(default_factory=list)
    """For a held batch: all its operations (*content* is the one that was held)."""


def held_id(
    target: str, content: str, replaces: str = "", operations: Sequence[Mapping[str, Any]] = ()
) -> str:
    """The id of a held write: the same write held twice has the same id."""
    key = f"{target}\0{replaces}\0{content}"
    if operations:
        key += "\0" + json.dumps(
            [dict(op) for op in operations], ensure_ascii=False, sort_keys=True
        )
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def held_text(items: Sequence[HeldWrite]) -> str:
    """*items* as ``HELD.json`` holds them."""
    return json.dumps([asdict(item) for item in items], ensure_ascii=False, indent=1) + "\n"


def parse_held(raw: str | None, where: str) -> list[HeldWrite]:
    """The held writes of a ``HELD.json`` text (*where* names it in the error)."""
    if raw is None or not raw.strip():
        return []
    try:
        return [HeldWrite(**item) for item in json.loads(raw)]
    except (ValueError, TypeError) as exc:
        raise MemoryStoreError(
            f"{where} is not a valid list of held writes ({exc}); fix or remove it."
        ) from exc


class HeldStore(ABC):
    """The held writes of one memory: :class:`Quarantine` (``HELD.json``) or
    :class:`~hermes_memory_builtin.held_rows.HeldRows` (``memory.url``)."""

    @abstractmethod
    def held(self) -> list[HeldWrite]:
        """Held writes, oldest first."""

    @abstractmethod
    def take(self, write_id: str) -> HeldWrite:
        """Remove and return the held write *write_id* (raises when there is none)."""

    def hold(
        self,
        target: str,
        content: str,
        origin: str,
        score: float,
        reason: str,
        replaces: str = "",
        operations: Sequence[Mapping[str, Any]] = (),
    ) -> HeldWrite:
        """Stage *content* (replacing the entry *replaces* identifies, when given; or the
        whole batch *operations*, *content* being its operation that was held); holding the
        same write again is a no-op (the write held first is returned)."""
        batch = [dict(op) for op in operations]
        write = HeldWrite(
            held_id(target, content, replaces, batch),
            target,
            content,
            origin,
            round(score, 4),
            reason,
            time.time(),
            replaces,
            batch,
        )
        return self._stage(write)

    @abstractmethod
    def _stage(self, write: HeldWrite) -> HeldWrite:
        """Keep *write* unless one of its id is held; the one held."""


class Quarantine(HeldStore):
    """The held writes of one memory (kept in *document*)."""

    def __init__(self, document: SideDocument) -> None:
        self.document = document

    def held(self) -> list[HeldWrite]:
        """Held writes, oldest first."""
        return self._read()

    def _stage(self, write: HeldWrite) -> HeldWrite:
        with self._locked() as items:
            for item in items:
                if item.id == write.id:
                    return item
            items.append(write)
            return write

    def take(self, write_id: str) -> HeldWrite:
        """Remove and return the held write *write_id* (raises when there is none)."""
        with self._locked() as items:
            for index, item in enumerate(items):
                if item.id == write_id:
                    return items.pop(index)
        raise MemoryStoreError(
            f"No held memory write has id {write_id!r}; `hermes-memory memory review` lists them."
        )

    def _read(self) -> list[HeldWrite]:
        return parse_held(self.document.read(), self.document.where)

    @contextmanager
    def _locked(self) -> Iterator[list[HeldWrite]]:
        with self.document.locked() as (raw, save):
            items = parse_held(raw, self.document.where)
            before = list(items)
            yield items
            if items != before:
                save(held_text(items))
