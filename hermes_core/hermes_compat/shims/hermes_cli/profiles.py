"""``hermes_cli.profiles``: which Hermes profile is active, and the profiles beside it.

A profile is a ``HERMES_HOME`` of its own: the root (``~/.hermes``, profile
``default``) or ``<root>/profiles/<name>``. Plugins read the active profile's
name to scope their data (a Honcho peer per profile) and list the profiles to
set each one up. Creating, renaming and deleting profiles, their wrapper
scripts and gateways belong to Hermes' CLI and are not served.
"""

import re
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from hermes_core.hermes_compat.finder import missing_attribute
from hermes_core.hermes_compat.shims.hermes_constants import (
    get_default_hermes_root,
    get_hermes_home,
)

__hermes_compat__ = True

__all__ = [
    "ProfileInfo",
    "_get_default_hermes_home",
    "_get_profiles_root",
    "get_active_profile_name",
    "get_profile_dir",
    "list_profiles",
    "profile_exists",
]

DEFAULT_PROFILE = "default"
_PROFILE_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")


@dataclass
class ProfileInfo:
    """One profile: its name, its ``HERMES_HOME`` and whether it is the root's."""

    name: str
    path: Path
    is_default: bool
    gateway_running: bool = False
    model: str | None = None
    provider: str | None = None
    has_env: bool = False
    skill_count: int = 0
    alias_path: Path | None = None
    alias_name: str | None = None
    description: str = ""


def _get_default_hermes_home() -> Path:
    """The root ``HERMES_HOME``, the home of profile ``default``."""
    return get_default_hermes_root()


def _get_profiles_root() -> Path:
    """Where named profiles live: ``<root>/profiles``."""
    return get_default_hermes_root() / "profiles"


def get_active_profile_name() -> str:
    """``default`` for the root home, the profile's name for ``<root>/profiles/<name>``."""
    home = get_hermes_home().resolve()
    if home == _get_default_hermes_home().resolve():
        return DEFAULT_PROFILE
    if home.parent == _get_profiles_root().resolve() and _PROFILE_NAME.fullmatch(home.name):
        return home.name
    return "custom"


def get_profile_dir(name: str) -> Path:
    """The ``HERMES_HOME`` of profile *name* (whether or not it exists)."""
    if name == DEFAULT_PROFILE:
        return _get_default_hermes_home()
    return _get_profiles_root() / name


def profile_exists(name: str) -> bool:
    """True when profile *name* has a home folder."""
    return get_profile_dir(name).is_dir()


def _info(name: str, path: Path, is_default: bool) -> ProfileInfo:
    return ProfileInfo(name, path, is_default, has_env=(path / ".env").exists())


def list_profiles() -> list[ProfileInfo]:
    """Profile ``default`` (when its home exists), then each named profile, by name."""
    profiles = []
    root = _get_default_hermes_home()
    if root.is_dir():
        profiles.append(_info(DEFAULT_PROFILE, root, True))
    named = _get_profiles_root()
    if named.is_dir():
        for entry in sorted(named.iterdir()):
            name = entry.name
            if entry.is_dir() and name != DEFAULT_PROFILE and _PROFILE_NAME.fullmatch(name):
                profiles.append(_info(name, entry, False))
    return profiles


def __getattr__(name: str) -> NoReturn:
    raise missing_attribute(__name__, name, __all__)
