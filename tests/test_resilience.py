"""The circuit breaker and the retry policy providers wrap their network calls in."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from hermes_core.errors import CircuitOpenError, ProviderError
from hermes_core.resilience import BreakerState, CircuitBreaker, retry_policy


class Clock:
    """A monotonic clock that moves only when told to."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def boom() -> None:
    raise OSError("down")


# -- circuit breaker: examples ------------------------------------------------------------


def test_opens_after_threshold_consecutive_failures_and_refuses_with_a_clear_error() -> None:
    breaker = CircuitBreaker("svc", threshold=3, cooldown=30, clock=Clock())
    for _ in range(2):
        with pytest.raises(OSError):
            breaker.call(boom)
    assert breaker.state is BreakerState.CLOSED
    with pytest.raises(OSError):
        breaker.call(boom)
    assert breaker.state is BreakerState.OPEN
    ran = []
    with pytest.raises(CircuitOpenError, match=r"svc is unreachable after 3 .*30s") as caught:
        breaker.call(lambda: ran.append(1))
    assert ran == [], "a refused call is not attempted"
    assert isinstance(caught.value, ProviderError)
    assert (caught.value.service, caught.value.retry_after) == ("svc", 30.0)


def test_a_success_resets_the_failure_count() -> None:
    breaker = CircuitBreaker("svc", threshold=2, clock=Clock())
    with pytest.raises(OSError):
        breaker.call(boom)
    assert breaker.call(lambda: 42) == 42
    with pytest.raises(OSError):
        breaker.call(boom)
    assert breaker.state is BreakerState.CLOSED
    assert breaker.consecutive_failures == 1


def test_half_open_lets_one_trial_through_and_its_success_closes() -> None:
    clock = Clock()
    breaker = CircuitBreaker("svc", threshold=1, cooldown=10, clock=clock)
    breaker.record_failure()
    clock.advance(9.9)
    assert not breaker.allow()
    assert breaker.retry_after() == pytest.approx(0.1)
    clock.advance(0.1)
    assert breaker.state is BreakerState.HALF_OPEN
    assert breaker.retry_after() == 0.0
    assert breaker.allow()
    assert not breaker.allow(), "only one trial call at a time"
    breaker.record_success()
    assert breaker.state is BreakerState.CLOSED
    assert breaker.consecutive_failures == 0
    assert breaker.allow()


def test_a_failed_trial_reopens_for_a_full_cooldown() -> None:
    clock = Clock()
    breaker = CircuitBreaker("svc", threshold=5, cooldown=10, clock=clock)
    for _ in range(5):
        breaker.record_failure()
    clock.advance(10)
    with pytest.raises(OSError):
        breaker.call(boom)
    assert breaker.state is BreakerState.OPEN
    assert breaker.retry_after() == pytest.approx(10)
    clock.advance(9)
    assert not breaker.allow()
    clock.advance(1)
    assert breaker.allow()


def test_zero_cooldown_still_allows_one_trial_at_a_time() -> None:
    breaker = CircuitBreaker("svc", threshold=1, cooldown=0, clock=Clock())
    breaker.record_failure()
    assert breaker.state is BreakerState.HALF_OPEN
    assert breaker.allow()
    assert not breaker.allow()


def test_answers_that_are_not_failures_count_as_the_service_answering() -> None:
    breaker = CircuitBreaker("svc", threshold=1, clock=Clock())
    with pytest.raises(KeyError):
        breaker.call(lambda: {"a": 1}["x"], is_failure=lambda exc: not isinstance(exc, KeyError))
    assert breaker.state is BreakerState.CLOSED
    assert breaker.consecutive_failures == 0


def test_state_values_are_plain_strings() -> None:
    assert [str(state) for state in BreakerState] == ["closed", "open", "half_open"]
    assert BreakerState.OPEN == "open"


@pytest.mark.parametrize(("threshold", "cooldown"), [(0, 1.0), (1, -1.0)])
def test_rejects_nonsense_settings(threshold: int, cooldown: float) -> None:
    with pytest.raises(ValueError, match=r"threshold|cooldown"):
        CircuitBreaker("svc", threshold=threshold, cooldown=cooldown)


