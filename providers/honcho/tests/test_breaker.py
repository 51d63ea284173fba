"""The circuit breaker: opens after N consecutive failures, half-opens on the clock."""

from __future__ import annotations

import pytest
from hermes_memory_honcho import BreakerState, CircuitBreaker, CircuitOpenError
from honcho_test_support import ManualClock
from hypothesis import given
from hypothesis import strategies as st


def boom() -> None:
    raise OSError("down")


def test_opens_after_threshold_consecutive_failures() -> None:
    clock = ManualClock()
    breaker = CircuitBreaker("svc", failure_threshold=3, reset_timeout=30, clock=clock)
    for _ in range(2):
        with pytest.raises(OSError):
            breaker.call(boom)
    assert breaker.state is BreakerState.CLOSED
    with pytest.raises(OSError):
        breaker.call(boom)
    assert breaker.state is BreakerState.OPEN
    with pytest.raises(CircuitOpenError, match=r"svc is unreachable.*30s"):
        breaker.call(lambda: "never runs")


def test_success_resets_the_failure_count() -> None:
    breaker = CircuitBreaker("svc", failure_threshold=2, clock=ManualClock())
    with pytest.raises(OSError):
        breaker.call(boom)
    assert breaker.call(lambda: 42) == 42
    with pytest.raises(OSError):
        breaker.call(boom)
    assert breaker.state is BreakerState.CLOSED
    assert breaker.consecutive_failures == 1


def test_half_open_lets_one_trial_through_and_closes_on_success() -> None:
    clock = ManualClock()
    breaker = CircuitBreaker("svc", failure_threshold=1, reset_timeout=10, clock=clock)
    with pytest.raises(OSError):
        breaker.call(boom)
    clock.advance(9.9)
    assert not breaker.allow()
    assert breaker.retry_in() == pytest.approx(0.1)
    clock.advance(0.1)
    assert breaker.state is BreakerState.HALF_OPEN
    assert breaker.allow()
    assert not breaker.allow(), "only one trial call at a time"
    breaker.record_success()
    assert breaker.state is BreakerState.CLOSED
    assert breaker.allow()


def test_failed_trial_reopens_for_a_full_timeout() -> None:
    clock = ManualClock()
    breaker = CircuitBreaker("svc", failure_threshold=5, reset_timeout=10, clock=clock)
    for _ in range(5):
        breaker.record_failure()
    clock.advance(10)
    with pytest.raises(OSError):
        breaker.call(boom)
    assert breaker.state is BreakerState.OPEN
    clock.advance(9)
    assert not breaker.allow()
    clock.advance(1)
    assert breaker.allow()


def test_non_failures_count_as_the_service_answering() -> None:
    breaker = CircuitBreaker("svc", failure_threshold=1, clock=ManualClock())
    with pytest.raises(KeyError):
        breaker.call(lambda: {"a": 1}["x"], is_failure=lambda exc: not isinstance(exc, KeyError))
    assert breaker.state is BreakerState.CLOSED


@pytest.mark.parametrize(("threshold", "timeout"), [(0, 1.0), (1, -1.0)])
def test_rejects_nonsense_settings(threshold: int, timeout: float) -> None:
    with pytest.raises(ValueError):
        CircuitBreaker("svc", failure_threshold=threshold, reset_timeout=timeout)


@given(
    threshold=st.integers(1, 5),
    events=st.lists(st.sampled_from(["ok", "fail", "tick"]), max_size=40),
)
def test_never_allows_a_call_while_open(threshold: int, events: list[str]) -> None:
    """Model check: the breaker refuses exactly while open and not yet timed out."""
    clock = ManualClock()
    breaker = CircuitBreaker("svc", failure_threshold=threshold, reset_timeout=5, clock=clock)
    streak, opened_at = 0, None
    for event in events:
        if event == "tick":
            clock.advance(2)
            continue
        expected = opened_at is None or clock.now - opened_at >= 5
        assert breaker.allow() is expected
        if not expected:
            continue
        if event == "ok":
            breaker.record_success()
            streak, opened_at = 0, None
        else:
            breaker.record_failure()
            streak += 1
            if opened_at is not None or streak >= threshold:
                opened_at = clock.now
