"""Configuration of the Supermemory provider.

Settings live in the ``supermemory:`` section of ``$HERMES_HOME/config.yaml``;
environment variables override them. The API key is a secret: it is read from
``SUPERMEMORY_API_KEY`` (or the variable named by ``supermemory.api_key_env``),
then from ``$HERMES_HOME/.env``, and is never written to ``config.yaml``.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes_core.config import (
    cfg_get,
    config_path,
    header_value_problem,
    is_http_url,
    load_config,
    update_config,
)
from hermes_core.errors import ConfigError
from hermes_core.secrets import dotenv_path, read_dotenv, write_dotenv

SECTION = "supermemory"
API_KEY_ENV = "SUPERMEMORY_API_KEY"
BASE_URL_ENV = "SUPERMEMORY_BASE_URL"
NAMESPACE_ENV = "SUPERMEMORY_NAMESPACE"
LEGACY_NAMESPACE_ENV = "SUPERMEMORY_CONTAINER_TAG"
DEFAULT_BASE_URL = "https://api.supermemory.ai"
DEFAULT_NAMESPACE = "hermes"
SEARCH_MODES = ("hybrid", "memories", "chunks")
SUPPORTING_CONTEXT_LIMIT = 1500


@dataclass(frozen=True)
class _Number:
    """A bounded numeric setting."""

    default: float
    minimum: float
    maximum: float
    integer: bool
    description: str


_NUMBERS: dict[str, _Number] = {
    "max_recall_results": _Number(10, 1, 20, True, "Most memories injected per turn."),
    "profile_frequency": _Number(
        50, 1, 500, True, "Include profile facts on the first turn and every N turns."
    ),
    "api_timeout": _Number(5.0, 0.5, 30.0, False, "Seconds allowed for one HTTP request."),
    "max_retries": _Number(2, 0, 5, True, "Retries of a failed request (transient errors only)."),
    "prefetch_wait": _Number(
        3.0, 0.0, 10.0, False, "Seconds a turn waits for recall when none is ready yet."
    ),
    "breaker_threshold": _Number(
        5, 1, 100, True, "Consecutive failed calls that open the circuit breaker."
    ),
    "breaker_cooldown": _Number(
        60.0, 1.0, 3600.0, False, "Seconds the breaker stays open before a trial call."
    ),
    "write_backlog": _Number(
        256, 0, 10000, True, "Writes kept in memory while the service is unreachable."
    ),
}

_BOOLEANS: dict[str, tuple[bool, str]] = {
    "auto_recall": (True, "Recall memories for every non-trivial user turn."),
    "auto_capture": (True, "Store every completed turn in Supermemory."),
    "mirror_builtin": (True, "Mirror builtin memory writes (add, replace, remove)."),
}

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
    problem = header_value_problem(value)
    if problem:
        raise ConfigError(
            f"The Supermemory API key ({where}) contains {problem}, so it cannot be sent: "
            "copy the key again without it."
        )
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


def _number(key: str, raw: Any) -> int | float:
    spec = _NUMBERS[key]
    kind = "an integer" if spec.integer else "a number"
    bounds = f"between {spec.minimum:g} and {spec.maximum:g}"
    if isinstance(raw, bool):
        raise ConfigError(f"supermemory.{key} must be {kind} {bounds}, found {raw!r}.")
    try:
        value = float(raw.strip() if isinstance(raw, str) else raw)
    except (TypeError, ValueError, OverflowError):
        raise ConfigError(
            f"supermemory.{key} must be {kind} {bounds}, found {raw!r}. Fix it in config.yaml."
        ) from None
    if not math.isfinite(value):
        raise ConfigError(
            f"supermemory.{key} must be a finite number {bounds}, found {raw!r}. "
            "Fix it in config.yaml."
        )
    if spec.integer and not value.is_integer():
        raise ConfigError(f"supermemory.{key} must be {kind} {bounds}, found {raw!r}.")
    if not spec.minimum <= value <= spec.maximum:
        raise ConfigError(
            f"supermemory.{key} must be {bounds}, found {raw!r}. Fix it in config.yaml."
        )
    return int(value) if spec.integer else value


def _boolean(key: str, raw: Any) -> bool:
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, str) and raw.strip().lower() in {"true", "yes", "on", "1"}:
        return True
    if isinstance(raw, str) and raw.strip().lower() in {"false", "no", "off", "0"}:
        return False
    raise ConfigError(f"supermemory.{key} must be true or false, found {raw!r}.")


_NAMESPACE_RE = re.compile(r"(?:[A-Za-z0-9_-]|\{identity\}|\{user\})+")


def _namespace(raw: Any) -> str:
    if not isinstance(raw, str) or not _NAMESPACE_RE.fullmatch(raw.strip()):
        raise ConfigError(
            f"supermemory.namespace must be a name of letters, digits, '_' and '-' "
            f"(optionally with the {{identity}} and {{user}} placeholders), found {raw!r}."
        )
    return raw.strip()


def validate_values(values: Mapping[str, Any]) -> dict[str, Any]:
    """Check the non-secret settings in *values*; return them normalised.

    Unknown keys and out-of-range values raise :class:`ConfigError` naming the key.
    """
    clean: dict[str, Any] = {}
    for key, raw in values.items():
        if key in _NUMBERS:
            clean[key] = _number(key, raw)
        elif key in _BOOLEANS:
            clean[key] = _boolean(key, raw)
        elif key in ("namespace", "container_tag"):
            clean["namespace"] = _namespace(raw)
        elif key == "base_url":
            if not isinstance(raw, str) or not is_http_url(raw.strip()):
                raise ConfigError(
                    f"supermemory.base_url must be an http(s) URL such as {DEFAULT_BASE_URL}, "
                    f"found {raw!r}."
                )
            clean[key] = raw.strip().rstrip("/")
        elif key == "search_mode":
            if raw not in SEARCH_MODES:
                raise ConfigError(
                    f"supermemory.search_mode must be one of {', '.join(SEARCH_MODES)}, "
                    f"found {raw!r}."
                )
            clean[key] = raw
        elif key == "supporting_context":
            if not isinstance(raw, str) or len(raw) > SUPPORTING_CONTEXT_LIMIT:
                raise ConfigError(
                    "supermemory.supporting_context must be text of at most "
                    f"{SUPPORTING_CONTEXT_LIMIT} characters."
                )
            clean[key] = raw
        elif key in ("api_key", "api_key_env"):
            continue
        else:
            known = ", ".join(sorted([*_NUMBERS, *_BOOLEANS, *_TEXT_KEYS]))
            raise ConfigError(f"Unknown setting supermemory.{key}. Known settings: {known}.")
    return clean


_TEXT_KEYS = (
    "api_key",
    "api_key_env",
    "base_url",
    "namespace",
    "search_mode",
    "supporting_context",
)


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
    fields: list[dict[str, Any]] = [
        {
            "key": "api_key",
            "description": "Supermemory API key",
            "secret": True,
            "required": True,
            "env_var": API_KEY_ENV,
            "url": "https://console.supermemory.ai",
            "type": "text",
        },
        {
            "key": "base_url",
            "description": "API base URL (a self-hosted server, or the hosted API)",
            "default": DEFAULT_BASE_URL,
            "env_var": BASE_URL_ENV,
            "type": "text",
        },
        {
            "key": "namespace",
            "description": "Namespace for this agent's memories; {identity} = profile name",
            "default": DEFAULT_NAMESPACE,
            "env_var": NAMESPACE_ENV,
            "type": "text",
        },
        {
            "key": "search_mode",
            "description": "What recall searches: learned memories, source chunks, or both",
            "default": "hybrid",
            "choices": list(SEARCH_MODES),
            "type": "text",
        },
        {
            "key": "supporting_context",
            "description": "Guidance for memory extraction (at most 1500 characters)",
            "default": "",
            "type": "text",
        },
    ]
    for key, (default, description) in _BOOLEANS.items():
        fields.append(
            {"key": key, "description": description, "default": default, "type": "boolean"}
        )
    for key, spec in _NUMBERS.items():
        fields.append(
            {
                "key": key,
                "description": spec.description,
                "default": int(spec.default) if spec.integer else spec.default,
                "type": "integer" if spec.integer else "number",
                "minimum": spec.minimum,
                "maximum": spec.maximum,
            }
        )
    for field in fields:
        field.setdefault("secret", False)
        field.setdefault("required", False)
    return fields


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
        env_name = values["api_key_env"]
        if not isinstance(env_name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", env_name):
            raise ConfigError(
                f"supermemory.api_key_env must name an environment variable, found {env_name!r}."
            )
        clean["api_key_env"] = env_name
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
