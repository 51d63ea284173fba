"""The FIFO background worker, as providers use it: futures, order, flush, stop, context."""

from __future__ import annotations

import contextvars
import functools
import gc
import logging
import threading
import weakref
from collections.abc import Iterator

import pytest

from hermes_core.workers import BackgroundWorker

WHO = contextvars.ContextVar("WHO", default="nobody")


@pytest.fixture
def worker() -> Iterator[BackgroundWorker]:
    made = BackgroundWorker("test-worker", log_errors=False)
    yield made
    made.stop()


def test_futures_carry_results_and_exceptions(worker: BackgroundWorker) -> None:
    ok = worker.submit("sum", lambda: 1 + 2)

    def broken() -> None:
        raise ValueError("bad answer")

    failed = worker.submit("broken", broken)
    assert ok.result(timeout=10) == 3
    with pytest.raises(ValueError, match="bad answer"):
        failed.result(timeout=10)
    assert worker.submit("after", lambda: "still alive").result(timeout=10) == "still alive"


def test_tasks_run_one_at_a_time_in_submission_order(worker: BackgroundWorker) -> None:
    gate = threading.Event()
    order: list[int] = []
    running = []
    overlap = []

    def task(n: int) -> None:
        running.append(n)
        overlap.append(len(running))
        if n == 0:
            gate.wait(10)
        order.append(n)
        running.remove(n)

    for n in range(20):
        worker.submit("step", lambda n=n: task(n))
    assert not worker.flush(0.05), "the first task is still blocked"
    gate.set()
    assert worker.flush(10)
    assert order == list(range(20))
    assert max(overlap) == 1
    assert worker.pending_count() == 0


def test_stop_refuses_new_work_but_runs_what_was_queued(worker: BackgroundWorker) -> None:
    gate = threading.Event()
    done: list[str] = []
    worker.submit("block", lambda: gate.wait(10))
    queued = worker.submit("queued", lambda: done.append("queued"))
    worker.stop()
    with pytest.raises(RuntimeError, match="test-worker is stopped"):
        worker.submit("late", lambda: done.append("late"))
    gate.set()
    queued.result(timeout=10)
    assert worker.flush(10)
    assert done == ["queued"]


def test_drain_cancels_what_is_still_queued(worker: BackgroundWorker) -> None:
    gate = threading.Event()
    worker.submit("block", lambda: gate.wait(10))
    later = [worker.submit("write", lambda: None) for _ in range(3)]
    drained, cancelled, running = worker.drain(0.05)
    gate.set()
    assert (drained, cancelled, running) == (False, ["write"] * 3, 1)
    assert all(future.cancelled() for future in later)
    assert worker.flush(10)


def test_tasks_run_in_the_creators_context_unless_given_one() -> None:
    token = WHO.set("creator")
    try:
        worker = BackgroundWorker("ctx-worker", log_errors=False)
    finally:
        WHO.reset(token)
    try:
        assert worker.submit("plain", WHO.get).result(timeout=10) == "creator"
        WHO.set("submitter")
        explicit = contextvars.copy_context()
        assert worker.submit("explicit", WHO.get, explicit).result(timeout=10) == "submitter"
    finally:
        worker.stop()


def test_failures_are_logged_at_error_only_when_asked(caplog: pytest.LogCaptureFixture) -> None:
    def broken() -> None:
        raise RuntimeError("kaput")

    quiet = BackgroundWorker("quiet", log_errors=False)
    loud = BackgroundWorker("loud")
    try:
        with caplog.at_level(logging.DEBUG, logger="hermes_core.manager"):
            for each in (quiet, loud):
                each.submit("sync", broken)
                assert each.flush(10)
    finally:
        quiet.stop()
        loud.stop()
    levels = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert ("DEBUG", "quiet: background sync task failed: kaput") in levels
    assert ("ERROR", "Memory background sync task failed") in levels
    assert len([level for level, _ in levels if level == "ERROR"]) == 1


def test_a_bounded_worker_refuses_beyond_max_pending_but_still_flushes() -> None:
    worker = BackgroundWorker("bounded", log_errors=False, max_pending=3)
    gate = threading.Event()
    try:
        first = worker.submit("block", lambda: gate.wait(10))
        queued = [worker.submit("write", lambda: None) for _ in range(2)]
        with pytest.raises(RuntimeError, match="bounded already has 3 unfinished tasks"):
            worker.submit("write", lambda: None)
        assert not worker.flush(0.05), "a flush is never refused, it waits"
        gate.set()
        assert worker.flush(10)
        assert first.result(timeout=10) is True and all(f.done() for f in queued)
        assert worker.submit("write", lambda: "room again").result(timeout=10) == "room again"
    finally:
        gate.set()
        worker.stop()
    with pytest.raises(ValueError, match="max_pending"):
        BackgroundWorker("nonsense", max_pending=0)


def test_flush_from_one_of_its_own_tasks_returns_false_instead_of_deadlocking(
    worker: BackgroundWorker,
) -> None:
    # A provider's hook, running on the worker, waiting for the worker (no timeout).
    inner = worker.submit("reentrant", lambda: worker.flush(None))
    after = worker.submit("after", lambda: "ran")
    assert inner.result(timeout=30) is False
    assert after.result(timeout=30) == "ran"
    assert worker.flush(30) is True


def test_an_idle_worker_holds_no_reference_to_its_last_task(worker: BackgroundWorker) -> None:
    # The manager's tasks are closures over the manager: held by an idle worker
    # thread, they would keep an abandoned manager (and its threads) alive forever.
    class Payload:
        pass

    payload = Payload()
    gone = weakref.ref(payload)
    future = worker.submit("write", functools.partial(lambda _: None, payload))
    assert future.result(timeout=10) is None
    assert worker.drain(10) == (True, [], 0)  # idle: the last task has been let go
    del payload, future
    gc.collect()
    assert gone() is None
