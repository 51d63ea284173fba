"""A time limit on loading one plugin, so a plugin that hangs cannot hang discovery.

A plugin that connects to its service or downloads a model while it is imported
would otherwise hang ``plugins``, ``doctor`` and every session start, selected
or not. The limit is a ``SIGALRM`` timer, so it works only in the main thread of
a POSIX process that is not already using one (a host's own alarm is never
touched); elsewhere loading runs without a limit, as in Hermes Agent.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType

__all__ = ["PLUGIN_LOAD_TIMEOUT", "PluginLoadTimeout", "load_deadline"]

PLUGIN_LOAD_TIMEOUT = 30.0
"""Seconds one plugin may take to import and create its provider."""


class PluginLoadTimeout(Exception):
    """Loading a plugin took longer than :data:`PLUGIN_LOAD_TIMEOUT`."""


def _usable() -> bool:
    return (
        hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
        and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
        and signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, signal.SIG_IGN, None)
    )


@contextlib.contextmanager
def load_deadline(seconds: float | None = None) -> Iterator[None]:
    """Raise :class:`PluginLoadTimeout` inside the block once *seconds* have passed."""
    limit = PLUGIN_LOAD_TIMEOUT if seconds is None else seconds
    if limit <= 0 or not _usable():
        yield
        return

    def expire(signum: int, frame: FrameType | None) -> None:
        raise PluginLoadTimeout(
            f"loading did not finish within {limit:g} s; a plugin that connects to a "
            "service or downloads something while it is imported should do that in "
            "initialize() instead"
        )

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
