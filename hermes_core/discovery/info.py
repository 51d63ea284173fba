"""The listing entry of a discovered provider, and probing a provider for it."""

from __future__ import annotations

import inspect
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any, Literal

from hermes_core.discovery.adapter import unwrap
from hermes_core.discovery.deadline import ProviderCallTimeout, bounded_call
from hermes_core.discovery.extract import (
    describe_exception,
    provider_bases,
    unavailable_reason_of,
)
from hermes_core.provider import BUILTIN_PROVIDER_NAME

Source = Literal["entry_point", "folder", "project", "hermes_entry_point"]

SOURCE_LABELS: dict[str, str] = {
    "entry_point": "entry point (hermes_memory)",
    "folder": "folder ($HERMES_HOME/plugins)",
    "project": "project folder (./.hermes/plugins)",
    "hermes_entry_point": "entry point (hermes_agent.memory_providers)",
}

OPTIONAL_HOOKS = (
    "initialize_for_inspection",
    "unavailable_reason",
    "system_prompt_block",
    "prefetch",
    "queue_prefetch",
    "recall_status",
    "sync_turn",
    "handle_tool_call",
    "shutdown",
    "on_turn_start",
    "on_turn_end",
    "on_session_end",
    "on_session_switch",
    "on_pre_compress",
    "on_delegation",
    "on_memory_write",
    "get_config_schema",
    "save_config",
    "backup_paths",
)
"""Hooks with a default in :class:`MemoryProvider`; listings show the ones a provider overrides."""


