"""Entry point of the ``hermes_memory`` plugin group: registers the Honcho provider."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hermes_core.hookspecs import hookimpl
from hermes_memory_honcho.provider import HonchoMemoryProvider


@hookimpl
def register_memory_providers(register: Callable[..., Any]) -> None:
    """Register :class:`HonchoMemoryProvider` under the name ``honcho``."""
    register(HonchoMemoryProvider)
