"""Configuration of the Supermemory provider.

Settings live in the ``supermemory:`` section of ``$HERMES_HOME/config.yaml``;
environment variables override them. The API key is a secret: it is read from
``SUPERMEMORY_API_KEY`` (or the variable named by ``supermemory.api_key_env``),
then from ``$HERMES_HOME/.env``, and is never written to ``config.yaml``.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes_core.config import cfg_get, config_path, load_config, update_config
from hermes_core.errors import ConfigError
from hermes_core.secrets import dotenv_path, read_dotenv, write_dotenv
from hermes_core.settings import Setting, api_key_problem, refuse_unknown
from hermes_core.settings import config_schema as schema_of

SECTION = "supermemory"
API_KEY_ENV = "SUPERMEMORY_API_KEY"
BASE_URL_ENV = "SUPERMEMORY_BASE_URL"
NAMESPACE_ENV = "SUPERMEMORY_NAMESPACE"
LEGACY_NAMESPACE_ENV = "SUPERMEMORY_CONTAINER_TAG"
DEFAULT_BASE_URL = "https://api.supermemory.ai"
DEFAULT_NAMESPACE = "hermes"
SEARCH_MODES = ("hybrid", "memories", "chunks")
SUPPORTING_CONTEXT_LIMIT = 1500


_NAMESPACE_RE = re.compile(r"(?:[A-Za-z0-9_-]|\{identity\}|\{user\})+")

SETTINGS: tuple[Setting, ...] = (
    Setting(
        "api_key",
        str,
        "",
        "Supermemory API key",
        env=(API_KEY_ENV,),
        secret=True,
        required=True,
        url="https://console.supermemory.ai",
    ),
    Setting(
        "base_url",
        str,
        DEFAULT_BASE_URL,
        "API base URL (a self-hosted server, or the hosted API)",
        env=(BASE_URL_ENV,),
        is_url=True,
    ),
    Setting(
        "namespace",
        str,
        DEFAULT_NAMESPACE,
        "Namespace for this agent's memories; {identity} = profile name",
        env=(NAMESPACE_ENV,),
        pattern=_NAMESPACE_RE,
        pattern_hint=(
            "a name of letters, digits, '_' and '-' (optionally with the {identity} and "
            "{user} placeholders)"
        ),
    ),
    Setting(
        "search_mode",
        str,
        "hybrid",
        "What recall searches: learned memories, source chunks, or both",
        choices=SEARCH_MODES,
    ),
    Setting(
        "supporting_context",
        str,
        "",
        f"Guidance for memory extraction (at most {SUPPORTING_CONTEXT_LIMIT} characters)",
    ),
    Setting("auto_recall", bool, True, "Recall memories for every non-trivial user turn."),
    Setting("auto_capture", bool, True, "Store every completed turn in Supermemory."),
    Setting("mirror_builtin", bool, True, "Mirror builtin memory writes (add, replace, remove)."),
    Setting(
        "max_recall_results", int, 10, "Most memories injected per turn.", minimum=1, maximum=20
    ),
    Setting(
        "profile_frequency",
        int,
        50,
        "Include profile facts on the first turn and every N turns.",
        minimum=1,
        maximum=500,
    ),
    Setting(
        "api_timeout",
        float,
        5.0,
        "Seconds allowed for one HTTP request.",
        minimum=0.5,
        maximum=30.0,
    ),
    Setting(
        "max_retries",
        int,
        2,
        "Retries of a failed request (transient errors only).",
        minimum=0,
        maximum=5,
    ),
    Setting(
        "prefetch_wait",
        float,
        3.0,
        "Seconds a turn waits for recall when none is ready yet.",
        minimum=0.0,
        maximum=10.0,
    ),
    Setting(
        "breaker_threshold",
        int,
        5,
        "Consecutive failed calls that open the circuit breaker.",
        minimum=1,
        maximum=100,
    ),
    Setting(
        "breaker_cooldown",
        float,
        60.0,
        "Seconds the breaker stays open before a trial call.",
        minimum=1.0,
        maximum=3600.0,
    ),
    Setting(
        "write_backlog",
        int,
        256,
        "Writes kept in memory while the service is unreachable.",
        minimum=0,
        maximum=10000,
    ),
    Setting(
        "api_key_env",
        str,
        API_KEY_ENV,
        "The environment variable holding the API key",
        pattern=re.compile(r"[A-Za-z_][A-Za-z0-9_]*"),
        pattern_hint="the name of an environment variable",
        in_schema=False,
    ),
)
_BY_KEY = {setting.key: setting for setting in SETTINGS}
_ALIASES = {"container_tag": "namespace"}


_SAFE = re.compile(r"[^A-Za-z0-9_]+")
_NAMESPACE_PART_LIMIT = 48


def sanitize_namespace_part(value: str) -> str:
    """Reduce *value* to ``[A-Za-z0-9_]`` for use in a namespace.

    A value that had to change (or is long) gets a short hash of the original,
    so distinct user ids never share a namespace (``a.b`` and ``a_b`` differ).
    """
    cleaned = _SAFE.sub("_", value).strip("_")
    if cleaned == value and len(value) <= _NAMESPACE_PART_LIMIT:
        return value
    digest = hashlib.sha256(value.encode("utf-8")).hexdigest()[:10]
    return f"{cleaned[:32]}_{digest}" if cleaned else f"h{digest}"


@dataclass(frozen=True)
class Settings:
    """Resolved settings of one provider instance (see ``docs/providers/supermemory.md``)."""

    api_key: str
    base_url: str = DEFAULT_BASE_URL
    namespace: str = DEFAULT_NAMESPACE
    search_mode: str = "hybrid"
    supporting_context: str = ""
    auto_recall: bool = True
    auto_capture: bool = True
    mirror_builtin: bool = True
    max_recall_results: int = 10
    profile_frequency: int = 50
    api_timeout: float = 5.0
    max_retries: int = 2
    prefetch_wait: float = 3.0
    breaker_threshold: int = 5
    breaker_cooldown: float = 60.0
    write_backlog: int = 256

    def resolve_namespace(self, *, identity: str = "", user_id: str = "") -> str:
        """The namespace for one agent identity and user.

        ``{identity}`` in the configured namespace is replaced by the profile name
        (``default`` when absent). A ``user_id`` is placed at ``{user}`` or, without that
        placeholder, appended as ``-<user>``, so every user gets a namespace of their own.
        """
        template = self.namespace
        ident = sanitize_namespace_part(identity) if identity else "default"
        name = template.replace("{identity}", ident)
        if "{user}" in name:
            name = name.replace("{user}", sanitize_namespace_part(user_id) if user_id else "shared")
        elif user_id:
            name = f"{name}-{sanitize_namespace_part(user_id)}"
        return name


def _usable_key(value: str, where: str) -> str:
    refusal = api_key_problem(value, where, "Supermemory")
    if refusal is not None:
        raise refusal
    return value


def find_api_key(section: Mapping[str, Any], hermes_home: Path, env: Mapping[str, str]) -> str:
    """The API key from the environment, the config section or ``$HERMES_HOME/.env``; "" if none.

    A key no HTTP header can carry (a line break, a space, a non-ASCII character)
    raises :class:`ConfigError` naming where it came from, never quoting it.
    """
    key_env = str(section.get("api_key_env") or API_KEY_ENV)
    for candidate, where in (
        (env.get(key_env), f"environment variable {key_env}"),
        (env.get(API_KEY_ENV), f"environment variable {API_KEY_ENV}"),
        (section.get("api_key"), f"{SECTION}.api_key in config.yaml"),
    ):
        if isinstance(candidate, str) and candidate.strip():
            return _usable_key(candidate.strip(), where)
    dotenv = read_dotenv(hermes_home)
    for name in (key_env, API_KEY_ENV):
        if dotenv.get(name, "").strip():
            return _usable_key(dotenv[name].strip(), f"{name} in {dotenv_path(hermes_home)}")
    return ""


def validate_values(values: Mapping[str, Any]) -> dict[str, Any]:
    """Check the non-secret settings in *values*; return them normalised.

    Unknown keys and out-of-range values raise :class:`ConfigError` naming the key.
    """
    refuse_unknown(values, [*_BY_KEY, *_ALIASES], "supermemory", SECTION)
    clean: dict[str, Any] = {}
    for key, raw in values.items():
        name = _ALIASES.get(key, key)
        if name in ("api_key", "api_key_env"):
            continue
        value = _BY_KEY[name].parse(raw, f"{SECTION}.{key}")
        if name == "base_url":
            if not value:
                raise ConfigError(
                    f"supermemory.base_url must be an http(s) URL such as {DEFAULT_BASE_URL}, "
                    f"found {raw!r}."
                )
            value = value.rstrip("/")
        elif name == "supporting_context":
            value = raw  # kept as written, spaces included
            if len(value) > SUPPORTING_CONTEXT_LIMIT:
                raise ConfigError(
                    "supermemory.supporting_context must be text of at most "
                    f"{SUPPORTING_CONTEXT_LIMIT} characters."
                )
        clean[name] = value
    return clean


def load_settings(
    hermes_home: str | os.PathLike[str], env: Mapping[str, str] | None = None
) -> Settings:
    """Read ``config.yaml`` and the environment into :class:`Settings`.

    Raises :class:`ConfigError` when a value is invalid; an absent API key gives
    ``Settings.api_key == ""`` (the provider then reports itself unavailable).
    """
    env = os.environ if env is None else env
    home = Path(hermes_home)
    section = cfg_get(load_config(home), SECTION, {}) or {}
    if not isinstance(section, Mapping):
        raise ConfigError(
            f"The supermemory section of config.yaml must be a mapping, found {section!r}."
        )
    values = validate_values(section)
    if env.get(BASE_URL_ENV, "").strip():
        values.update(validate_values({"base_url": env[BASE_URL_ENV].strip()}))
    for name in (LEGACY_NAMESPACE_ENV, NAMESPACE_ENV):
        if env.get(name, "").strip():
            values.update(validate_values({"namespace": env[name].strip()}))
    return Settings(api_key=find_api_key(section, home, env), **values)


def config_schema() -> list[dict[str, Any]]:
    """Setup-wizard fields: the secret key first, then every non-secret setting."""
    return schema_of(SETTINGS)


def write_settings(values: Mapping[str, Any], hermes_home: str | os.PathLike[str]) -> None:
    """Persist wizard *values*: secrets to ``$HERMES_HOME/.env``, the rest to ``config.yaml``.

    Every value, config.yaml itself (readable, valid YAML, a mapping ``supermemory:``
    section, a writable file) included, is checked first, so a refused save writes
    nothing.
    """
    home = Path(hermes_home)
    secret = values.get("api_key")
    if secret is not None and (not isinstance(secret, str) or not secret.strip()):
        raise ConfigError("supermemory api_key must be a non-empty string.")
    if isinstance(secret, str):
        _usable_key(secret.strip(), "the value given")
    clean = validate_values({k: v for k, v in values.items() if k != "api_key"})
    if "api_key_env" in values:
        clean["api_key_env"] = _BY_KEY["api_key_env"].parse(
            values["api_key_env"], f"{SECTION}.api_key_env"
        )
    # Everything that can fail is checked before anything is written, so a refused
    # save leaves both .env and config.yaml as they were.
    config_file = config_path(home)
    section = _existing_section(load_config(home), config_file)
    validate_values({**section, **clean})
    if clean:
        _check_writable(config_file)
    if isinstance(secret, str):  # write_dotenv refuses a bad value before writing anything
        write_dotenv({API_KEY_ENV: secret.strip()}, home)
    if clean:

        def merge(config: dict[str, Any]) -> None:
            config[SECTION] = {**_existing_section(config, config_file), **clean}

        update_config(merge, home)


def _existing_section(config: Mapping[str, Any], where: Path) -> Mapping[str, Any]:
    """The ``supermemory:`` section of *config*; a malformed one is refused, never replaced."""
    section = config.get(SECTION)
    if section is None:
        return {}
    if not isinstance(section, Mapping):
        raise ConfigError(
            f"'{SECTION}' in {where} must be a mapping of settings, found "
            f"{type(section).__name__} ({section!r:.80}). Fix or remove that section and "
            "retry; nothing was written."
        )
    return section


def _check_writable(path: Path) -> None:
    """Refuse early when *path* (followed through a symlink) clearly cannot be replaced."""
    target = Path(os.path.realpath(path))
    folder = target.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    problem = ""
    if target.exists() and not target.is_file():
        problem = "it is not a regular file"
    elif not folder.is_dir():
        problem = f"{folder} is not a folder"
    elif not os.access(folder, os.W_OK | os.X_OK):
        problem = f"the folder {folder} is not writable"
    elif target.exists() and not os.access(target, os.W_OK):
        problem = "the file is not writable"
    if problem:
        raise ConfigError(
            f"Cannot write {target}"
            + (f" (linked from {path})" if target != path else "")
            + f": {problem}. Fix it and retry; nothing was written."
        )
