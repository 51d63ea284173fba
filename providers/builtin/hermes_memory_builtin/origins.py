"""Where each stored entry came from: ``MEMORY.origins.json`` / ``USER.origins.json``
beside the memory files (with ``memory.url``: the ``origins:memory`` / ``origins:user``
rows of the PostgreSQL documents).

``MEMORY.md`` and ``USER.md`` stay plain Hermes files (entries between ``§``
lines), so the origin of each entry — ``user``, ``model`` or ``tool`` (see
:data:`~hermes_memory_builtin.quarantine.ORIGINS`) — is kept in a ledger next
to each, keyed by a digest of the entry's text. The store records it after
each saved change, under the target's own lock (no second lock), and drops the
records of entries that are gone once they outnumber the live ones. An entry
with no record (edited into the file by hand, written by Hermes Agent or by a
version before the ledger) has origin :data:`UNRECORDED`. The snapshot shows
every entry with its origin.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Mapping, Sequence

from hermes_core.errors import MemoryStoreError
from hermes_memory_builtin.side_documents import SideDocument

__all__ = ["ORIGINS_DOCUMENT", "UNRECORDED", "EntryOrigins", "entry_key", "ledger_filename"]

logger = logging.getLogger(__name__)

ORIGINS_DOCUMENT = "origins"
"""The prefix of the ledgers' rows among the PostgreSQL memory documents."""
UNRECORDED = "unknown"
"""The origin of an entry the ledger has no record of."""
SPARE_RECORDS = 32
"""Records of entries that are gone are dropped once the ledger holds more than twice the
file's entries plus this many (so a write that brings nothing new rewrites nothing)."""


def entry_key(entry: str) -> str:
    """The ledger's key of *entry*: the first 16 hex digits of its SHA-256."""
    return hashlib.sha256(entry.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def ledger_filename(memory_filename: str) -> str:
    """The ledger file beside a memory file: ``MEMORY.md`` → ``MEMORY.origins.json``."""
    return memory_filename.rsplit(".", 1)[0] + ".origins.json"


class EntryOrigins:
    """The origin ledgers of one memory; *document_for* gives a target's ledger."""

    def __init__(self, document_for: Callable[[str], SideDocument]) -> None:
        self._document_for = document_for

    def of(self, target: str) -> dict[str, str]:
        """``{entry key: origin}`` of *target* (empty when the ledger is absent or unreadable)."""
        document = self._document_for(target)
        try:
            return self._parse(document.read(), document.where)
        except MemoryStoreError as exc:
            logger.warning("%s; entries show origin %r.", exc, UNRECORDED)
            return {}

    def origin(self, target: str, entry: str) -> str:
        """The recorded origin of *entry* of *target*, else :data:`UNRECORDED`."""
        return self.of(target).get(entry_key(entry), UNRECORDED)

    def record(self, target: str, entries: Sequence[str], new: Mapping[str, str]) -> None:
        """Set the origin of each entry in *new* (``{entry: origin}``), keeping the records of
        *entries* (the file's entries after a change; others only until the ledger outgrows
        them, see :data:`SPARE_RECORDS`). A failure is logged, never raised: the change itself
        is already saved. The caller holds *target*'s lock."""
        keys = {entry_key(entry) for entry in entries}
        document = self._document_for(target)
        try:
            with document.locked() as (raw, save):
                try:
                    ledger = self._parse(raw, document.where)
                except MemoryStoreError as exc:
                    logger.warning("%s; it is started again.", exc)
                    ledger = {}
                kept = {**ledger, **{entry_key(entry): origin for entry, origin in new.items()}}
                if len(kept) > 2 * len(keys) + SPARE_RECORDS:
                    kept = {key: origin for key, origin in kept.items() if key in keys}
                if kept != ledger:
                    save(json.dumps(kept, ensure_ascii=False, separators=(",", ":")) + "\n")
        except (OSError, MemoryStoreError) as exc:
            logger.warning(
                "Could not record where a %s entry came from in %s (%s); it shows origin %r.",
                target,
                document.where,
                exc,
                UNRECORDED,
            )

    @staticmethod
    def _parse(raw: str | None, where: str) -> dict[str, str]:
        if raw is None or not raw.strip():
            return {}
        try:
            data = json.loads(raw)
        except ValueError as exc:
            raise MemoryStoreError(f"{where} is not valid JSON ({exc})") from exc
        if not isinstance(data, dict):
            raise MemoryStoreError(f"{where} is not a JSON object")
        return {str(key): str(origin) for key, origin in data.items()}
