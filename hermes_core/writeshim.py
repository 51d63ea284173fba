"""Deliver builtin memory writes to providers written against any ``on_memory_write`` shape.

Hermes grew ``on_memory_write`` in three steps, and providers in the wild
implement each of them:

- **keyword**: ``on_memory_write(action, target, content, metadata=None)`` (or
  ``**kwargs``) — the current contract; metadata is passed by keyword;
- **positional**: four positional parameters whose fourth has another name or
  is positional-only, e.g. ``(action, target, content, meta)`` or
  ``(action, target, content, metadata, /)`` — metadata is passed positionally;
- **legacy**: ``on_memory_write(action, target, content)`` — no metadata at all.

:class:`MemoryWriteShim` picks the shape once, from the bound method's
signature, and then calls the method the way it can accept.

One deliberate difference from Hermes: only parameters that can be filled
positionally count towards the positional shape. Hermes also counts
keyword-only parameters, so ``(action, target, content, *, note="")`` would be
called with four positional arguments and raise ``TypeError``; here it is a
legacy provider and receives its three arguments.
"""

from __future__ import annotations

import enum
import inspect
from collections.abc import Callable
from typing import Any

__all__ = ["MemoryWriteShim", "WriteCallShape", "write_call_shape"]

_POSITIONAL_KINDS = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


class WriteCallShape(enum.Enum):
    """How a provider's ``on_memory_write`` receives metadata."""

    KEYWORD = "keyword"
    POSITIONAL = "positional"
    LEGACY = "legacy"


def write_call_shape(method: Callable[..., Any]) -> WriteCallShape:
    """Choose the call shape for a bound ``on_memory_write`` method.

    Positional when the fourth positional parameter is positional-only (it
    cannot take ``metadata=``, whatever its name); otherwise keyword when the
    signature cannot be read, takes ``**kwargs`` or has a parameter named
    ``metadata``; positional when at least four parameters can be filled
    positionally; legacy otherwise.
    """
    try:
        parameters = list(inspect.signature(method).parameters.values())
    except (TypeError, ValueError):
        return WriteCallShape.KEYWORD
    positional = [p for p in parameters if p.kind in _POSITIONAL_KINDS]
    if len(positional) >= 4 and positional[3].kind is inspect.Parameter.POSITIONAL_ONLY:
        return WriteCallShape.POSITIONAL
    if any(p.kind is inspect.Parameter.VAR_KEYWORD or p.name == "metadata" for p in parameters):
        return WriteCallShape.KEYWORD
    if len(positional) >= 4:
        return WriteCallShape.POSITIONAL
    return WriteCallShape.LEGACY


class MemoryWriteShim:
    """Calls one provider's ``on_memory_write`` in the shape it was written for.

    The shape is read once, when the shim is built (providers are registered
    once, so the manager keeps one shim per provider).
    """

    __slots__ = ("_method", "shape")

    def __init__(self, provider: Any) -> None:
        self._method: Callable[..., Any] = provider.on_memory_write
        self.shape = write_call_shape(self._method)

    def __call__(
        self, action: str, target: str, content: str, metadata: dict[str, Any] | None = None
    ) -> None:
        """Deliver one write; each call gets its own copy of *metadata*."""
        if self.shape is WriteCallShape.KEYWORD:
            self._method(action, target, content, metadata=dict(metadata or {}))
        elif self.shape is WriteCallShape.POSITIONAL:
            self._method(action, target, content, dict(metadata or {}))
        else:
            self._method(action, target, content)
