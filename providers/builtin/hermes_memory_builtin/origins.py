"""Where each stored entry came from: ``ORIGINS.json`` beside the memory files (with
``memory.url``: the ``origins`` row of the PostgreSQL documents).

``MEMORY.md`` and ``USER.md`` stay plain Hermes files (entries between ``§``
lines), so the origin of each entry — ``user``, ``model`` or ``tool`` (see
:data:`~hermes_memory_builtin.quarantine.ORIGINS`) — is kept in a ledger next
to them, keyed by a digest of the entry's text. The store records it after
each saved change, under the target's lock, and drops the records of entries
that are gone. An entry with no record (edited into the file by hand, written
by Hermes Agent or by a version before the ledger) has origin
:data:`UNRECORDED`. The snapshot shows every entry with its origin.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping, Sequence

from hermes_core.errors import MemoryStoreError
from hermes_memory_builtin.side_documents import SideDocument

__all__ = ["ORIGINS_DOCUMENT", "ORIGINS_FILE", "UNRECORDED", "EntryOrigins", "entry_key"]

logger = logging.getLogger(__name__)

ORIGINS_FILE = "ORIGINS.json"
ORIGINS_DOCUMENT = "origins"
"""The name of the ledger's row among the PostgreSQL memory documents."""
UNRECORDED = "unknown"
"""The origin of an entry the ledger has no record of."""


def entry_key(entry: str) -> str:
    """The ledger's key of *entry*: the first 16 hex digits of its SHA-256."""
    return hashlib.sha256(entry.encode("utf-8", "surrogatepass")).hexdigest()[:16]


class EntryOrigins:
    """The origin ledger of one memory (kept in *document*)."""

    def __init__(self, document: SideDocument) -> None:
        self.document = document

    def of(self, target: str) -> dict[str, str]:
        """``{entry key: origin}`` of *target* (empty when the ledger is absent or unreadable)."""
        try:
            return dict(self._read().get(target, {}))
        except MemoryStoreError as exc:
            logger.warning("%s; entries show origin %r.", exc, UNRECORDED)
            return {}

    def origin(self, target: str, entry: str) -> str:
        """The recorded origin of *entry* of *target*, else :data:`UNRECORDED`."""
        return self.of(target).get(entry_key(entry), UNRECORDED)

    def record(self, target: str, entries: Sequence[str], new: Mapping[str, str]) -> None:
        """Keep the records of *entries* (the file's entries after a change) and set the
        origin of each entry in *new* (``{entry: origin}``); a failure is logged, never
        raised: the change itself is already saved."""
        keys = {entry_key(entry) for entry in entries}
        try:
            with self.document.locked() as (raw, save):
                try:
                    ledger = self._parse(raw)
                except MemoryStoreError as exc:
                    logger.warning("%s; it is started again.", exc)
                    ledger = {}
                kept = {
                    key: origin for key, origin in ledger.get(target, {}).items() if key in keys
                }
                kept.update({entry_key(entry): origin for entry, origin in new.items()})
                if kept == ledger.get(target):
                    return
                ledger[target] = kept
                save(json.dumps(ledger, ensure_ascii=False, separators=(",", ":")) + "\n")
        except (OSError, MemoryStoreError) as exc:
            logger.warning(
                "Could not record where a %s entry came from in %s (%s); it shows origin %r.",
                target,
                self.document.where,
                exc,
                UNRECORDED,
            )

    def _read(self) -> dict[str, dict[str, str]]:
        return self._parse(self.document.read())

    def _parse(self, raw: str | None) -> dict[str, dict[str, str]]:
        if raw is None or not raw.strip():
            return {}
        try:
            data = json.loads(raw)
        except ValueError as exc:
            raise MemoryStoreError(f"{self.document.where} is not valid JSON ({exc})") from exc
        if not isinstance(data, dict):
            raise MemoryStoreError(f"{self.document.where} is not a JSON object")
        return {
            str(target): {str(k): str(v) for k, v in records.items()}
            for target, records in data.items()
            if isinstance(records, dict)
        }
