"""A thread-safe circuit breaker with an injectable clock.

``closed``: calls pass; ``threshold`` consecutive failures open it.
``open``: calls are refused until ``cooldown`` seconds have passed, then one
trial call is let through (``half_open``); its success closes the breaker, its
failure opens it for another cooldown.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

CLOSED = "closed"
OPEN = "open"
HALF_OPEN = "half_open"


class CircuitBreaker:
    """Stops calling a failing service for a while, then probes it with one call."""

    def __init__(
        self,
        threshold: int = 5,
        cooldown: float = 60.0,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if threshold < 1:
            raise ValueError("threshold must be at least 1")
        if cooldown <= 0:
            raise ValueError("cooldown must be positive")
        self.threshold = threshold
        self.cooldown = cooldown
        self._clock = clock
        self._lock = threading.Lock()
        self._failures = 0
        self._opened_at: float | None = None
        self._trial_running = False

    @property
    def state(self) -> str:
        """``closed``, ``open`` or ``half_open`` (cooldown over, trial allowed or running)."""
        with self._lock:
            return self._state_locked()

    def _state_locked(self) -> str:
        if self._opened_at is None:
            return CLOSED
        if self._clock() - self._opened_at >= self.cooldown:
            return HALF_OPEN
        return OPEN

    def allow(self) -> bool:
        """Whether a call may go out now; in ``half_open`` only one trial at a time."""
        with self._lock:
            state = self._state_locked()
            if state == CLOSED:
                return True
            if state == HALF_OPEN and not self._trial_running:
                self._trial_running = True
                return True
            return False

    def record_success(self) -> None:
        """A call succeeded: close the breaker and reset the failure count."""
        with self._lock:
            self._failures = 0
            self._opened_at = None
            self._trial_running = False

    def record_failure(self) -> None:
        """A call failed: count it, and open (or reopen) the breaker at the threshold."""
        with self._lock:
            self._failures += 1
            if self._trial_running or self._failures >= self.threshold:
                self._opened_at = self._clock()
            self._trial_running = False

    def seconds_until_retry(self) -> float:
        """Seconds until a trial call is allowed; 0 when calls may go out."""
        with self._lock:
            if self._opened_at is None:
                return 0.0
            return max(0.0, self.cooldown - (self._clock() - self._opened_at))
