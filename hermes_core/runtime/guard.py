"""Bounded hook calls: a provider that raises, hangs or returns junk never breaks a turn.

The manager already isolates exceptions per provider; :class:`HookGuard` adds
the two things a turn loop still needs: a time bound on every call into the
manager, and a type check on what comes back. Each hook label (``prefetch_all``,
``tool:memory`` …) runs on its own long-lived daemon thread, so a provider
sees a stable thread per hook (SQLite connections and similar thread-bound
resources keep working); a call that overruns is abandoned, and that label is
skipped until the stuck call returns, instead of piling up threads.
"""

from __future__ import annotations

import logging
import queue
import threading
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

from hermes_core.provider import ctx_bound

__all__ = ["HookGuard"]

logger = logging.getLogger(__name__)

_T = TypeVar("_T")


class _Job:
    def __init__(self, fn: Callable[[], Any]) -> None:
        self.fn = fn
        self.done = threading.Event()
        self.result: Any = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.result = self.fn()
        except BaseException as exc:  # reported to the waiting caller
            self.error = exc
        finally:
            self.done.set()


class _Lane:
    """One daemon worker thread running the calls of one hook label in order."""

    def __init__(self, name: str) -> None:
        self.jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self.stuck: _Job | None = None
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while (job := self.jobs.get()) is not None:
            job.run()
            # Idle, the thread holds nothing: the last call's arguments (a transcript,
            # the manager) must not outlive it, nor keep an abandoned session alive.
            del job


def _close_lanes(lanes: dict[str, _Lane]) -> None:
    """Let the lanes' idle threads exit (stuck ones exit when their call returns)."""
    for lane in list(lanes.values()):
        lane.jobs.put(None)
    lanes.clear()


class HookGuard:
    """Runs callables with a timeout, an exception barrier and a result type check."""

    def __init__(self, default_timeout: float = 10.0) -> None:
        if default_timeout <= 0:
            raise ValueError("default_timeout must be positive")
        self.default_timeout = default_timeout
        self._lanes: dict[str, _Lane] = {}
        self._lock = threading.Lock()
        self.failures: list[str] = []
        """One line per failed, timed-out, skipped or junk-returning call (newest last)."""
        # A guard dropped without close() (a session never closed) still ends its threads.
        self._close_lanes = weakref.finalize(self, _close_lanes, self._lanes)

    def _lane(self, label: str) -> _Lane:
        with self._lock:
            lane = self._lanes.get(label)
            if lane is None:
                lane = _Lane(f"hermes-hook-{label}")
                self._lanes[label] = lane
            return lane

    def _fail(self, message: str, level: int = logging.WARNING) -> None:
        self.failures.append(message)
        del self.failures[:-100]
        logger.log(level, "%s", message)

    def call(
        self,
        label: str,
        fn: Callable[..., Any],
        *args: Any,
        default: _T,
        expect: type | tuple[type, ...] | None = None,
        timeout: float | None = None,
        **kwargs: Any,
    ) -> Any:
        """``fn(*args, **kwargs)`` within *timeout*, else *default*.

        Returns *default* when the call raises, overruns, returns something that
        is not an instance of *expect*, or when an earlier call under the same
        *label* is still stuck.
        """
        lane = self._lane(label)
        if lane.stuck is not None:
            if not lane.stuck.done.is_set():
                self._fail(f"{label}: skipped, an earlier call has not returned yet")
                return default
            lane.stuck = None
        job = _Job(ctx_bound(lambda: fn(*args, **kwargs)))
        lane.jobs.put(job)
        limit = self.default_timeout if timeout is None else timeout
        try:
            finished = job.done.wait(limit)
        except BaseException:
            lane.stuck = job  # interrupted while waiting: the call may still be running
            raise
        if not finished:
            lane.stuck = job
            self._fail(f"{label}: no answer within {limit:.1f}s; continuing without it")
            return default
        if job.error is not None:
            self._fail(f"{label} failed: {type(job.error).__name__}: {job.error}")
            return default
        if expect is not None and not isinstance(job.result, expect):
            self._fail(f"{label} returned {type(job.result).__name__}; ignoring it")
            return default
        return job.result

    def close(self) -> None:
        """Let idle worker threads exit (stuck ones exit when their call returns)."""
        with self._lock:
            _close_lanes(self._lanes)
