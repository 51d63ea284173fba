"""How a session runs: :class:`RuntimeSettings` (``runtime.*`` in ``config.yaml``).

Shared by the host API (:mod:`hermes_core.runtime.host`) and the turn loop
(:mod:`hermes_core.runtime.session`).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from hermes_core.config import cfg_get, config_section
from hermes_core.errors import ConfigError
from hermes_core.runtime.prompt import CONTEXT_FILE_NAMES

__all__ = [
    "DEFAULT_AGENT_WORKSPACE",
    "MAX_TOOL_CALLS_PER_REPLY",
    "MAX_TOOL_ITERATIONS",
    "RuntimeSettings",
    "new_session_id",
    "profile_name",
]

MAX_TOOL_ITERATIONS = 100
"""The most rounds of tool calls one turn may take (``runtime.max_tool_iterations``)."""
MAX_TOOL_CALLS_PER_REPLY = 1_000
"""The most tool calls run from one reply (``runtime.max_tool_calls_per_reply``)."""
_OWN_INIT_KEYS = frozenset(
    {
        "session_id",
        "hermes_home",
        "platform",
        "agent_context",
        "agent_identity",
        "agent_workspace",
        "cwd",
        "user_id",
        "session_title",
        "parent_session_id",
    }
)
"""``initialize`` keywords the runtime itself gives; ``provider_context`` cannot replace them."""
DEFAULT_AGENT_WORKSPACE = "hermes"
"""``agent_workspace`` given to providers: the name Hermes Agent gives, so a plugin
that keys its storage on it (a Hindsight bank, a scope-recall scope) finds the
same data as under Hermes."""

_MAX_SECONDS = 86_400.0


def new_session_id(now: datetime | None = None) -> str:
    """A sortable, unique session id: ``20250514_093012_a1b2c3``."""
    stamp = (now or datetime.now()).strftime("%Y%m%d_%H%M%S")
    return f"{stamp}_{uuid.uuid4().hex[:6]}"


def _float(config: Mapping[str, Any] | None, key: str, default: float) -> float:
    value = cfg_get(config, key, None)
    if value in (None, ""):
        return default
    if isinstance(value, bool):
        raise ConfigError(f"{key} must be a number of seconds, got {value!r}.")
    try:
        number = float(value)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{key} must be a number of seconds, got {value!r}.") from exc
    if not 0 < number < _MAX_SECONDS:
        raise ConfigError(
            f"{key} must be positive and below {_MAX_SECONDS:.0f} seconds, got {value!r}."
        )
    return number


@dataclass(frozen=True)
class RuntimeSettings:
    """How a session runs (``runtime.*`` in ``config.yaml``, plus constructor overrides)."""

    platform: str = "cli"
    source: str = ""
    """``source`` of the session rows; defaults to the platform."""
    working_dir: Path | None = None
    """Where context files such as ``AGENTS.md`` are read from (``None``: none)."""
    context_files: tuple[str, ...] = CONTEXT_FILE_NAMES
    system_message: str = ""
    """The host's own instructions, placed after the identity in the system prompt."""
    stream: bool = True
    max_tool_iterations: int = 8
    max_tool_calls_per_reply: int = 32
    """Tool calls run from one model reply; the rest are answered "not run"."""
    hook_timeout: float = 10.0
    prefetch_timeout: float = 8.0
    tool_timeout: float = 60.0
    session_end_timeout: float = 30.0
    user_id: str = ""
    agent_identity: str = ""
    """The profile name given to providers; empty: derived from ``HERMES_HOME``."""
    agent_workspace: str = DEFAULT_AGENT_WORKSPACE
    """The workspace name given to providers; Hermes Agent always gives ``"hermes"``."""
    provider_context: Mapping[str, str] = field(default_factory=dict)
    """More ``initialize`` keywords, as a gateway host gives them: ``user_name``,
    ``user_id_alt``, ``chat_id``, ``chat_name``, ``chat_type``, ``thread_id``,
    ``gateway_session_key``…"""

    def __post_init__(self) -> None:
        for key, value in self.provider_context.items():
            if not isinstance(key, str) or not key.isidentifier():
                raise ConfigError(f"provider_context key {key!r} must be a keyword name.")
            if key in _OWN_INIT_KEYS:
                raise ConfigError(
                    f"provider_context cannot set {key!r}: the runtime gives it (set it "
                    "through its own setting, such as user_id or agent_workspace)."
                )
            if not isinstance(value, str):
                raise ConfigError(
                    f"provider_context[{key!r}] must be text, got {type(value).__name__}."
                )
        if not 1 <= self.max_tool_iterations <= MAX_TOOL_ITERATIONS:
            raise ConfigError(
                f"runtime.max_tool_iterations must be between 1 and {MAX_TOOL_ITERATIONS}, "
                f"got {self.max_tool_iterations}."
            )
        if not 1 <= self.max_tool_calls_per_reply <= MAX_TOOL_CALLS_PER_REPLY:
            raise ConfigError(
                "runtime.max_tool_calls_per_reply must be between 1 and "
                f"{MAX_TOOL_CALLS_PER_REPLY}, got {self.max_tool_calls_per_reply}."
            )

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | None, **overrides: Any) -> RuntimeSettings:
        """Read ``runtime.*`` and ``memory.prefetch_timeout``; *overrides* win."""
        config_section(config, "runtime")
        config_section(config, "memory")
        counts = {}
        for name, default in (("max_tool_iterations", 8), ("max_tool_calls_per_reply", 32)):
            value = cfg_get(config, f"runtime.{name}", default)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ConfigError(f"runtime.{name} must be an integer, got {value!r}.")
            counts[name] = value
        stream = cfg_get(config, "runtime.stream", True)
        if not isinstance(stream, bool):
            raise ConfigError(f"runtime.stream must be true or false, got {stream!r}.")
        values: dict[str, Any] = {
            **counts,
            "stream": stream,
            "hook_timeout": _float(config, "runtime.hook_timeout", 10.0),
            "prefetch_timeout": _float(config, "memory.prefetch_timeout", 8.0),
            "tool_timeout": _float(config, "runtime.tool_timeout", 60.0),
            "session_end_timeout": _float(config, "runtime.session_end_timeout", 30.0),
        }
        identity = cfg_get(config, "runtime.agent_identity", "")
        if not isinstance(identity, str):
            raise ConfigError(f"runtime.agent_identity must be a string, got {identity!r}.")
        values["agent_identity"] = identity.strip()
        workspace = cfg_get(config, "runtime.agent_workspace", DEFAULT_AGENT_WORKSPACE)
        if not isinstance(workspace, str) or not workspace.strip():
            raise ConfigError(
                f"runtime.agent_workspace must be a non-empty name, got {workspace!r}; "
                f"leave it out to use {DEFAULT_AGENT_WORKSPACE!r}, as Hermes Agent does."
            )
        values["agent_workspace"] = workspace.strip()
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)


def profile_name(hermes_home: Path) -> str:
    """The Hermes profile a home belongs to: ``<root>/profiles/NAME`` → NAME, else ``default``."""
    if hermes_home.parent.name == "profiles" and hermes_home.name:
        return hermes_home.name
    return "default"
