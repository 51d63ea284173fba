"""Guards for a provider's calls to a remote service: a circuit breaker and a retry policy.

:class:`CircuitBreaker` stops calling a service that keeps failing, so an
outage costs one fast refusal per call instead of a timeout, and probes it
with one trial call once a cooldown has passed. :func:`retry_policy` builds
the tenacity policy that retries one call on transient errors only, a bounded
number of times, with jittered exponential backoff. A provider usually wraps
the retried call in the breaker, so one logical operation counts once::

    breaker = CircuitBreaker("Acme", threshold=5, cooldown=60.0)
    retrying = retry_policy(retries=2, is_transient=is_transient)
    result = breaker.call(lambda: retrying(send), is_failure=is_service_failure)

Both take injectable time (``clock``, ``sleep``) so tests step time instead of
waiting.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from enum import StrEnum
from typing import TYPE_CHECKING, Any, TypeVar

from hermes_core.errors import CircuitOpenError

if TYPE_CHECKING:
    import tenacity

__all__ = ["BreakerState", "CircuitBreaker", "retry_policy"]

T = TypeVar("T")


class BreakerState(StrEnum):
    """Where a :class:`CircuitBreaker` stands."""

    CLOSED = "closed"
    """Calls go out; consecutive failures are counted."""
    OPEN = "open"
    """Calls are refused until the cooldown has passed."""
    HALF_OPEN = "half_open"
    """The cooldown has passed: one trial call at a time may go out."""


def _always(exc: BaseException) -> bool:
    return True


class CircuitBreaker:
    """Refuse calls for ``cooldown`` seconds after ``threshold`` consecutive failures.

    *closed*: calls go out and failures in a row are counted; a success resets
    the count. The ``threshold``-th failure in a row opens the breaker.
    *open*: :meth:`allow` is False until ``cooldown`` seconds have passed on
    *clock*. *half-open*: one trial call is let through at a time; recording
    its success closes the breaker, its failure opens it for another cooldown.

    Thread-safe. The breaker does not know which call an outcome belongs to:
    record exactly one outcome for every call :meth:`allow` let through, or use
    :meth:`call`, which does the bookkeeping.
    """

    def __init__(
        self,
        name: str,
        *,
        threshold: int = 5,
        cooldown: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if threshold < 1:
            raise ValueError(f"threshold must be at least 1, got {threshold!r}")
        if cooldown < 0:
            raise ValueError(f"cooldown must not be negative, got {cooldown!r}")
        self.name = name
        self.threshold = threshold
        self.cooldown = cooldown
        self._clock = clock
        self._lock = threading.Lock()
        self._failures = 0
        self._opened_at: float | None = None
        self._trial_in_flight = False

    def _state_locked(self) -> BreakerState:
        if self._opened_at is None:
            return BreakerState.CLOSED
        if self._clock() - self._opened_at >= self.cooldown:
            return BreakerState.HALF_OPEN
        return BreakerState.OPEN

    @property
    def state(self) -> BreakerState:
        """The current state (an open breaker whose cooldown has passed is half-open)."""
        with self._lock:
            return self._state_locked()

    @property
    def consecutive_failures(self) -> int:
        """Failures recorded since the last success."""
        with self._lock:
            return self._failures

    def retry_after(self) -> float:
        """Seconds until a trial call will be allowed; 0 when closed or half-open."""
        with self._lock:
            if self._opened_at is None:
                return 0.0
            return max(0.0, self.cooldown - (self._clock() - self._opened_at))

    def allow(self) -> bool:
        """Whether a call may go out now; when half-open, only one trial at a time."""
        with self._lock:
            state = self._state_locked()
            if state is BreakerState.CLOSED:
                return True
            if state is BreakerState.HALF_OPEN and not self._trial_in_flight:
                self._trial_in_flight = True
                return True
            return False

    def record_success(self) -> None:
        """A call succeeded: close the breaker and reset the failure count."""
        with self._lock:
            self._failures = 0
            self._opened_at = None
            self._trial_in_flight = False

    def record_failure(self) -> None:
        """A call failed: count it; open the breaker at the threshold or after a failed trial."""
        with self._lock:
            self._failures += 1
            if self._trial_in_flight or self._failures >= self.threshold:
                self._opened_at = self._clock()
            self._trial_in_flight = False

    def call(
        self, fn: Callable[[], T], *, is_failure: Callable[[BaseException], bool] = _always
    ) -> T:
        """Run *fn* through the breaker; raise :class:`CircuitOpenError` when refused.

        An exception for which *is_failure* is False (a 4xx answer, say) shows
        the service answered: it counts as a success and is re-raised.
        """
        if not self.allow():
            with self._lock:
                failures = self._failures
            raise CircuitOpenError(self.name, self.retry_after(), failures)
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


def retry_policy(
    *,
    retries: int,
    is_transient: Callable[[BaseException], bool],
    backoff: float = 0.5,
    max_backoff: float = 8.0,
    jitter: float | None = None,
    sleep: Callable[[float], None] = time.sleep,
    retry_after: Callable[[BaseException], float | None] | None = None,
    max_retry_after: float = 0.0,
    max_delay: float | None = None,
) -> tenacity.Retrying:
    """A tenacity policy for one network call: ``policy(fn)`` runs *fn* with retries.

    *fn* runs at most ``retries + 1`` times. It is retried only when it raised
    and ``is_transient(exc)`` is True (a timeout, a refused connection, a 429
    or 5xx: the caller knows its SDK's exception types); anything else, and
    the last failure, is re-raised as is. Before retry *n* (from 1) it waits
    ``min(backoff * 2 ** (n - 1), max_backoff)`` plus a random
    ``0..jitter`` seconds (*jitter* defaults to half of *backoff*), through
    *sleep*. *retry_after* reads the wait a failure asked for (a 429's
    ``Retry-After``): the retry waits at least that long, or the failure is
    re-raised at once when it asks for more than *max_retry_after* seconds.
    With *max_delay*, no retry starts after that many seconds. The policy can
    be shared by threads.
    """
    if retries < 0:
        raise ValueError(f"retries must not be negative, got {retries!r}")
    jitter = backoff / 2 if jitter is None else jitter
    if min(backoff, max_backoff, jitter) < 0:
        raise ValueError("backoff, max_backoff and jitter must not be negative")
    import tenacity  # imported when a policy is built, not when a provider module loads

    backoff_wait = tenacity.wait_exponential(
        multiplier=backoff, max=max_backoff
    ) + tenacity.wait_random(0, jitter)
    stop: Any = tenacity.stop_after_attempt(retries + 1)
    if max_delay is not None:
        stop |= tenacity.stop_after_delay(max_delay)

    def asked(state: tenacity.RetryCallState) -> float | None:
        failure = state.outcome.exception() if state.outcome else None
        return retry_after(failure) if retry_after and failure is not None else None

    def wait(state: tenacity.RetryCallState) -> float:
        return max(float(backoff_wait(state)), asked(state) or 0.0)

    def stop_or_too_long(state: tenacity.RetryCallState) -> bool:
        hint = asked(state)
        return bool(stop(state)) or (hint is not None and hint > max_retry_after)

    return tenacity.Retrying(
        stop=stop_or_too_long,
        wait=wait,
        retry=tenacity.retry_if_exception(is_transient),
        sleep=sleep,
        reraise=True,
    )
