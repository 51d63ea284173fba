"""The background worker: ordering, flush_pending, session boundaries and the shutdown drain."""

from __future__ import annotations

import contextvars
import gc
import logging
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from hermes_core import MemoryManager, MemoryProvider

WAIT = 10.0
TENANT: contextvars.ContextVar[str] = contextvars.ContextVar("tenant", default="none")


class Journal(MemoryProvider):
    """Appends every background-relevant hook call to a shared journal."""

    def __init__(self, name: str, journal: list[tuple[Any, ...]]) -> None:
        self._name = name
        self.journal = journal
        self.threads: set[threading.Thread] = set()

    def _note(self, *entry: Any) -> None:
        self.threads.add(threading.current_thread())
        self.journal.append((self._name, *entry))

    @property
    def name(self) -> str:
        return self._name

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        pass

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return []

    def sync_turn(
        self,
        user_content: str,
        assistant_content: str,
        *,
        session_id: str = "",
        messages: list[dict[str, Any]] | None = None,
    ) -> None:
        self._note("sync_turn", user_content, assistant_content, session_id, messages)

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        self._note("queue_prefetch", query, TENANT.get())

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        self._note("on_session_end", messages)

    def on_session_switch(
        self,
        new_session_id: str,
        *,
        parent_session_id: str = "",
        reset: bool = False,
        rewound: bool = False,
        **kwargs: Any,
    ) -> None:
        self._note("on_session_switch", new_session_id, parent_session_id, reset, kwargs)

    def shutdown(self) -> None:
        self._note("shutdown")


class Legacy(Journal):
    """A provider written before ``messages=`` existed."""

    def sync_turn(  # type: ignore[override]
        self, user_content: str, assistant_content: str, *, session_id: str = ""
    ) -> None:
        self._note("sync_turn", user_content, assistant_content, session_id)


class Wedge(Journal):
    """Blocks inside sync_turn until released (a provider stuck on the network)."""

    def __init__(self, name: str, journal: list[tuple[Any, ...]]) -> None:
        super().__init__(name, journal)
        self.entered = threading.Event()
        self.release = threading.Event()
        self.worker: threading.Thread | None = None

    def sync_turn(self, *args: Any, **kwargs: Any) -> None:
        self.worker = threading.current_thread()
        self.entered.set()
        self.release.wait(WAIT)
        super().sync_turn(*args, **kwargs)


def pair(**options: Any) -> tuple[MemoryManager, list[tuple[Any, ...]]]:
    journal: list[tuple[Any, ...]] = []
    manager = MemoryManager(**options)
    manager.add_provider(Journal("builtin", journal))
    manager.add_provider(Journal("ext", journal))
    return manager, journal


def test_queued_prefetch_and_sync_reach_every_provider_after_flush() -> None:
    manager, journal = pair()
    manager.queue_prefetch_all("next turn")
    manager.sync_all("user msg", "assistant msg")
    assert manager.flush_pending(timeout=5) is True
    assert journal == [
        ("builtin", "queue_prefetch", "next turn", "none"),
        ("ext", "queue_prefetch", "next turn", "none"),
        ("builtin", "sync_turn", "user msg", "assistant msg", "", None),
        ("ext", "sync_turn", "user msg", "assistant msg", "", None),
    ]
    manager.shutdown_all()


def test_messages_reach_only_providers_that_accept_them() -> None:
    journal: list[tuple[Any, ...]] = []
    manager = MemoryManager()
    manager.add_provider(Legacy("builtin", journal))
    manager.add_provider(Journal("ext", journal))
    transcript = [{"role": "user", "content": "user msg"}]
    manager.sync_all("user msg", "assistant msg", session_id="sess-1", messages=transcript)
    transcript.append({"role": "assistant", "content": "appended after the call"})
    assert manager.flush_pending(5)
    assert journal == [
        ("builtin", "sync_turn", "user msg", "assistant msg", "sess-1"),
        (
            "ext",
            "sync_turn",
            "user msg",
            "assistant msg",
            "sess-1",
            [{"role": "user", "content": "user msg"}],
        ),
    ]
    manager.shutdown_all()


