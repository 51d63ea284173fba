"""Errors of the mem0 provider; all derive from hermes-memory-core's ``ProviderError``."""

from __future__ import annotations

from hermes_core.errors import ProviderError

__all__ = [
    "Mem0BackendError",
    "Mem0ClientError",
    "Mem0NotFoundError",
    "Mem0TransientError",
    "Mem0UnavailableError",
    "UnusableExtractionError",
]


class Mem0BackendError(ProviderError):
    """A mem0 call failed; counts toward the circuit breaker."""


class Mem0TransientError(Mem0BackendError):
    """A failure worth retrying: timeout, refused connection, 429 or 5xx, malformed reply.

    ``repeatable`` is False when the request may already have taken effect (a
    timeout or a 500 after the body was sent), so a write is not sent twice.
    ``retry_after`` is what a 429's ``Retry-After`` asked for, in seconds.
    """

    def __init__(
        self, message: str, *, repeatable: bool = True, retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        self.repeatable = repeatable
        self.retry_after = retry_after
        """Seconds the service asked to wait (a 429's ``Retry-After``), if it said."""


class Mem0ClientError(ProviderError):
    """mem0 answered and refused the request (bad id, invalid input); the service is healthy."""


class Mem0NotFoundError(Mem0ClientError):
    """No memory has the given id (for this user)."""


class Mem0UnavailableError(ProviderError):
    """The circuit breaker is open after repeated failures; calls are skipped for a while."""


class UnusableExtractionError(Exception):
    """The model's fact-extraction answer is not the JSON mem0 needs (the message says how).

    Raised inside mem0's model call (so not a ``ProviderError``): mem0 re-raises it
    as its ``LLMError``, and the local engine stores the turn verbatim instead.
    """
