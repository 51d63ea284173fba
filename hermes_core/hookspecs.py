"""Plugin hooks of hermes-memory (pluggy project ``hermes_memory``).

A distribution exposes a module through the ``hermes_memory`` entry-point group
and implements any of these hooks with ``@hermes_core.hookimpl``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:  # click is imported by the CLI, not by plugins' hook modules
    import click

hookspec = pluggy.HookspecMarker("hermes_memory")
hookimpl = pluggy.HookimplMarker("hermes_memory")


@hookspec
def register_memory_providers(register: Callable[..., None]) -> None:
    """Register memory providers.

    Call ``register(provider)`` once per provider, where *provider* is a
    ``MemoryProvider`` subclass, a zero-argument factory returning an instance,
    or an instance. Classes and factories are only called when the provider is
    listed or activated.
    """


@hookspec
def register_commands(cli: click.Group) -> None:
    """Add commands or command groups to the ``hermes-memory`` click group *cli*."""