def test_a_failing_sync_is_logged_and_the_others_still_sync(
    caplog: pytest.LogCaptureFixture,
) -> None:
    journal: list[tuple[Any, ...]] = []

    class Broken(Journal):
        def sync_turn(self, *args: Any, **kwargs: Any) -> None:
            raise OSError("disk full")

    manager = MemoryManager()
    manager.add_provider(Broken("builtin", journal))
    manager.add_provider(Journal("ext", journal))
    with caplog.at_level(logging.WARNING, logger="hermes_core.manager"):
        manager.sync_all("u", "a")
        assert manager.flush_pending(5)
    assert journal == [("ext", "sync_turn", "u", "a", "", None)]
    assert any("'builtin' sync_turn: disk full" in r.getMessage() for r in caplog.records)
    manager.shutdown_all()


def test_turn_text_is_redacted_before_providers_archive_it() -> None:
    manager, journal = pair()
    key = "ghp_" + "A1b2C3d4" * 5
    manager.sync_all(
        f"my token is {key}", "noted", messages=[{"role": "user", "content": f"{key}"}]
    )
    assert manager.flush_pending(5)
    assert key not in repr(journal)
    assert journal[1] == (
        "ext",
        "sync_turn",
        "my token is [redacted]",
        "noted",
        "",
        [{"role": "user", "content": "[redacted]"}],
    )
    manager.shutdown_all()


def test_empty_user_text_or_no_providers_submits_nothing() -> None:
    manager, journal = pair()
    manager.sync_all("", "assistant only")
    manager.queue_prefetch_all("")
    assert manager.flush_pending(0.01) is True  # no worker was ever started
    assert journal == []
    empty = MemoryManager()
    empty.sync_all("u", "a")
    assert empty.commit_session_boundary_async([], new_session_id="s2") is False
    assert empty.flush_pending(0.01) is True


def test_background_work_runs_on_daemon_threads_in_submission_order() -> None:
    manager, journal = pair()
    for turn in range(20):
        manager.sync_all(f"u{turn}", "a")
        manager.queue_prefetch_all(f"q{turn}")
    assert manager.flush_pending(5)
    ext_calls = [entry[2] for entry in journal if entry[0] == "ext"]
    assert ext_calls == [text for turn in range(20) for text in (f"u{turn}", f"q{turn}")]
    builtin, ext = manager.providers
    # the builtin's work runs on the worker; the external's warm-ups on its own thread
    (worker,) = builtin.threads  # type: ignore[attr-defined]
    assert len(ext.threads) == 2  # type: ignore[attr-defined]
    assert worker in ext.threads  # type: ignore[attr-defined]
    for thread in ext.threads:  # type: ignore[attr-defined]
        assert thread.daemon and thread is not threading.current_thread()
    manager.shutdown_all()


class StuckWarmUp(Journal):
    """Its queue_prefetch hangs until released (a warm-up stuck on the network)."""

    def __init__(self, name: str, journal: list[tuple[Any, ...]]) -> None:
        super().__init__(name, journal)
        self.entered = threading.Event()
        self.release = threading.Event()

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        self.entered.set()
        self.release.wait(WAIT)
        super().queue_prefetch(query, session_id=session_id)


