"""Held memory writes: staged for the user's review, never in the prompt.

A write the detector puts in its review band (or that repeats untrusted text) is
not stored: it is appended to ``HELD.json`` beside MEMORY.md with its target,
origin and score. The snapshot never reads that file, so a held write cannot
reach a system prompt. ``hermes-memory memory review`` lists held writes and
accepts (stores through the normal path, every check but the detector again)
or rejects each.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

from hermes_core.errors import MemoryStoreError
from hermes_memory_builtin.files import atomic_write_text
from hermes_memory_builtin.locking import exclusive_lock

__all__ = ["HELD_FILE", "ORIGINS", "HeldWrite", "Quarantine"]

HELD_FILE = "HELD.json"
ORIGINS = ("user", "model", "tool")
"""Where an entry's content came from: said by the user this turn, written by the
model, or derived from tool output (web pages, files, e-mails, other agents)."""


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


class Quarantine:
    """The held writes of one memory directory."""

    def __init__(self, memory_dir: Path) -> None:
        self.path = Path(memory_dir) / HELD_FILE

    def held(self) -> list[HeldWrite]:
        """Held writes, oldest first."""
        return self._read()

    def hold(
        self, target: str, content: str, origin: str, score: float, reason: str, replaces: str = ""
    ) -> HeldWrite:
        """Stage *content* (replacing the entry *replaces* identifies, when given);
        holding the same write again is a no-op."""
        digest = hashlib.sha256(f"{target}\0{replaces}\0{content}".encode()).hexdigest()[:12]
        with self._locked() as items:
            for item in items:
                if item.id == digest:
                    return item
            write = HeldWrite(
                digest, target, content, origin, round(score, 4), reason, time.time(), replaces
            )
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
        try:
            raw = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise MemoryStoreError(f"Cannot read {self.path}: {exc}") from exc
        try:
            return [HeldWrite(**item) for item in json.loads(raw)]
        except (ValueError, TypeError) as exc:
            raise MemoryStoreError(
                f"{self.path} is not a valid list of held writes ({exc}); fix or remove it."
            ) from exc

    @contextmanager
    def _locked(self) -> Iterator[list[HeldWrite]]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with exclusive_lock(self.path):
            items = self._read()
            before = list(items)
            yield items
            if items != before:
                self._write(items)

    def _write(self, items: list[HeldWrite]) -> None:
        text = json.dumps([asdict(item) for item in items], ensure_ascii=False, indent=1)
        atomic_write_text(self.path, text + "\n")
