"""The ``ctx`` a Hermes plugin's ``register(ctx)`` receives.

What each registration does in hermes-memory:

* ``register_memory_provider(provider)`` — collected; the first one is the
  plugin's provider.
* ``register_tool(name, toolset, schema, handler, check_fn=None,
  requires_env=None, is_async=False, ...)`` — honoured: the tool is added to the
  plugin's provider (:func:`attach_tools`), so the model sees it whenever the
  provider is active and calls reach ``handler(args, **kwargs)``. ``check_fn``
  and ``requires_env`` hide it while they fail, as in Hermes. A tool whose name
  the provider already declares is left to the provider.
* ``get_config(key, default=None)`` — reads
  ``plugins.entries.<plugin>.settings.<key>`` (then ``.config.<key>``) from
  ``config.yaml``, as Hermes does.
* ``llm`` — while a model is configured, a
  :class:`~hermes_core.hermes_compat.plugin_llm.PluginLlm` for the plugin's own
  model calls; otherwise absent (``getattr(ctx, "llm", None)`` is ``None``), so
  a plugin's fallback runs.
* ``register_hook(name, callback)`` — the turn and session hooks
  (``pre_llm_call``, ``post_llm_call``, ``on_session_start``,
  ``on_session_end``) run with the plugin's provider
  (:func:`~hermes_core.hermes_compat.hooks.attach_hooks`); others are ignored
  with an INFO log.
* ``register_auxiliary_task(name, ...)`` — the task becomes one the plugin may
  pass as ``ctx.llm.complete(..., task=name)``.
* any other ``register_*`` (skills, CLI commands, slash commands …) —
  accepted and ignored with an INFO log saying why, so a plugin's extras never
  cost it its provider.
"""

from __future__ import annotations

import inspect
import json
import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from hermes_core.errors import contain, describe_exception
from hermes_core.hermes_compat.hooks import SUPPORTED_HOOKS, run_awaitable
from hermes_core.signatures import keyword_names

logger = logging.getLogger("hermes_core.plugins")

IGNORED_REASONS: dict[str, str] = {
    "register_skill": "hermes-memory has no skills",
    "register_skill_provider": "hermes-memory has no skills",
    "register_hook": (
        "hermes-memory runs only the turn and session hooks of a memory plugin "
        "(on_session_start, pre_llm_call, post_llm_call, on_session_end)"
    ),
    "register_cli_command": (
        "extend hermes-memory's CLI with a cli.py next to the plugin or the register_commands hook"
    ),
    "register_command": "hermes-memory has no slash commands",
    "register_platform": "hermes-memory has no messaging platforms",
}


@dataclass
class PluginTool:
    """A tool registered with ``ctx.register_tool``."""

    name: str
    schema: dict[str, Any]
    handler: Callable[..., Any]
    check_fn: Callable[[], Any] | None = None
    requires_env: tuple[str, ...] = ()
    accepts: frozenset[str] | None = None  # keyword arguments the handler takes; None = any

    def enabled(self) -> bool:
        """Whether the tool is offered now: its env vars are set and ``check_fn`` passes."""
        if any(not os.environ.get(name) for name in self.requires_env):
            return False
        if self.check_fn is None:
            return True
        try:
            return bool(contain(self.check_fn))
        except Exception as exc:
            logger.debug("check_fn of tool %r raised %s; hiding it", self.name, exc)
            return False

    def call(self, args: dict[str, Any], kwargs: Mapping[str, Any]) -> str:
        """Run the handler and return its result as a JSON string."""
        passed = (
            dict(kwargs)
            if self.accepts is None
            else {k: v for k, v in kwargs.items() if k in self.accepts}
        )
        result = contain(self.handler, args, **passed)
        if inspect.isawaitable(result):
            result = contain(run_awaitable, result)
        if isinstance(result, str):
            return result
        return json.dumps(result, ensure_ascii=False, default=str)


