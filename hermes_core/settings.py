"""Typed provider settings: one declaration per setting, for reading, checking and setup.

A provider declares each of its settings once, as a :class:`Setting` (type,
default, environment variables, bounds or choices, whether it is a secret, the
text a setup wizard shows). From that table it gets:

- :meth:`Setting.parse`: a raw value (from ``config.yaml``, an environment
  variable, a wizard) turned into the setting's type, or a
  :class:`~hermes_core.errors.ConfigError` that names where the value came from,
  what was expected and the default;
- :func:`config_schema`: the ``get_config_schema()`` entries (Hermes' shape);
- :func:`settings_section` and :func:`refuse_unknown`: the provider's section of
  ``config.yaml``, checked to be a mapping of known keys;
- :func:`api_key_problem`: why an API key cannot be sent in an HTTP header,
  said without quoting the key.

Where a provider reads each value from (config first or environment first,
``.env`` for secrets) stays the provider's own rule.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from hermes_core.config import TRUTHY_STRINGS, header_value_problem, is_http_url
from hermes_core.errors import ConfigError

__all__ = [
    "TYPE_NAMES",
    "Setting",
    "api_key_problem",
    "config_schema",
    "refuse_unknown",
    "settings_section",
]

TYPE_NAMES = {str: "text", int: "integer", float: "number", bool: "boolean"}
"""The schema ``type`` of each Python type a setting may have."""

TRUE_WORDS = TRUTHY_STRINGS
FALSE_WORDS = frozenset({"0", "false", "no", "off"})


@dataclass(frozen=True)
class Setting:
    """One setting of a provider: its type, default, environment variables and wizard text.

    *kind* is ``str``, ``int``, ``float`` or ``bool``. A number is checked to be
    finite and within [*minimum*, *maximum*]; text against *choices* (after
    *normalize*), *pattern* (described by *pattern_hint*) and, with *is_url*, to
    be an http(s) URL (blank allowed). *url* tells a wizard where a secret comes
    from; *when* shows the field only when other fields have these values.
    """

    key: str
    kind: type
    default: Any
    description: str
    env: tuple[str, ...] = ()
    choices: tuple[str, ...] = ()
    secret: bool = False
    required: bool = False
    minimum: float | None = None
    maximum: float | None = None
    pattern: re.Pattern[str] | None = None
    pattern_hint: str = ""
    is_url: bool = False
    normalize: Callable[[str], str] | None = None
    url: str = ""
    when: Mapping[str, Any] | None = None
    in_schema: bool = True

    def parse(self, value: Any, source: str) -> Any:
        """*value* as this setting's type; :class:`ConfigError` naming *source* if it is not.

        *source* says where the value came from (``"honcho.timeout in config.yaml"``,
        ``"environment variable HONCHO_TIMEOUT"``). A secret's value is never quoted.
        """
        if self.secret:
            if not isinstance(value, str):
                raise ConfigError(f"{source} must be text; set it again.")
            return value.strip()
        if self.kind is bool:
            return self._boolean(value, source)
        if self.kind in (int, float):
            return self._number(value, source)
        return self._text(value, source)

    def _refusal(self, value: Any, source: str, expected: str) -> ConfigError:
        default = (
            "" if self.default in (None, "") else f" (unset it to use the default {self.default!r})"
        )
        return ConfigError(
            f"{source} must be {expected}, got {value!r}. Fix it and retry{default}."
        )

    def _boolean(self, value: Any, source: str) -> bool:
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in TRUE_WORDS:
            return True
        if text in FALSE_WORDS:
            return False
        raise self._refusal(value, source, "true or false")

    def _number(self, value: Any, source: str) -> int | float:
        low = -math.inf if self.minimum is None else self.minimum
        high = math.inf if self.maximum is None else self.maximum
        kind = "a whole number" if self.kind is int else "a finite number"
        expected = f"{kind} between {low:g} and {high:g}"
        if isinstance(value, bool):
            raise self._refusal(value, source, expected)
        try:
            number = float(value.strip() if isinstance(value, str) else value)
        except (TypeError, ValueError, OverflowError):
            raise self._refusal(value, source, expected) from None
        if not math.isfinite(number) or not low <= number <= high:
            raise self._refusal(value, source, expected)
        if self.kind is int:
            if not number.is_integer():
                raise self._refusal(value, source, expected)
            return int(number)
        return number

    def _text(self, value: Any, source: str) -> str:
        if not isinstance(value, str):
            raise self._refusal(value, source, "text")
        text = value.strip()
        if self.normalize is not None:
            text = self.normalize(text)
        if self.choices and text not in self.choices:
            raise self._refusal(value, source, "one of " + ", ".join(self.choices))
        if self.pattern is not None and not self.pattern.fullmatch(text):
            raise self._refusal(value, source, self.pattern_hint or "a valid name")
        if self.is_url and text and not is_http_url(text):
            raise self._refusal(value, source, "an http(s) URL such as http://localhost:8000")
        return text

    def schema_entry(self) -> dict[str, Any]:
        """This setting as a ``get_config_schema()`` entry."""
        entry: dict[str, Any] = {
            "key": self.key,
            "description": self.description,
            "type": TYPE_NAMES[self.kind],
            "secret": self.secret,
            "required": self.required,
        }
        if not self.secret:
            entry["default"] = self.default
        if self.env:
            entry["env_var"] = self.env[0]
        if self.choices:
            entry["choices"] = list(self.choices)
        if self.minimum is not None:
            entry["minimum"] = self.minimum
        if self.maximum is not None:
            entry["maximum"] = self.maximum
        if self.url:
            entry["url"] = self.url
        if self.when:
            entry["when"] = dict(self.when)
        return entry


def config_schema(settings: Iterable[Setting]) -> list[dict[str, Any]]:
    """The ``get_config_schema()`` entries of *settings*, in order (those shown in setup)."""
    return [setting.schema_entry() for setting in settings if setting.in_schema]


def settings_section(
    config: Mapping[str, Any] | None, name: str, where: object
) -> Mapping[str, Any]:
    """The ``name:`` section of *config* (``{}`` when absent).

    Raises :class:`ConfigError` naming *where* (the file) when it is not a
    mapping: a malformed section is refused, never replaced.
    """
    section = (config or {}).get(name)
    if section is None:
        return {}
    if not isinstance(section, Mapping):
        raise ConfigError(
            f"'{name}' in {where} must be a mapping of settings, found {type(section).__name__} "
            f"({section!r:.80}). Fix or remove that section and retry."
        )
    return section


def refuse_unknown(
    keys: Iterable[object], known: Iterable[str], label: str, prefix: str, where: str = ""
) -> None:
    """Raise :class:`ConfigError` listing the *keys* not in *known*, if any.

    Keys are named ``<prefix>.<key>`` (any type: ``honcho.1``, ``honcho.None``);
    the message says which keys are known. *where* (``" in /path/config.yaml"``)
    follows the list.
    """
    names = set(known)
    unknown = sorted((key for key in keys if key not in names), key=str)
    if unknown:
        listed = ", ".join(f"{prefix}.{key}" for key in unknown)
        raise ConfigError(
            f"Unknown {label} setting(s) {listed}{where}. Known settings: "
            f"{', '.join(sorted(names))}."
        )


def api_key_problem(value: str, source: str, service: str) -> ConfigError | None:
    """The error for an API key no HTTP header can carry, or ``None`` when it can.

    The message names *service* and *source* (where the key came from) and the
    offending character by kind and position, never the key itself.
    """
    problem = header_value_problem(value)
    if problem is None:
        return None
    return ConfigError(
        f"The {service} API key ({source}) contains {problem}, so it cannot be sent: copy "
        "the key again without it."
    )
