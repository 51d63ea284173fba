"""Entry point of the ``hermes_memory`` plugin group: registers the Supermemory provider."""

from __future__ import annotations

from collections.abc import Callable

from hermes_core.hookspecs import hookimpl
from hermes_memory_supermemory.provider import SupermemoryProvider


@hookimpl
def register_memory_providers(register: Callable[..., None]) -> None:
    """Offer :class:`SupermemoryProvider`; it is built only when listed or selected."""
    register(SupermemoryProvider)
