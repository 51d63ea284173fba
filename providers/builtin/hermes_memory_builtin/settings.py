"""The ``memory.*`` settings of ``config.yaml`` that shape the builtin store."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hermes_core.config import TRUTHY_STRINGS, cfg_get, config_section
from hermes_core.errors import ConfigError

DEFAULT_MEMORY_CHAR_LIMIT = 2200
DEFAULT_USER_CHAR_LIMIT = 1375
MAX_CHAR_LIMIT = 1_000_000
"""The largest budget accepted: memory is part of every system prompt."""


def _char_limit(config: Mapping[str, Any] | None, key: str, default: int) -> int:
    value = cfg_get(config, key)
    if value is None:
        return default
    if isinstance(value, bool):
        number = None
    elif isinstance(value, int):
        number = value
    elif isinstance(value, str) and value.strip().isdecimal():
        number = int(value.strip())  # "20000" written with quotes still means 20000
    else:
        number = None
    if number is None or number < 1:
        raise ConfigError(
            f"{key} must be a positive whole number of characters, found {value!r}. "
            f"Fix it in config.yaml (the default is {default})."
        )
    if number > MAX_CHAR_LIMIT:
        raise ConfigError(
            f"{key} is {number:,} characters, more than the {MAX_CHAR_LIMIT:,} allowed: memory "
            f"is sent with every request, so keep it small. Fix it in config.yaml (the default "
            f"is {default})."
        )
    return number


_FALSY_STRINGS = frozenset({"0", "false", "no", "off"})


def _flag(config: Mapping[str, Any] | None, key: str) -> bool:
    value = cfg_get(config, key)
    if value is None:
        return True
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in TRUTHY_STRINGS | _FALSY_STRINGS:
        return value.strip().lower() in TRUTHY_STRINGS  # 'no' written with quotes means off
    raise ConfigError(f"{key} must be true or false, found {value!r}. Fix it in config.yaml.")


@dataclass(frozen=True)
class MemorySettings:
    """Budgets (in characters) and on/off switches of ``MEMORY.md`` and ``USER.md``."""

    memory_char_limit: int = DEFAULT_MEMORY_CHAR_LIMIT
    user_char_limit: int = DEFAULT_USER_CHAR_LIMIT
    memory_enabled: bool = True
    user_profile_enabled: bool = True

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | None) -> MemorySettings:
        """Read ``memory.memory_char_limit``, ``memory.user_char_limit``,
        ``memory.memory_enabled`` and ``memory.user_profile_enabled``.

        Missing keys take the defaults (2200, 1375, enabled, enabled); a value
        of the wrong kind raises :class:`ConfigError` naming the key.
        """
        config_section(config, "memory")
        return cls(
            memory_char_limit=_char_limit(
                config, "memory.memory_char_limit", DEFAULT_MEMORY_CHAR_LIMIT
            ),
            user_char_limit=_char_limit(config, "memory.user_char_limit", DEFAULT_USER_CHAR_LIMIT),
            memory_enabled=_flag(config, "memory.memory_enabled"),
            user_profile_enabled=_flag(config, "memory.user_profile_enabled"),
        )
