"""Plugin hooks of the builtin provider (entry point ``hermes_memory: builtin``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hermes_core.hookspecs import hookimpl


@hookimpl
def register_memory_providers(register: Callable[..., None]) -> None:
    """Register :class:`BuiltinMemoryProvider`."""
    from hermes_memory_builtin.provider import BuiltinMemoryProvider

    register(BuiltinMemoryProvider)


@hookimpl
def register_commands(cli: Any) -> None:
    """Add the ``memory`` command group to ``hermes-memory``."""
    from hermes_memory_builtin.cli import memory

    cli.add_command(memory)
