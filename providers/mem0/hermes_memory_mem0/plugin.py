"""Entry point of the ``hermes_memory`` plugin group: registers the mem0 provider."""

from __future__ import annotations

from collections.abc import Callable

from hermes_core.hookspecs import hookimpl
from hermes_memory_mem0.provider import Mem0MemoryProvider


@hookimpl
def register_memory_providers(register: Callable[..., None]) -> None:
    """Offer :class:`Mem0MemoryProvider` as ``mem0`` (selected with ``memory.provider: mem0``)."""
    register(Mem0MemoryProvider)
