"""hermes-memory-core: layered memory for AI agents.

Public names are re-exported here and imported on first use, so
``import hermes_core`` stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_core.lazy import lazy_exports

__version__ = "0.5.0"

_EXPORTS: dict[str, str] = {
    # provider contract
    "MemoryProvider": "hermes_core.provider",
    "RecallStatus": "hermes_core.provider",
    "MemoryPrefetchResult": "hermes_core.provider",
    "MemoryObservation": "hermes_core.provider",
    "is_trivial_prompt": "hermes_core.provider",
    "spawn_context_thread": "hermes_core.provider",
    # manager
    "MemoryManager": "hermes_core.manager",
    # lifecycle runtime
    "AgentSession": "hermes_core.runtime.session",
    # host API (a host's own agent loop)
    "Memory": "hermes_core.runtime.host",
    "AsyncMemory": "hermes_core.runtime.host_async",
    # fencing
    "build_memory_context_block": "hermes_core.fencing",
    "sanitize_context": "hermes_core.fencing",
    "StreamingContextScrubber": "hermes_core.fencing",
    # plugin seam
    "hookimpl": "hermes_core.hookspecs",
    "hookspec": "hermes_core.hookspecs",
    # configuration
    "get_hermes_home": "hermes_core.config",
    "load_config": "hermes_core.config",
    # errors
    "HermesMemoryError": "hermes_core.errors",
    "ConfigError": "hermes_core.errors",
    "PluginError": "hermes_core.errors",
    "ProviderError": "hermes_core.errors",
    "MemoryStoreError": "hermes_core.errors",
    "SessionStoreError": "hermes_core.errors",
    "LLMError": "hermes_core.errors",
}

__all__ = [
    "AgentSession",
    "AsyncMemory",
    "ConfigError",
    "HermesMemoryError",
    "LLMError",
    "Memory",
    "MemoryManager",
    "MemoryObservation",
    "MemoryPrefetchResult",
    "MemoryProvider",
    "MemoryStoreError",
    "PluginError",
    "ProviderError",
    "RecallStatus",
    "SessionStoreError",
    "StreamingContextScrubber",
    "__version__",
    "build_memory_context_block",
    "get_hermes_home",
    "hookimpl",
    "hookspec",
    "is_trivial_prompt",
    "load_config",
    "sanitize_context",
    "spawn_context_thread",
]

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from hermes_core.config import get_hermes_home, load_config
    from hermes_core.errors import (
        ConfigError,
        HermesMemoryError,
        LLMError,
        MemoryStoreError,
        PluginError,
        ProviderError,
        SessionStoreError,
    )
    from hermes_core.fencing import (
        StreamingContextScrubber,
        build_memory_context_block,
        sanitize_context,
    )
    from hermes_core.hookspecs import hookimpl, hookspec
    from hermes_core.manager import MemoryManager
    from hermes_core.provider import (
        MemoryObservation,
        MemoryPrefetchResult,
        MemoryProvider,
        RecallStatus,
        is_trivial_prompt,
        spawn_context_thread,
    )
    from hermes_core.runtime.host import Memory
    from hermes_core.runtime.host_async import AsyncMemory
    from hermes_core.runtime.session import AgentSession


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
