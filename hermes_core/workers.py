"""Background threads: a bounded prefetch lane per external provider and a FIFO worker.

:class:`PrefetchLane` runs one provider's ``prefetch`` on a long-lived daemon
thread so a caller can stop waiting after a timeout; :class:`BackgroundWorker`
runs background tasks strictly in submission order, hands back futures, and
can be flushed and drained. The manager uses both; providers use the worker
for their own background calls.
"""

from __future__ import annotations

import contextvars
import logging
import queue
import threading
import weakref
from collections.abc import Callable
from concurrent.futures import CancelledError, Future
from typing import Any

from hermes_core.provider import spawn_context_thread

__all__ = ["SKIPPED", "TIMED_OUT", "BackgroundWorker", "PrefetchLane", "call_with_timeout"]

logger = logging.getLogger("hermes_core.manager")


class _PrefetchCall:
    """One prefetch handed to a lane; ``done`` is released when it returns."""

    __slots__ = ("context", "done", "error", "query", "result", "session_id")

    def __init__(self, query: Any, session_id: str) -> None:
        self.query = query
        self.session_id = session_id
        self.context = contextvars.copy_context()
        self.result: Any = None
        self.error: BaseException | None = None
        self.done = threading.Lock()
        self.done.acquire()


SKIPPED = object()  # the lane's previous call is still running
TIMED_OUT = object()  # the call outlived the timeout; its result will be discarded


class _LaneState:
    """What a prefetch lane and its thread share (the thread never sees the lane)."""

    __slots__ = ("busy", "lock", "stuck")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.busy = False  # a call was handed over and has not returned
        self.stuck = False  # ... and its caller stopped waiting for it


PrefetchFn = Callable[[Any, str], Any]
"""A provider's prefetch as ``fn(query, session_id)``."""


def _serve_prefetches(
    prefetch: PrefetchFn, calls: queue.SimpleQueue[_PrefetchCall | None], state: _LaneState
) -> None:
    while (call := calls.get()) is not None:
        try:
            call.result = call.context.run(prefetch, call.query, call.session_id)
        except BaseException as exc:  # handed back to the waiting caller
            call.error = exc
        finally:
            with state.lock:
                state.busy = False
                state.stuck = False
            call.done.release()
        del call  # an idle thread holds no query, result or context


class PrefetchLane:
    """Runs one external provider's ``prefetch`` on a long-lived daemon thread.

    A caller waits for its call at most *timeout* seconds. Reusing one thread
    per provider costs a hand-off per turn instead of a thread start, and it
    makes "skip while the previous call is stuck" a matter of one flag. The
    thread exits on :meth:`stop` or when the lane is garbage-collected.
    """

    def __init__(self, prefetch: PrefetchFn, name: str) -> None:
        self._prefetch = prefetch
        self._name = name
        self._state = _LaneState()
        self._calls: queue.SimpleQueue[_PrefetchCall | None] | None = None
        self._stop_thread: weakref.finalize[Any, Any] | None = None

    @property
    def stuck(self) -> bool:
        """A call timed out and has not returned yet."""
        return self._state.stuck

    def run(self, query: Any, session_id: str, timeout: float) -> Any:
        """The provider's result, or ``SKIPPED`` / ``TIMED_OUT``; re-raises its error."""
        state = self._state
        with state.lock:
            if state.busy:
                return SKIPPED
            calls = self._calls
            if calls is None:
                calls = queue.SimpleQueue()
                threading.Thread(
                    target=_serve_prefetches,
                    args=(self._prefetch, calls, state),
                    name=f"memory-prefetch-{self._name}",
                    daemon=True,
                ).start()
                self._calls = calls
                self._stop_thread = weakref.finalize(self, calls.put, None)
            state.busy = True
        call = _PrefetchCall(query, session_id)
        calls.put(call)
        if not call.done.acquire(timeout=timeout):
            with state.lock:
                state.stuck = state.busy
            return TIMED_OUT
        if call.error is not None:
            raise call.error
        return call.result

    def stop(self) -> None:
        """Let the thread exit once its current call (if any) returns."""
        with self._state.lock:
            stop_thread, self._stop_thread, self._calls = self._stop_thread, None, None
        if stop_thread is not None:
            stop_thread()


def call_with_timeout(fn: Callable[..., Any], *args: Any, timeout: float, name: str) -> Any:
    """``fn(*args)`` on a daemon thread named *name*, waited for at most *timeout* seconds.

    Returns its result or :data:`TIMED_OUT` (the call goes on, its result is
    discarded); re-raises its error. For calls made rarely (once a session, a
    memory write), where a thread per call costs nothing that matters.
    """
    call = _PrefetchCall(None, "")

    def run() -> None:
        try:
            call.result = call.context.run(fn, *args)
        except BaseException as exc:  # handed back to the waiting caller
            call.error = exc
        finally:
            call.done.release()

    threading.Thread(target=run, name=name, daemon=True).start()
    if not call.done.acquire(timeout=timeout):
        return TIMED_OUT
    if call.error is not None:
        raise call.error
    return call.result