@dataclass(frozen=True)
class ProviderInfo:
    """One discovered provider, as ``hermes-memory plugins`` lists it.

    ``name`` is the key ``memory.provider`` selects: the provider's own name for
    ``hermes_memory`` entry points, the directory name for folders, the
    entry-point name for ``hermes_agent.memory_providers``. ``provider_name`` is
    what the loaded instance calls itself. ``error`` is set when the plugin is
    broken (it could not be imported, created or probed); ``shadowed_by`` names
    the source that won when another source offers the same name;
    ``required_env`` is a folder plugin's ``requires_env`` from ``plugin.yaml``;
    ``warnings`` are problems that do not stop the plugin (a ``plugin.yaml``
    that had to be ignored, say); ``aliases`` are other names ``memory.provider``
    may use for it (a folder's ``plugin.yaml`` name, when it differs);
    ``module`` is the module of the provider's class (of an entry point's target,
    when it was not loaded).
    """

    name: str
    description: str = ""
    source: Source = "entry_point"
    distribution: str | None = None
    version: str | None = None
    path: str | None = None
    hooks: tuple[str, ...] = ()
    available: bool = False
    unavailable_reason: str = ""
    error: str | None = None
    provider_name: str | None = None
    plugin: str | None = None
    shadowed_by: str | None = None
    required_env: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    module: str | None = None

    @property
    def status(self) -> str:
        """``available``, ``unavailable``, ``broken`` or ``shadowed``."""
        if self.shadowed_by:
            return "shadowed"
        if self.error:
            return "broken"
        return "available" if self.available else "unavailable"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (``hermes-memory plugins --json``)."""
        data = asdict(self)
        data["hooks"] = list(self.hooks)
        data["required_env"] = list(self.required_env)
        data["warnings"] = list(self.warnings)
        data["aliases"] = list(self.aliases)
        data["status"] = self.status
        return data

    def with_changes(self, **changes: Any) -> ProviderInfo:
        """A copy with some fields replaced."""
        return replace(self, **changes)


def _missing(required: Sequence[str], declared_in: str) -> str:
    missing = [name for name in dict.fromkeys(required) if not os.environ.get(name)]
    if not missing:
        return ""
    one = len(missing) == 1
    return (
        f"{', '.join(missing)} {'is' if one else 'are'} not set ({declared_in}); "
        f"set {'it' if one else 'them'} in the environment or in $HERMES_HOME/.env"
    )


def missing_env_reason(required: Sequence[str], provider: Any = None) -> str:
    """Why a plugin that gave no reason is unavailable, when variables it declares are unset.

    The variables come from ``plugin.yaml``'s ``requires_env`` (*required*), else
    from the ``env_var`` of the required fields of *provider*'s
    ``get_config_schema()`` (the setup wizard's list).
    """
    reason = _missing(required, "plugin.yaml requires_env")
    if reason or provider is None:
        return reason
    try:
        schema = bounded_call("get_config_schema()", provider.get_config_schema)
    except ProviderCallTimeout as exc:  # a hang is worth saying: the next call hangs too
        return str(exc)
    except Exception:  # a description that cannot be read explains nothing
        return ""
    fields = schema if isinstance(schema, list) else []
    names = [
        field["env_var"]
        for field in fields
        if isinstance(field, dict)
        and field.get("required") is True
        and isinstance(field.get("env_var"), str)
        and field["env_var"].strip()
    ]
    return _missing(names, "required by its config schema")


def name_problem(name: Any, listed_as: str) -> str | None:
    """Why *name* (what a provider calls itself) cannot be used, or ``None`` when it can.

    The manager keys tools, logs and the builtin-first rule on that name: it must
    be a non-empty string, and ``builtin`` belongs to the builtin provider alone.
    """
    if not isinstance(name, str) or not name.strip():
        return f"name is {name!r}; a provider's name must be a non-empty string"
    if name == BUILTIN_PROVIDER_NAME and listed_as != BUILTIN_PROVIDER_NAME:
        return (
            f"name is {BUILTIN_PROVIDER_NAME!r}, which is reserved for hermes-memory's builtin "
            "provider; the plugin must give its provider a name of its own"
        )
    return None


def implemented_hooks(provider_class: type) -> tuple[str, ...]:
    """Optional hooks that *provider_class* defines itself rather than inheriting a default."""
    bases = provider_bases()
    hooks = []
    for hook in OPTIONAL_HOOKS:
        for klass in provider_class.__mro__:
            if hook in vars(klass):
                if klass not in bases and klass is not object:
                    hooks.append(hook)
                break
    return tuple(hooks)


def source_file(obj: Any) -> str | None:
    """File of *obj* when it is a module, else of the module defining its class."""
    if inspect.ismodule(obj):
        return getattr(obj, "__file__", None)
    klass = obj if inspect.isclass(obj) else type(obj)
    return getattr(sys.modules.get(klass.__module__), "__file__", None)


def first_doc_line(obj: Any) -> str:
    """First line of the class docstring of *obj* (not inherited), or ``""``."""
    klass = obj if inspect.isclass(obj) else type(obj)
    doc = vars(klass).get("__doc__") or ""
    return doc.strip().splitlines()[0].strip() if doc.strip() else ""


def failure(call: str, exc: Exception) -> str:
    """What went wrong in *call* into a provider: it raised *exc*, or it did not return."""
    if isinstance(exc, ProviderCallTimeout):
        return str(exc)
    return f"{call} raised {describe_exception(exc)}"


def reason_of(provider: Any) -> str:
    """*provider*'s ``unavailable_reason()`` within the call limit; a failure is the reason."""
    try:
        return str(bounded_call("unavailable_reason()", unavailable_reason_of, provider))
    except Exception as exc:
        return f"({failure('unavailable_reason()', exc)})"


def probe(provider: Any, info: ProviderInfo) -> ProviderInfo:
    """Fill *info* from a live *provider*: name, hooks, availability, schema check.

    Nothing raised by the provider escapes: a failing ``name`` or
    ``is_available``, or (for an available provider) a failing
    ``get_tool_schemas``, marks the entry broken. Each call is bounded by
    :data:`.deadline.PROVIDER_CALL_TIMEOUT`: one that does not return in time
    fails the same way, naming the call.
    """
    own = unwrap(provider)  # the plugin's object, when it had to be adapted
    changes: dict[str, Any] = {
        "module": type(own).__module__,
        "hooks": implemented_hooks(type(own)),
        "path": info.path or source_file(own),
        "description": info.description or first_doc_line(own),
    }
    try:
        name = bounded_call("name", getattr, provider, "name")
    except Exception as exc:
        return info.with_changes(**changes, error=failure("name", exc))
    changes["provider_name"] = str(name)
    problem = name_problem(name, info.name)
    if problem:
        return info.with_changes(**changes, error=problem)
    try:
        available = bool(bounded_call("is_available()", provider.is_available))
    except Exception as exc:
        return info.with_changes(**changes, error=failure("is_available()", exc))
    changes["available"] = available
    if not available:
        reason = reason_of(provider)
        changes["unavailable_reason"] = reason or missing_env_reason(info.required_env, provider)
        return info.with_changes(**changes)
    # Registration reads the tool schemas first; a provider failing here would fail there.
    try:
        schemas = bounded_call("get_tool_schemas()", provider.get_tool_schemas)
    except Exception as exc:
        return info.with_changes(
            **{**changes, "available": False}, error=failure("get_tool_schemas()", exc)
        )
    kind = type(schemas).__name__
    if isinstance(schemas, (str, bytes, Mapping)):
        # Registration iterates it (as Hermes does) and drops every item as no schema.
        warning = (
            f"get_tool_schemas() returned a {kind}, not a list of tool schemas: the provider "
            "runs, but none of its tools are offered. Return a list of schema dicts."
        )
        return info.with_changes(**changes, warnings=(*info.warnings, warning))
    if not isinstance(schemas, Iterable):
        return info.with_changes(
            **{**changes, "available": False},
            error=f"get_tool_schemas() returned {kind}, expected a list of tool schemas",
        )
    return info.with_changes(**changes)
