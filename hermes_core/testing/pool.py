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

__all__ = ["BoundedCall", "ProviderPool", "ProviderSetupError", "call_within"]

DEFAULT_SESSION = "conformance-session"

_HUNG_SHUTDOWN_WAIT = 1.0
"""Seconds a teardown waits for a provider class whose ``shutdown()`` already hung once."""

_HANDED_OUT: weakref.WeakValueDictionary[int, MemoryProvider] = weakref.WeakValueDictionary()
"""Providers any pool has made, so one handed out twice (a shared instance) is caught."""

_shutdown_hung: set[type] = set()
"""Provider classes whose ``shutdown()`` did not return in time once."""


@dataclass
class BoundedCall:
    """Outcome of :func:`call_within`: whether the call returned, and what it gave."""

    finished: bool
    result: Any = None
    error: BaseException | None = None
    timeout: float | None = None
    """The seconds the caller waited at most."""


def call_within(timeout: float, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> BoundedCall:
    """Run ``fn(*args, **kwargs)`` on a daemon thread and wait at most *timeout* seconds.

    A call that does not return in time is abandoned (the thread keeps running
    in the background); the outcome says so instead of hanging the test.
    """
    outcome = BoundedCall(finished=False, timeout=timeout)
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


def describe_outcome(outcome: BoundedCall) -> str:
    """``did not return within 15s`` or ``raised ValueError('…')``, for failure messages."""
    if not outcome.finished:
        return f"did not return within {outcome.timeout:g}s"
    return f"raised {outcome.error!r}"


class ProviderSetupError(AssertionError):
    """Making or initializing a provider raised: the message names the call and what to fix."""


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
        if isinstance(create, MemoryProvider) or not callable(create):
            raise TypeError(
                f"create_provider gave {type(create).__name__} {create!r:.80}, not a callable.\n"
                "Fix: return a zero-argument callable that makes a NEW provider each time it is "
                "called: the provider class itself, or a function (`return MyProvider`, not "
                "`return MyProvider()`)."
            )
        self._create = create
        self._init_kwargs = dict(init_kwargs)
        self._shutdown_timeout = shutdown_timeout
        self._running: list[MemoryProvider] = []

    def new(self) -> MemoryProvider:
        """A new, uninitialized provider."""
        try:
            provider = self._create()
        except Exception as exc:
            raise ProviderSetupError(
                f"calling create_provider's callable raised {exc!r}.\nFix: create_provider must "
                "return a zero-argument callable that makes a new, uninitialized provider (the "
                "class itself, or a function taking no arguments); start fake servers and other "
                "setup in fixtures, and keep __init__ free of I/O that can fail."
            ) from exc
        if not isinstance(provider, MemoryProvider):
            raise TypeError(
                f"create_provider's callable returned {type(provider).__name__}, not a "
                "MemoryProvider.\nFix: return a new, uninitialized instance of your provider "
                "class (a subclass of hermes_core.MemoryProvider)."
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
        arguments = self.init_kwargs(**kwargs)
        self._running.append(provider)  # shut down at the end even if initialize() fails
        try:
            # On this thread, as the host does: a provider may keep thread-bound state.
            provider.initialize(session_id, **arguments)
        except Exception as exc:
            shown = ", ".join([repr(session_id), *(f"{k}={v!r}" for k, v in arguments.items())])
            raise ProviderSetupError(
                f"initialize({shown}) raised {exc!r}; a host would run without the provider."
                "\nFix: make initialize() succeed in the test setup (configure the backend in "
                "create_provider or init_kwargs, e.g. a local fake server), accept keyword "
                "arguments you do not know (**kwargs), and when something is missing degrade "
                "instead of raising (is_available() and unavailable_reason() say why)."
            ) from exc
        return provider

    def stop(self, provider: MemoryProvider, timeout: float | None = None) -> BoundedCall:
        """Shut *provider* down, waiting at most *timeout* seconds; it is no longer tracked.

        Without *timeout*, a provider class whose ``shutdown()`` already hung is
        given only a moment: its own test reports the hang, and every later
        teardown waiting the whole budget again would only stall the run.
        """
        if provider in self._running:
            self._running.remove(provider)
        if timeout is None:
            hung = type(provider) in _shutdown_hung
            timeout = min(self._shutdown_timeout, _HUNG_SHUTDOWN_WAIT) if hung else None
        waited = self._shutdown_timeout if timeout is None else timeout
        outcome = call_within(waited, provider.shutdown)
        if not outcome.finished:
            _shutdown_hung.add(type(provider))
        return outcome

    def close(self) -> None:
        """Shut down every provider still running (newest first); errors are ignored."""
        while self._running:
            self.stop(self._running[-1])
