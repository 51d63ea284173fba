"""A host and a provider author's imports, checked with ``mypy --strict`` (nox -s typecheck).

Every public name of the lazily exporting packages must be an explicit
re-export, or strict type checking refuses ``from package import name``.
"""

# ruff: noqa: F401  (the imports are the check)

from __future__ import annotations

from typing import Any

from hermes_core import (
    AgentSession,
    AsyncMemory,
    ConfigError,
    HermesMemoryError,
    LLMError,
    Memory,
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
    Recall,
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


def host_loop(history: list[dict[str, Any]]) -> str:
    """A host's own loop, as docs/host-api.md shows it."""
    with Memory.open(user_id="alice", platform="sdk", title="Typed") as memory:
        system: str = memory.system_prompt()
        api: list[dict[str, Any]] = memory.prepare(
            [{"role": "system", "content": system}, *history]
        )
        tools: list[dict[str, Any]] = memory.tools()
        result: str = memory.call_tool("session_search", {"query": "tea"})
        recall: Recall = memory.begin_turn("what do I drink?")
        memory.record(api[1:])
        memory.record_turn("hi", "hello", tool_calls=[{"name": "memory", "arguments": {}}])
        scrubber = memory.scrubber()
        shown = scrubber.feed(memory.scrub(result)) + scrubber.flush()
        return f"{shown}{len(tools)}{recall.block}{memory.session_id}"


async def async_host_loop(history: list[dict[str, Any]]) -> str:
    """The asyncio twin."""
    async with await AsyncMemory.open(user_id="alice") as memory:
        api = await memory.prepare(history)
        result: str = await memory.call_tool("memory", '{"action": "add"}')
        await memory.record_turn("hi", "hello")
        await memory.record(api)
        return memory.system_prompt() + result + str(memory.tools())
