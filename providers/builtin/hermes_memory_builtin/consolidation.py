"""A bound on how often the model may fail to consolidate memory.

When memory is full, an ``add`` fails and the model is asked to make room by
replacing or removing entries. Models sometimes loop on that (zero matches,
replacements that still do not fit). Counted failures are: an ``add`` or
``replace`` over budget, a ``replace``/``remove`` that matched nothing, and an
aborted batch. After :data:`DEFAULT_FAILURES_PER_TURN` of them in one turn,
further calls get a terminal answer telling the model to stop and reply.

Unlike a counter that simply restarts every turn, this guard remembers a
streak: a turn that used up its allowance without any successful write leaves
the guard *exhausted*, and every following turn then allows a single attempt
(which still gets the full error with the current entries), until a write
succeeds. So a doomed consolidation costs three calls once, then one call per
turn, instead of three calls in every turn. Any successful write, and a new
conversation, restore the full allowance.
"""

from __future__ import annotations

DEFAULT_FAILURES_PER_TURN = 3
EXHAUSTED_FAILURES_PER_TURN = 1


class ConsolidationGuard:
    """Counts failed memory writes per turn, with a streak that survives turns."""

    def __init__(self, failures_per_turn: int = DEFAULT_FAILURES_PER_TURN) -> None:
        self.failures_per_turn = failures_per_turn
        self._turn_failures = 0
        self._exhausted = False

    @property
    def turn_failures(self) -> int:
        """Counted failures in the current turn."""
        return self._turn_failures

    @property
    def exhausted(self) -> bool:
        """A previous turn used up its allowance and no write has succeeded since."""
        return self._exhausted

    @property
    def allowance(self) -> int:
        """Failures the current turn may have before answers become terminal."""
        return EXHAUSTED_FAILURES_PER_TURN if self._exhausted else self.failures_per_turn

    def record_failure(self) -> bool:
        """Count one failure; True when it is past the allowance (answer terminally)."""
        self._turn_failures += 1
        return self._turn_failures > self.allowance

    def record_success(self) -> None:
        """A write succeeded: the streak is over."""
        self._turn_failures = 0
        self._exhausted = False

    def start_turn(self) -> None:
        """A new user turn begins: carry an exhausted streak over, restart the count."""
        if self._turn_failures >= self.allowance:
            self._exhausted = True
        self._turn_failures = 0

    def reset(self) -> None:
        """Forget everything (a new conversation)."""
        self._turn_failures = 0
        self._exhausted = False
