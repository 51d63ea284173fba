"""The public methods both session stores share: their arguments checked and shaped once.

:class:`~hermes_core.sessions.store.SessionStore` (``state.db``) and
:class:`~hermes_core.sessions.postgres.PostgresSessionStore` subclass
:class:`StoreFacade`: a new session's fields, one message appended, a search's
filters and page are made here, and each backend writes or reads them its own way.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from hermes_core.errors import ConfigError, SessionStoreError
from hermes_core.sessions.arguments import count, epoch
from hermes_core.sessions.fetch import SearchFilters
from hermes_core.sessions.query import parse_query
from hermes_core.sessions.question import plan_query
from hermes_core.sessions.records import message_fields, sane_timestamp, scrub, valid_session_id
from hermes_core.sessions.scope import UserScope
from hermes_core.sessions.search import reads_passages, searched_by_meaning
from hermes_core.sessions.semantic import semantic_available
from hermes_core.sessions.titles import sanitize_title

__all__ = [
    "DEFAULT_SEMANTIC_BUDGET",
    "SEMANTIC_MAX_CJK_SHARE",
    "SEMANTIC_MIN_COVERAGE",
    "Listing",
    "NewSession",
    "SearchPage",
    "StoreFacade",
    "VectorIndex",
]

log = logging.getLogger(__name__)

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
SEMANTIC_MAX_CJK_SHARE = 0.3
"""A question whose letters are more than this share Chinese, Japanese or Korean is searched
by words only: the encoder (all-MiniLM-L6-v2) was trained on English."""
SEMANTIC_MIN_COVERAGE = 0.9
"""Semantic recall is fused in once this share of the messages is embedded."""
DEFAULT_SEMANTIC_BUDGET = 0.0
"""Seconds a search may spend embedding messages not embedded yet: none, so a search costs
what full-text search costs (messages are embedded by the builtin provider after each turn,
a bounded amount, and by ``hermes-memory sessions index``)."""

Reader = Callable[[Callable[[Any], Any]], Any]
"""Runs a function on a connection of the store (its ``_read``)."""


class VectorIndex(Protocol):
    """What a store's semantic index offers: ``state.db``'s sidecar
    (:class:`~hermes_core.sessions.semantic.SemanticIndex`) or PostgreSQL's
    ``message_vectors`` (:class:`~hermes_core.sessions.pgsemantic.PgSemanticIndex`)."""

    @property
    def path(self) -> Any:
        """Where the vectors are (for messages)."""

    @property
    def model(self) -> str:
        """The name the vectors carry (their encoder's)."""

    def catch_up(
        self,
        read: Reader,
        budget: float | None = None,
        limit: int | None = None,
        progress: Callable[[int], None] | None = None,
        threads: int = 1,
    ) -> int:
        """Embed messages not embedded yet, new first; how many were."""

    def missing(self, read: Reader) -> int:
        """How many user/assistant messages are not embedded yet."""

    def embedded(self) -> int:
        """How many messages have vectors."""

    def counts(self, read: Reader) -> tuple[int, int]:
        """(embedded, not embedded yet) user/assistant messages."""

    def nearest(self, read: Reader, text: str, k: int) -> list[int]:
        """The ids of the *k* messages nearest to *text*, best first."""

    def close(self) -> None:
        """Release what the index holds."""


@dataclass(frozen=True)
class NewSession:
    """A session to create, its fields checked and cleaned."""

    id: str
    source: str
    user_id: str | None
    model: str | None
    model_config: str | None
    """JSON text."""
    system_prompt: str | None
    parent_session_id: str | None
    started_at: float
    cwd: str | None
    git_repo_root: str | None
    title: str | None

    def row(self) -> tuple[Any, ...]:
        """The values of ``UPSERT_SESSION`` (id, source, user_id, model, model_config,
        system_prompt, parent_session_id, started_at, cwd, git_repo_root)."""
        return (
            self.id,
            self.source,
            self.user_id,
            self.model,
            self.model_config,
            self.system_prompt,
            self.parent_session_id,
            self.started_at,
            self.cwd,
            self.git_repo_root,
        )


@dataclass(frozen=True)
class Listing:
    """What :meth:`StoreFacade.list_sessions` was asked for, checked."""

    limit: int
    offset: int
    source: str | None
    exclude_sources: tuple[str, ...]
    collapse_lineage: bool
    order_by_last_active: bool
    active_since: float | None
    active_until: float | None


@dataclass(frozen=True)
class SearchPage:
    """Which hits of a search, and what each carries."""

    limit: int
    offset: int
    context: bool
    snippets: bool
    semantic: bool | None


class StoreFacade(ABC):
    """What both stores do the same way, on their own writes and reads."""

    scope: UserScope
    user_id: str | None
    path: Any
    semantic_mode: str
    """``auto``, ``on`` or ``off``: whether questions also search by meaning."""
    semantic_budget: float = DEFAULT_SEMANTIC_BUDGET
    """Seconds a search may spend embedding messages not embedded yet."""
    _semantic: VectorIndex | None = None
    _semantic_failed: bool = False
    _semantic_lock: threading.Lock

    # -- semantic recall: the same rule on both backends ------------------------------
    @abstractmethod
    def _read(self, fn: Callable[[Any], Any]) -> Any:
        """Run *fn* on a connection of the store (one transaction, for PostgreSQL)."""

    @abstractmethod
    def _open_index(self) -> VectorIndex:
        """This store's semantic index (a ConfigError naming what to install without the
        encoder)."""

    @abstractmethod
    def _count_not_embedded(self) -> int:
        """How many messages have no vectors, with no index open (no encoder loaded)."""

    def _busy(self, exc: Exception) -> bool:
        """Whether *exc* says another process holds the vectors (a catch-up waits for later)."""
        return False

    def semantic_index(self, force: bool = False) -> VectorIndex | None:
        """The semantic index of this store, or None when semantic search is off or not
        installed. Mode ``on`` or *force* without the encoder raises a ConfigError saying
        what to install."""
        required = force or self.semantic_mode == "on"
        with self._semantic_lock:  # threads searching at once open one index
            if self._semantic is None:
                if not required and (self.semantic_mode == "off" or self._semantic_failed):
                    return None
                if not required and not semantic_available():
                    self._semantic_failed = True
                    return None
                try:
                    self._semantic = self._open_index()
                except ConfigError:
                    if required:
                        raise
                    self._semantic_failed = True
                    return None
        if self.semantic_mode == "off" and not force:
            return None
        return self._semantic

    def index_messages(
        self,
        budget: float | None = None,
        limit: int | None = None,
        progress: Callable[[int], None] | None = None,
        threads: int = 1,
    ) -> int:
        """Embed messages for semantic search (new first, then older, newest first).

        Returns how many were embedded. Runs whatever :attr:`semantic_mode` says
        (an explicit call asks for it); without the encoder it raises a
        ConfigError saying what to install. See
        :meth:`~hermes_core.sessions.semantic.SemanticIndex.catch_up`.
        """
        index = self.semantic_index(force=True)
        assert index is not None  # forced: an index, or a ConfigError
        return index.catch_up(
            self._read, budget=budget, limit=limit, progress=progress, threads=threads
        )

    def messages_to_embed(self) -> int:
        """How many messages semantic search has not embedded yet.

        Counting loads no encoder and writes nothing (without an open index, the
        vectors need not exist yet).
        """
        with self._semantic_lock:
            index = self._semantic
        if index is not None:
            return index.missing(self._read)
        return self._count_not_embedded()

    def meaning_coverage(self, query: object = None) -> tuple[int, int] | None:
        """``(embedded, embeddable)`` user and assistant messages when semantic search is on
        for this store (and, given a *query*, would search it by meaning), else ``None``.

        Below :data:`SEMANTIC_MIN_COVERAGE` of them a search uses words only; above it,
        meaning ranks the embedded ones and the rest are found by their words alone.
        Loads the encoder (once) and counts; writes nothing.
        """
        if query is not None and not self._meaning_applies(query, passages=True):
            return None
        index = self.semantic_index()
        if index is None:
            return None
        if query is not None and not self._meaning_applies(query, reads_passages(index.model)):
            return None
        embedded, missing = index.counts(self._read)
        return embedded, embedded + missing

    @staticmethod
    def _meaning_applies(query: object, passages: bool = False) -> bool:
        """Whether *query* is one that meaning may join: a question or a few keywords (a
        passage only with an encoder that reads *passages*), not mostly Chinese, Japanese or
        Korean (the model reads English)."""
        parsed = parse_query(query)
        if parsed.empty or not searched_by_meaning(parsed, plan_query(parsed), passages):
            return False
        letters = [ch for ch in parsed.text if ch.isalnum()]
        return len(_CJK.findall(parsed.text)) <= SEMANTIC_MAX_CJK_SHARE * len(letters)

    def _meaning_index(self, query: object, force: bool = False) -> VectorIndex | None:
        """The index that searches *query* by meaning, after a bounded catch-up; None when
        meaning takes no part: off, a query meaning does not apply to, or a history less than
        :data:`SEMANTIC_MIN_COVERAGE` embedded (logged, naming ``sessions index``)."""
        if self.semantic_mode == "off" and not force:
            return None
        if not self._meaning_applies(query, passages=True):
            return None
        try:
            index = self.semantic_index(force)
            if index is None:
                return None
            if not self._meaning_applies(query, reads_passages(index.model)):
                return None  # a passage, and an encoder that does not read passages
            try:
                if self.semantic_budget > 0:
                    index.catch_up(self._read, budget=self.semantic_budget)
            except Exception as exc:
                if not self._busy(exc):
                    raise
                # Another process is writing vectors: search with what is embedded.
                log.debug("semantic catch-up skipped: %s", exc)
            if index.embedded() == 0:  # nothing to find by meaning: no need to count
                log.info(
                    "semantic search skipped: nothing of %s is embedded yet "
                    "(hermes-memory sessions index embeds it)",
                    self.path,
                )
                return None
            embedded, missing = index.counts(self._read)
            if embedded < SEMANTIC_MIN_COVERAGE * (embedded + missing):
                # Neighbours from the newest part alone would favour it over older answers.
                log.info(
                    "semantic search skipped: %d messages of %s not embedded yet "
                    "(hermes-memory sessions index embeds them)",
                    missing,
                    self.path,
                )
                return None
        except (ConfigError, SessionStoreError):
            raise
        except Exception as exc:  # the encoder or the vectors: keyword search still answers
            log.warning("semantic search unavailable (%s); using full-text search only", exc)
            self._semantic_failed = True
            return None
        return index

    def _reads_passages(self) -> bool:
        """Whether the open index's encoder searches passages by meaning
        (:func:`~hermes_core.sessions.search.reads_passages`)."""
        index = self._semantic
        return index is not None and reads_passages(index.model)

    def _text(self, value: Any) -> str:
        """Text as this backend stores it (lone surrogates become U+FFFD)."""
        return scrub(str(value))

    def create_session(
        self,
        session_id: str,
        *,
        source: str = "cli",
        model: str | None = None,
        title: str | None = None,
        parent_session_id: str | None = None,
        user_id: str | None = None,
        system_prompt: str | None = None,
        model_config: Mapping[str, Any] | None = None,
        started_at: float | None = None,
        cwd: str | None = None,
        git_repo_root: str | None = None,
    ) -> str:
        """Create a session; if it exists, only fill its empty fields (first writer wins).

        *cwd* and *git_repo_root* record where the session ran (the working
        directory and its git checkout's root), as Hermes Agent's sessions do:
        plugins scope project memory by them. Text that is not UTF-8 (a folder
        name in another encoding) is stored with U+FFFD for each bad byte.
        """
        valid_session_id(session_id)
        owner = self.scope.owner_for(user_id, f"session {session_id!r}")
        model, owner, system_prompt, cwd, git_repo_root = (
            None if value is None else self._text(value)
            for value in (model, owner, system_prompt, cwd, git_repo_root)
        )
        new = NewSession(
            id=session_id,
            source=self._text(source) if source else "unknown",
            user_id=owner,
            model=model,
            model_config=json.dumps(dict(model_config)) if model_config else None,
            system_prompt=system_prompt,
            parent_session_id=parent_session_id,
            started_at=sane_timestamp(started_at, time.time()),
            cwd=cwd,
            git_repo_root=git_repo_root,
            title=sanitize_title(title),
        )
        return self._create_session(new)

    @abstractmethod
    def _create_session(self, new: NewSession) -> str:
        """Write *new* (or fill the empty fields of the session of its id); its id."""

    def append_message(
        self,
        session_id: str,
        role: str,
        content: Any = None,
        *,
        tool_calls: Any = None,
        tool_call_id: str | None = None,
        tool_name: str | None = None,
        token_count: int | None = None,
        finish_reason: str | None = None,
        timestamp: float | None = None,
        name: str | None = None,
    ) -> int:
        """Append one message (one transaction) and return its id.

        *name* is who spoke a user or assistant message (a group chat, a
        two-person transcript); a tool result's name goes in *tool_name*.
        """
        message = message_fields(
            role,
            content,
            tool_calls=tool_calls,
            tool_call_id=tool_call_id,
            tool_name=tool_name,
            token_count=token_count,
            finish_reason=finish_reason,
            timestamp=timestamp,
            name=name,
        )
        return self.append_messages(session_id, [message])[0]

    @abstractmethod
    def append_messages(self, session_id: str, messages: Iterable[Mapping[str, Any]]) -> list[int]:
        """Append messages to one session, all or nothing; their ids in order."""

    def search_messages(
        self,
        query: object,
        *,
        role_filter: Sequence[str] | str | None = None,
        source_filter: Sequence[str] | str | None = None,
        exclude_sources: Sequence[str] | str | None = None,
        since: float | None = None,
        until: float | None = None,
        session_ids: Sequence[str] | str = (),
        exclude_session_ids: Sequence[str] | str = (),
        limit: int = 20,
        offset: int = 0,
        context: bool = False,
        snippets: bool = True,
        semantic: bool | None = None,
    ) -> list[dict[str, Any]]:
        """Messages matching *query*, best first (BM25); never raises for a query string.

        See :func:`hermes_core.sessions.search.search_messages` for the hit fields.
        Filters accept a list or a comma-separated string. A question (or two
        or more keywords) also searches by meaning when *semantic* is true (the encoder must be
        installed), or is None and the store's ``semantic_mode`` says so;
        messages not embedded yet are embedded first only for ``semantic_budget``
        seconds (none by default). While less than 90 % of the messages are
        embedded the search is full text alone (and says so in the log).
        """
        filters = SearchFilters.from_arguments(
            role_filter=role_filter,
            source_filter=source_filter,
            exclude_sources=exclude_sources,
            since=since,
            until=until,
            session_ids=session_ids,
            exclude_session_ids=exclude_session_ids,
            user_id=self.user_id,
        )
        page = SearchPage(
            count(limit, "limit"), count(offset, "offset"), context, snippets, semantic
        )
        return self._search(query, filters, page)

    @abstractmethod
    def _search(
        self, query: object, filters: SearchFilters, page: SearchPage
    ) -> list[dict[str, Any]]:
        """The *page* of hits of *query* under *filters* (arguments checked already)."""

    def list_sessions(
        self,
        limit: int = 20,
        source: str | None = None,
        collapse_lineage: bool = True,
        *,
        exclude_sources: Sequence[str] = (),
        offset: int = 0,
        order_by_last_active: bool = False,
        active_since: float | None = None,
        active_until: float | None = None,
    ) -> list[dict[str, Any]]:
        """Recent sessions with ``preview`` (first user message) and ``last_active``.

        With *collapse_lineage* (the default) one conversation is one row:
        subagent and compression children are hidden and a compressed session
        shows its newest continuation (id, title, counts, preview) under the
        root's start time, with ``lineage_root_id`` and ``lineage_ids`` added.
        *active_since* / *active_until* (epoch seconds) keep the conversations
        that were going on in that span: started before *active_until*, last
        active at or after *active_since* (a compressed conversation is as
        recent as the newest session of its chain).
        """
        listing = Listing(
            limit=count(limit, "limit"),
            offset=count(offset, "offset"),
            source=source,
            exclude_sources=tuple(exclude_sources),
            collapse_lineage=collapse_lineage,
            order_by_last_active=order_by_last_active,
            active_since=epoch(active_since, "active_since"),
            active_until=epoch(active_until, "active_until"),
        )
        return self._list_sessions(listing)

    @abstractmethod
    def _list_sessions(self, listing: Listing) -> list[dict[str, Any]]:
        """The sessions *listing* asks for (arguments checked already)."""

    def update_token_counts(
        self,
        session_id: str,
        input_tokens: int = 0,
        output_tokens: int = 0,
        *,
        model: str | None = None,
        absolute: bool = False,
    ) -> bool:
        """Add (or, with *absolute*, set) token counts; fill the model if it was unknown."""
        tokens = (int(input_tokens), int(output_tokens))
        return self._count_tokens(session_id, tokens, model, absolute)

    @abstractmethod
    def _count_tokens(
        self, session_id: str, tokens: tuple[int, int], model: str | None, absolute: bool
    ) -> bool:
        """Add (or set) the counts of *session_id*; whether it exists."""