def _tool_from(
    name: str,
    toolset: str,
    schema: dict[str, Any],
    handler: Callable[..., Any],
    check_fn: Callable[[], Any] | None = None,
    requires_env: list[str] | None = None,
    is_async: bool = False,
    description: str = "",
    emoji: str = "",
    override: bool = False,
    **_options: Any,
) -> PluginTool:
    """A :class:`PluginTool` from ``register_tool`` arguments; ValueError when malformed."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError("the tool name must be a non-empty string")
    if not isinstance(schema, dict):
        raise ValueError(f"the schema must be a dict, got {type(schema).__name__}")
    if not callable(handler):
        raise ValueError("the handler must be callable")
    inner = schema.get("function") if schema.get("type") == "function" else schema
    full = dict(inner) if isinstance(inner, dict) else {}
    full["name"] = name
    if description and not full.get("description"):
        full["description"] = description
    full.setdefault("parameters", {"type": "object", "properties": {}})
    return PluginTool(
        name=name,
        schema=full,
        handler=handler,
        check_fn=check_fn,
        requires_env=tuple(requires_env or ()),
        accepts=keyword_names(handler, skip=1),
    )


class PluginContext:
    """The context object given to ``register(ctx)`` of a Hermes plugin."""

    def __init__(self, plugin_id: str, label: str) -> None:
        self.plugin_id = plugin_id
        self.label = label
        self.providers: list[Any] = []
        self.tools: list[PluginTool] = []
        self.ignored: list[str] = []
        self.skipped_tools: list[str] = []
        self.auxiliary_tasks: set[str] = set()
        self.hooks: dict[str, list[Callable[..., Any]]] = {}
        self._llm: Any = None

    def register_memory_provider(self, provider: Any) -> None:
        """Collect *provider* (an instance, class or factory)."""
        self.providers.append(provider)

    def register_tool(self, *args: Any, **kwargs: Any) -> None:
        """Add a tool to the plugin's provider; a malformed registration is skipped, not raised.

        Hermes' signature: ``(name, toolset, schema, handler, check_fn=None,
        requires_env=None, is_async=False, description="", emoji="", override=False)``.
        """
        name = args[0] if args else kwargs.get("name")
        try:
            tool = _tool_from(*args, **kwargs)
        except (TypeError, ValueError) as exc:
            # One warning per plugin: a plugin calling it the same wrong way for each of
            # its tools (remnic: 118) would otherwise flood every load.
            self.skipped_tools.append(str(name))
            first = len(self.skipped_tools) == 1
            logger.log(
                logging.WARNING if first else logging.DEBUG,
                "%s: ctx.register_tool(%r) skipped: %s%s",
                self.label,
                name,
                describe_exception(exc),
                "; its other skipped registrations are logged at DEBUG" if first else "",
            )
            return
        self.tools.append(tool)

    def get_config(self, key: str, default: Any = None) -> Any:
        """``plugins.entries.<plugin>.settings.<key>`` (or ``.config.<key>``) from config.yaml."""
        from hermes_core.config import cfg_get, load_config
        from hermes_core.errors import ConfigError

        try:
            config = load_config()
        except ConfigError as exc:
            logger.warning("%s: %s", self.label, exc)
            return default
        entries = cfg_get(config, "plugins.entries")
        entry = entries.get(self.plugin_id) if isinstance(entries, Mapping) else None
        if not isinstance(entry, Mapping):
            return default
        missing = object()
        for section in ("settings", "config"):
            value = cfg_get(entry.get(section), key, missing)
            if value is not missing:
                return value
        return default

    def register_hook(
        self, hook_name: str, callback: Callable[..., Any], *args: Any, **kwargs: Any
    ) -> None:
        """Run *callback* with the provider (turn and session hooks); log others as ignored."""
        name = hook_name
        if name not in SUPPORTED_HOOKS or not callable(callback):
            self.ignored.append("register_hook")
            why = IGNORED_REASONS["register_hook"] if callable(callback) else "not callable"
            logger.info("%s: ctx.register_hook(%r) ignored: %s", self.label, name, why)
            return
        self.hooks.setdefault(name, []).append(callback)

    def register_auxiliary_task(self, *args: Any, **kwargs: Any) -> None:
        """Let the plugin's ``ctx.llm`` calls pass ``task=<name>`` (``auxiliary.<name>``).

        The name is the first argument (or ``name=`` / ``task=``). Hermes' display
        name, description and default provider/model are accepted and not used:
        the task answers on ``auxiliary.<name>`` of ``config.yaml`` when that
        section exists, else on ``model.*``.
        """
        name = args[0] if args else kwargs.get("name", kwargs.get("task"))
        if not isinstance(name, str) or not name.strip():
            logger.warning("%s: ctx.register_auxiliary_task(%r) skipped: no name", self.label, name)
            return
        self.auxiliary_tasks.add(name.strip())

    def has_plugin(self, plugin_id: str) -> bool:
        """Hermes' probe for another general plugin; hermes-memory has none."""
        return False

    def __getattr__(self, name: str) -> Any:
        if name == "llm":
            return self._plugin_llm()
        if not name.startswith("register_"):
            raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")

        def ignore(*args: Any, **kwargs: Any) -> None:
            self.ignored.append(name)
            what = f"{name}({args[0]!r})" if args else f"{name}()"
            why = IGNORED_REASONS.get(name, "hermes-memory has no equivalent")
            logger.info("%s: ctx.%s ignored: %s", self.label, what, why)

        return ignore

    def _plugin_llm(self) -> Any:
        from hermes_core.hermes_compat.finder import model_configured
        from hermes_core.hermes_compat.plugin_llm import PluginLlm

        if not model_configured():
            raise AttributeError(
                "ctx.llm is available only while a model is configured: set model.base_url "
                "and model.model in config.yaml (or HERMES_MODEL_BASE_URL and HERMES_MODEL)"
            )
        if self._llm is None:
            self._llm = PluginLlm(plugin_id=self.plugin_id, tasks=self.auxiliary_tasks)
        return self._llm


