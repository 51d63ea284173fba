"""Errors of the Supermemory provider (all are ``hermes_core`` ``ProviderError``s)."""

from __future__ import annotations

from hermes_core.errors import ProviderError


class ServiceError(ProviderError):
    """A Supermemory call failed after its retries.

    ``retryable`` is True when the service (not the request) was at fault, so the
    same write may succeed later; such writes are kept in the provider's backlog.
    """

    def __init__(self, message: str, *, retryable: bool) -> None:
        super().__init__(message)
        self.retryable = retryable


class BreakerOpenError(ServiceError):
    """The circuit breaker is open: the call was not attempted."""

    def __init__(self, message: str) -> None:
        super().__init__(message, retryable=True)


class ToolArgumentError(ProviderError):
    """A tool was called with arguments it cannot use; the message says what to send."""
