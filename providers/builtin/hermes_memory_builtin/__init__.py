"""The builtin provider, shipped in hermes-memory-core: MEMORY.md / USER.md, session search.

The names below are imported on first use, so importing the package is cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_core.lazy import lazy_exports

__version__ = "0.5.0"

_EXPORTS: dict[str, str] = {
    "BuiltinMemoryProvider": "hermes_memory_builtin.provider",
    "MemoryStore": "hermes_memory_builtin.store",
    "MemoryTool": "hermes_memory_builtin.tool",
    "MEMORY_SCHEMA": "hermes_memory_builtin.tool",
    "memory_schema": "hermes_memory_builtin.tool",
    "MemorySettings": "hermes_memory_builtin.settings",
    "ENTRY_DELIMITER": "hermes_memory_builtin.entries",
    "scan_for_threats": "hermes_memory_builtin.threats",
    "first_threat_message": "hermes_memory_builtin.threats",
    "build_mirror_metadata": "hermes_memory_builtin.mirror",
}

__all__ = [
    "ENTRY_DELIMITER",
    "MEMORY_SCHEMA",
    "BuiltinMemoryProvider",
    "MemorySettings",
    "MemoryStore",
    "MemoryTool",
    "__version__",
    "build_mirror_metadata",
    "first_threat_message",
    "memory_schema",
    "scan_for_threats",
]

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from hermes_memory_builtin.entries import ENTRY_DELIMITER
    from hermes_memory_builtin.mirror import build_mirror_metadata
    from hermes_memory_builtin.provider import BuiltinMemoryProvider
    from hermes_memory_builtin.settings import MemorySettings
    from hermes_memory_builtin.store import MemoryStore
    from hermes_memory_builtin.threats import first_threat_message, scan_for_threats
    from hermes_memory_builtin.tool import MEMORY_SCHEMA, MemoryTool, memory_schema


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
