"""Providers that do not subclass :class:`MemoryProvider`, made whole.

Discovery accepts any object with the provider's required methods (a plugin
whose ``from agent.memory_provider import MemoryProvider`` fell back to its own
stand-in base, say). :class:`DuckTypedProvider` wraps such an object: each hook
the object defines is its own bound method (so call shapes are inspected on the
plugin's real signatures), every other hook is the contract's safe default, and
any other attribute is read from the object.
"""

from __future__ import annotations

from typing import Any

from hermes_core.provider import MemoryProvider

HOOKS = tuple(
    name
    for name, value in vars(MemoryProvider).items()
    if callable(value) and not name.startswith("_")
)


class DuckTypedProvider(MemoryProvider):
    """A provider object that is not a :class:`MemoryProvider`, behind the full contract."""

    def __init__(self, wrapped: Any) -> None:
        self.__dict__["wrapped"] = wrapped
        for hook in HOOKS:
            method = getattr(wrapped, hook, None)
            if callable(method):
                self.__dict__[hook] = method
        version = getattr(wrapped, "pre_compress_checkpoint_api_version", None)
        if version is not None:
            self.__dict__["pre_compress_checkpoint_api_version"] = version

    @property
    def name(self) -> str:
        return str(self.wrapped.name)

    def is_available(self) -> bool:
        return bool(self.wrapped.is_available())

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        self.wrapped.initialize(session_id, **kwargs)

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        schemas: list[dict[str, Any]] = self.wrapped.get_tool_schemas()
        return schemas

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self.__dict__["wrapped"], attribute)

    def __repr__(self) -> str:
        return f"<DuckTypedProvider {self.wrapped!r}>"


def unwrap(provider: Any) -> Any:
    """The plugin's own object behind *provider*."""
    return provider.wrapped if isinstance(provider, DuckTypedProvider) else provider
