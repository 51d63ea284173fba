"""``agent.memory_manager``: the manager and the recall fence, served by hermes-memory-core."""

from typing import NoReturn

from hermes_core.fencing import (
    StreamingContextScrubber,
    build_memory_context_block,
    sanitize_context,
)
from hermes_core.hermes_compat.finder import missing_attribute
from hermes_core.manager import MemoryManager

__hermes_compat__ = True

__all__ = [
    "MemoryManager",
    "StreamingContextScrubber",
    "build_memory_context_block",
    "sanitize_context",
]


def __getattr__(name: str) -> NoReturn:
    raise missing_attribute(__name__, name, __all__)
