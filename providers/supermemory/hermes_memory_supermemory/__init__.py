"""Supermemory provider for hermes-memory (select it with ``memory.provider: supermemory``)."""

from __future__ import annotations

from hermes_memory_supermemory.provider import SupermemoryProvider

__version__ = "0.2.0"
__all__ = ["SupermemoryProvider", "__version__"]
