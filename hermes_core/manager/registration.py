"""A registered provider: what the manager reads from it once, at registration.

Which hooks it really implements (the rest are skipped), which keywords its
``sync_turn``/``on_turn_start``/``on_turn_end``/``on_pre_compress`` accept, its
write shim and its prefetch lanes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from hermes_core.provider import BUILTIN_PROVIDER_NAME, MemoryProvider
from hermes_core.signatures import keyword_names, with_session_id
from hermes_core.workers import PrefetchLane
from hermes_core.writeshim import MemoryWriteShim

__all__ = ["SKIPPABLE_HOOKS", "SYNC_OPTIONAL_KEYWORDS", "Registration"]

# Hooks the manager skips for providers that inherit MemoryProvider's no-op
# default: calling them would do nothing, and an external prefetch would still
# cost a thread hand-off.
SKIPPABLE_HOOKS = (
    "prefetch",
    "queue_prefetch",
    "sync_turn",
    "on_turn_start",
    "on_turn_end",
    "recall_status",
    "on_tool_result",
)
SYNC_OPTIONAL_KEYWORDS = frozenset({"session_id", "messages", "turn_author"})


def _implements(provider: MemoryProvider, hook: str) -> bool:
    """Whether *provider* overrides *hook* (instance attributes count)."""
    if hook in getattr(provider, "__dict__", ()):
        return True
    implementation = getattr(type(provider), hook, None)
    return implementation is not None and implementation is not getattr(MemoryProvider, hook)


def _checkpoint_version(provider: MemoryProvider) -> int | None:
    try:
        return int(getattr(provider, "pre_compress_checkpoint_api_version", 1))
    except (TypeError, ValueError):
        return None


@dataclasses.dataclass(eq=False)
class Registration:
    """A registered provider with everything the manager reads once, at registration."""

    provider: MemoryProvider
    name: str
    builtin: bool
    schemas: tuple[dict[str, Any], ...]
    hooks: frozenset[str]
    turn_start_keywords: frozenset[str] | None
    turn_end_keywords: frozenset[str] | None
    sync_keywords: frozenset[str]
    pre_compress_takes_require: bool
    checkpoint_version: int | None
    write: MemoryWriteShim
    prefetch: Callable[[Any, str], Any]
    queue_prefetch: Callable[[Any, str], Any]
    lane: PrefetchLane | None
    warm_lane: PrefetchLane | None

    @classmethod
    def build(
        cls, provider: MemoryProvider, name: str, schemas: tuple[dict[str, Any], ...]
    ) -> Registration:
        builtin = name == BUILTIN_PROVIDER_NAME
        hooks = frozenset(hook for hook in SKIPPABLE_HOOKS if _implements(provider, hook))
        sync_keywords = keyword_names(provider.sync_turn, skip=2)
        pre_compress_keywords = keyword_names(provider.on_pre_compress, skip=1)
        prefetch = with_session_id(provider.prefetch)
        queue_prefetch = with_session_id(provider.queue_prefetch)
        return cls(
            provider=provider,
            name=name,
            builtin=builtin,
            schemas=schemas,
            hooks=hooks,
            turn_start_keywords=keyword_names(provider.on_turn_start, skip=2),
            turn_end_keywords=keyword_names(provider.on_turn_end, skip=1),
            sync_keywords=(
                SYNC_OPTIONAL_KEYWORDS
                if sync_keywords is None
                else SYNC_OPTIONAL_KEYWORDS & sync_keywords
            ),
            pre_compress_takes_require=(
                pre_compress_keywords is None or "require_checkpoint" in pre_compress_keywords
            ),
            checkpoint_version=_checkpoint_version(provider),
            write=MemoryWriteShim(provider),
            prefetch=prefetch,
            queue_prefetch=queue_prefetch,
            lane=None if builtin or "prefetch" not in hooks else PrefetchLane(prefetch, name),
            warm_lane=(
                None
                if builtin or "queue_prefetch" not in hooks
                else PrefetchLane(queue_prefetch, f"{name}-warm")
            ),
        )
