"""A small thread-safe circuit breaker with an injectable clock.

Nothing here knows about Honcho: wrap any unreliable call with
:meth:`CircuitBreaker.allow` / :meth:`record_success` / :meth:`record_failure`,
or let :meth:`CircuitBreaker.call` do the bookkeeping.

States: *closed* (calls flow; consecutive failures are counted), *open* (after
``failure_threshold`` consecutive failures; calls are refused until
``reset_timeout`` seconds have passed on ``clock``), *half-open* (one trial call
is let through; its success closes the breaker, its failure opens it again).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from enum import StrEnum
from typing import TypeVar

from hermes_core.errors import ProviderError

__all__ = ["BreakerState", "CircuitBreaker", "CircuitOpenError"]

T = TypeVar("T")


class BreakerState(StrEnum):
    """Where a :class:`CircuitBreaker` stands."""

    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half_open"


class CircuitOpenError(ProviderError):
    """A call was refused because the circuit is open."""

    def __init__(self, name: str, retry_in: float) -> None:
        self.retry_in = max(0.0, retry_in)
        super().__init__(
            f"{name} is unreachable after repeated failures; calls are paused for "
            f"another {self.retry_in:.0f}s before the next attempt."
        )


class CircuitBreaker:
    """Refuse calls for a while after ``failure_threshold`` consecutive failures."""

    def __init__(
        self,
        name: str,
        *,
        failure_threshold: int = 5,
        reset_timeout: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if failure_threshold < 1:
            raise ValueError("failure_threshold must be at least 1")
        if reset_timeout < 0:
            raise ValueError("reset_timeout must not be negative")
        self.name = name
        self.failure_threshold = failure_threshold
        self.reset_timeout = reset_timeout
        self._clock = clock
        self._lock = threading.Lock()
        self._failures = 0
        self._opened_at: float | None = None
        self._trial_in_flight = False

    @property
    def state(self) -> BreakerState:
        """The current state (an open breaker past its timeout reports half-open)."""
        with self._lock:
            return self._state_locked()

    @property
    def consecutive_failures(self) -> int:
        """Failures recorded since the last success."""
        with self._lock:
            return self._failures

    def _state_locked(self) -> BreakerState:
        if self._opened_at is None:
            return BreakerState.CLOSED
        if self._clock() - self._opened_at >= self.reset_timeout:
            return BreakerState.HALF_OPEN
        return BreakerState.OPEN

    def retry_in(self) -> float:
        """Seconds until an open breaker lets a trial call through (0 otherwise)."""
        with self._lock:
            if self._opened_at is None:
                return 0.0
            return max(0.0, self.reset_timeout - (self._clock() - self._opened_at))

    def allow(self) -> bool:
        """Whether a call may go out now; in half-open state only one trial at a time."""
        with self._lock:
            state = self._state_locked()
            if state is BreakerState.CLOSED:
                return True
            if state is BreakerState.HALF_OPEN and not self._trial_in_flight:
                self._trial_in_flight = True
                return True
            return False

    def record_success(self) -> None:
        """A call succeeded: close the breaker and forget earlier failures."""
        with self._lock:
            self._failures = 0
            self._opened_at = None
            self._trial_in_flight = False

    def record_failure(self) -> None:
        """A call failed: open the breaker at the threshold, or re-open after a failed trial."""
        with self._lock:
            self._failures += 1
            if self._trial_in_flight or self._failures >= self.failure_threshold:
                self._opened_at = self._clock()
            self._trial_in_flight = False

    def call(
        self,
        fn: Callable[[], T],
        *,
        is_failure: Callable[[BaseException], bool] = lambda exc: True,
    ) -> T:
        """Run *fn* through the breaker; raise :class:`CircuitOpenError` when refused.

        An exception for which *is_failure* is False (a client-side error, say)
        shows the service answered: it counts as a success and is re-raised.
        """
        if not self.allow():
            raise CircuitOpenError(self.name, self.retry_in())
        try:
            result = fn()
        except BaseException as exc:
            if is_failure(exc):
                self.record_failure()
            else:
                self.record_success()
            raise
        self.record_success()
        return result
