"""Honcho ids from host ids: ``[A-Za-z0-9_-]``, at most 100 characters, collision-free.

Honcho accepts only letters, digits, ``_`` and ``-`` in workspace, peer and
session ids. A host id that already fits is used as is; any other id is
cleaned and given a short hash of the original, so ``telegram:42`` and
``telegram_42`` never share a peer.
"""

from __future__ import annotations

import hashlib
import re

__all__ = ["MAX_ID_LENGTH", "is_honcho_id", "to_honcho_id"]

MAX_ID_LENGTH = 100
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
_SAFE = re.compile(r"[A-Za-z0-9_-]{1,100}")


def is_honcho_id(value: object) -> bool:
    """Whether *value* is a valid Honcho id: 1-100 letters, digits, ``_`` or ``-``.

    Every id that goes into a Honcho URL path must pass this check: nothing
    else (``/``, ``.``, ``%``, ``?``, a line break) can then reach the path.
    """
    return isinstance(value, str) and _SAFE.fullmatch(value) is not None


def to_honcho_id(raw: str) -> str:
    """Map any non-empty *raw* id to a valid Honcho id, one-to-one in practice."""
    if is_honcho_id(raw):
        return raw
    digest = hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    cleaned = _UNSAFE.sub("_", raw).strip("_") or "id"
    return f"{cleaned[: MAX_ID_LENGTH - len(digest) - 1]}-{digest}"