def test_a_hung_warm_up_does_not_hold_the_turns_behind_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    journal: list[tuple[Any, ...]] = []
    stuck = StuckWarmUp("ext", journal)
    manager = MemoryManager(external_prefetch_timeout=0.2)
    manager.add_provider(Journal("builtin", journal))
    manager.add_provider(stuck)
    with caplog.at_level(logging.WARNING, logger="hermes_core.manager"):
        manager.queue_prefetch_all("q1")
        manager.sync_all("u1", "a1")
        manager.queue_prefetch_all("q2")  # skipped: the first warm-up is still running
        manager.sync_all("u2", "a2")
        assert manager.flush_pending(WAIT)
    assert stuck.entered.is_set()
    assert [entry[1:3] for entry in journal if entry[0] == "ext"] == [
        ("sync_turn", "u1"),
        ("sync_turn", "u2"),
    ]
    assert [entry[2] for entry in journal if entry[0] == "builtin"] == ["q1", "u1", "q2", "u2"]
    assert manager.stuck_prefetches == ["ext"]
    assert any(
        "queue_prefetch did not return within 0.2s" in r.getMessage() for r in caplog.records
    )
    stuck.release.set()
    deadline = time.monotonic() + WAIT
    while manager.stuck_prefetches and time.monotonic() < deadline:
        time.sleep(0.005)
    assert manager.stuck_prefetches == []
    manager.queue_prefetch_all("q3")  # warm-ups resume once the stuck one returned
    assert manager.flush_pending(WAIT)
    assert [entry[2] for entry in journal if entry[:2] == ("ext", "queue_prefetch")] == ["q1", "q3"]
    manager.shutdown_all()


def test_background_tasks_run_under_the_callers_context() -> None:
    manager, journal = pair()
    token = TENANT.set("acme")
    try:
        manager.queue_prefetch_all("q")
    finally:
        TENANT.reset(token)
    manager.queue_prefetch_all("q")
    assert manager.flush_pending(5)
    assert [entry[3] for entry in journal if entry[0] == "ext"] == ["acme", "none"]
    manager.shutdown_all()


def test_flush_pending_reports_a_wedged_worker_then_recovers() -> None:
    journal: list[tuple[Any, ...]] = []
    wedge = Wedge("ext", journal)
    manager = MemoryManager()
    manager.add_provider(wedge)
    manager.sync_all("u", "a")
    assert wedge.entered.wait(WAIT)
    assert manager.flush_pending(0.1) is False
    wedge.release.set()
    assert manager.flush_pending(WAIT) is True
    assert journal == [("ext", "sync_turn", "u", "a", "", None)]
    manager.shutdown_all()


def test_session_boundary_ends_then_switches_in_one_background_task() -> None:
    manager, journal = pair()
    transcript = [{"role": "user", "content": "old conversation"}]
    accepted = manager.commit_session_boundary_async(
        transcript, new_session_id="s2", parent_session_id="s1", reason="reset"
    )
    transcript.clear()  # the caller may reuse its list at once
    assert accepted is True
    assert manager.flush_pending(5)
    ended = [{"role": "user", "content": "old conversation"}]
    assert journal == [
        ("builtin", "on_session_end", ended),
        ("ext", "on_session_end", ended),
        ("builtin", "on_session_switch", "s2", "s1", True, {"reason": "reset"}),
        ("ext", "on_session_switch", "s2", "s1", True, {"reason": "reset"}),
    ]
    manager.shutdown_all()


def test_late_submissions_after_shutdown_are_rejected_and_never_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    manager, journal = pair()
    manager.shutdown_all()
    journal.clear()
    with caplog.at_level(logging.WARNING, logger="hermes_core.manager"):
        assert manager.commit_session_boundary_async([], new_session_id="s2") is False
        manager.sync_all("u", "a")
        manager.queue_prefetch_all("q")
    assert manager.flush_pending(0.01) is True
    assert journal == []
    messages = [r.getMessage() for r in caplog.records]
    assert messages == [
        "Memory manager is shutting down; rejecting late write task",
        "Memory manager is shutting down; rejecting late write task",
        "Memory manager is shutting down; rejecting late prefetch task",
    ]


def test_drain_state_when_nothing_was_ever_queued() -> None:
    manager, journal = pair()
    assert manager.shutdown_drain_state == {
        "status": "not_started",
        "abandoned_writes": 0,
        "abandoned_prefetches": 0,
        "active_tasks": 0,
    }
    manager.shutdown_all()
    assert manager.shutdown_drain_state == {
        "status": "drained",
        "abandoned_writes": 0,
        "abandoned_prefetches": 0,
        "active_tasks": 0,
    }
    assert journal == [("ext", "shutdown"), ("builtin", "shutdown")]


