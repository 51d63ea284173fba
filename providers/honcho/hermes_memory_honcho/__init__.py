"""hermes-memory-honcho: the Honcho memory provider for hermes-memory."""

from __future__ import annotations

from hermes_memory_honcho.provider import HonchoMemoryProvider

__version__ = "0.1.0"

__all__ = ["HonchoMemoryProvider", "__version__"]
