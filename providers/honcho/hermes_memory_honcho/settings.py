"""The Honcho provider's settings: one table of fields, read from three places.

A value comes from the ``honcho:`` section of ``$HERMES_HOME/config.yaml``
first, then from its environment variable, then from the field's default. The
API key is a secret: it is never written to ``config.yaml``; it comes from
``HONCHO_API_KEY`` in the environment or in ``$HERMES_HOME/.env``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes_core.config import load_config, update_config
from hermes_core.errors import ConfigError
from hermes_core.secrets import dotenv_path, read_dotenv, write_dotenv
from hermes_core.settings import Setting, api_key_problem, refuse_unknown, settings_section
from hermes_core.settings import config_schema as schema_of

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
_ID_HINT = "1-100 characters of letters, digits, '_' or '-'"


FIELDS: tuple[Setting, ...] = (
    Setting(
        "api_key",
        str,
        "",
        "Honcho API key (hosted service); kept in $HERMES_HOME/.env",
        env=("HONCHO_API_KEY",),
        secret=True,
        url="https://app.honcho.dev",
    ),
    Setting(
        "base_url",
        str,
        "",
        "Base URL of a self-hosted Honcho server (blank: hosted service)",
        env=("HONCHO_BASE_URL", "HONCHO_URL"),
        is_url=True,
    ),
    Setting(
        "environment",
        str,
        "production",
        "Which Honcho to use when base_url is blank",
        env=("HONCHO_ENVIRONMENT",),
        choices=tuple(ENVIRONMENTS),
    ),
    Setting(
        "workspace",
        str,
        "hermes",
        "Honcho workspace id shared by every session",
        env=("HONCHO_WORKSPACE_ID",),
        pattern=_ID_RE,
        pattern_hint=_ID_HINT,
    ),
    Setting(
        "ai_peer",
        str,
        "hermes",
        "Peer id of the assistant",
        env=("HONCHO_AI_PEER",),
        pattern=_ID_RE,
        pattern_hint=_ID_HINT,
    ),
    Setting(
        "user_peer",
        str,
        "user",
        "Peer id of the user when the host passes no user_id",
        env=("HONCHO_USER_PEER",),
        pattern=_ID_RE,
        pattern_hint=_ID_HINT,
    ),
    Setting(
        "recall_mode",
        str,
        "hybrid",
        "hybrid: automatic recall and tools; context: automatic recall only; tools: tools only",
        env=("HONCHO_RECALL_MODE",),
        choices=RECALL_MODES,
    ),
    Setting(
        "timeout",
        float,
        15.0,
        "Seconds one HTTP attempt may take",
        env=("HONCHO_TIMEOUT",),
        minimum=0.001,
        maximum=600,
    ),
    Setting(
        "max_retries",
        int,
        2,
        "Retries after a failed attempt (timeouts, 5xx, 429, network)",
        env=("HONCHO_MAX_RETRIES",),
        minimum=0,
        maximum=10,
    ),
    Setting(
        "retry_backoff",
        float,
        0.5,
        "First retry delay in seconds (doubles)",
        minimum=0,
        maximum=30,
    ),
    Setting(
        "breaker_threshold",
        int,
        5,
        "Consecutive failed calls that pause Honcho calls",
        minimum=1,
        maximum=1000,
    ),
    Setting(
        "breaker_cooldown",
        float,
        60.0,
        "Seconds calls stay paused",
        minimum=0,
        maximum=86_400,
    ),
    Setting(
        "prefetch_wait",
        float,
        3.0,
        "Seconds a session's first prefetch waits for the background warm-up",
        minimum=0,
        maximum=30,
    ),
    Setting(
        "context_tokens",
        int,
        800,
        "Budget of recalled text per turn (x4 chars)",
        minimum=1,
        maximum=100_000,
    ),
    Setting("dialectic", bool, True, "Ask Honcho's dialectic about each user message"),
    Setting(
        "reasoning_level",
        str,
        "low",
        "Reasoning level of background dialectic queries",
        choices=REASONING_LEVELS,
    ),
    Setting(
        "dialectic_max_chars",
        int,
        600,
        "Longest dialectic answer injected",
        minimum=1,
        maximum=100_000,
    ),
    Setting(
        "message_max_chars",
        int,
        25000,
        "Longest message chunk sent to Honcho",
        minimum=100,
        maximum=1_000_000,
    ),
    Setting(
        "max_pending_messages",
        int,
        1000,
        "Unsent messages kept while Honcho is down (oldest dropped beyond)",
        minimum=1,
        maximum=100_000,
    ),
    Setting(
        "shutdown_timeout",
        float,
        5.0,
        "Seconds shutdown waits for pending writes",
        minimum=0,
        maximum=600,
    ),
)
_BY_KEY = {field.key: field for field in FIELDS}


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


def _coerce(field: Setting, value: Any, source: str) -> Any:
    """Turn *value* into the field's type, or raise a ConfigError naming *source*."""
    coerced = field.parse(value, source)
    if field.secret:
        refusal = api_key_problem(coerced, source, "Honcho")
        if refusal is not None:
            raise refusal
    return coerced


def load_settings(
    hermes_home: str | os.PathLike[str], environ: Mapping[str, str] | None = None
) -> HonchoSettings:
    """Resolve every field from config.yaml, the environment and ``.env``; no network.

    Raises :class:`ConfigError` naming the key and where it came from when a
    value is unusable, or when config.yaml has an unknown ``honcho.*`` key.
    """
    home = Path(hermes_home)
    env = os.environ if environ is None else environ
    section = settings_section(load_config(home), SECTION, home / "config.yaml")
    refuse_unknown(section, _BY_KEY, "Honcho", SECTION, f" in {home / 'config.yaml'}")
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
    return schema_of(FIELDS)


def save_settings(values: Mapping[str, Any], hermes_home: str | os.PathLike[str]) -> None:
    """Validate *values* and persist them: secrets to ``.env``, the rest to config.yaml.

    Every value is checked before anything is written, so a bad value leaves
    both files untouched. A blank value removes the key (back to its default).
    """
    home = Path(hermes_home)
    refuse_unknown(values, _BY_KEY, "Honcho", SECTION)
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
    # a malformed section fails before anything is written
    settings_section(load_config(home), SECTION, home / "config.yaml")
    if secrets:
        write_dotenv(secrets, home)
    if plain:

        def merge(config: dict[str, Any]) -> None:
            section = dict(settings_section(config, SECTION, home / "config.yaml"))
            for key, value in plain.items():
                if value is None:
                    section.pop(key, None)
                else:
                    section[key] = value
            config[SECTION] = section

        update_config(merge, home)