def _noop() -> None:
    return None


class _Task:
    __slots__ = ("context", "fn", "future", "kind")

    def __init__(
        self, kind: str, fn: Callable[[], Any], context: contextvars.Context | None
    ) -> None:
        self.kind = kind
        self.fn = fn
        self.context = context
        self.future: Future[Any] = Future()


class BackgroundWorker:
    """One daemon thread running submitted tasks strictly in submission order.

    The manager runs its background work (turn syncs, prefetch warm-ups,
    session boundaries) on one; a provider can run its own background calls on
    one, since :meth:`submit` hands back a :class:`~concurrent.futures.Future`.
    A task runs in the *context* it was submitted with, or else in a copy of
    the context that created the worker. A task's exception goes to its future;
    with *log_errors* (the manager's choice) it is also logged with its
    traceback, otherwise only at DEBUG level (the submitter reads the future).
    With *max_pending*, at most that many tasks may be unfinished (the running
    one included); more are refused. The thread is a daemon, so a hung network
    call never blocks interpreter exit.
    """

    def __init__(
        self, name: str = "memory-sync", *, log_errors: bool = True, max_pending: int | None = None
    ) -> None:
        if max_pending is not None and max_pending < 1:
            raise ValueError(f"max_pending must be at least 1, got {max_pending!r}")
        self.name = name
        self._log_errors = log_errors
        self._max_pending = max_pending
        self._tasks: queue.SimpleQueue[_Task | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._pending: set[_Task] = set()
        self._stopped = False
        self._thread = spawn_context_thread(self._serve, name=name)
        self._thread.start()  # RuntimeError: no thread

    def submit(
        self, kind: str, fn: Callable[[], Any], context: contextvars.Context | None = None
    ) -> Future[Any]:
        """Queue *fn* (*kind* labels it in logs).

        Raises RuntimeError, saying why, once the worker is stopped or while
        *max_pending* tasks are unfinished.
        """
        return self._enqueue(_Task(kind, fn, context), bounded=True)

    def _enqueue(self, task: _Task, *, bounded: bool) -> Future[Any]:
        with self._lock:
            if self._stopped:
                raise RuntimeError(
                    f"Background worker {self.name} is stopped; {task.kind} refused."
                )
            limit = self._max_pending
            if bounded and limit is not None and len(self._pending) >= limit:
                raise RuntimeError(
                    f"Background worker {self.name} already has {limit} unfinished tasks; "
                    f"{task.kind} refused."
                )
            self._pending.add(task)
            self._tasks.put(task)
        return task.future

    def _serve(self) -> None:
        while (task := self._tasks.get()) is not None:
            if task.future.set_running_or_notify_cancel():
                try:
                    result = task.fn() if task.context is None else task.context.run(task.fn)
                except BaseException as exc:  # handed to the future; the worker stays alive
                    if self._log_errors:
                        logger.exception("Memory background %s task failed", task.kind)
                    else:
                        logger.debug("%s: background %s task failed: %s", self.name, task.kind, exc)
                    task.future.set_exception(exc)
                else:
                    task.future.set_result(result)
                    del result
            with self._lock:
                self._pending.discard(task)
                # An idle thread must not keep the last task (and what its closure
                # holds, such as the manager that owns this worker) alive.
                del task
                if not self._pending:
                    self._idle.notify_all()

    def in_worker_thread(self) -> bool:
        """True when called from one of this worker's own tasks."""
        return threading.current_thread() is self._thread

    def flush(self, timeout: float | None) -> bool:
        """Wait until everything submitted so far has run; False on timeout.

        Called from one of the worker's own tasks it returns False at once: the
        task calling it is part of what it would wait for.
        """
        if self.in_worker_thread():
            logger.warning(
                "%s: flush called from its own background task; not waiting (it would never end)",
                self.name,
            )
            return False
        try:
            marker = self._enqueue(_Task("flush", _noop, None), bounded=False)
        except RuntimeError:  # stopped: what was queued before still runs
            with self._idle:
                return self._idle.wait_for(lambda: not self._pending, timeout)
        try:
            marker.result(timeout)
        except (TimeoutError, CancelledError):
            return False
        return True

    def pending_count(self) -> int:
        """Tasks submitted and not finished yet (the running one included)."""
        with self._lock:
            return len(self._pending)

    def drain(self, timeout: float) -> tuple[bool, list[str], int]:
        """Wait for the queue to empty, then cancel what is still queued.

        Returns (drained, kinds of the cancelled tasks, tasks still running).
        """
        with self._idle:
            if self._idle.wait_for(lambda: not self._pending, timeout):
                return True, [], 0
            cancelled = [task for task in self._pending if task.future.cancel()]
            self._pending.difference_update(cancelled)
            running = len(self._pending)
        return False, [task.kind for task in cancelled], running

    def stop(self) -> None:
        """Refuse new tasks; the thread exits once those already queued have run."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
            self._tasks.put(None)
