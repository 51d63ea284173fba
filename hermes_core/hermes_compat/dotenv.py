"""``$HERMES_HOME/.env`` in the environment, as Hermes Agent plugins expect it.

Hermes Agent loads the profile's ``.env`` into ``os.environ`` when it starts,
so its plugins read secrets with ``os.environ.get("MEM0_API_KEY")`` or
``get_secret(...)``. :func:`apply_profile_env` does the same just before a
Hermes-style plugin is loaded: every key of the file (read by
:func:`hermes_core.secrets.read_dotenv`) that is not already set in the
environment is added, so the real environment always wins.
:func:`restore_environ` takes back exactly the values it added and that nobody
changed since.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

from hermes_core.errors import ConfigError
from hermes_core.secrets import read_dotenv

__all__ = ["apply_profile_env", "read_profile_env", "restore_environ"]

logger = logging.getLogger("hermes_core.hermes_compat")

_added: dict[str, str] = {}
_lock = threading.Lock()


def read_profile_env(hermes_home: str | os.PathLike[str] | None = None) -> dict[str, str]:
    """The profile's ``.env`` as a dict; ``{}`` (with a warning) when it cannot be read."""
    try:
        return read_dotenv(hermes_home)
    except ConfigError as exc:
        logger.warning("%s Its values are not loaded.", exc)
        return {}


def apply_profile_env(hermes_home: str | os.PathLike[str]) -> list[str]:
    """Add the profile's ``.env`` values to ``os.environ`` where the key is unset.

    Returns the keys added by this call.
    """
    added = []
    values = read_profile_env(hermes_home)
    with _lock:
        for key, value in values.items():
            if key in os.environ:
                continue
            if "=" in key or "\x00" in key:
                logger.warning(
                    "A key in %s contains '=' or a NUL character, which no environment "
                    "variable name can hold; it is not loaded. Rename it.",
                    Path(hermes_home) / ".env",
                )
                continue
            if "\x00" in value:
                logger.warning(
                    "%s in %s holds a NUL character, which no environment variable can "
                    "hold; it is not loaded. Write the value again.",
                    key,
                    Path(hermes_home) / ".env",
                )
                continue
            os.environ[key] = value
            _added[key] = value
            added.append(key)
    return added


def restore_environ() -> None:
    """Remove the values :func:`apply_profile_env` added, unless changed since (tests)."""
    with _lock:
        for key, value in _added.items():
            if os.environ.get(key) == value:
                del os.environ[key]
        _added.clear()
