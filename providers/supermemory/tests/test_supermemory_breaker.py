"""The circuit breaker, driven by a fake clock."""

from __future__ import annotations

import threading

import pytest
from hermes_memory_supermemory.breaker import CLOSED, HALF_OPEN, OPEN, CircuitBreaker
from hypothesis import given
from hypothesis import strategies as st


def test_opens_after_threshold_consecutive_failures(clock) -> None:
    breaker = CircuitBreaker(3, 10.0, clock=clock)
    for _ in range(2):
        breaker.record_failure()
        assert breaker.allow()
    breaker.record_failure()
    assert breaker.state == OPEN
    assert not breaker.allow()
    assert breaker.seconds_until_retry() == pytest.approx(10.0)


def test_a_success_resets_the_count(clock) -> None:
    breaker = CircuitBreaker(2, 10.0, clock=clock)
    breaker.record_failure()
    breaker.record_success()
    breaker.record_failure()
    assert breaker.state == CLOSED


def test_half_open_lets_exactly_one_trial_through(clock) -> None:
    breaker = CircuitBreaker(1, 10.0, clock=clock)
    breaker.record_failure()
    clock.advance(10)
    assert breaker.state == HALF_OPEN
    results = []
    threads = [threading.Thread(target=lambda: results.append(breaker.allow())) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results.count(True) == 1


def test_trial_success_closes_and_trial_failure_reopens(clock) -> None:
    breaker = CircuitBreaker(1, 10.0, clock=clock)
    breaker.record_failure()
    clock.advance(10)
    assert breaker.allow()
    breaker.record_failure()
    assert breaker.state == OPEN
    clock.advance(10)
    assert breaker.allow()
    breaker.record_success()
    assert breaker.state == CLOSED
    assert breaker.allow()


def test_rejects_nonsense_settings() -> None:
    with pytest.raises(ValueError):
        CircuitBreaker(0, 1.0)
    with pytest.raises(ValueError):
        CircuitBreaker(1, 0)


@given(st.lists(st.sampled_from(["fail", "ok", "tick"]), max_size=60))
def test_never_allows_a_call_while_open(events: list[str]) -> None:
    now = [0.0]
    breaker = CircuitBreaker(3, 5.0, clock=lambda: now[0])
    for event in events:
        if event == "tick":
            now[0] += 2.0
        elif breaker.allow():
            (breaker.record_failure if event == "fail" else breaker.record_success)()
        if breaker.state == OPEN:
            assert not breaker.allow()
