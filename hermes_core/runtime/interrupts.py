"""Ctrl-C safety: hold an interrupt while a write that must not be torn completes."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

__all__ = ["deferred_interrupt"]


@contextmanager
def deferred_interrupt() -> Iterator[None]:
    """Delay SIGINT until the block has finished, then deliver it.

    Used around "append to the store, then to the in-memory transcript" so a
    Ctrl-C can never leave the two disagreeing. Outside the main thread (where
    signals cannot be handled) it does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[FrameType | None] = []

    def hold(signum: int, frame: FrameType | None) -> None:
        received.append(frame)

    try:
        previous = signal.signal(signal.SIGINT, hold)
    except ValueError:  # not the main interpreter
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if received:
            if callable(previous):
                previous(signal.SIGINT, received[-1])
            elif previous != signal.SIG_IGN:
                raise KeyboardInterrupt
