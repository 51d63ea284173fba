"""Mem0 long-term memory for hermes-memory: the platform API or mem0's offline local engine.

Importing this package is cheap; the mem0 SDK is imported only when a backend
starts (see :mod:`hermes_memory_mem0.sdk`).
"""

from __future__ import annotations

from hermes_memory_mem0.provider import Mem0MemoryProvider

__version__ = "0.2.0"

__all__ = ["Mem0MemoryProvider", "__version__"]
