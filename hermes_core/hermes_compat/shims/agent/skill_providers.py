"""``agent.skill_providers``: the data types of Hermes Agent's virtual skills.

A memory plugin may also offer skills from its backend: it builds
:class:`SkillMetadata` and :class:`SkillPayload` objects and hands a provider
to ``ctx.register_skill_provider`` or :func:`register_skill_provider`.
hermes-memory has no skills, so the types are served (a plugin that imports
them at the top still loads and its memory provider works) and a registration
is accepted, its namespace checked as Hermes checks it, and logged as ignored.
"""

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NoReturn, Protocol, TypeVar, runtime_checkable

from hermes_core.hermes_compat.finder import missing_attribute

__hermes_compat__ = True

__all__ = [
    "SkillMetadata",
    "SkillPayload",
    "SkillProvider",
    "register_skill_provider",
    "skill_provider",
]

logger = logging.getLogger("hermes_core.plugins")

_NAMESPACE = re.compile(r"[A-Za-z0-9_-]+")

_T = TypeVar("_T", bound=type)


@dataclass
class SkillMetadata:
    """What a skill list shows of one virtual skill."""

    name: str
    description: str = ""
    namespace: str | None = None
    category: str | None = None
    tags: list[str] = field(default_factory=list)


@dataclass
class SkillPayload:
    """The full content of one virtual skill."""

    name: str
    content: str
    description: str = ""
    linked_files: dict[str, list[str]] | None = None
    readiness_status: str = "available"
    tags: list[str] = field(default_factory=list)
    related_skills: list[str] = field(default_factory=list)
    metadata: dict[str, Any] | None = None
    setup_needed: bool = False
    setup_skipped: bool = False


@runtime_checkable
class SkillProvider(Protocol):
    """What a virtual skill provider implements in Hermes."""

    namespace: str

    def list_skills(self) -> list[Any]:
        """The :class:`SkillMetadata` (or dicts) of the skills offered."""

    def resolve_skill(self, name: str) -> Any:
        """The :class:`SkillPayload` (or dict) of skill *name*, or None."""

    def read_supporting_file(self, name: str, file_path: str) -> Any:
        """A supporting file's content, or None."""


def register_skill_provider(provider: Any, namespace: str | None = None) -> Any:
    """Accept *provider* under *namespace* (or its own ``namespace``); skills are not served.

    Raises :class:`ValueError` for a namespace that is not ``[A-Za-z0-9_-]+``,
    as Hermes does.
    """
    chosen = str(namespace or getattr(provider, "namespace", "") or "").strip()
    if not _NAMESPACE.fullmatch(chosen):
        raise ValueError(
            f"Invalid skill provider namespace {chosen!r}: use letters, digits, '_' and '-'."
        )
    provider.namespace = chosen
    logger.info("skill provider %r ignored: hermes-memory has no skills", chosen)
    return provider


def skill_provider(namespace: str, *args: Any, **kwargs: Any) -> Callable[[_T], _T]:
    """Class decorator: build the class with *args*/*kwargs* and register it under *namespace*."""

    def decorate(cls: _T) -> _T:
        register_skill_provider(cls(*args, **kwargs), namespace)
        return cls

    return decorate


def __getattr__(name: str) -> NoReturn:
    raise missing_attribute(__name__, name, __all__)
