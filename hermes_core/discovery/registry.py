"""The pluggy plugin manager (project ``hermes_memory``) and its entry-point plugins.

Entry points of group ``hermes_memory`` are loaded one by one, so a plugin that
fails to import or to register costs one warning naming its distribution and the
cause, and the others still load (pluggy's own ``load_setuptools_entrypoints``
stops at the first failure). Blocked plugins are never imported. The manager is
built once per process; :func:`reset_plugin_manager` rebuilds it (tests).
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Literal

import pluggy

from hermes_core import hookspecs
from hermes_core.config import get_hermes_home
from hermes_core.discovery.deadline import PluginLoadTimeout, bounded_call, load_deadline
from hermes_core.discovery.entry_points import entry_points_in, forget_entry_points
from hermes_core.discovery.extract import contain, describe_exception
from hermes_core.discovery.info import failure
from hermes_core.discovery.policy import PluginPolicy, current_policy

logger = logging.getLogger("hermes_core.plugins")

PROJECT = "hermes_memory"
ENTRY_POINT_GROUP = "hermes_memory"

PluginStatus = Literal["loaded", "blocked", "failed"]


@dataclass(frozen=True)
class PluginRecord:
    """A pluggy plugin: where it came from and whether it loaded."""

    name: str
    distribution: str | None = None
    version: str | None = None
    status: PluginStatus = "loaded"
    error: str | None = None
    hooks: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "name": self.name,
            "distribution": self.distribution,
            "version": self.version,
            "status": self.status,
            "error": self.error,
            "hooks": list(self.hooks),
        }


@dataclass(frozen=True)
class Registration:
    """One ``register(...)`` call made inside ``register_memory_providers``."""

    plugin: str
    distribution: str | None
    version: str | None
    obj: Any = None
    error: str | None = None


class PluginRegistry:
    """A plugin manager plus what we know about each plugin's distribution."""

    def __init__(self, pm: pluggy.PluginManager) -> None:
        self.pm = pm
        self._records: dict[str, PluginRecord] = {}

    def record(self, record: PluginRecord) -> None:
        """Remember *record* (the first record of a name wins)."""
        self._records.setdefault(record.name, record)

    def distribution_of(self, plugin_name: str) -> tuple[str | None, str | None]:
        """(distribution, version) of a plugin loaded from an entry point."""
        record = self._records.get(plugin_name)
        return (record.distribution, record.version) if record else (None, None)

    def plugins(self) -> list[PluginRecord]:
        """Every plugin: registered ones with their hooks, then blocked and failed ones."""
        listed = []
        for name, plugin in self.pm.list_name_plugin():
            if plugin is None or name is None:
                continue
            hooks = tuple(sorted(c.name for c in self.pm.get_hookcallers(plugin) or ()))
            record = self._records.get(name, PluginRecord(name))
            listed.append(replace(record, hooks=hooks))
        registered = {p.name for p in listed}
        listed += [r for r in self._records.values() if r.name not in registered]
        return listed

    def registrations(self) -> list[Registration]:
        """Ask every plugin for its providers, one plugin at a time.

        Plugins are asked in pluggy's call order (last registered first,
        honouring ``tryfirst``/``trylast``). A plugin whose hook raises before
        registering anything yields one :class:`Registration` carrying the error
        (the caller warns); providers registered before a failure are kept.
        """
        found: list[Registration] = []
        caller = self.pm.hook.register_memory_providers
        for impl in reversed(caller.get_hookimpls()):
            if impl.hookwrapper or impl.wrapper:
                continue
            dist, version = self.distribution_of(impl.plugin_name)
            collected: list[Any] = []
            register: Callable[[Any], None] = collected.append
            arguments = {"register": register}
            hook = functools.partial(
                impl.function, **{name: arguments[name] for name in impl.argnames}
            )
            try:
                bounded_call("register_memory_providers()", hook)
            except Exception as exc:
                cause = failure("register_memory_providers()", exc)
                if not collected:
                    found.append(Registration(impl.plugin_name, dist, version, error=cause))
                    continue
                logger.warning(
                    "Plugin %s: %s after registering %d provider(s); keeping them",
                    plugin_label(impl.plugin_name, dist, version),
                    cause,
                    len(collected),
                )
            found += [Registration(impl.plugin_name, dist, version, obj) for obj in collected]
        return found


def plugin_label(name: str, distribution: str | None, version: str | None) -> str:
    """``'honcho' (distribution hermes-memory-honcho 0.1.0)`` for messages."""
    if distribution is None:
        return repr(name)
    return f"{name!r} (distribution {distribution}{' ' + version if version else ''})"


def build_registry(policy: PluginPolicy) -> PluginRegistry:
    """A fresh manager with the hookspecs and every permitted ``hermes_memory`` entry point."""
    pm = pluggy.PluginManager(PROJECT)
    pm.add_hookspecs(hookspecs)
    registry = PluginRegistry(pm)
    for ref in entry_points_in(ENTRY_POINT_GROUP):
        label = plugin_label(ref.name, ref.distribution, ref.version)
        if pm.has_plugin(ref.name) or pm.is_blocked(ref.name):
            logger.warning(
                "Plugin %s: another distribution already uses the entry-point name %r; skipped",
                label,
                ref.name,
            )
            continue
        if not policy.permits(ref.name, ref.distribution):
            pm.set_blocked(ref.name)
            registry.record(PluginRecord(ref.name, ref.distribution, ref.version, "blocked"))
            logger.info("Plugin %s is blocked by the plugin allow/block lists", label)
            continue
        try:
            with load_deadline():
                plugin = contain(ref.entry_point.load)
            pm.register(plugin, name=ref.name)
        except Exception as exc:  # PluginCrash: a plugin's SystemExit counts too
            cause = str(exc) if isinstance(exc, PluginLoadTimeout) else describe_exception(exc)
            logger.warning("Plugin %s could not be loaded: %s", label, cause)
            registry.record(
                PluginRecord(ref.name, ref.distribution, ref.version, "failed", error=cause)
            )
            continue
        registry.record(PluginRecord(ref.name, ref.distribution, ref.version))
    _warn_unknown_hooks(registry)
    return registry


def _warn_unknown_hooks(registry: PluginRegistry) -> None:
    """A hook implementation without a spec is a typo that would silently never run."""
    for hook_name, caller in vars(registry.pm.hook).items():
        if not isinstance(caller, pluggy.HookCaller) or caller.has_spec():
            continue
        for impl in caller.get_hookimpls():
            if impl.optionalhook:
                continue
            dist, version = registry.distribution_of(impl.plugin_name)
            logger.warning(
                "Plugin %s implements unknown hook %r (misspelt?); it is never called",
                plugin_label(impl.plugin_name, dist, version),
                hook_name,
            )


_registry: PluginRegistry | None = None
_registry_lock = threading.Lock()


def get_registry() -> PluginRegistry:
    """The process-wide registry, built on first use with the current policy."""
    global _registry
    with _registry_lock:
        if _registry is None:
            _registry = build_registry(current_policy(get_hermes_home()))
        return _registry


def reset_registry() -> None:
    """Forget the process-wide registry and entry-point scan; the next use rebuilds them."""
    global _registry
    with _registry_lock:
        _registry = None
    forget_entry_points()
