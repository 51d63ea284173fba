"""``hermes_constants``: where the active profile lives.

``HERMES_HOME`` is read at every call (default ``~/.hermes``), so profiles and
tests can switch it, exactly as in Hermes Agent. A plugin may point
``get_hermes_home()`` elsewhere for the current thread or task with
``set_hermes_home_override`` (a context variable, as in Hermes); hermes-memory-core's
own code keeps reading ``HERMES_HOME``.
"""

import os
from contextvars import Token
from pathlib import Path
from typing import NoReturn

from hermes_core import config as _core
from hermes_core.hermes_compat.finder import missing_attribute
from hermes_core.hermes_compat.home_override import HOME_OVERRIDE as _override

__hermes_compat__ = True

__all__ = [
    "display_hermes_home",
    "get_default_hermes_root",
    "get_hermes_dir",
    "get_hermes_home",
    "get_hermes_home_override",
    "hermes_home_key",
    "reset_hermes_home_override",
    "set_hermes_home_override",
]


def get_hermes_home() -> Path:
    """The active profile's folder: the override when one is set, else ``HERMES_HOME``."""
    return _override.get() or _core.get_hermes_home()


def get_hermes_home_override() -> Path | None:
    """The folder set with :func:`set_hermes_home_override` here, if any."""
    return _override.get()


def set_hermes_home_override(path: str | os.PathLike[str] | None) -> Token[Path | None]:
    """Point :func:`get_hermes_home` at *path* in this context; returns the token to undo it."""
    return _override.set(Path(path).expanduser() if path is not None else None)


def reset_hermes_home_override(token: Token[Path | None] | None = None) -> None:
    """Undo :func:`set_hermes_home_override` (without a token: clear the override)."""
    if token is None:
        _override.set(None)
    else:
        _override.reset(token)


def hermes_home_key(path: str | os.PathLike[str] | None = None) -> str:
    """A stable key for a profile folder (default: the active one), to key state per home."""
    folder = Path(path) if path is not None else get_hermes_home()
    return os.path.normcase(str(folder.expanduser().resolve(strict=False)))


def display_hermes_home() -> str:
    """``HERMES_HOME`` for messages: ``~/.hermes/profiles/coder`` under the home directory."""
    home = get_hermes_home()
    try:
        return "~/" + home.relative_to(Path.home()).as_posix()
    except ValueError:
        return str(home)


def get_default_hermes_root() -> Path:
    """The root holding every profile: ``<root>`` for ``<root>/profiles/<name>``, else the home."""
    home = get_hermes_home()
    if home.parent.name == "profiles":
        return home.parent.parent
    return home


def get_hermes_dir(new_subpath: str, old_name: str) -> Path:
    """``HERMES_HOME/<old_name>`` when that legacy path holds something, else ``<new_subpath>``."""
    home = get_hermes_home()
    legacy = home / old_name
    try:
        if legacy.is_file() or (legacy.is_dir() and any(legacy.iterdir())):
            return legacy
    except OSError:
        return legacy
    return home / new_subpath


def __getattr__(name: str) -> NoReturn:
    raise missing_attribute(__name__, name, __all__)