def test_concurrent_callers_in_half_open_get_exactly_one_trial() -> None:
    clock = Clock()
    breaker = CircuitBreaker("svc", threshold=1, cooldown=10, clock=clock)
    breaker.record_failure()
    clock.advance(10)
    start = threading.Barrier(16)
    granted: list[bool] = []

    def ask() -> None:
        start.wait(timeout=10)
        granted.append(breaker.allow())

    threads = [threading.Thread(target=ask) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert granted.count(True) == 1 and len(granted) == 16


# -- circuit breaker: properties ----------------------------------------------------------


@given(threshold=st.integers(1, 6), outcomes=st.lists(st.booleans(), max_size=40))
def test_open_exactly_when_the_last_run_of_failures_reached_the_threshold(
    threshold: int, outcomes: list[bool]
) -> None:
    """With no time passing: open iff some run of consecutive failures since the last
    success reached the threshold; the count is the length of the current run."""
    breaker = CircuitBreaker("svc", threshold=threshold, cooldown=5, clock=Clock())
    streak = 0
    for ok in outcomes:
        (breaker.record_success if ok else breaker.record_failure)()
        streak = 0 if ok else streak + 1
    assert breaker.consecutive_failures == streak
    expected = BreakerState.OPEN if streak >= threshold else BreakerState.CLOSED
    assert breaker.state is expected


@given(
    threshold=st.integers(1, 4),
    events=st.lists(st.sampled_from(["fail", "tick", "tick", "ok"]), max_size=30),
)
def test_a_success_closes_the_breaker_from_any_state(threshold: int, events: list[str]) -> None:
    clock = Clock()
    breaker = CircuitBreaker("svc", threshold=threshold, cooldown=5, clock=clock)
    for event in events:
        if event == "tick":
            clock.advance(3)
        elif breaker.allow():
            (breaker.record_failure if event == "fail" else breaker.record_success)()
    breaker.record_success()
    assert breaker.state is BreakerState.CLOSED
    assert breaker.allow() and breaker.allow()


class BreakerModel(RuleBasedStateMachine):
    """Drive a breaker with calls that overlap in time, checked against a reference model.

    Calls are granted by ``allow`` and finish (succeed or fail) in any order, so
    several may be outstanding at once; the clock moves in steps around the cooldown.
    """

    COOLDOWN = 10.0

    def __init__(self) -> None:
        super().__init__()
        self.clock = Clock()
        self.threshold = 3
        self.breaker = CircuitBreaker(
            "svc", threshold=self.threshold, cooldown=self.COOLDOWN, clock=self.clock
        )
        self.outstanding = 0  # granted calls whose outcome is not recorded yet
        self.failures = 0
        self.opened_at: float | None = None
        self.trial = False  # a half-open trial was granted and no outcome recorded since

    def expected_state(self) -> BreakerState:
        if self.opened_at is None:
            return BreakerState.CLOSED
        if self.clock.now - self.opened_at >= self.COOLDOWN:
            return BreakerState.HALF_OPEN
        return BreakerState.OPEN

    @rule()
    def ask(self) -> None:
        state = self.expected_state()
        expected = state is BreakerState.CLOSED or (
            state is BreakerState.HALF_OPEN and not self.trial
        )
        assert self.breaker.allow() is expected
        if expected:
            self.outstanding += 1
            if state is BreakerState.HALF_OPEN:
                self.trial = True

    @precondition(lambda self: self.outstanding > 0)
    @rule()
    def succeed(self) -> None:
        self.breaker.record_success()
        self.outstanding -= 1
        self.failures, self.opened_at, self.trial = 0, None, False

    @precondition(lambda self: self.outstanding > 0)
    @rule()
    def fail(self) -> None:
        self.breaker.record_failure()
        self.outstanding -= 1
        self.failures += 1
        if self.trial or self.failures >= self.threshold:
            self.opened_at = self.clock.now
        self.trial = False

    @rule(seconds=st.sampled_from([0.5, 4.0, 9.99, 10.0, 25.0]))
    def tick(self, seconds: float) -> None:
        self.clock.advance(seconds)

    @invariant()
    def agrees_with_the_model(self) -> None:
        assert self.breaker.state is self.expected_state()
        assert self.breaker.consecutive_failures == self.failures
        if self.opened_at is None:
            assert self.breaker.retry_after() == 0.0
        else:
            remaining = max(0.0, self.COOLDOWN - (self.clock.now - self.opened_at))
            assert self.breaker.retry_after() == pytest.approx(remaining)

    @invariant()
    def never_more_than_one_trial_in_flight(self) -> None:
        if self.trial:  # a trial call is outstanding: nobody else gets through
            assert not self.breaker.allow()


BreakerModel.TestCase.settings = settings(max_examples=60, stateful_step_count=40, deadline=None)
test_breaker_model = BreakerModel.TestCase


# -- retry policy -------------------------------------------------------------------------


class Transient(Exception):
    pass


class Permanent(Exception):
    pass


def flaky(failures: list[BaseException], result: str = "ok") -> tuple[list[int], Callable[[], str]]:
    """A call that raises each of *failures* in turn, then returns *result*."""
    attempts: list[int] = []

    def call() -> str:
        attempts.append(len(attempts) + 1)
        if len(attempts) <= len(failures):
            raise failures[len(attempts) - 1]
        return result

    return attempts, call


def test_transient_errors_are_retried_until_success() -> None:
    sleeps: list[float] = []
    policy = retry_policy(
        retries=3, is_transient=lambda e: isinstance(e, Transient), sleep=sleeps.append
    )
    attempts, call = flaky([Transient(), Transient()])
    assert policy(call) == "ok"
    assert attempts == [1, 2, 3]
    assert len(sleeps) == 2


def test_attempts_are_bounded_and_the_last_error_is_re_raised() -> None:
    sleeps: list[float] = []
    policy = retry_policy(retries=2, is_transient=lambda e: True, sleep=sleeps.append)
    errors = [Transient("first"), Transient("second"), Transient("third"), Transient("never")]
    attempts, call = flaky(errors)
    with pytest.raises(Transient, match="third"):
        policy(call)
    assert attempts == [1, 2, 3]
    assert len(sleeps) == 2


def test_errors_that_are_not_transient_are_raised_at_once() -> None:
    sleeps: list[float] = []
    policy = retry_policy(
        retries=5, is_transient=lambda e: isinstance(e, Transient), sleep=sleeps.append
    )
    attempts, call = flaky([Permanent("bad request")])
    with pytest.raises(Permanent, match="bad request"):
        policy(call)
    assert attempts == [1]
    assert sleeps == []


class RateLimited(Transient):
    def __init__(self, wait: float) -> None:
        super().__init__(f"429, retry after {wait}")
        self.wait = wait


def test_a_retry_waits_what_a_429_asked_for_unless_it_asks_too_much() -> None:
    sleeps: list[float] = []
    policy = retry_policy(
        retries=3,
        is_transient=lambda e: isinstance(e, Transient),
        backoff=0.01,
        jitter=0,
        sleep=sleeps.append,
        retry_after=lambda e: e.wait if isinstance(e, RateLimited) else None,
        max_retry_after=5.0,
    )
    attempts, call = flaky([RateLimited(2.0)])
    assert policy(call) == "ok" and attempts == [1, 2]
    assert sleeps == [2.0]  # at least what the service asked for
    sleeps.clear()
    attempts, call = flaky([RateLimited(30.0)])
    with pytest.raises(RateLimited):
        policy(call)
    assert attempts == [1] and sleeps == []  # more than the caller can wait: at once


def test_max_delay_stops_retries_once_the_time_is_spent() -> None:
    policy = retry_policy(
        retries=100,
        is_transient=lambda e: True,
        backoff=0.05,
        max_backoff=0.05,
        jitter=0,
        max_delay=0.3,
    )
    attempts, call = flaky([Transient()] * 100)
    with pytest.raises(Transient):
        policy(call)
    assert 2 <= len(attempts) < 100  # real waits of 0.05 s: cut off near 0.3 s


def test_zero_retries_means_one_attempt() -> None:
    policy = retry_policy(retries=0, is_transient=lambda e: True, sleep=lambda _: None)
    attempts, call = flaky([Transient()])
    with pytest.raises(Transient):
        policy(call)
    assert attempts == [1]


@given(
    retries=st.integers(0, 6),
    backoff=st.floats(0, 4),
    max_backoff=st.floats(0, 10),
    jitter=st.floats(0, 2),
)
def test_waits_back_off_exponentially_up_to_the_cap_plus_jitter(
    retries: int, backoff: float, max_backoff: float, jitter: float
) -> None:
    sleeps: list[float] = []
    policy = retry_policy(
        retries=retries,
        is_transient=lambda e: True,
        backoff=backoff,
        max_backoff=max_backoff,
        jitter=jitter,
        sleep=sleeps.append,
    )
    _, call = flaky([Transient()] * (retries + 1))
    with pytest.raises(Transient):
        policy(call)
    assert len(sleeps) == retries
    for n, waited in enumerate(sleeps, start=1):
        base = min(backoff * 2 ** (n - 1), max_backoff)
        assert base - 1e-9 <= waited <= base + jitter + 1e-9


def test_jitter_defaults_to_half_the_backoff() -> None:
    sleeps: list[float] = []
    policy = retry_policy(retries=40, is_transient=lambda e: True, backoff=1.0, sleep=sleeps.append)
    _, call = flaky([Transient()] * 41)
    with pytest.raises(Transient):
        policy(call)
    first = sleeps[0]
    assert 1.0 <= first <= 1.5
    assert all(8.0 <= waited <= 8.5 for waited in sleeps[4:]), "capped at max_backoff=8"
    assert len({round(waited, 6) for waited in sleeps[4:]}) > 1, "jittered"


def test_one_policy_serves_concurrent_calls() -> None:
    policy = retry_policy(
        retries=2, is_transient=lambda e: isinstance(e, Transient), sleep=lambda _: None
    )
    results: list[str] = []

    def worker(index: int) -> None:
        _, call = flaky([Transient(), Transient()], result=f"r{index}")
        results.append(policy(call))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert sorted(results) == sorted(f"r{i}" for i in range(8))


@pytest.mark.parametrize(
    "kwargs", [{"retries": -1}, {"retries": 1, "backoff": -1.0}, {"retries": 1, "jitter": -0.1}]
)
def test_rejects_nonsense_retry_settings(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        retry_policy(is_transient=lambda e: True, **kwargs)  # type: ignore[arg-type]
