"""Allow-list and block-list of plugins.

Sources: ``plugins.allow`` / ``plugins.block`` in ``config.yaml`` and the
environment variables ``HERMES_MEMORY_PLUGINS_ALLOW`` /
``HERMES_MEMORY_PLUGINS_BLOCK`` (comma-separated). Block lists are merged; the
environment's allow list replaces the config's (so it works as a rescue switch:
``HERMES_MEMORY_PLUGINS_ALLOW=`` loads no external plugin at all). A name matches
a provider name, an entry-point name, a plugin folder name or a distribution
name, compared case-insensitively with ``_`` and ``-`` treated alike. The builtin
provider is always permitted: the manager cannot run without it.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes_core.config import cfg_get, load_config
from hermes_core.errors import ConfigError

logger = logging.getLogger("hermes_core.plugins")

ALLOW_ENV = "HERMES_MEMORY_PLUGINS_ALLOW"
BLOCK_ENV = "HERMES_MEMORY_PLUGINS_BLOCK"
ALWAYS_PERMITTED = frozenset({"builtin", "hermes-memory-core"})


def normalize(name: str) -> str:
    """Comparable form of a plugin, provider or distribution name."""
    return name.strip().lower().replace("_", "-")


def _split(value: Any, where: str) -> frozenset[str]:
    if isinstance(value, str):
        items: Iterable[Any] = value.split(",")
    elif isinstance(value, list | tuple):
        items = value
    else:
        raise ConfigError(
            f"{where} must be a list of plugin names or a comma-separated string, found {value!r}."
        )
    return frozenset(normalize(str(item)) for item in items if str(item).strip())


@dataclass(frozen=True)
class PluginPolicy:
    """Which plugins may load: ``allow`` is ``None`` when there is no allow list."""

    allow: frozenset[str] | None = None
    block: frozenset[str] = frozenset()

    def permits(self, *names: str | None) -> bool:
        """True unless a name is blocked or an allow list names none of them."""
        keys = {normalize(n) for n in names if n}
        if keys & ALWAYS_PERMITTED:
            return True
        if keys & self.block:
            return False
        return self.allow is None or bool(keys & self.allow)

    def describe(self) -> str:
        """One line for humans (``hermes-memory doctor``)."""
        allow = "everything" if self.allow is None else ", ".join(sorted(self.allow)) or "nothing"
        block = ", ".join(sorted(self.block)) or "nothing"
        return f"allow: {allow}; block: {block}"

    @classmethod
    def from_sources(
        cls, config: Mapping[str, Any] | None, environ: Mapping[str, str]
    ) -> PluginPolicy:
        """Combine ``config.yaml``'s ``plugins.*`` with the environment."""
        allow: frozenset[str] | None = None
        block: frozenset[str] = frozenset()
        config_allow = cfg_get(config, "plugins.allow")
        if config_allow is not None:
            allow = _split(config_allow, "plugins.allow in config.yaml")
        config_block = cfg_get(config, "plugins.block")
        if config_block is not None:
            block = _split(config_block, "plugins.block in config.yaml")
        if ALLOW_ENV in environ:
            allow = _split(environ[ALLOW_ENV], ALLOW_ENV)
        if BLOCK_ENV in environ:
            block = block | _split(environ[BLOCK_ENV], BLOCK_ENV)
        return cls(allow=allow, block=block)


_warned: set[str] = set()


def _warn_once(message: str, exc: Exception) -> None:
    """Log a policy problem once per process: discovery reads the policy many times."""
    text = message % exc
    if text not in _warned:
        _warned.add(text)
        logger.warning(text)


def current_policy(hermes_home: Path) -> PluginPolicy:
    """The policy for *hermes_home*; a broken config.yaml falls back to the environment."""
    try:
        config: Mapping[str, Any] | None = load_config(hermes_home)
    except ConfigError as exc:
        _warn_once("Ignoring plugins.allow/block: %s", exc)
        config = None
    try:
        return PluginPolicy.from_sources(config, os.environ)
    except ConfigError as exc:
        _warn_once("Ignoring plugins.allow/block in config.yaml: %s", exc)
    try:
        return PluginPolicy.from_sources(None, os.environ)
    except ConfigError as exc:  # pragma: no cover - env values are always strings
        logger.warning("Ignoring the plugin allow/block environment variables: %s", exc)
        return PluginPolicy()
