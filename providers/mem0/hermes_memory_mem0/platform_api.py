"""The Mem0 platform API through the official SDK's ``MemoryClient``.

Every request goes over an ``httpx.Client`` we build with an explicit timeout
and hand to the SDK; every call is retried with tenacity on transient failures (refused
connections, 429, 502/503/504 always; timeouts, other 5xx and malformed replies
only for reads, so a write is never sent twice), within one time budget per
call: ``timeout * (retries + 1)`` plus the back-off. A 429's ``Retry-After`` is
honoured when it fits that budget; otherwise the call fails at once with
"rate limited ... retry after N s". The client is built lazily because the SDK
pings ``GET /v1/ping/`` in its constructor; that ping runs outside any lock, so
a tool call never queues behind a background connect to a hung server.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import httpx

from hermes_core.resilience import retry_policy
from hermes_memory_mem0.backend import AddResult, MemoryHit, parse_hits
from hermes_memory_mem0.errors import (
    Mem0BackendError,
    Mem0ClientError,
    Mem0NotFoundError,
    Mem0TransientError,
)
from hermes_memory_mem0.identity import is_memory_id
from hermes_memory_mem0.sdk import import_mem0
from hermes_memory_mem0.settings import Mem0Settings

__all__ = ["PlatformBackend", "translate_platform_error"]

T = TypeVar("T")

_REPEATABLE_STATUS = {429, 502, 503, 504}
_CLIENT_STATUS = {400, 404, 409, 413, 422}
_MAX_BACKOFF = 8.0


class PlatformBackend:
    """mem0's hosted API (or any server speaking it at ``mem0.host``)."""

    mode = "platform"

    def __init__(self, settings: Mem0Settings, *, data_dir: str | Path) -> None:
        if not settings.api_key:
            raise Mem0BackendError(
                "No Mem0 API key: export MEM0_API_KEY (or set mem0.mode: local for the "
                "offline engine)."
            )
        self._settings = settings
        self._data_dir = Path(data_dir)
        self._lock = threading.Lock()
        self._http: httpx.Client | None = None
        self._client: Any = None

    def open(self) -> None:
        self._call(lambda client: None, write=False)

    def search(
        self,
        query: str,
        *,
        user_id: str,
        top_k: int,
        rerank: bool = False,
        threshold: float | None = None,
    ) -> list[MemoryHit]:
        options: dict[str, Any] = {"filters": {"user_id": user_id}, "top_k": top_k}
        options["rerank"] = rerank
        if threshold is not None:
            options["threshold"] = threshold
        data = self._call(lambda client: client.search(query, **options), write=False)
        hits = parse_hits(data)
        if hits is None:
            raise Mem0TransientError(f"Mem0 search answered an unexpected shape: {_brief(data)}")
        return hits

    def add(
        self,
        messages: Sequence[Mapping[str, str]],
        *,
        user_id: str,
        agent_id: str,
        infer: bool,
        metadata: Mapping[str, Any],
    ) -> AddResult:
        payload = [dict(message) for message in messages]
        data = self._call(
            lambda client: client.add(
                payload,
                user_id=user_id,
                agent_id=agent_id,
                infer=infer,
                metadata=dict(metadata),
            ),
            write=True,
        )
        return _add_result(data)

    def update(self, memory_id: str, text: str, *, user_id: str) -> None:
        _check_memory_id(memory_id)
        self._check_owner(memory_id, user_id)
        self._call(lambda client: client.update(memory_id, text=text), write=True)

    def delete(self, memory_id: str, *, user_id: str) -> None:
        _check_memory_id(memory_id)
        self._check_owner(memory_id, user_id)
        self._call(lambda client: client.delete(memory_id), write=True)

    def close(self) -> None:
        with self._lock:
            if self._http is not None:
                self._http.close()
            self._http = None
            self._client = None

    def _check_owner(self, memory_id: str, user_id: str) -> None:
        data = self._call(lambda client: client.get(memory_id), write=False)
        if not isinstance(data, Mapping) or data.get("user_id") != user_id:
            raise Mem0NotFoundError(f"Memory not found: {memory_id}")

    def budget(self) -> float:
        """The longest one call may take, retries and back-off included (seconds)."""
        settings = self._settings
        waits = sum(
            min(settings.retry_backoff * 2**n, _MAX_BACKOFF) + settings.retry_backoff
            for n in range(settings.retries)
        )
        return settings.timeout * (settings.retries + 1) + waits

    def _call(self, operation: Callable[[Any], T], *, write: bool) -> T:
        def attempt() -> T:
            client = self._memory_client()
            try:
                return operation(client)
            except Exception as exc:
                raise translate_platform_error(exc) from exc

        def retryable(exc: BaseException) -> bool:
            return isinstance(exc, Mem0TransientError) and (exc.repeatable or not write)

        budget, backoff = self.budget(), self._settings.retry_backoff
        policy = retry_policy(
            retries=self._settings.retries,
            is_transient=retryable,
            backoff=backoff,
            max_backoff=_MAX_BACKOFF,
            jitter=backoff,
            retry_after=_asked_wait,
            max_retry_after=budget,
            max_delay=budget,
        )
        return policy(attempt)

    def _memory_client(self) -> Any:
        with self._lock:
            if self._client is not None:
                return self._client
        # The constructor pings the server: never hold the lock over the network.
        mem0 = import_mem0(self._data_dir)
        http = httpx.Client(timeout=httpx.Timeout(self._settings.timeout))
        try:
            client = mem0.MemoryClient(
                api_key=self._settings.api_key, host=self._settings.host, client=http
            )
        except Exception as exc:
            http.close()
            raise translate_platform_error(exc) from exc
        with self._lock:
            if self._client is None:
                self._client, self._http = client, http
                return client
            winner = self._client
        http.close()  # another thread connected first
        return winner


