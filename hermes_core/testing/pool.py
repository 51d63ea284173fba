"""Providers for one conformance test: made, initialized, and always shut down.

Every provider a :class:`ProviderPool` makes shares the test's backend (the
same ``HERMES_HOME``, the same fake server), so a second instance stands for a
second user, a new session, or the same user after a restart.
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from hermes_core.provider import MemoryProvider

__all__ = ["BoundedCall", "ProviderPool", "call_within"]

DEFAULT_SESSION = "conformance-session"

_HANDED_OUT: weakref.WeakValueDictionary[int, MemoryProvider] = weakref.WeakValueDictionary()
"""Providers any pool has made, so one handed out twice (a shared instance) is caught."""


@dataclass
class BoundedCall:
    """Outcome of :func:`call_within`: whether the call returned, and what it gave."""

    finished: bool
    result: Any = None
    error: BaseException | None = None


def call_within(timeout: float, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> BoundedCall:
    """Run ``fn(*args, **kwargs)`` on a daemon thread and wait at most *timeout* seconds.

    A call that does not return in time is abandoned (the thread keeps running
    in the background); the outcome says so instead of hanging the test.
    """
    outcome = BoundedCall(finished=False)
    done = threading.Event()

    def run() -> None:
        try:
            outcome.result = fn(*args, **kwargs)
        except BaseException as exc:  # reported to the caller, never lost
            outcome.error = exc
        finally:
            done.set()

    threading.Thread(
        target=run, name=f"conformance-{getattr(fn, '__name__', 'call')}", daemon=True
    ).start()
    outcome.finished = done.wait(timeout)
    return outcome


class ProviderPool:
    """Makes providers from *create* and initializes them with *init_kwargs*.

    ``new()`` gives an uninitialized instance; ``start()`` an initialized one
    that ``close()`` shuts down at the end of the test.
    """

    def __init__(
        self,
        create: Callable[[], MemoryProvider],
        init_kwargs: Mapping[str, Any],
        *,
        shutdown_timeout: float = 30.0,
    ) -> None:
        self._create = create
        self._init_kwargs = dict(init_kwargs)
        self._shutdown_timeout = shutdown_timeout
        self._running: list[MemoryProvider] = []

    def new(self) -> MemoryProvider:
        """A new, uninitialized provider."""
        provider = self._create()
        if not isinstance(provider, MemoryProvider):
            raise TypeError(
                f"create_provider returned {type(provider).__name__}, not a MemoryProvider: "
                "return a new, uninitialized instance of your provider class."
            )
        if _HANDED_OUT.get(id(provider)) is provider:
            raise TypeError(
                f"create_provider returned a {type(provider).__name__} it had returned before; "
                "every test needs a new, uninitialized instance. A plugin whose register(ctx) "
                "registers one module-level instance must create the instance inside "
                "register() instead."
            )
        with contextlib.suppress(TypeError):  # __slots__ without weak references: untracked
            _HANDED_OUT[id(provider)] = provider
        return provider

    def init_kwargs(self, **overrides: Any) -> dict[str, Any]:
        """The keyword arguments ``start`` passes to ``initialize`` (``None`` drops a key)."""
        merged = {**self._init_kwargs, **overrides}
        return {key: value for key, value in merged.items() if value is not None}

    def start(
        self, session_id: str = DEFAULT_SESSION, *, user_id: str | None = None, **kwargs: Any
    ) -> MemoryProvider:
        """A new provider, initialized for *session_id* (and *user_id* when given)."""
        provider = self.new()
        if user_id is not None:  # otherwise a user_id the run passes for every test stays
            kwargs["user_id"] = user_id
        provider.initialize(session_id, **self.init_kwargs(**kwargs))
        self._running.append(provider)
        return provider

    def stop(self, provider: MemoryProvider, timeout: float | None = None) -> BoundedCall:
        """Shut *provider* down, waiting at most *timeout* seconds; it is no longer tracked."""
        if provider in self._running:
            self._running.remove(provider)
        return call_within(
            self._shutdown_timeout if timeout is None else timeout, provider.shutdown
        )

    def close(self) -> None:
        """Shut down every provider still running (newest first); errors are ignored."""
        while self._running:
            self.stop(self._running[-1])
