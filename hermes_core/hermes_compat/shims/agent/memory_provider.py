"""``agent.memory_provider``: the provider contract, served by hermes-core.

The very same objects as :mod:`hermes_core.provider`, so ``isinstance`` checks
agree wherever a provider is looked at.
"""

from typing import NoReturn

from hermes_core.hermes_compat.finder import missing_attribute
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


def __getattr__(name: str) -> NoReturn:
    raise missing_attribute(__name__, name, __all__)
