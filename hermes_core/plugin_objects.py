"""What a plugin exports, made a provider.

A plugin's entry point or folder module may export a provider class, an
instance, a factory, Hermes' ``register(ctx)`` function, or a module holding
one of these. :func:`provider_from_object` builds the provider from any of
them. ``register(ctx)`` runs against the Hermes plugin context
(:mod:`hermes_core.hermes_compat.context`), imported only when a plugin has one.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable
from types import ModuleType
from typing import Any

from hermes_core.discovery.extract import (
    as_provider,
    callable_name,
    describe_import_failure,
    instantiate,
    is_provider_class,
    is_provider_instance,
    provider_bases,
)
from hermes_core.errors import PluginError, contain, describe_exception

logger = logging.getLogger("hermes_core.plugins")


def _required_positionals(fn: Callable[..., Any]) -> int:
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return 0
    return sum(
        1
        for p in signature.parameters.values()
        if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    )


def _from_register(
    register: Callable[..., Any], label: str, plugin_id: str
) -> tuple[Any | None, str | None]:
    """Run ``register(ctx)``; return (instance or None, why it produced none)."""
    # imported here: only a Hermes-style plugin needs the Hermes layer
    from hermes_core.hermes_compat.context import PluginContext, attach_tools
    from hermes_core.hermes_compat.hooks import attach_hooks

    ctx = PluginContext(plugin_id, label)
    try:
        contain(register, ctx)
    except Exception as exc:
        if not ctx.providers:
            logger.debug("%s: register(ctx) raised %s", label, describe_exception(exc))
            return None, f"register(ctx) raised {describe_import_failure(exc)}"
        logger.warning(
            "%s: register(ctx) raised %s after registering a provider; keeping the provider",
            label,
            describe_exception(exc),
        )
    if not ctx.providers:
        return None, "register(ctx) did not call ctx.register_memory_provider()"
    if len(ctx.providers) > 1:
        logger.warning(
            "%s: register(ctx) registered %d memory providers; using the first (%s) and "
            "ignoring the rest: a plugin offers one provider, so give each its own plugin",
            label,
            len(ctx.providers),
            callable_name(
                type(ctx.providers[0])
                if is_provider_instance(ctx.providers[0])
                else ctx.providers[0]
            ),
        )
    provider = instantiate(ctx.providers[0])
    attach_tools(provider, ctx.tools, label)
    attach_hooks(provider, ctx.hooks, label)
    return provider, None


def _from_namespace(namespace: Any, label: str, plugin_id: str) -> Any:
    problems: list[str] = []
    register = getattr(namespace, "register", None)
    if callable(register):
        provider, problem = _from_register(register, label, plugin_id)
        if provider is not None:
            return provider
        if problem:
            problems.append(problem)
    # Fallback: the first provider subclass that instantiates, own classes first.
    own_module = getattr(namespace, "__name__", None)
    classes: list[type] = []
    for attr in dir(namespace):
        value = getattr(namespace, attr, None)
        if not attr.startswith("__") and is_provider_class(value) and not inspect.isabstract(value):
            classes.append(value)
    classes.sort(key=lambda cls: cls.__module__ != own_module)
    for cls in classes:
        try:
            return as_provider(contain(cls))
        except Exception as exc:
            problems.append(f"creating {cls.__qualname__} raised {describe_exception(exc)}")
    if not problems:
        problems.append(
            "no provider found: define register(ctx) calling "
            "ctx.register_memory_provider(...) or a MemoryProvider subclass"
            + _foreign_base_note(namespace)
        )
    raise PluginError("; ".join(problems))


def _foreign_base_note(namespace: Any) -> str:
    """Why a class that looks like a provider is not one: it extends a look-alike base."""
    bases = provider_bases()
    for attr in dir(namespace):
        value = getattr(namespace, attr, None)
        if attr.startswith("__") or not isinstance(value, type):
            continue
        for base in value.__mro__[1:]:
            if base.__name__ == "MemoryProvider" and base not in bases:
                where = "" if base.__module__.startswith("_") else f" in {base.__module__}"
                return (
                    f" ({value.__qualname__} extends a MemoryProvider class of the plugin's "
                    f"own{where}, not agent.memory_provider.MemoryProvider)"
                )
    return ""


def provider_from_object(obj: Any, label: str, plugin_id: str = "") -> Any:
    """Build a provider from a module, class, instance, factory, ``register`` or namespace.

    *plugin_id* names the plugin for ``ctx.get_config`` (folder or entry-point name).
    """
    if is_provider_instance(obj) or is_provider_class(obj):
        return instantiate(obj)
    if callable(obj) and not isinstance(obj, type | ModuleType):
        if _required_positionals(obj) >= 1:
            provider, problem = _from_register(obj, label, plugin_id)
            if provider is None:
                raise PluginError(problem or "register(ctx) registered no provider")
            return provider
        return instantiate(obj)
    return _from_namespace(obj, label, plugin_id)
