"""The manager's background work: one daemon worker, drained for a bounded time.

``sync_all``, ``queue_prefetch_all`` and ``commit_session_boundary_async`` run
in order on one worker; :meth:`BackgroundWork.settle` lets queued work finish
before a session boundary, :meth:`BackgroundWork.flush` waits for it and
:meth:`BackgroundWork.close` drains it at shutdown, reporting what was
abandoned. Work still queued at interpreter exit by a manager never shut down
runs then, within its ``drain_timeout``.
"""

from __future__ import annotations

import atexit
import contextlib
import contextvars
import logging
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from typing import Any

from hermes_core.workers import BackgroundWorker

__all__ = ["BackgroundWork"]

logger = logging.getLogger(__name__)

_UNFINISHED: weakref.WeakSet[BackgroundWork] = weakref.WeakSet()
"""Background work with a worker that was not shut down yet."""


def _finish_background_work_at_exit() -> None:
    """At interpreter exit, let managers never shut down run their queued work (bounded).

    A host that exits without ``shutdown_all()`` (a gateway stopped with chats
    still open) would otherwise lose the last turns' ``sync_turn`` silently: the
    worker is a daemon thread. The workers run in parallel, so the whole wait is
    at most the largest ``drain_timeout``.
    """
    pending = list(_UNFINISHED)
    if not pending:
        return
    deadline = time.monotonic() + max(work.drain_timeout for work in pending)
    for work in pending:
        work.finish_at_exit(deadline)


atexit.register(_finish_background_work_at_exit)


class BackgroundWork:
    """The worker a manager queues its background tasks on, started on first use."""

    def __init__(self, drain_timeout: float) -> None:
        self.drain_timeout = drain_timeout
        self.busy_in = ""
        """Which provider hook a task is in now (``"'name' sync_turn"``), for warnings."""
        self._lock = threading.Lock()
        self.worker: BackgroundWorker | None = None
        self._closing = False
        self._drain_state: dict[str, Any] = {
            "status": "not_started",
            "abandoned_writes": 0,
            "abandoned_prefetches": 0,
            "active_tasks": 0,
        }

    def submit(self, kind: str, fn: Callable[[], None]) -> bool:
        """Queue *fn* on the background worker under the caller's context."""
        context = contextvars.copy_context()
        with self._lock:
            if self._closing:
                logger.warning("Memory manager is shutting down; rejecting late %s task", kind)
                return False
            worker = self.worker
            if worker is None:
                try:
                    worker = self.worker = BackgroundWorker()
                    # An abandoned manager must not leave its thread waiting forever.
                    weakref.finalize(self, worker.stop)
                    _UNFINISHED.add(self)
                except RuntimeError as exc:
                    logger.warning(
                        "Memory background worker could not start (%s); running the %s task inline",
                        exc,
                        kind,
                    )
            if worker is not None:
                worker.submit(kind, fn, context)
                return True
        context.run(fn)
        return True

    def settle(self, hook: str) -> None:
        """Let background work queued so far run before a session-boundary *hook*.

        A provider must see the last turn's ``sync_turn`` before the boundary
        that ends or splits its session. Waits at most ``drain_timeout`` seconds;
        from one of the worker's own tasks it does not wait.
        """
        worker = self.worker
        if (
            worker is None
            or self.drain_timeout <= 0
            or worker.in_worker_thread()
            or worker.pending_count() == 0
        ):
            return
        if not worker.flush(self.drain_timeout):
            logger.warning(
                "Memory background work queued before %s did not finish within %gs; "
                "%s goes ahead without waiting for it (a provider may be hung)%s.",
                hook,
                self.drain_timeout,
                hook,
                self._busy_note(),
            )

    def finish_at_exit(self, deadline: float) -> None:
        """Run what is still queued, until *deadline* (``time.monotonic()``)."""
        with self._lock:
            worker = None if self._closing else self.worker
        if worker is None or worker.pending_count() == 0:
            return
        if not worker.flush(max(0.0, deadline - time.monotonic())):
            logger.warning(
                "Memory background work was still queued at exit and did not finish in time; "
                "%d task(s) abandoned. Call shutdown_all() (AgentSession.close()) before "
                "exiting.",
                worker.pending_count(),
            )

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until all background work queued so far has run; False on timeout."""
        worker = self.worker
        if worker is None:
            return True
        return worker.flush(timeout)

    @property
    def drain_state(self) -> dict[str, Any]:
        """How the last shutdown drain went (see ``MemoryManager.shutdown_drain_state``)."""
        with self._lock:
            return dict(self._drain_state)

    def close(self) -> bool:
        """Refuse new work and drain the queue (bounded); False when already closed."""
        with self._lock:
            if self._closing:
                return False
            self._closing = True
            worker, self.worker = self.worker, None
            _UNFINISHED.discard(self)
            self._drain_state = {
                "status": "draining",
                "abandoned_writes": 0,
                "abandoned_prefetches": 0,
                "active_tasks": worker.pending_count() if worker else 0,
            }
        self._drain(worker)
        return True

    @contextlib.contextmanager
    def running(self, provider: str, hook: str) -> Iterator[None]:
        """Within the block, a task is in *provider*'s *hook* (drain warnings name it)."""
        self.busy_in = f"'{provider}' {hook}"
        try:
            yield
        finally:
            self.busy_in = ""

    def _busy_note(self) -> str:
        busy = self.busy_in
        return f" (still running: memory provider {busy})" if busy else ""

    def _drain(self, worker: BackgroundWorker | None) -> None:
        cancelled: list[str] = []
        if worker is None:
            drained, running = True, 0
        else:
            drained, cancelled, running = worker.drain(self.drain_timeout)
            worker.stop()
        state = {
            "status": "drained" if drained else "timed_out",
            "abandoned_writes": cancelled.count("write"),
            "abandoned_prefetches": cancelled.count("prefetch"),
            "active_tasks": running,
        }
        with self._lock:
            self._drain_state = state
        if not drained:
            logger.warning(
                "Memory background work did not finish within %gs at shutdown: abandoned "
                "%d write(s) and %d prefetch(es); %d task(s) still running%s",
                self.drain_timeout,
                state["abandoned_writes"],
                state["abandoned_prefetches"],
                running,
                self._busy_note(),
            )
