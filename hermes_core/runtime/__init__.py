"""The lifecycle runtime: L0 prompt assembly, the turn loop and compression.

Modules, one concept each:

* :mod:`~hermes_core.runtime.session` — :class:`AgentSession`, the turn loop a host embeds;
* :mod:`~hermes_core.runtime.host` — :class:`Memory`, the memory lifecycle for a host's own loop;
* :mod:`~hermes_core.runtime.host_async` — :class:`AsyncMemory`, its asyncio twin;
* :mod:`~hermes_core.runtime.settings` — :class:`RuntimeSettings`, how a session runs;
* :mod:`~hermes_core.runtime.prompt` — the system prompt, assembled once per session;
* :mod:`~hermes_core.runtime.compression` — when to compress and what to keep;
* :mod:`~hermes_core.runtime.summary` — the checkpoint prompt and the offline summary;
* :mod:`~hermes_core.runtime.tokens` — token estimates;
* :mod:`~hermes_core.runtime.guard` — bounded, isolated hook calls;
* :mod:`~hermes_core.runtime.interrupts` — Ctrl-C safe store writes;
* :mod:`~hermes_core.runtime.scripted` — a scripted local model for the offline demo.

Public names are imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_core.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "AgentSession": "hermes_core.runtime.session",
    "RuntimeSettings": "hermes_core.runtime.settings",
    "Memory": "hermes_core.runtime.host",
    "AsyncMemory": "hermes_core.runtime.host_async",
    "Recall": "hermes_core.runtime.host",
    "TurnResult": "hermes_core.runtime.session",
    "ToolRun": "hermes_core.runtime.session",
    "CompressionOutcome": "hermes_core.runtime.session",
    "CompressionSettings": "hermes_core.runtime.compression",
    "ContextCompressor": "hermes_core.runtime.compression",
    "PromptParts": "hermes_core.runtime.prompt",
}

__all__ = [
    "AgentSession",
    "AsyncMemory",
    "CompressionOutcome",
    "CompressionSettings",
    "ContextCompressor",
    "Memory",
    "PromptParts",
    "Recall",
    "RuntimeSettings",
    "ToolRun",
    "TurnResult",
]

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from hermes_core.runtime.compression import CompressionSettings, ContextCompressor
    from hermes_core.runtime.host import Memory, Recall
    from hermes_core.runtime.host_async import AsyncMemory
    from hermes_core.runtime.prompt import PromptParts
    from hermes_core.runtime.session import (
        AgentSession,
        CompressionOutcome,
        ToolRun,
        TurnResult,
    )
    from hermes_core.runtime.settings import RuntimeSettings


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