def _schema_name(schema: Any) -> Any:
    if not isinstance(schema, dict):
        return None
    inner = schema.get("function") if schema.get("type") == "function" else schema
    return inner.get("name") if isinstance(inner, dict) else None


def attach_tools(provider: Any, tools: list[PluginTool], label: str) -> None:
    """Offer *tools* through *provider*'s ``get_tool_schemas`` and ``handle_tool_call``."""
    if not tools:
        return
    own_schemas = provider.get_tool_schemas
    own_handler = getattr(provider, "handle_tool_call", None)
    try:
        declared = {_schema_name(schema) for schema in own_schemas() or ()}
    except Exception:  # the probe reports a failing get_tool_schemas
        declared = set()
    extra = {tool.name: tool for tool in tools if tool.name not in declared}
    for name in sorted({tool.name for tool in tools} - set(extra)):
        logger.debug("%s: tool %r is declared by the provider itself; using its own", label, name)
    if not extra:
        return

    def get_tool_schemas() -> list[dict[str, Any]]:
        schemas = list(own_schemas() or [])
        return schemas + [dict(tool.schema) for tool in extra.values() if tool.enabled()]

    def handle_tool_call(tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        tool = extra.get(tool_name)
        if tool is None:
            if own_handler is None:
                raise NotImplementedError(f"Provider does not handle tool {tool_name}")
            result: str = own_handler(tool_name, args, **kwargs)
            return result
        return tool.call(args, kwargs)

    try:
        provider.get_tool_schemas = get_tool_schemas
        provider.handle_tool_call = handle_tool_call
    except AttributeError:
        logger.warning(
            "%s: cannot add the tools registered with ctx.register_tool (%s) to its provider",
            label,
            ", ".join(extra),
        )
