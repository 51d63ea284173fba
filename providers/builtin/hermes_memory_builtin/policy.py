"""The ``memory.overflow`` and ``memory.curator*`` settings (what happens when memory fills
up) and the ``memory.judge*`` settings (a model's second opinion on held writes).

- ``memory.overflow``: ``reject`` (default, the Hermes contract: an add over
  the budget is refused and the agent makes room) or ``archive`` (the add
  succeeds; the lowest-value entries move to the archive, and the result
  lists them).
- ``memory.curator``: ``off`` (default), ``review`` (at session end the
  curator logs proposals and changes nothing) or ``auto`` (it applies them).
- ``memory.curator_target``: prompt-tier usage, in percent of the budget,
  the curator keeps each file under (default 80).
- ``memory.curator_stale_days``: an entry never used for recall this many
  days after it was first seen is archived as stale (default 90).
- ``memory.curator_model``: let the configured chat model judge the pairs
  the rules leave open (default false; see :mod:`~hermes_memory_builtin.curator_model`),
  in at most ``memory.curator_model_calls`` requests per run (default 2).
- ``memory.judge``: let the configured chat model judge the writes the
  injection detector holds for review (default false; see
  :mod:`~hermes_memory_builtin.judge`): it may refuse them, never store them;
  ``memory.judge_timeout``: seconds one judgement may take (default 5, at most
  30), after which the write stays held.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hermes_core.config import cfg_get
from hermes_core.errors import ConfigError

OVERFLOW_CHOICES = ("reject", "archive")
CURATOR_CHOICES = ("off", "review", "auto")
DEFAULT_TARGET_PERCENT = 80
DEFAULT_STALE_DAYS = 90.0
DEFAULT_JUDGE_TIMEOUT = 5.0


def _choice(config: Mapping[str, Any] | None, key: str, choices: tuple[str, ...]) -> str:
    value = cfg_get(config, key)
    if value is None:
        return choices[0]
    if value is False and "off" in choices:  # YAML reads a bare `off` as false
        return "off"
    if isinstance(value, str) and value.strip().lower() in choices:
        return value.strip().lower()
    raise ConfigError(
        f"{key} must be one of {', '.join(choices)}, found {value!r}. Fix it in config.yaml "
        f"(the default is {choices[0]})."
    )


def _number(
    config: Mapping[str, Any] | None, key: str, default: float, low: float, high: float
) -> float:
    value = cfg_get(config, key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        raise ConfigError(
            f"{key} must be a number from {low:g} to {high:g}, found {value!r}. Fix it in "
            f"config.yaml (the default is {default:g})."
        )
    return float(value)


def _flag(config: Mapping[str, Any] | None, key: str) -> bool:
    value = cfg_get(config, key)
    if value is None or isinstance(value, bool):
        return bool(value)
    raise ConfigError(f"{key} must be true or false, found {value!r}. Fix it in config.yaml.")


@dataclass(frozen=True)
class CurationPolicy:
    """How full memory is handled (see the module docstring)."""

    overflow: str = "reject"
    curator: str = "off"
    target_percent: float = DEFAULT_TARGET_PERCENT
    stale_days: float = DEFAULT_STALE_DAYS
    model: bool = False
    model_calls: int = 2

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | None) -> CurationPolicy:
        """Read the ``memory.*`` keys above; a wrong value raises :class:`ConfigError`."""
        return cls(
            overflow=_choice(config, "memory.overflow", OVERFLOW_CHOICES),
            curator=_choice(config, "memory.curator", CURATOR_CHOICES),
            target_percent=_number(
                config, "memory.curator_target", DEFAULT_TARGET_PERCENT, 10, 100
            ),
            stale_days=_number(config, "memory.curator_stale_days", DEFAULT_STALE_DAYS, 0, 36500),
            model=_flag(config, "memory.curator_model"),
            model_calls=int(_number(config, "memory.curator_model_calls", 2, 1, 100)),
        )

    @property
    def uses_archive(self) -> bool:
        """Whether anything moves entries to the archive under this policy."""
        return self.overflow == "archive" or self.curator != "off"


@dataclass(frozen=True)
class JudgePolicy:
    """Whether the model judge looks at held writes, and for how long (module docstring)."""

    enabled: bool = False
    timeout: float = DEFAULT_JUDGE_TIMEOUT

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | None) -> JudgePolicy:
        """Read ``memory.judge`` and ``memory.judge_timeout``; a wrong value raises
        :class:`ConfigError`."""
        return cls(
            enabled=_flag(config, "memory.judge"),
            timeout=_number(config, "memory.judge_timeout", DEFAULT_JUDGE_TIMEOUT, 0.1, 30),
        )
