"""The Honcho provider's settings: one table of fields, read from three places.

A value comes from the ``honcho:`` section of ``$HERMES_HOME/config.yaml``
first, then from its environment variable, then from the field's default. The
API key is a secret: it is never written to ``config.yaml``; it comes from
``HONCHO_API_KEY`` in the environment or in ``$HERMES_HOME/.env``.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes_core.config import header_value_problem, is_http_url, load_config, update_config
from hermes_core.errors import ConfigError
from hermes_core.secrets import dotenv_path, read_dotenv, write_dotenv

__all__ = [
    "FIELDS",
    "SECTION",
    "HonchoSettings",
    "config_schema",
    "load_settings",
    "save_settings",
]

SECTION = "honcho"
ENVIRONMENTS = {"production": "https://api.honcho.dev", "local": "http://localhost:8000"}
RECALL_MODES = ("hybrid", "context", "tools")
REASONING_LEVELS = ("minimal", "low", "medium", "high", "max")
_ID_RE = re.compile(r"[A-Za-z0-9_-]{1,100}")


@dataclass(frozen=True)
class Field:
    """One setting: its type, default, environment variables and wizard text."""

    key: str
    kind: type
    default: Any
    description: str
    env: tuple[str, ...] = ()
    choices: tuple[str, ...] = ()
    secret: bool = False
    minimum: float | None = None
    maximum: float | None = None
    is_id: bool = False
    is_url: bool = False
    url: str = ""


FIELDS: tuple[Field, ...] = (
    Field(
        "api_key",
        str,
        "",
        "Honcho API key (hosted service); kept in $HERMES_HOME/.env",
        env=("HONCHO_API_KEY",),
        secret=True,
        url="https://app.honcho.dev",
    ),
    Field(
        "base_url",
        str,
        "",
        "Base URL of a self-hosted Honcho server (blank: hosted service)",
        env=("HONCHO_BASE_URL", "HONCHO_URL"),
        is_url=True,
    ),
    Field(
        "environment",
        str,
        "production",
        "Which Honcho to use when base_url is blank",
        env=("HONCHO_ENVIRONMENT",),
        choices=tuple(ENVIRONMENTS),
    ),
    Field(
        "workspace",
        str,
        "hermes",
        "Honcho workspace id shared by every session",
        env=("HONCHO_WORKSPACE_ID",),
        is_id=True,
    ),
    Field(
        "ai_peer",
        str,
        "hermes",
        "Peer id of the assistant",
        env=("HONCHO_AI_PEER",),
        is_id=True,
    ),
    Field(
        "user_peer",
        str,
        "user",
        "Peer id of the user when the host passes no user_id",
        env=("HONCHO_USER_PEER",),
        is_id=True,
    ),
    Field(
        "recall_mode",
        str,
        "hybrid",
        "hybrid: automatic recall and tools; context: automatic recall only; tools: tools only",
        env=("HONCHO_RECALL_MODE",),
        choices=RECALL_MODES,
    ),
    Field(
        "timeout",
        float,
        15.0,
        "Seconds one HTTP attempt may take",
        env=("HONCHO_TIMEOUT",),
        minimum=0.001,
        maximum=600,
    ),
    Field(
        "max_retries",
        int,
        2,
        "Retries after a failed attempt (timeouts, 5xx, 429, network)",
        env=("HONCHO_MAX_RETRIES",),
        minimum=0,
        maximum=10,
    ),
    Field(
        "retry_backoff",
        float,
        0.5,
        "First retry delay in seconds (doubles)",
        minimum=0,
        maximum=30,
    ),
    Field(
        "breaker_threshold",
        int,
        5,
        "Consecutive failed calls that pause Honcho calls",
        minimum=1,
        maximum=1000,
    ),
    Field(
        "breaker_cooldown",
        float,
        60.0,
        "Seconds calls stay paused",
        minimum=0,
        maximum=86_400,
    ),
    Field(
        "prefetch_wait",
        float,
        3.0,
        "Seconds a session's first prefetch waits for the background warm-up",
        minimum=0,
        maximum=30,
    ),
    Field(
        "context_tokens",
        int,
        800,
        "Budget of recalled text per turn (x4 chars)",
        minimum=1,
        maximum=100_000,
    ),
    Field("dialectic", bool, True, "Ask Honcho's dialectic about each user message"),
    Field(
        "reasoning_level",
        str,
        "low",
        "Reasoning level of background dialectic queries",
        choices=REASONING_LEVELS,
    ),
    Field(
        "dialectic_max_chars",
        int,
        600,
        "Longest dialectic answer injected",
        minimum=1,
        maximum=100_000,
    ),
    Field(
        "message_max_chars",
        int,
        25000,
        "Longest message chunk sent to Honcho",
        minimum=100,
        maximum=1_000_000,
    ),
    Field(
        "max_pending_messages",
        int,
        1000,
        "Unsent messages kept while Honcho is down (oldest dropped beyond)",
        minimum=1,
        maximum=100_000,
    ),
    Field(
        "shutdown_timeout",
        float,
        5.0,
        "Seconds shutdown waits for pending writes",
        minimum=0,
        maximum=600,
    ),
)
_BY_KEY = {field.key: field for field in FIELDS}
_TYPE_NAMES = {str: "text", int: "integer", float: "number", bool: "boolean"}


@dataclass(frozen=True)
class HonchoSettings:
    """Resolved settings of the Honcho provider."""

    api_key: str
    base_url: str
    environment: str
    workspace: str
    ai_peer: str
    user_peer: str
    recall_mode: str
    timeout: float
    max_retries: int
    retry_backoff: float
    breaker_threshold: int
    breaker_cooldown: float
    prefetch_wait: float
    context_tokens: int
    dialectic: bool
    reasoning_level: str
    dialectic_max_chars: int
    message_max_chars: int
    max_pending_messages: int
    shutdown_timeout: float

    @property
    def configured(self) -> bool:
        """Whether there is somewhere to connect: a key, a base URL or a local server."""
        return bool(self.api_key or self.base_url or self.environment == "local")

    @property
    def api_base_url(self) -> str:
        """The URL the SDK gets (it appends ``/v3`` itself, so a trailing one is dropped)."""
        url = (self.base_url or ENVIRONMENTS[self.environment]).rstrip("/")
        return url[: -len("/v3")] if url.endswith("/v3") else url


def _coerce(field: Field, value: Any, source: str) -> Any:
    """Turn *value* into the field's type, or raise a ConfigError naming *source*."""
    if field.secret:
        # A key is never quoted in a message: it would reach logs and the model.
        if not isinstance(value, str):
            raise ConfigError(f"{source} must be text; set it again.")
        problem = header_value_problem(value.strip())
        if problem:
            raise ConfigError(
                f"{source} contains {problem}, so it cannot be sent to Honcho: copy the "
                "key again without it."
            )
        return value.strip()

    def bad(expected: str) -> ConfigError:
        return ConfigError(
            f"{source} must be {expected}, got {value!r}. Fix it and retry "
            f"(unset it to use the default {field.default!r})."
        )

    if field.kind is bool:
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in {"1", "true", "yes", "on"}:
            return True
        if text in {"0", "false", "no", "off"}:
            return False
        raise bad("true or false")
    if field.kind in (int, float):
        kind = _TYPE_NAMES[field.kind]
        low = field.minimum if field.minimum is not None else -math.inf
        high = field.maximum if field.maximum is not None else math.inf
        bounds = f"a finite {kind} between {low:g} and {high:g}"
        if isinstance(value, bool):
            raise bad(bounds)
        try:
            number = float(value.strip() if isinstance(value, str) else value)
        except (TypeError, ValueError, OverflowError):
            raise bad(bounds) from None
        if not math.isfinite(number) or not low <= number <= high:
            raise bad(bounds)
        if field.kind is int:
            if not number.is_integer():
                raise bad(f"an integer between {low:g} and {high:g}")
            return int(number)
        return number
    if not isinstance(value, str):
        raise bad("a string")
    text = value.strip()
    if field.choices and text not in field.choices:
        raise bad("one of " + ", ".join(field.choices))
    if field.is_id and not _ID_RE.fullmatch(text):
        raise bad("1-100 characters of letters, digits, '_' or '-'")
    if field.is_url and text and not is_http_url(text):
        raise bad("an http(s) URL such as http://localhost:8000")
    return text


