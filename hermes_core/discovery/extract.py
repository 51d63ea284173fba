"""Turning whatever a plugin exposes into one :class:`MemoryProvider` instance.

Accepted shapes: an instance, a subclass, a zero-argument factory, a
``register(ctx)`` callable (Hermes style: it calls
``ctx.register_memory_provider(provider)``; the ``ctx`` is
:class:`hermes_core.hermes_compat.context.PluginContext`), a module with
``register`` or with a subclass among its attributes, or any namespace holding a
subclass.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any, TypeGuard

from hermes_core.errors import PluginError, contain, describe_exception
from hermes_core.provider import MemoryProvider

logger = logging.getLogger("hermes_core.plugins")

_REQUIRED_METHODS = ("is_available", "initialize", "get_tool_schemas")


_import_hints: list[Callable[[ImportError], str | None]] = []


def add_import_hint(explain: Callable[[ImportError], str | None]) -> None:
    """Let *explain* add a hint to :func:`describe_import_failure` (the Hermes layer does,
    when it is loaded, for the Hermes module names it serves)."""
    if explain not in _import_hints:
        _import_hints.append(explain)


def describe_import_failure(exc: BaseException) -> str:
    """:func:`describe_exception`, plus a hint from :func:`add_import_hint`'s explainers."""
    text = describe_exception(exc)
    if not isinstance(exc, ImportError):
        return text
    for explain in _import_hints:
        hint = explain(exc)
        if hint:
            return f"{text} ({hint})"
    return text


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


def callable_name(obj: Any) -> str:
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
                f"creating {callable_name(obj)} raised {describe_exception(exc)}"
            ) from exc
    if callable(obj) and not isinstance(obj, type):
        try:
            result = contain(obj)
        except Exception as exc:
            raise PluginError(
                f"factory {callable_name(obj)}() raised {describe_exception(exc)}"
            ) from exc
        if is_provider_class(result) or is_provider_instance(result):
            return instantiate(result)
        raise PluginError(
            f"factory {callable_name(obj)}() returned {type(result).__name__}, not a MemoryProvider"
        )
    raise PluginError(f"{obj!r} is not a MemoryProvider class, instance or factory")