def test_drain_finishes_queued_work_before_providers_shut_down() -> None:
    manager, journal = pair()
    manager.sync_all("u", "a")
    manager.shutdown_all()
    assert manager.shutdown_drain_state["status"] == "drained"
    assert [entry[1] for entry in journal] == ["sync_turn", "sync_turn", "shutdown", "shutdown"]


def test_drain_times_out_counts_abandoned_work_and_still_shuts_down(
    caplog: pytest.LogCaptureFixture,
) -> None:
    journal: list[tuple[Any, ...]] = []
    wedge = Wedge("ext", journal)
    manager = MemoryManager(drain_timeout=0.05)
    manager.add_provider(Journal("builtin", journal))
    manager.add_provider(wedge)
    manager.sync_all("running", "a")
    assert wedge.entered.wait(WAIT)
    manager.sync_all("queued", "a")
    manager.queue_prefetch_all("queued prefetch")
    with caplog.at_level(logging.WARNING, logger="hermes_core.manager"):
        manager.shutdown_all()
    assert manager.shutdown_drain_state == {
        "status": "timed_out",
        "abandoned_writes": 1,
        "abandoned_prefetches": 1,
        "active_tasks": 1,
    }
    assert any("abandoned 1 write(s) and 1 prefetch(es)" in r.getMessage() for r in caplog.records)
    assert ("ext", "shutdown") in journal and ("builtin", "shutdown") in journal

    wedge.release.set()
    assert wedge.worker is not None
    wedge.worker.join(WAIT)  # finishes the running task, skips the cancelled ones, exits
    assert not wedge.worker.is_alive()
    # The running task completed; the cancelled ones never ran.
    texts = [entry[2] for entry in journal if entry[1] in ("sync_turn", "queue_prefetch")]
    assert texts == ["running", "running"]


def test_shutdown_twice_shuts_providers_down_once() -> None:
    manager, journal = pair()
    manager.shutdown_all()
    manager.shutdown_all()
    assert journal == [("ext", "shutdown"), ("builtin", "shutdown")]


def test_drain_timeout_cannot_be_negative() -> None:
    with pytest.raises(ValueError, match="drain_timeout"):
        MemoryManager(drain_timeout=-1)


def test_an_abandoned_manager_does_not_leave_threads_behind() -> None:
    class Recall(Journal):
        def prefetch(self, query: str, *, session_id: str = "") -> str:
            self._note("prefetch", query)
            return "recalled"

    journal: list[tuple[Any, ...]] = []
    external = Recall("ext", journal)
    manager = MemoryManager()
    manager.add_provider(external)
    assert manager.prefetch_all("q") == "recalled"
    manager.sync_all("u", "a")
    assert manager.flush_pending(WAIT)
    threads = set(external.threads)
    assert {t.name for t in threads} == {"memory-prefetch-ext", "memory-sync"}

    del manager  # never shut down
    gc.collect()
    for thread in threads:
        thread.join(WAIT)
        assert not thread.is_alive(), thread.name


def test_a_two_argument_sync_turn_still_receives_turns() -> None:
    journal: list[tuple[Any, ...]] = []

    class Oldest(Journal):
        def sync_turn(self, user_content: str, assistant_content: str) -> None:  # type: ignore[override]
            self._note("sync_turn", user_content, assistant_content)

    manager = MemoryManager()
    manager.add_provider(Oldest("ext", journal))
    manager.sync_all("u", "a", session_id="s1", messages=[])
    assert manager.flush_pending(WAIT)
    assert journal == [("ext", "sync_turn", "u", "a")]
    manager.shutdown_all()


class Gated(Journal):
    """A sync_turn slow enough that a session boundary would overtake it.

    It waits (at most ``GATE`` seconds) for a boundary hook; a manager that let
    the boundary overtake the queued sync would record the boundary first.
    """

    GATE = 0.5

    def __init__(self, name: str, journal: list[tuple[Any, ...]]) -> None:
        super().__init__(name, journal)
        self.boundary = threading.Event()

    def sync_turn(self, *args: Any, **kwargs: Any) -> None:
        self.boundary.wait(self.GATE)
        super().sync_turn(*args, **kwargs)

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        self.boundary.set()
        super().on_session_end(messages)

    def on_session_switch(self, new_session_id: str, **kwargs: Any) -> None:
        self.boundary.set()
        super().on_session_switch(new_session_id, **kwargs)

    def on_pre_compress(self, messages: list[dict[str, Any]]) -> str:
        self.boundary.set()
        self._note("on_pre_compress", messages)
        return ""


