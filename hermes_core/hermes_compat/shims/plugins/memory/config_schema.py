"""``plugins.memory.config_schema``: the data types of a plugin's declared settings.

A Hermes memory plugin may ship a ``config_schema.py`` beside its
``__init__.py`` that builds ``CONFIG_SCHEMA = ProviderConfigSchema(...)`` from
these types, for Hermes' desktop settings panel. hermes-memory has no such
panel: the types are served so that the file, and a plugin that imports it,
load; the schema itself is not read. A provider's ``get_config_schema()`` is
what hermes-memory uses.
"""

from dataclasses import dataclass, field
from typing import NoReturn

from hermes_core.hermes_compat.finder import missing_attribute

__hermes_compat__ = True

__all__ = [
    "KIND_BOOL",
    "KIND_JSON",
    "KIND_NUMBER",
    "KIND_SECRET",
    "KIND_SELECT",
    "KIND_TEXT",
    "STORAGE_FLAT_JSON",
    "STORAGE_HONCHO_HOST_BLOCK",
    "ProviderConfigSchema",
    "ProviderField",
    "ProviderFieldOption",
]

KIND_TEXT = "text"
KIND_SELECT = "select"
KIND_SECRET = "secret"
KIND_BOOL = "bool"
KIND_NUMBER = "number"
KIND_JSON = "json"

STORAGE_FLAT_JSON = "flat_json"
STORAGE_HONCHO_HOST_BLOCK = "honcho_host_block"


@dataclass(frozen=True)
class ProviderFieldOption:
    """One choice of a ``select`` field."""

    value: str
    label: str
    description: str = ""


@dataclass(frozen=True)
class ProviderField:
    """One setting: stored under ``key``, or in the environment as ``env_key`` when secret."""

    key: str
    label: str
    kind: str = KIND_TEXT
    default: str = ""
    description: str = ""
    placeholder: str = ""
    options: tuple[ProviderFieldOption, ...] = ()
    env_key: str | None = None
    aliases: tuple[str, ...] = ()
    env_fallbacks: tuple[str, ...] = ()
    inline: bool = False
    group: str = ""
    info: str = ""
    scope: str = "host"
    when: dict[str, str] | None = None

    @property
    def is_secret(self) -> bool:
        """Whether the value is a secret (kept in the environment, never shown)."""
        return self.kind == KIND_SECRET

    def allowed_values(self) -> set[str]:
        """The values a ``select`` field accepts."""
        return {option.value for option in self.options}


@dataclass(frozen=True)
class ProviderConfigSchema:
    """A plugin's declared settings."""

    name: str
    label: str
    storage: str = STORAGE_FLAT_JSON
    docs_url: str = ""
    fields: tuple[ProviderField, ...] = field(default_factory=tuple)

    def inline_fields(self) -> tuple[ProviderField, ...]:
        """The fields marked for the compact panel."""
        return tuple(item for item in self.fields if item.inline)


def __getattr__(name: str) -> NoReturn:
    raise missing_attribute(__name__, name, __all__)