def _section(config: Mapping[str, Any], where: Path) -> Mapping[str, Any]:
    section = config.get(SECTION)
    if section is None:
        return {}
    if not isinstance(section, Mapping):
        raise ConfigError(
            f"'{SECTION}' in {where} must be a mapping of settings, found {type(section).__name__}."
        )
    return section


def load_settings(
    hermes_home: str | os.PathLike[str], environ: Mapping[str, str] | None = None
) -> HonchoSettings:
    """Resolve every field from config.yaml, the environment and ``.env``; no network.

    Raises :class:`ConfigError` naming the key and where it came from when a
    value is unusable, or when config.yaml has an unknown ``honcho.*`` key.
    """
    home = Path(hermes_home)
    env = os.environ if environ is None else environ
    section = _section(load_config(home), home / "config.yaml")
    unknown = sorted(str(key) for key in section if key not in _BY_KEY)
    if unknown:
        raise ConfigError(
            f"Unknown setting(s) {', '.join(f'{SECTION}.{k}' for k in unknown)} in "
            f"{home / 'config.yaml'}. Known settings: {', '.join(sorted(_BY_KEY))}."
        )
    if section.get("api_key"):
        raise ConfigError(
            f"{SECTION}.api_key must not be stored in config.yaml; move it to HONCHO_API_KEY "
            f"in the environment or in {home / '.env'}."
        )
    dotenv: dict[str, str] | None = None
    values: dict[str, Any] = {}
    for field in FIELDS:
        raw: Any = None
        source = f"{SECTION}.{field.key} in config.yaml"
        if not field.secret and section.get(field.key) not in (None, ""):
            raw = section[field.key]
        else:
            for name in field.env:
                if env.get(name, "").strip():
                    raw, source = env[name], f"environment variable {name}"
                    break
            if raw is None and field.secret:
                dotenv = read_dotenv(home) if dotenv is None else dotenv
                for name in field.env:
                    if dotenv.get(name, "").strip():
                        raw, source = dotenv[name], f"{name} in {dotenv_path(home)}"
                        break
        values[field.key] = field.default if raw is None else _coerce(field, raw, source)
    return HonchoSettings(**values)


