"""A host and a provider author's imports, checked with ``mypy --strict`` (nox -s typecheck).

Every public name of the lazily exporting packages must be an explicit
re-export, or strict type checking refuses ``from package import name``.
"""

# ruff: noqa: F401  (the imports are the check)

from __future__ import annotations

from hermes_core import (
    AgentSession,
    ConfigError,
    HermesMemoryError,
    LLMError,
    MemoryManager,
    MemoryObservation,
    MemoryPrefetchResult,
    MemoryProvider,
    MemoryStoreError,
    PluginError,
    ProviderError,
    RecallStatus,
    SessionStoreError,
    StreamingContextScrubber,
    __version__,
    build_memory_context_block,
    get_hermes_home,
    hookimpl,
    hookspec,
    is_trivial_prompt,
    load_config,
    sanitize_context,
    spawn_context_thread,
)
from hermes_core.runtime import (
    CompressionOutcome,
    CompressionSettings,
    ContextCompressor,
    PromptParts,
    RuntimeSettings,
    ToolRun,
    TurnResult,
)
from hermes_core.testing import (
    Capability,
    ProviderConformance,
    ProviderPool,
    StoreInspector,
    block_network,
    tool_schema_problems,
)
