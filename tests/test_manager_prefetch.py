"""External prefetch: bounded by a timeout, skipped while stuck, late results discarded."""

from __future__ import annotations

import contextvars
import logging
import threading
import time
from typing import Any

import pytest

from hermes_core import MemoryManager, MemoryProvider
from hermes_core.manager import DEFAULT_PREFETCH_TIMEOUT

WAIT = 10.0  # generous bound for events that must happen
REQUEST_ID: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="unset")


class Simple(MemoryProvider):
    def __init__(self, name: str, recall: str = "") -> None:
        self._name = name
        self.recall = recall
        self.queries: list[str] = []
        self.threads: list[threading.Thread] = []
        self.request_ids: list[str] = []

    @property
    def name(self) -> str:
        return self._name

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        pass

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return []

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        self.queries.append(query)
        self.threads.append(threading.current_thread())
        self.request_ids.append(REQUEST_ID.get())
        return self.recall


class Blocking(Simple):
    """Blocks inside its first prefetch until released."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.started = threading.Event()
        self.release = threading.Event()
        self.returned = threading.Event()

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        self.queries.append(query)
        if len(self.queries) == 1:
            self.started.set()
            self.release.wait(WAIT)
            self.returned.set()
            return "late external memory (must be discarded)"
        return "late external memory"


def wait_until_unstuck(manager: MemoryManager) -> None:
    deadline = time.monotonic() + WAIT
    while manager.stuck_prefetches and time.monotonic() < deadline:
        time.sleep(0.005)
    assert manager.stuck_prefetches == []


def test_timeout_must_be_positive() -> None:
    for bad in (0, -1, -0.5):
        with pytest.raises(ValueError, match="external_prefetch_timeout must be positive"):
            MemoryManager(external_prefetch_timeout=bad)
    assert MemoryManager().external_prefetch_timeout == DEFAULT_PREFETCH_TIMEOUT == 8.0
    assert MemoryManager(external_prefetch_timeout=0.5).external_prefetch_timeout == 0.5


def test_a_stuck_external_is_skipped_until_it_returns(caplog: pytest.LogCaptureFixture) -> None:
    builtin = Simple("builtin", "builtin memory")
    external = Blocking("hy-memory")
    # Long enough that the healthy third call never times out on a loaded machine.
    manager = MemoryManager(external_prefetch_timeout=0.5)
    manager.add_provider(builtin)
    manager.add_provider(external)

    with caplog.at_level(logging.WARNING, logger="hermes_core.manager"):
        assert manager.prefetch_all("query") == "builtin memory"
    assert external.started.wait(WAIT)
    assert any("timed out after 0.5s" in r.getMessage() for r in caplog.records)
    assert manager.stuck_prefetches == ["hy-memory"]

    # Still stuck: the provider is not called again and the turn goes on without it.
    assert manager.prefetch_all("query 2") == "builtin memory"
    assert external.queries == ["query"]

    external.release.set()
    assert external.returned.wait(WAIT)
    wait_until_unstuck(manager)

    # The late result of the stuck call was discarded, never served.
    assert manager.prefetch_all("query 3") == "builtin memory\n\nlate external memory"
    assert external.queries == ["query", "query 3"]
    assert builtin.queries == ["query", "query 2", "query 3"]
    manager.shutdown_all()


def test_external_prefetch_runs_on_its_own_daemon_thread_builtin_inline() -> None:
    builtin = Simple("builtin", "b")
    external = Simple("ext", "e")
    manager = MemoryManager()
    manager.add_provider(builtin)
    manager.add_provider(external)
    assert manager.prefetch_all("q") == "b\n\ne"
    assert manager.prefetch_all("q2") == "b\n\ne"
    assert builtin.threads == [threading.current_thread()] * 2
    lane = external.threads[0]
    assert lane.name == "memory-prefetch-ext" and lane.daemon
    assert external.threads == [lane, lane]  # one long-lived thread, not one per turn
    manager.shutdown_all()
    lane.join(WAIT)
    assert not lane.is_alive()


def test_failing_external_prefetch_is_isolated_and_not_left_stuck(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Failing(Simple):
        def prefetch(self, query: str, *, session_id: str = "") -> str:
            super().prefetch(query, session_id=session_id)
            raise ConnectionError("service down")

    external = Failing("ext")
    manager = MemoryManager()
    manager.add_provider(Simple("builtin", "b"))
    manager.add_provider(external)
    with caplog.at_level(logging.DEBUG, logger="hermes_core.manager"):
        assert manager.prefetch_all("one") == "b"
        assert manager.prefetch_all("two") == "b"
    assert external.queries == ["one", "two"]
    assert manager.stuck_prefetches == []
    failures = [r for r in caplog.records if "service down" in r.getMessage()]
    assert {r.levelname for r in failures} == {"WARNING"}
    manager.shutdown_all()


def test_none_and_non_string_results_are_tolerated() -> None:
    class Odd(Simple):
        def prefetch(self, query: str, *, session_id: str = "") -> Any:
            return None if query == "none" else 42

    manager = MemoryManager()
    manager.add_provider(Odd("ext"))
    assert manager.prefetch_all("none") == ""
    assert manager.prefetch_all("number") == "42"
    manager.shutdown_all()


def test_external_prefetch_sees_the_callers_context_variables() -> None:
    external = Simple("ext", "e")
    manager = MemoryManager()
    manager.add_provider(external)
    token = REQUEST_ID.set("req-1")
    try:
        manager.prefetch_all("q")
    finally:
        REQUEST_ID.reset(token)
    manager.prefetch_all("q")
    assert external.request_ids == ["req-1", "unset"]
    manager.shutdown_all()


def test_prefetch_after_shutdown_still_answers() -> None:
    external = Simple("ext", "e")
    manager = MemoryManager()
    manager.add_provider(external)
    manager.shutdown_all()
    assert manager.prefetch_all("q") == "e"
