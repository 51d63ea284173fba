"""The public methods both session stores share: their arguments checked and shaped once.

:class:`~hermes_core.sessions.store.SessionStore` (``state.db``) and
:class:`~hermes_core.sessions.postgres.PostgresSessionStore` subclass
:class:`StoreFacade`: a new session's fields, one message appended, a search's
filters and page are made here, and each backend writes or reads them its own way.
"""

from __future__ import annotations

import json
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hermes_core.sessions.arguments import count, epoch
from hermes_core.sessions.fetch import SearchFilters
from hermes_core.sessions.records import message_fields, sane_timestamp, scrub, valid_session_id
from hermes_core.sessions.scope import UserScope
from hermes_core.sessions.titles import sanitize_title

__all__ = ["Listing", "NewSession", "SearchPage", "StoreFacade"]


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
