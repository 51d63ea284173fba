"""``agent.memory_provider``: the provider contract, served by hermes-memory-core.

The very same objects as :mod:`hermes_core.provider`, so ``isinstance`` checks
agree wherever a provider is looked at.
"""

from typing import NoReturn

from hermes_core.hermes_compat.finder import missing_attribute
from hermes_core.provider import (
    CORE_MEMORY_PROVIDER_SENTINELS,
    INDICATOR_GLYPH,
    MAX_MEMORY_OBSERVATIONS,
    PRE_COMPRESS_CHECKPOINT_API_VERSION,
    TRIVIAL_PROMPT_RE,
    MemoryObservation,
    MemoryPrefetchResult,
    MemoryProvider,
    RecallStatus,
    ctx_bound,
    is_core_memory_provider,
    is_trivial_prompt,
    spawn_context_thread,
)

__hermes_compat__ = True

# Newer Hermes bounds observation payloads with these; hermes-memory has no observers.
MAX_MEMORY_OBSERVATION_DEPTH = 6
MAX_MEMORY_OBSERVATION_ITEMS = 64
MAX_MEMORY_OBSERVATION_STRING_CHARS = 4096
MAX_MEMORY_OBSERVATION_BYTES = 16 * 1024
MAX_MEMORY_OBSERVATION_BATCH_BYTES = 64 * 1024
MAX_MEMORY_OBSERVATION_FIELD_CHARS = 128

__all__ = [
    "CORE_MEMORY_PROVIDER_SENTINELS",
    "INDICATOR_GLYPH",
    "MAX_MEMORY_OBSERVATIONS",
    "MAX_MEMORY_OBSERVATION_BATCH_BYTES",
    "MAX_MEMORY_OBSERVATION_BYTES",
    "MAX_MEMORY_OBSERVATION_DEPTH",
    "MAX_MEMORY_OBSERVATION_FIELD_CHARS",
    "MAX_MEMORY_OBSERVATION_ITEMS",
    "MAX_MEMORY_OBSERVATION_STRING_CHARS",
    "PRE_COMPRESS_CHECKPOINT_API_VERSION",
    "TRIVIAL_PROMPT_RE",
    "MemoryObservation",
    "MemoryPrefetchResult",
    "MemoryProvider",
    "RecallStatus",
    "ctx_bound",
    "is_core_memory_provider",
    "is_trivial_prompt",
    "spawn_context_thread",
]


def __getattr__(name: str) -> NoReturn:
    raise missing_attribute(__name__, name, __all__)
