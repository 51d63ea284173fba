"""Time limits on plugin code, so a plugin that hangs cannot hang discovery.

A plugin that connects to its service or downloads a model while it is imported
would otherwise hang ``plugins``, ``doctor`` and every session start, selected
or not; so would a provider whose ``name``, ``is_available()`` or
``get_tool_schemas()`` waits on a service that never answers. Loading a plugin
is bounded by :data:`PLUGIN_LOAD_TIMEOUT` (:func:`load_deadline`), and each call
discovery makes into a loaded provider by :data:`PROVIDER_CALL_TIMEOUT`
(:func:`bounded_call`). Both are the same ``SIGALRM`` timer, so they work only
in the main thread of a POSIX process that is not already using one (a host's
own alarm is never touched); elsewhere plugin code runs without a limit, as in
Hermes Agent.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

from hermes_core.errors import contain

__all__ = [
    "PLUGIN_LOAD_TIMEOUT",
    "PROVIDER_CALL_TIMEOUT",
    "PluginLoadTimeout",
    "ProviderCallTimeout",
    "bounded_call",
    "load_deadline",
]

PLUGIN_LOAD_TIMEOUT = 30.0
"""Seconds one plugin may take to import and create its provider."""

PROVIDER_CALL_TIMEOUT = 30.0
"""Seconds one call discovery makes into a provider (``name``, ``is_available()``, …) may take."""


class PluginLoadTimeout(Exception):
    """Loading a plugin took longer than :data:`PLUGIN_LOAD_TIMEOUT`."""


class ProviderCallTimeout(Exception):
    """A call into a provider took longer than :data:`PROVIDER_CALL_TIMEOUT`.

    ``call`` names it (``"is_available()"``); the message says what to do.
    """

    def __init__(self, call: str, seconds: float) -> None:
        super().__init__(
            f"{call} did not return within {seconds:g} s; a provider must answer it without "
            "waiting on a service (connect in initialize() instead). Check that the service "
            "it uses is reachable, or block the plugin with HERMES_MEMORY_PLUGINS_BLOCK"
        )
        self.call = call
        self.seconds = seconds


class _TimeUp(BaseException):
    """Raised into a provider's code when its call runs out of time.

    Not an :class:`Exception`, so the provider's own ``except Exception`` (a retry
    loop, say) cannot swallow it and keep waiting.
    """


class _Alarm:
    """Whether the timer of one :func:`_alarm` block went off."""

    fired = False


def _usable() -> bool:
    return (
        hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
        and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
        and signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, signal.SIG_IGN, None)
    )


@contextlib.contextmanager
def _alarm(seconds: float, expired: Callable[[], BaseException], alarm: _Alarm) -> Iterator[None]:
    """Raise ``expired()`` inside the block once *seconds* have passed (when a timer is usable)."""
    if seconds <= 0 or not _usable():
        yield
        return

    def expire(signum: int, frame: FrameType | None) -> None:
        alarm.fired = True
        raise expired()

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def load_deadline(seconds: float | None = None) -> Iterator[None]:
    """Raise :class:`PluginLoadTimeout` inside the block once *seconds* have passed."""
    limit = PLUGIN_LOAD_TIMEOUT if seconds is None else seconds

    def expired() -> BaseException:
        return PluginLoadTimeout(
            f"loading did not finish within {limit:g} s; a plugin that connects to a "
            "service or downloads something while it is imported should do that in "
            "initialize() instead"
        )

    with _alarm(limit, expired, _Alarm()):
        yield


def bounded_call(
    what: str, call: Callable[..., Any], *args: Any, seconds: float | None = None
) -> Any:
    """``call(*args)`` under :func:`~hermes_core.errors.contain`, within a time limit.

    *what* names the call in the :class:`ProviderCallTimeout` raised when it has
    not returned after *seconds* (default :data:`PROVIDER_CALL_TIMEOUT`); it is
    raised even when the provider caught the interruption and returned or
    raised something else. Nested in another limit (a provider created while its
    plugin loads), the call runs under the outer one.
    """
    limit = PROVIDER_CALL_TIMEOUT if seconds is None else seconds
    alarm = _Alarm()
    try:
        with _alarm(limit, _TimeUp, alarm):
            result = contain(call, *args)
    except _TimeUp:  # went off between the provider's code and ours
        raise ProviderCallTimeout(what, limit) from None
    except Exception:
        if alarm.fired:
            raise ProviderCallTimeout(what, limit) from None
        raise
    if alarm.fired:  # the provider caught the interruption and returned anyway
        raise ProviderCallTimeout(what, limit)
    return result
