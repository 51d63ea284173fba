"""Every call the provider makes to Honcho, through the official SDK.

Each public method is one logical operation. It runs under an explicit
per-attempt timeout (the SDK's own retries are switched off), is retried by
tenacity on timeouts, network errors, 429 and 5xx, and goes through a
:class:`~hermes_core.resilience.CircuitBreaker` so a Honcho outage costs
one fast refusal per call instead of a timeout.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import httpx
from honcho import Honcho
from honcho.api_types import PeerContextResponse, SessionPeerConfig
from honcho.conclusions import Conclusion, ConclusionsView
from honcho.http.exceptions import (
    APIError,
    ConnectionError,
    RateLimitError,
    ServerError,
    TimeoutError,
)
from honcho.message import Message
from honcho.peer import Peer
from honcho.session import Session
from honcho.session_context import SessionContext

from hermes_core.errors import ProviderError
from hermes_core.resilience import CircuitBreaker, retry_policy
from hermes_memory_honcho.identity import is_honcho_id
from hermes_memory_honcho.settings import HonchoSettings
from hermes_memory_honcho.writes import MAX_MESSAGES_PER_CALL, OutgoingMessage

__all__ = [
    "HonchoClient",
    "InvalidIdError",
    "is_refusal",
    "is_service_failure",
    "is_transient",
    "retry_after",
]

T = TypeVar("T")
RETRYABLE = (TimeoutError, ConnectionError, RateLimitError, ServerError)
# The user is observed; the assistant observes the user (Honcho's theory-of-mind setup).
USER_IN_SESSION = SessionPeerConfig(observe_me=True, observe_others=False)
AI_IN_SESSION = SessionPeerConfig(observe_me=False, observe_others=True)


def is_transient(exc: BaseException) -> bool:
    """Whether retrying *exc* may help: a timeout, a network error, a 429 or a 5xx."""
    return isinstance(exc, RETRYABLE)


class InvalidIdError(ProviderError, ValueError):
    """An id that is not a Honcho id, refused before it could reach a URL path."""


def _check_id(value: object, what: str) -> str:
    if not is_honcho_id(value):
        raise InvalidIdError(
            f"{what} must be a Honcho id (1-100 letters, digits, '_' or '-'), got {value!r}."
        )
    assert isinstance(value, str)
    return value


def retry_after(exc: BaseException | None) -> float | None:
    """The seconds a 429 answer asked us to wait (its ``Retry-After``), if it said."""
    if not isinstance(exc, RateLimitError):
        return None
    value = exc.retry_after
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return max(0.0, float(value))


def is_service_failure(exc: BaseException) -> bool:
    """Whether *exc* says Honcho is unhealthy (anything but a plain 4xx answer)."""
    if isinstance(exc, APIError) and not isinstance(exc, RateLimitError | ServerError):
        return not 400 <= exc.status < 500
    return True


def is_refusal(exc: BaseException) -> bool:
    """Whether *exc* refuses this request for good, so sending it again cannot succeed.

    A 4xx answer other than 401/403 (a key the user can fix), 408 and 429, or
    text that cannot be encoded. Such a write is dropped instead of blocking
    every write queued after it.
    """
    if isinstance(exc, UnicodeError | InvalidIdError):
        return True
    return (
        isinstance(exc, APIError)
        and 400 <= exc.status < 500
        and exc.status not in (401, 403, 408, 429)
    )


class HonchoClient:
    """The provider's connection to one Honcho workspace."""

    def __init__(
        self,
        settings: HonchoSettings,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.settings = settings
        self._http = httpx.Client(timeout=httpx.Timeout(settings.timeout))
        self.sdk = Honcho(
            api_key=settings.api_key or None,
            base_url=settings.api_base_url,
            workspace_id=settings.workspace,
            timeout=settings.timeout,
            max_retries=0,
            http_client=self._http,
        )
        self.breaker = CircuitBreaker(
            "Honcho",
            threshold=settings.breaker_threshold,
            cooldown=settings.breaker_cooldown,
            clock=clock,
        )
        backoff = settings.retry_backoff
        # A 429 with Retry-After is retried after the time it asks for, as long as that
        # fits in one attempt's budget (``timeout``); a longer wait gives up at once.
        self._retrying = retry_policy(
            retries=settings.max_retries,
            is_transient=is_transient,
            backoff=backoff,
            max_backoff=backoff * 16,
            sleep=sleep,
            retry_after=retry_after,
            max_retry_after=settings.timeout,
        )
        self._lock = threading.Lock()
        self._peers: dict[str, Peer] = {}
        self._sessions: dict[str, Session] = {}

    # -- plumbing ---------------------------------------------------------------

    def call(self, operation: Callable[[], T]) -> T:
        """Run one logical operation with retries, behind the breaker.

        A 429 that outlasts the retries is re-raised saying so, with the wait
        Honcho asked for, instead of the SDK's bare text.
        """
        try:
            return self.breaker.call(
                lambda: self._retrying(operation), is_failure=is_service_failure
            )
        except RateLimitError as exc:
            hint = retry_after(exc)
            wait = f", retry after {hint:g} s" if hint is not None else ", retry later"
            raise RateLimitError(
                f"Honcho is rate limiting requests (HTTP 429){wait}.", retry_after=hint
            ) from exc

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._http.close()

    def _peer(self, peer_id: str) -> Peer:
        with self._lock:
            cached = self._peers.get(peer_id)
        if cached is not None:
            return cached
        peer = self.sdk.peer(peer_id)
        with self._lock:
            return self._peers.setdefault(peer_id, peer)

    def _pair(self, observer: str, observed: str) -> ConclusionsView:
        """The conclusions *observer* holds about *observed*, both peers created first."""
        self._peer(observed)
        return self._peer(observer).conclusions_of(observed)

    def _session(self, session_id: str, user_peer: str, ai_peer: str) -> Session:
        with self._lock:
            cached = self._sessions.get(session_id)
        if cached is not None:
            return cached
        self._peer(user_peer)
        self._peer(ai_peer)
        session = self.sdk.session(
            session_id, peers=[(user_peer, USER_IN_SESSION), (ai_peer, AI_IN_SESSION)]
        )
        with self._lock:
            return self._sessions.setdefault(session_id, session)

    # -- operations -------------------------------------------------------------

    def ensure_session(self, session_id: str, user_peer: str, ai_peer: str) -> None:
        """Create (or fetch) the workspace, both peers and the session."""
        self.call(lambda: self._session(session_id, user_peer, ai_peer))

    def add_messages(
        self, messages: Sequence[OutgoingMessage], *, user_peer: str, ai_peer: str
    ) -> None:
        """Write messages of ONE session in a single call (at most 100)."""
        if not messages:
            return
        sessions = {message.session_id for message in messages}
        if len(sessions) != 1 or len(messages) > MAX_MESSAGES_PER_CALL:
            raise ValueError("add_messages takes 1-100 messages of a single session")

        def run() -> None:
            session = self._session(messages[0].session_id, user_peer, ai_peer)
            session.add_messages([self._peer(m.peer_id).message(m.content) for m in messages])

        self.call(run)

    def peer_context(self, peer_id: str, *, search_query: str | None = None) -> PeerContextResponse:
        """Honcho's representation and card of a peer, focused by *search_query*."""
        return self.call(lambda: self._peer(peer_id).context(search_query=search_query or None))

    def session_context(
        self,
        session_id: str,
        *,
        user_peer: str,
        ai_peer: str,
        tokens: int,
        with_user: bool = False,
        search_query: str | None = None,
    ) -> SessionContext:
        """Summary and recent messages of a session; *with_user* adds the user's model."""
        return self.call(
            lambda: self._session(session_id, user_peer, ai_peer).context(
                summary=True,
                tokens=tokens,
                peer_target=user_peer if with_user else None,
                search_query=search_query or None if with_user else None,
            )
        )

    def chat(self, peer_id: str, query: str, *, reasoning_level: str) -> str:
        """Ask Honcho's dialectic about *peer_id*; "" when it has nothing to say."""

        def run() -> Any:
            return self._peer(peer_id).chat(
                query,
                reasoning_level=reasoning_level,
                timeout=self.settings.timeout,
            )

        answer = self.call(run)
        return answer.strip() if isinstance(answer, str) else ""

    def search(self, peer_id: str, query: str, *, limit: int) -> list[Message]:
        """Messages written by *peer_id* that match *query*."""
        return self.call(lambda: self._peer(peer_id).search(query, limit=limit))

    def get_card(self, peer_id: str) -> list[str]:
        """The peer card of *peer_id* (its list of durable facts)."""
        return self.call(lambda: self._peer(peer_id).get_card()) or []

    def set_card(self, peer_id: str, card: list[str]) -> list[str]:
        """Replace the peer card of *peer_id*."""
        return self.call(lambda: self._peer(peer_id).set_card(card)) or []

    def create_conclusion(
        self, observer: str, observed: str, content: str, *, session_id: str | None = None
    ) -> Conclusion:
        """Record what *observer* concluded about *observed*."""
        item: dict[str, Any] = {"content": content}
        if session_id:
            item["session_id"] = session_id

        def run() -> list[Conclusion]:
            if session_id:
                self._session(session_id, user_peer=observed, ai_peer=observer)
            return self._pair(observer, observed).create([item])

        return self.call(run)[0]

    def query_conclusions(
        self, observer: str, observed: str, query: str, *, top_k: int = 10
    ) -> list[Conclusion]:
        """Conclusions of *observer* about *observed* that match *query*."""
        return self.call(lambda: self._pair(observer, observed).query(query, top_k=top_k))

    def delete_conclusion(self, observer: str, observed: str, conclusion_id: str) -> None:
        """Delete a conclusion, after checking it belongs to this observer/observed pair.

        *conclusion_id* must be a Honcho id (it goes into the URL path), so the
        request can only address a conclusion of this client's own workspace;
        anything else raises :class:`InvalidIdError` before any request.
        """
        _check_id(conclusion_id, "The conclusion id")
        _check_id(self.settings.workspace, "The workspace id")

        def run() -> None:
            view = self._pair(observer, observed)
            found = view.get(conclusion_id)
            if found.id != conclusion_id:
                raise InvalidIdError(
                    f"Honcho answered with conclusion {found.id!r} for {conclusion_id!r}; "
                    "nothing was deleted."
                )
            view.delete(conclusion_id)

        self.call(run)
