"""A single background thread that runs submitted calls in order.

Daemon thread (a hung network call never blocks interpreter exit), caller's
``contextvars`` preserved, results as :class:`concurrent.futures.Future`.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

from hermes_core.provider import spawn_context_thread

__all__ = ["SerialWorker"]

logger = logging.getLogger(__name__)
T = TypeVar("T")
_STOP = object()


class SerialWorker:
    """Run calls one at a time, first submitted first run, on one daemon thread."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._closed = False
        self._lock = threading.Lock()
        self._thread = spawn_context_thread(self._run, name=name)
        self._thread.start()

    def submit(self, fn: Callable[[], T]) -> Future[T]:
        """Queue *fn*; raise RuntimeError once the worker is closed."""
        future: Future[T] = Future()
        with self._lock:
            if self._closed:
                raise RuntimeError(f"worker {self.name} is closed")
            self._queue.put((fn, future))
        return future

    def drain(self, timeout: float) -> bool:
        """Wait until everything submitted so far has run; False on timeout or when closed."""
        try:
            marker = self.submit(lambda: None)
        except RuntimeError:
            return False
        try:
            marker.result(timeout=timeout)
        except TimeoutError:
            return False
        return True

    def close(self) -> None:
        """Refuse new calls; queued ones still run, then the thread ends."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._queue.put(_STOP)

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is _STOP:
                return
            fn, future = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = fn()
            except BaseException as exc:
                logger.debug("%s: background call failed: %s", self.name, exc)
                future.set_exception(exc)
            else:
                future.set_result(result)
