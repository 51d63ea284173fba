"""``hermes_constants``: where the active profile lives.

``HERMES_HOME`` is read at every call (default ``~/.hermes``), so profiles and
tests can switch it, exactly as in Hermes Agent.
"""

from pathlib import Path
from typing import NoReturn

from hermes_core.config import get_hermes_home
from hermes_core.hermes_compat.finder import missing_attribute

__hermes_compat__ = True

__all__ = [
    "display_hermes_home",
    "get_default_hermes_root",
    "get_hermes_dir",
    "get_hermes_home",
]


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