def translate_platform_error(exc: BaseException) -> Exception:
    """Map an SDK or transport exception to this package's error classes."""
    if isinstance(exc, Mem0BackendError | Mem0ClientError):
        return exc
    status = _status_of(exc)
    code = str(getattr(exc, "error_code", "") or "")
    if status is not None:
        return _from_status(status, exc)
    if code == "NET_CONNECT" or isinstance(exc, httpx.ConnectError):
        return Mem0TransientError(f"Cannot reach Mem0: {exc}", repeatable=True)
    if code.startswith("NET_") or isinstance(exc, httpx.TransportError):
        return Mem0TransientError(f"Mem0 request failed: {exc}", repeatable=False)
    if isinstance(exc, json.JSONDecodeError | RecursionError):
        return Mem0TransientError(f"Mem0 answered malformed JSON: {exc}", repeatable=False)
    if isinstance(exc, ValueError) and "integer string conversion" in str(exc):
        # json refuses a number of thousands of digits with a bare ValueError.
        return Mem0TransientError(
            "Mem0 answered malformed JSON: a number too long to read", repeatable=False
        )
    if isinstance(exc, httpx.InvalidURL):
        return Mem0ClientError(f"Mem0 request not sent: {exc} (is the memory id right?)")
    if isinstance(exc, ValueError):
        if "api key" in str(exc).lower():
            return Mem0BackendError(f"{exc} Export MEM0_API_KEY.")
        return Mem0ClientError(str(exc))
    return Mem0BackendError(f"Mem0 call failed: {type(exc).__name__}: {exc}")


def _status_of(exc: BaseException) -> int | None:
    """The HTTP status behind *exc*: SDK errors carry it, the ping's ValueError chains it."""
    debug = getattr(exc, "debug_info", None)
    if isinstance(debug, Mapping) and isinstance(debug.get("status_code"), int):
        return int(debug["status_code"])
    for cause in (exc.__cause__, exc.__context__):
        if isinstance(cause, httpx.HTTPStatusError):
            return cause.response.status_code
    return None


def _from_status(status: int, exc: BaseException) -> Exception:
    detail = getattr(exc, "message", None) or str(exc)
    if status == 404:
        return Mem0NotFoundError(f"Memory not found ({detail})")
    if status in _CLIENT_STATUS:
        return Mem0ClientError(f"Mem0 refused the request (HTTP {status}): {detail}")
    if status in (401, 403):
        return Mem0BackendError(
            f"Mem0 rejected the API key (HTTP {status}): {detail}. Check MEM0_API_KEY."
        )
    if status == 429:
        after = _retry_after_of(exc)
        hint = f"; retry after {after:.0f} s" if after is not None else "; retry later"
        return Mem0TransientError(
            f"Mem0 rate limited the request (HTTP 429){hint}", repeatable=True, retry_after=after
        )
    if status in _REPEATABLE_STATUS:
        return Mem0TransientError(f"Mem0 is unavailable (HTTP {status})", repeatable=True)
    if status == 408 or status >= 500:
        return Mem0TransientError(f"Mem0 failed (HTTP {status}): {detail}", repeatable=False)
    return Mem0BackendError(f"Mem0 answered HTTP {status}: {detail}")


def _asked_wait(exc: BaseException) -> float | None:
    """The wait a rate-limited call asked for (its ``Retry-After``), if any."""
    return exc.retry_after if isinstance(exc, Mem0TransientError) else None


def _retry_after_of(exc: BaseException) -> float | None:
    """Seconds a 429's ``Retry-After`` asks for: the SDK's ``debug_info``, else the header."""
    debug = getattr(exc, "debug_info", None)
    value: Any = debug.get("retry_after") if isinstance(debug, Mapping) else None
    if value is None:
        for cause in (exc.__cause__, exc.__context__):
            if isinstance(cause, httpx.HTTPStatusError):
                value = cause.response.headers.get("retry-after")
                break
    try:
        seconds = float(value) if value is not None else None
    except (TypeError, ValueError):
        return None  # an HTTP date: not worth parsing, the back-off applies
    if seconds is None or seconds != seconds or seconds < 0 or seconds == float("inf"):
        return None
    return seconds


def _check_memory_id(memory_id: str) -> None:
    """Refuse anything but a UUID before it becomes part of a URL path."""
    if not is_memory_id(str(memory_id)):
        raise Mem0ClientError(f"Not a Mem0 memory id (a UUID): {str(memory_id)[:80]!r}")


def _add_result(data: Any) -> AddResult:
    if not isinstance(data, Mapping):
        raise Mem0TransientError(f"Mem0 add answered an unexpected shape: {_brief(data)}")
    items = data.get("results")
    items = items if isinstance(items, list) else []
    event_id = data.get("event_id")
    ids = []
    for item in items:
        if not isinstance(item, Mapping):
            continue
        if event_id is None and isinstance(item.get("event_id"), str):
            event_id = item["event_id"]
        if isinstance(item.get("id"), str) and item.get("memory") is not None:
            ids.append(item["id"])
    return AddResult(
        memory_ids=tuple(ids), event_id=event_id if isinstance(event_id, str) else None
    )


def _brief(data: Any) -> str:
    text = repr(data)
    return text if len(text) <= 120 else text[:117] + "..."
