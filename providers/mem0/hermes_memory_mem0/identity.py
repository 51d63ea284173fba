"""Mem0 entity ids from host ids: plain ``[A-Za-z0-9._@-]`` text, collision-free.

Mem0's filter grammar gives some values a meaning of their own (``"*"`` matches
*any* user), and a host id may carry whitespace, control characters or other
syntax. A host id that is already plain text (letters, digits, ``.``, ``_``,
``@``, ``-``; at most 100 characters) is used as is, so existing users keep their
memories; any other id is cleaned into a readable slug and given a short hash of
the exact original, so ``"*"``, ``" alice"`` and ``"alice\\n"`` each get their own
store and none of them reaches ``alice``'s. (The same scheme as the honcho
provider's peer ids.)
"""

from __future__ import annotations

import hashlib
import re

__all__ = ["MAX_ID_LENGTH", "hashed_id", "is_memory_id", "is_plain_id", "to_mem0_id"]

MAX_ID_LENGTH = 100
_UNSAFE = re.compile(r"[^A-Za-z0-9._@-]+")
_SAFE = re.compile(r"[A-Za-z0-9._@-]{1,100}")
_HEX = "[0-9a-fA-F]"
_MEMORY_ID = re.compile(f"{_HEX}{{8}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{12}}")


def is_memory_id(value: str) -> bool:
    """Whether *value* looks like a Mem0 memory id (a hyphenated UUID, as both modes issue)."""
    return _MEMORY_ID.fullmatch(value) is not None


def is_plain_id(raw: str) -> bool:
    """Whether *raw* is used unchanged as a mem0 id."""
    return _SAFE.fullmatch(raw) is not None


def hashed_id(raw: str) -> str:
    """*raw* as a readable slug plus a short hash of the exact original."""
    digest = hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    cleaned = _UNSAFE.sub("_", raw).strip("_.-") or "id"
    return f"{cleaned[: MAX_ID_LENGTH - len(digest) - 1]}-{digest}"


def to_mem0_id(raw: str) -> str:
    """Map any *raw* id to a safe mem0 id, one-to-one in practice."""
    return raw if is_plain_id(raw) else hashed_id(raw)
