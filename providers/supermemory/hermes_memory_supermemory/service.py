"""Every Supermemory call the provider makes, each bounded, retried and guarded.

:class:`SupermemoryService` wraps the supermemory 5.x SDK (``/ns/{namespace}/…``
endpoints). Each call has an explicit timeout, is retried with tenacity on
transient failures (connection errors, timeouts, 408/429/5xx), and goes
through a :class:`~hermes_core.resilience.CircuitBreaker`. Failures
surface as :class:`ServiceError`; results are plain dicts and lists, never SDK
models, so nothing above this module depends on the SDK's types.
"""

from __future__ import annotations

import datetime
import email.utils
import math
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import httpx
import supermemory

from hermes_core.errors import CircuitOpenError
from hermes_core.fencing import clean_text
from hermes_core.resilience import CircuitBreaker, retry_policy
from hermes_memory_supermemory.errors import BreakerOpenError, ServiceError
from hermes_memory_supermemory.records import Memory, Metadata, Profile
from hermes_memory_supermemory.settings import Settings

SOURCE_HEADER = {"x-sm-source": "hermes-memory"}
_TRANSIENT_STATUS = frozenset({408, 429})
_BREAKER_STATUS = frozenset({401, 403})

T = TypeVar("T")


def _outgoing(metadata: Metadata) -> Metadata:
    """*metadata* with unpaired surrogates replaced in every text (they cannot be sent)."""
    clean: Metadata = {}
    for key, value in metadata.items():
        if isinstance(value, str):
            clean[clean_text(key)] = clean_text(value)
        elif isinstance(value, list | tuple):
            clean[clean_text(key)] = [clean_text(str(item)) for item in value]
        else:
            clean[clean_text(key)] = value
    return clean


def _similarity(value: Any) -> float:
    """A similarity from the service as a number in 0-1 (0 when missing or not a number)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return 0.0
    return min(1.0, max(0.0, float(value)))


def _fact_texts(facts: Any) -> list[str]:
    """The non-empty texts of a profile section, skipping entries of the wrong shape."""
    texts = []
    for fact in facts if isinstance(facts, list) else []:
        memory = getattr(fact, "memory", None)
        if isinstance(memory, str) and memory.strip():
            texts.append(clean_text(memory.strip()))
    return texts


def retry_after(exc: BaseException | None) -> float | None:
    """Seconds a 429 answer asked to wait (``Retry-After``: seconds or an HTTP date)."""
    if not isinstance(exc, supermemory.APIStatusError) or exc.status_code != 429:
        return None
    response = getattr(exc, "response", None)
    header = response.headers.get("retry-after", "").strip() if response is not None else ""
    if not header:
        return None
    try:
        seconds = float(header)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(header)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=datetime.UTC)
        seconds = (when - datetime.datetime.now(datetime.UTC)).total_seconds()
    if not math.isfinite(seconds):
        return None
    return max(0.0, seconds)


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
        # A 429 with Retry-After is retried after the time it asks for, as long as that
        # fits in one request's budget (``api_timeout``); a longer wait gives up at once.
        self._retrying = retry_policy(
            retries=settings.max_retries,
            is_transient=is_transient,
            backoff=0.25,
            max_backoff=2.0,
            jitter=0.25,
            sleep=sleep,
            retry_after=retry_after,
            max_retry_after=settings.api_timeout,
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
        except supermemory.RateLimitError as exc:
            hint = retry_after(exc)
            wait = f"retry after {hint:g} s" if hint is not None else "retry later"
            raise ServiceError(
                f"Supermemory {what} failed: rate limited (HTTP 429), {wait}.", retryable=True
            ) from exc
        except supermemory.SupermemoryError as exc:
            raise ServiceError(
                f"Supermemory {what} failed: {exc}", retryable=counts_against_service(exc)
            ) from exc
        except (AttributeError, TypeError, ValueError, KeyError, RecursionError) as exc:
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
                content=clean_text(content),
                id=clean_text(doc_id),
                metadata=_outgoing(metadata),
                timeout=self._timeout,
                **extra,
            )
            doc_id_back = getattr(ref, "id", None)
            if not isinstance(doc_id_back, str) or not doc_id_back.strip():
                raise ValueError("the service answered without a document id")
            status = getattr(ref, "status", None)
            return {"id": doc_id_back, "status": str(status) if status is not None else ""}

        return self._call("add", run)

    def delete_documents(self, namespace: str, doc_ids: Sequence[str]) -> int:
        """``DELETE /ns/{ns}/document``; returns how many were deleted."""

        def run() -> int:
            result = self._client.documents.delete(
                namespace, ids=[clean_text(i) for i in doc_ids], timeout=self._timeout
            )
            return int(result.count)

        return self._call("delete", run)

    def search(
        self, namespace: str, query: str, *, limit: int, search_mode: str | None = None
    ) -> list[Memory]:
        """``POST /ns/{ns}/search``; memories (or chunks) best first, at most *limit*.

        An entry without text (or of the wrong shape) is skipped; a similarity
        that is missing or not a number counts as 0, and it is clamped to 0-1.
        """

        def run() -> list[Memory]:
            response = self._client.search(
                namespace,
                query=clean_text(query),
                limit=limit,
                search_mode=search_mode or self.settings.search_mode,
                timeout=self._timeout,
            )
            found = []
            results = response.results
            for item in results if isinstance(results, list) else []:
                text = getattr(item, "memory", None) or getattr(item, "chunk", None)
                if not isinstance(text, str) or not text.strip():
                    continue
                system = getattr(item, "system", None)
                updated = getattr(system, "updated_at", None)
                metadata = getattr(item, "metadata", None)
                found.append(
                    Memory(
                        id=clean_text(str(getattr(item, "id", ""))),
                        text=clean_text(text.strip()),
                        similarity=_similarity(getattr(item, "similarity", None)),
                        updated_at=updated if isinstance(updated, str) else "",
                        metadata=dict(metadata) if isinstance(metadata, dict) else {},
                    )
                )
                if len(found) >= limit:
                    break
            return found

        return self._call("search", run)

    def profile(self, namespace: str) -> Profile:
        """``POST /ns/{ns}/profile``; fact texts of the static and dynamic sections."""

        def run() -> Profile:
            response = self._client.profile(namespace, timeout=self._timeout)
            body = response.profile
            return Profile(static=_fact_texts(body.static), dynamic=_fact_texts(body.dynamic))

        return self._call("profile", run)

    def forget(self, namespace: str, memory_ids: Sequence[str]) -> dict[str, Any]:
        """``DELETE /ns/{ns}/memories``; returns ``{"count", "errors"}``."""

        def run() -> dict[str, Any]:
            result = self._client.memories.forget(
                namespace, ids=[clean_text(i) for i in memory_ids], timeout=self._timeout
            )
            errors = [{"id": str(e.id), "error": str(e.error)} for e in result.errors]
            return {"count": int(result.count), "errors": errors}

        return self._call("forget", run)
