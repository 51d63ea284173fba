"""Turning whatever a plugin exposes into one :class:`MemoryProvider` instance.

Accepted shapes: an instance, a subclass, a zero-argument factory, a
``register(ctx)`` callable (Hermes style: it calls
``ctx.register_memory_provider(provider)``; the ``ctx`` is
:class:`hermes_core.hermes_compat.context.PluginContext`), a module with
``register`` or with a subclass among its attributes, or any namespace holding a
subclass.
"""

from __future__ import annotations

import inspect
import logging
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any, TypeGuard

from hermes_core.errors import PluginError, contain, describe_exception
from hermes_core.provider import MemoryProvider

logger = logging.getLogger("hermes_core.plugins")

_REQUIRED_METHODS = ("is_available", "initialize", "get_tool_schemas")


def describe_import_failure(exc: BaseException) -> str:
    """:func:`describe_exception`, plus a hint when a Hermes module name is not served."""
    text = describe_exception(exc)
    if not isinstance(exc, ImportError) or "hermes_core.hermes_compat" not in sys.modules:
        return text
    from hermes_core.hermes_compat import explain_import_error

    hint = explain_import_error(exc)
    return f"{text} ({hint})" if hint else text


def unavailable_reason_of(provider: Any) -> str:
    """*provider*'s ``unavailable_reason()``; a plain string attribute (a property) counts too."""
    reason = getattr(provider, "unavailable_reason", "")
    if callable(reason):
        reason = contain(reason)
    return str(reason or "")


def provider_bases() -> tuple[type, ...]:
    """Base classes that make a provider: ours, plus real Hermes' when it is installed."""
    bases: list[type] = [MemoryProvider]
    hermes_module = sys.modules.get("agent.memory_provider")
    hermes_base = getattr(hermes_module, "MemoryProvider", None)
    if isinstance(hermes_base, type) and hermes_base is not MemoryProvider:
        bases.append(hermes_base)
    return tuple(bases)


def is_provider_class(obj: Any) -> TypeGuard[type]:
    """A concrete-or-abstract subclass of a provider base (not a base itself)."""
    bases = provider_bases()
    return isinstance(obj, type) and issubclass(obj, bases) and obj not in bases


def is_provider_instance(obj: Any) -> bool:
    """An instance of a provider base, or an object with the provider's required methods."""
    if isinstance(obj, type | ModuleType):
        return False
    if isinstance(obj, provider_bases()):
        return True
    return hasattr(type(obj), "name") and all(
        callable(getattr(obj, method, None)) for method in _REQUIRED_METHODS
    )


def _callable_name(obj: Any) -> str:
    return getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or repr(obj)


def as_provider(instance: Any) -> Any:
    """*instance*, wrapped in :class:`DuckTypedProvider` unless it subclasses a provider base."""
    if isinstance(instance, provider_bases()):
        return instance
    from hermes_core.discovery.adapter import DuckTypedProvider

    return DuckTypedProvider(instance)


def instantiate(obj: Any) -> Any:
    """An instance from an instance, a provider class or a zero-argument factory."""
    if is_provider_instance(obj):
        return as_provider(obj)
    if is_provider_class(obj):
        try:
            return as_provider(contain(obj))
        except Exception as exc:
            raise PluginError(
                f"creating {_callable_name(obj)} raised {describe_exception(exc)}"
            ) from exc
    if callable(obj) and not isinstance(obj, type):
        try:
            result = contain(obj)
        except Exception as exc:
            raise PluginError(
                f"factory {_callable_name(obj)}() raised {describe_exception(exc)}"
            ) from exc
        if is_provider_class(result) or is_provider_instance(result):
            return instantiate(result)
        raise PluginError(
            f"factory {_callable_name(obj)}() returned "
            f"{type(result).__name__}, not a MemoryProvider"
        )
    raise PluginError(f"{obj!r} is not a MemoryProvider class, instance or factory")


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
            _callable_name(
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