def config_schema() -> list[dict[str, Any]]:
    """The setup-wizard description of every field."""
    schema = []
    for field in FIELDS:
        entry: dict[str, Any] = {
            "key": field.key,
            "description": field.description,
            "secret": field.secret,
            "required": False,
            "default": field.default,
            "type": _TYPE_NAMES[field.kind],
        }
        if field.env:
            entry["env_var"] = field.env[0]
        if field.choices:
            entry["choices"] = list(field.choices)
        if field.minimum is not None:
            entry["minimum"] = field.minimum
        if field.maximum is not None:
            entry["maximum"] = field.maximum
        if field.url:
            entry["url"] = field.url
        schema.append(entry)
    return schema


def save_settings(values: Mapping[str, Any], hermes_home: str | os.PathLike[str]) -> None:
    """Validate *values* and persist them: secrets to ``.env``, the rest to config.yaml.

    Every value is checked before anything is written, so a bad value leaves
    both files untouched. A blank value removes the key (back to its default).
    """
    home = Path(hermes_home)
    unknown = sorted(str(key) for key in values if key not in _BY_KEY)
    if unknown:
        raise ConfigError(
            f"Unknown Honcho setting(s): {', '.join(unknown)}. "
            f"Known settings: {', '.join(sorted(_BY_KEY))}."
        )
    plain: dict[str, Any] = {}
    secrets: dict[str, str] = {}
    for key, value in values.items():
        field = _BY_KEY[key]
        if value is None or (isinstance(value, str) and not value.strip()):
            if not field.secret:
                plain[key] = None
            continue
        coerced = _coerce(field, value, f"{SECTION}.{key}")
        if field.secret:
            secrets[field.env[0]] = coerced
        else:
            plain[key] = coerced
    _section(load_config(home), home / "config.yaml")  # a malformed section fails first
    if secrets:
        write_dotenv(secrets, home)
    if plain:

        def merge(config: dict[str, Any]) -> None:
            section = dict(_section(config, home / "config.yaml"))
            for key, value in plain.items():
                if value is None:
                    section.pop(key, None)
                else:
                    section[key] = value
            config[SECTION] = section

        update_config(merge, home)
