"""Every Supermemory call the provider makes, each bounded, retried and guarded.

:class:`SupermemoryService` wraps the supermemory 5.x SDK (``/ns/{namespace}/…``
endpoints). Each call has an explicit timeout, is retried with tenacity on
transient failures (connection errors, timeouts, 408/429/5xx), and goes
through a :class:`~hermes_core.resilience.CircuitBreaker`. Failures
surface as :class:`ServiceError`; results are plain dicts and lists, never SDK
models, so nothing above this module depends on the SDK's types.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import httpx
import supermemory

from hermes_core.errors import CircuitOpenError
from hermes_core.resilience import CircuitBreaker, retry_policy
from hermes_memory_supermemory.errors import BreakerOpenError, ServiceError
from hermes_memory_supermemory.records import Memory, Metadata, Profile
from hermes_memory_supermemory.settings import Settings

SOURCE_HEADER = {"x-sm-source": "hermes-memory"}
_TRANSIENT_STATUS = frozenset({408, 429})
_BREAKER_STATUS = frozenset({401, 403})

T = TypeVar("T")


def is_transient(exc: BaseException) -> bool:
    """Whether retrying *exc* may help: connection trouble, timeouts, 408/429/5xx."""
    if isinstance(exc, supermemory.APIConnectionError):
        return True
    if isinstance(exc, supermemory.APIStatusError):
        return exc.status_code in _TRANSIENT_STATUS or exc.status_code >= 500
    return False


def counts_against_service(exc: BaseException) -> bool:
    """Whether *exc* says the service is unusable (opens the breaker) or only this call was bad."""
    if is_transient(exc):
        return True
    if isinstance(exc, supermemory.APIStatusError):
        # 2xx here means the body could not be parsed; 401/403 repeat on every call.
        return exc.status_code < 300 or exc.status_code in _BREAKER_STATUS
    return True


class SupermemoryService:
    """The provider's view of one Supermemory account.

    *http_client* and *sleep* exist for tests (a transport, no real backoff
    sleeps); *breaker* is shared by every call so repeated failures of any kind
    stop all traffic for the cooldown.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        breaker: CircuitBreaker,
        http_client: httpx.Client | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.settings = settings
        self.breaker = breaker
        timeout = httpx.Timeout(settings.api_timeout, connect=min(settings.api_timeout, 5.0))
        self._timeout = timeout
        self._owns_http = http_client is None
        self._http = http_client or httpx.Client(timeout=timeout, follow_redirects=True)
        self._client = supermemory.Supermemory(
            api_key=settings.api_key,
            base_url=settings.base_url,
            timeout=timeout,
            max_retries=0,  # retries are ours (tenacity), so they are bounded and counted once
            default_headers=SOURCE_HEADER,
            http_client=self._http,
        )
        self._retrying = retry_policy(
            retries=settings.max_retries,
            is_transient=is_transient,
            backoff=0.25,
            max_backoff=2.0,
            jitter=0.25,
            sleep=sleep,
        )

    def close(self) -> None:
        """Close the HTTP connection pool (when this service created it)."""
        if self._owns_http:
            self._http.close()

    # ------------------------------------------------------------------ plumbing

    def _call(self, what: str, fn: Callable[[], T]) -> T:
        try:
            return self.breaker.call(lambda: self._retrying(fn), is_failure=counts_against_service)
        except CircuitOpenError as exc:
            raise BreakerOpenError(
                f"Supermemory {what} skipped: the circuit breaker is open after repeated "
                f"failures (next try in {exc.retry_after:.0f}s)."
            ) from exc
        except supermemory.SupermemoryError as exc:
            raise ServiceError(
                f"Supermemory {what} failed: {exc}", retryable=counts_against_service(exc)
            ) from exc
        except (AttributeError, TypeError, ValueError, KeyError) as exc:
            # An answer that does not have the documented shape.
            raise ServiceError(
                f"Supermemory {what} returned an unexpected answer: {exc}", retryable=True
            ) from exc

    # ------------------------------------------------------------------ calls

    def add_document(
        self,
        namespace: str,
        content: str,
        *,
        doc_id: str,
        metadata: Metadata,
    ) -> dict[str, str]:
        """``POST /ns/{ns}/document``; returns ``{"id", "status"}``."""
        extra: dict[str, Any] = {}
        if self.settings.supporting_context:
            extra["supporting_context"] = self.settings.supporting_context

        def run() -> dict[str, str]:
            ref = self._client.add(
                namespace,
                content=content,
                id=doc_id,
                metadata=metadata,
                timeout=self._timeout,
                **extra,
            )
            return {"id": str(ref.id), "status": str(ref.status)}

        return self._call("add", run)

    def delete_documents(self, namespace: str, doc_ids: Sequence[str]) -> int:
        """``DELETE /ns/{ns}/document``; returns how many were deleted."""

        def run() -> int:
            result = self._client.documents.delete(
                namespace, ids=list(doc_ids), timeout=self._timeout
            )
            return int(result.count)

        return self._call("delete", run)

    def search(
        self, namespace: str, query: str, *, limit: int, search_mode: str | None = None
    ) -> list[Memory]:
        """``POST /ns/{ns}/search``; memories (or chunks) best first."""

        def run() -> list[Memory]:
            response = self._client.search(
                namespace,
                query=query,
                limit=limit,
                search_mode=search_mode or self.settings.search_mode,
                timeout=self._timeout,
            )
            found = []
            for item in response.results:
                text = item.memory or item.chunk or ""
                if not text.strip():
                    continue
                system = getattr(item, "system", None)
                found.append(
                    Memory(
                        id=str(item.id),
                        text=text.strip(),
                        similarity=float(item.similarity or 0.0),
                        updated_at=str(getattr(system, "updated_at", "") or ""),
                        metadata=dict(item.metadata or {}),
                    )
                )
            return found

        return self._call("search", run)

    def profile(self, namespace: str) -> Profile:
        """``POST /ns/{ns}/profile``; fact texts of the static and dynamic sections."""

        def run() -> Profile:
            response = self._client.profile(namespace, timeout=self._timeout)
            body = response.profile
            return Profile(
                static=[f.memory.strip() for f in body.static if f.memory and f.memory.strip()],
                dynamic=[f.memory.strip() for f in body.dynamic if f.memory and f.memory.strip()],
            )

        return self._call("profile", run)

    def forget(self, namespace: str, memory_ids: Sequence[str]) -> dict[str, Any]:
        """``DELETE /ns/{ns}/memories``; returns ``{"count", "errors"}``."""

        def run() -> dict[str, Any]:
            result = self._client.memories.forget(
                namespace, ids=list(memory_ids), timeout=self._timeout
            )
            errors = [{"id": str(e.id), "error": str(e.error)} for e in result.errors]
            return {"count": int(result.count), "errors": errors}

        return self._call("forget", run)
