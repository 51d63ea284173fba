"""Drift guard: never let a whole-entry rewrite swallow text written outside the tool.

People and other tools edit ``MEMORY.md`` directly. Most such edits are
harmless: this package parses Windows line endings, spacing around the ``§``
lines, blank entries and repeated entries exactly like its own output, and a
rewrite only normalises them. What can lose data is text pasted in without
``§`` separators: it parses as one huge entry, and a ``replace`` or
``remove`` aimed at a small part of it would rewrite or delete all of it.

Such an entry is recognisable because it is longer than the target's whole
budget, which no write through the tool can produce. An operation that would
change or delete one is refused, after a copy of the file is saved to
``<file>.bak.<unix-seconds>``; operations on other entries go ahead and keep
the oversized entry verbatim. Repeated refusals reuse an identical backup
instead of piling up copies.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from hermes_memory_builtin.files import atomic_write_text, read_memory_file

BACKUP_INFIX = ".bak."


def is_oversized(entry: str, char_limit: int) -> bool:
    """True when *entry* alone exceeds the whole budget of its file."""
    return len(entry) > char_limit


@dataclass(frozen=True)
class Backup:
    """Where the file's content was saved before refusing a write."""

    path: Path
    saved: bool
    error: str | None = None


def _existing_identical_backup(path: Path, raw: str) -> Path | None:
    candidates = sorted(path.parent.glob(path.name + BACKUP_INFIX + "*"), reverse=True)
    for candidate in candidates:
        read = read_memory_file(candidate)
        if read.ok and read.text == raw:
            return candidate
    return None


def save_backup(path: Path, raw: str) -> Backup:
    """Copy *raw* (the file's current text) to ``<path>.bak.<unix-seconds>``.

    Reuses an existing backup with identical content. Never raises: a failed
    backup is reported in the result.
    """
    try:
        existing = _existing_identical_backup(path, raw)
        if existing is not None:
            return Backup(existing, saved=True)
        stem = f"{path.name}{BACKUP_INFIX}{int(time.time())}"
        target = path.with_name(stem)
        counter = 1
        while target.exists():
            target = path.with_name(f"{stem}-{counter}")
            counter += 1
        atomic_write_text(target, raw)
        return Backup(target, saved=True)
    except Exception as exc:  # the refusal must still be reported
        return Backup(path.with_name(path.name + BACKUP_INFIX + "failed"), False, str(exc))