@pytest.mark.parametrize(
    ("hook", "call"),
    [
        ("on_session_end", lambda m: m.on_session_end([{"role": "user", "content": "u"}])),
        ("on_pre_compress", lambda m: m.on_pre_compress([{"role": "user", "content": "u"}])),
        ("on_session_switch", lambda m: m.on_session_switch("next", parent_session_id="s1")),
    ],
)
def test_a_session_boundary_never_overtakes_the_last_queued_sync(hook: str, call: Any) -> None:
    journal: list[tuple[Any, ...]] = []
    manager = MemoryManager()
    manager.add_provider(Gated("ext", journal))
    manager.sync_all("last words", "answer", session_id="s1")
    call(manager)
    assert [entry[1] for entry in journal] == ["sync_turn", hook]
    manager.shutdown_all()


def test_a_boundary_waits_for_a_wedged_sync_at_most_the_drain_timeout(
    caplog: pytest.LogCaptureFixture,
) -> None:
    journal: list[tuple[Any, ...]] = []
    wedge = Wedge("ext", journal)
    manager = MemoryManager(drain_timeout=0.2)
    manager.add_provider(wedge)
    manager.sync_all("u", "a")
    assert wedge.entered.wait(WAIT)
    with caplog.at_level(logging.WARNING, logger="hermes_core.manager"):
        manager.on_session_end([])
    assert [entry[1] for entry in journal] == ["on_session_end"]
    assert "on_session_end goes ahead without waiting" in caplog.text
    wedge.release.set()
    manager.shutdown_all()


def test_a_manager_abandoned_right_after_a_sync_does_not_leave_threads_behind() -> None:
    journal: list[tuple[Any, ...]] = []
    external = Journal("ext", journal)
    manager = MemoryManager()
    manager.add_provider(external)
    manager.sync_all("u", "a")  # the worker's last task is a closure over the manager
    worker = manager._background.worker
    assert worker is not None
    assert worker.drain(WAIT) == (True, [], 0)
    (thread,) = external.threads

    del manager, worker
    gc.collect()
    thread.join(WAIT)
    assert not thread.is_alive()


_EXIT_WITH_QUEUED_SYNC = """
import sys, threading, time
from pathlib import Path
from hermes_core import MemoryManager, MemoryProvider

class LateWriter(MemoryProvider):
    name = "late"
    def is_available(self): return True
    def initialize(self, session_id, **kwargs): pass
    def get_tool_schemas(self): return []
    def sync_turn(self, user_content, assistant_content, **kwargs):
        # Runs on only once the main thread has finished: at interpreter exit.
        deadline = time.monotonic() + 30
        while threading.main_thread().is_alive() and time.monotonic() < deadline:
            time.sleep(0.01)
        if sys.argv[2] == "hang":
            threading.Event().wait()
        Path(sys.argv[1]).write_text(user_content)

manager = MemoryManager(drain_timeout=float(sys.argv[3]))
manager.add_provider(LateWriter())
manager.sync_all("the last turn", "answer")
"""


def test_work_queued_at_interpreter_exit_still_runs(tmp_path: Path) -> None:
    out = tmp_path / "synced.txt"
    done = subprocess.run(
        [sys.executable, "-c", _EXIT_WITH_QUEUED_SYNC, str(out), "write", "30"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert out.read_text() == "the last turn"


def test_a_hung_provider_cannot_hold_interpreter_exit(tmp_path: Path) -> None:
    out = tmp_path / "synced.txt"
    done = subprocess.run(
        [sys.executable, "-c", _EXIT_WITH_QUEUED_SYNC, str(out), "hang", "0.3"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert not out.exists()
    assert "still queued at exit" in done.stderr
