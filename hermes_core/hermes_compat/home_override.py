"""The per-context ``HERMES_HOME`` override that the served Hermes modules honour.

Hermes' ``hermes_constants.set_hermes_home_override`` points ``get_hermes_home()``
elsewhere for the current thread or task. The variable lives here, outside the
shim modules, because a shim can be loaded both under its Hermes name and as
part of hermes-memory-core: both must see one override.
"""

from __future__ import annotations

from contextvars import ContextVar
from pathlib import Path

__all__ = ["HOME_OVERRIDE"]

HOME_OVERRIDE: ContextVar[Path | None] = ContextVar("hermes_home_override", default=None)
"""The folder ``get_hermes_home()`` of the served modules returns instead of ``HERMES_HOME``."""
