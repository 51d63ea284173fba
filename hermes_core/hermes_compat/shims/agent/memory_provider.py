"""``agent.memory_provider``: the provider contract, served by hermes-core."""

from hermes_core.provider import (
    INDICATOR_GLYPH,
    PRE_COMPRESS_CHECKPOINT_API_VERSION,
    TRIVIAL_PROMPT_RE,
    MemoryProvider,
    RecallStatus,
    ctx_bound,
    is_trivial_prompt,
    spawn_context_thread,
)

__hermes_compat__ = True

__all__ = [
    "INDICATOR_GLYPH",
    "PRE_COMPRESS_CHECKPOINT_API_VERSION",
    "TRIVIAL_PROMPT_RE",
    "MemoryProvider",
    "RecallStatus",
    "ctx_bound",
    "is_trivial_prompt",
    "spawn_context_thread",
]
