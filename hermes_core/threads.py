"""Which threads a block of code left running: a plugin's non-daemon threads.

hermes-memory's own long-lived threads are daemons, so a non-daemon thread
that outlives the code that started it is usually a plugin's, and it keeps the
interpreter from exiting. The CLI and the conformance suite both ask.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Collection

__all__ = ["threads_left_running"]


def threads_left_running(before: Collection[threading.Thread], wait: float) -> list[str]:
    """Names of non-daemon threads not in *before* still running after *wait* seconds.

    Each such thread is joined until the shared deadline, so threads that end in
    time are not reported.
    """
    deadline = time.monotonic() + wait
    running = []
    for thread in threading.enumerate():
        if thread in before or thread.daemon or thread is threading.current_thread():
            continue
        thread.join(max(0.0, deadline - time.monotonic()))
        if thread.is_alive():
            running.append(thread.name)
    return running
