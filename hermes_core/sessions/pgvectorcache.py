"""A local copy of a PostgreSQL store's message vectors, so a new process does not read
them all from the server.

A long-lived process (the agent, a gateway) reads ``message_vectors`` once; a one-shot
``hermes-memory sessions search`` would read every vector on every run. This file keeps
what a process last read, in ``$HERMES_HOME/cache/``: the vectors in the flat format of
:mod:`~hermes_core.sessions.vectorfile` (``pgvectors-<key>.bin``, mapped, not read) and
beside it what they are (``.json``): the encoder row's id and nonce and the highest
``seq`` held. A process trusts it only as far as the database agrees: the encoder row
must still carry that nonce (a table emptied or restored gives it a new one) and hold
rows up to that ``seq``; the rows written since are read from the server as usual, and a
file that is not as its stamp says (torn, truncated, replaced) is not used. It is a cache:
deleting it costs one full read; a folder where it cannot be written only logs.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
from pathlib import Path
from typing import Any, NamedTuple

from hermes_core.home import get_hermes_home
from hermes_core.sessions import vectorfile
from hermes_core.sessions.connection import restrict_permissions

__all__ = ["Cached", "VectorCache"]

log = logging.getLogger(__name__)


class Cached(NamedTuple):
    """Vectors read from the cache: the encoder row they belong to, the highest seq held,
    and the mapped arrays (read-only views)."""

    encoding: tuple[int, str]
    seen: int
    ids: Any
    checksums: Any
    matrix: Any


class VectorCache:
    """The cached vectors of encoder *model* of the database at *url* (its password is
    not part of the file name; the name is a digest)."""

    def __init__(self, url: str, model: str, home: Path | None = None) -> None:
        key = hashlib.sha256(f"{url}\0{model}".encode()).hexdigest()[:20]
        folder = (home or get_hermes_home()) / "cache"
        self.path = folder / f"pgvectors-{key}.bin"
        self.meta = folder / f"pgvectors-{key}.json"
        self.rows = 0
        """Rows the file holds, as last read or written."""

    def load(self, encoding: tuple[int, str]) -> Cached | None:
        """The cached vectors of *encoding* (the encoder row's id and nonce), or ``None``."""
        try:
            meta = json.loads(self.meta.read_text(encoding="utf-8"))
            stamp = vectorfile.Stamp.from_json(json.dumps(meta["file"]))
            if stamp is None or [meta["encoder"], meta["nonce"]] != list(encoding):
                return None
            mapped = vectorfile.map_file(self.path, stamp)
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if mapped is None:
            return None
        self.rows = len(mapped.ids)
        seen = int(meta["seen"])
        return Cached(encoding, seen, mapped.ids, mapped.checksums, mapped.matrix)

    def save(
        self, encoding: tuple[int, str], seen: int, ids: Any, checksums: Any, matrix: Any
    ) -> None:
        """Replace the cache with these vectors (whole or not at all; one writer at a time)."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.meta.with_suffix(".lock"), "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                stamp = vectorfile.write(self.path, matrix.shape[1], ids, checksums, matrix)
                fields = {
                    "encoder": encoding[0],
                    "nonce": encoding[1],
                    "seen": int(seen),
                    "file": json.loads(stamp.to_json()),
                }
                temporary = self.meta.with_name(f"{self.meta.name}.{os.getpid()}.tmp")
                try:
                    temporary.write_text(json.dumps(fields), encoding="utf-8")
                    restrict_permissions(temporary)
                    os.replace(temporary, self.meta)
                finally:
                    with contextlib.suppress(OSError):
                        temporary.unlink()
        except OSError as exc:
            log.info("cannot keep a local copy of the message vectors in %s (%s)", self.path, exc)
            return
        self.rows = len(ids)
