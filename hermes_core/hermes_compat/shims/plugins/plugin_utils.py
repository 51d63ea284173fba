"""``plugins.plugin_utils``: lazily built, thread-safe singletons for plugins.

A plugin that shares one client across its hooks builds it on first use with
:func:`lazy_singleton` (no argument) or a :class:`SingletonSlot` (built from
the configuration the first caller passes). The builder runs once even when
threads race to it; if it raises, nothing is kept and the next call builds again.
"""

import functools
import threading
from collections.abc import Callable
from typing import Generic, NoReturn, TypeVar

from hermes_core.hermes_compat.finder import missing_attribute

__hermes_compat__ = True

__all__ = ["SingletonSlot", "lazy_singleton"]

T = TypeVar("T")


def lazy_singleton(factory: Callable[[], T]) -> Callable[[], T]:
    """*factory* as an accessor that builds once and returns that object; ``.reset()`` drops it."""
    slot: SingletonSlot[T] = SingletonSlot()

    @functools.wraps(factory)
    def accessor() -> T:
        return slot.get(factory)

    accessor.reset = slot.reset  # type: ignore[attr-defined]
    return accessor


class SingletonSlot(Generic[T]):
    """Holds the first object :meth:`get` builds; later builders are not run."""

    __slots__ = ("_built", "_lock", "_value")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._value: T | None = None
        self._built = False

    def get(self, factory: Callable[[], T]) -> T:
        """The held object, built with *factory* on the first call."""
        if not self._built:
            with self._lock:
                if not self._built:
                    self._value = factory()
                    self._built = True
        return self._value  # type: ignore[return-value]

    def peek(self) -> T | None:
        """The held object, or ``None`` before the first build."""
        return self._value if self._built else None

    def reset(self) -> None:
        """Drop the held object; the next :meth:`get` builds again."""
        with self._lock:
            self._value = None
            self._built = False


def __getattr__(name: str) -> NoReturn:
    raise missing_attribute(__name__, name, __all__)
