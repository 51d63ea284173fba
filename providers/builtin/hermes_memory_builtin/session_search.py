"""The ``session_search`` tool: recall of past conversations from ``state.db``.

Cheap wide recall, then narrow understanding:

1. an empty query lists recent conversations (no model call); so does a
   question that names only a time ("what did we do yesterday?"), listing the
   conversations of that span;
2. a time in the question ("last week", "3 days ago", "上周") limits the search
   to that span, and when the span holds no match all of history is searched;
3. otherwise the store's full-text search (BM25, CJK-aware, tuned for questions)
   finds up to 50 matching messages, hidden sources left out;
4. hits are grouped by conversation (lineage root), first hit wins;
5. every session of the *current* conversation's lineage is excluded;
6. the best ``limit`` conversations are kept (default 3, at most 5);
7. for each, the session that actually matched is loaded (not its root);
8. its transcript is cut to a window around the matches (phrase, then
   co-occurring words, then single words; a quarter before, three after);
9. a small model summarises each window *for the query*, in parallel, with a
   bounded number of calls in flight, a timeout per call and one overall;
10. a window whose summary is missing, late or unusable is shown as a raw
   preview around its match instead, so a match is never dropped;
11. the answer is one JSON object.

The database is opened (read-only) on the first call, so the tool costs
nothing until it is used. Configure the summary model under
``session_search:`` in ``config.yaml`` (it falls back to ``model:``); without
one, results are previews.
"""

from __future__ import annotations

import concurrent.futures
import json
import logging
import os
import threading
import time
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_core.config import cfg_get, lenient_count, lenient_seconds
from hermes_core.errors import HermesMemoryError, LLMError
from hermes_core.fencing import sanitize_context
from hermes_core.runtime.summary import strip_reasoning
from hermes_core.sessions import SessionStore
from hermes_core.sessions.backends import open_session_store, sessions_url
from hermes_core.sessions.facade import SEMANTIC_MIN_COVERAGE
from hermes_core.sessions.question import names_a_topic
from hermes_core.sessions.timespan import TimeSpan, find_time_span, find_time_span_in_history
from hermes_core.sessions.transcript import (
    format_conversation,
    match_preview,
    truncate_around_matches,
)
from hermes_memory_builtin.session_search_schema import (
    DEFAULT_LIMIT,
    MAX_LIMIT,
    SESSION_SEARCH_SCHEMA,
)

if TYPE_CHECKING:
    from hermes_core.llm import ChatClient

__all__ = ["SESSION_SEARCH_SCHEMA", "SessionSearchTool"]

log = logging.getLogger(__name__)

DEFAULT_CONCURRENCY = 3
MAX_CONCURRENCY = 5
DEFAULT_CALL_TIMEOUT = 30.0
DEFAULT_OVERALL_TIMEOUT = 60.0
DEFAULT_WINDOW_CHARS = 100_000
DEFAULT_SUMMARY_TOKENS = 2000
SEARCH_POOL = 50
PREVIEW_CHARS = 600
MAX_SUMMARY_CHARS = 6000
PREVIEW_HEADER = "[Raw preview — no summary available]"
INDEX_BUDGET = 1.0
"""Seconds spent embedding new messages after each turn (semantic recall): a turn adds two,
which take a fraction of it; a backlog goes a second a turn, since closing a session waits
for the last turn's background work."""
DEFAULT_HIDDEN_SOURCES = ["tool"]
MAX_ECHOED_QUERY_CHARS = 1000
"""How much of the query an answer repeats: a pasted log must not crowd out the results."""

_SYSTEM_PROMPT = (
    "You help an assistant remember a past conversation with its user. Read the transcript "
    "and write a recap focused on the search topic: what the user wanted, what was done and "
    "how it turned out, the decisions and conclusions reached, the exact commands, file "
    "paths, error messages, names and URLs worth reusing, and anything left unresolved. "
    "When turns name their speaker ([USER:Ana]), say who said what. When the topic asks "
    "when something happened, give the date the session started and any date said in it. "
    "Be concise and factual, in the past tense. If the transcript says nothing about the "
    "topic, reply with one sentence saying so."
)


def _echo(query: str) -> str:
    """*query* as an answer repeats it: cut at :data:`MAX_ECHOED_QUERY_CHARS`."""
    if len(query) <= MAX_ECHOED_QUERY_CHARS:
        return query
    return f"{query[:MAX_ECHOED_QUERY_CHARS]}… ({len(query):,} characters)"


class _ArgumentError(ValueError):
    """An argument the tool cannot use; the message says how to call it instead."""


def _query_text(value: Any) -> str:
    """The query the model sent: text, a number, or a list of words (joined)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return " ".join(item.strip() for item in value if item.strip())
    raise _ArgumentError(
        f"query must be text (a question or keywords), got {type(value).__name__}; "
        "omit it to list recent conversations."
    )


SEARCHABLE_ROLES = ("user", "assistant", "system", "tool", "developer", "function")


def _role_filter(value: Any) -> list[str]:
    """The roles to search (``[]`` for all): comma-separated text or a list of names."""
    if value is None:
        return []
    if isinstance(value, str):
        items: list[Any] = value.split(",")
    elif isinstance(value, list):
        items = value
    else:
        items = [value]
    roles = [item.strip().lower() for item in items if isinstance(item, str) and item.strip()]
    unknown = [item for item in items if not isinstance(item, str)] + [
        role for role in roles if role not in SEARCHABLE_ROLES
    ]
    if unknown:
        raise _ArgumentError(
            f"role_filter: unknown role {unknown[0]!r}; use comma-separated roles from "
            f"{', '.join(SEARCHABLE_ROLES)} (e.g. 'user,assistant'), or omit it to search all."
        )
    return list(dict.fromkeys(roles))


def _roles(value: Any) -> list[str]:
    if isinstance(value, str):
        items: Sequence[Any] = value.split(",")
    elif isinstance(value, (list, tuple)):
        items = value
    else:
        return []
    return [str(item).strip() for item in items if str(item).strip()]


def _history_end(store: SessionStore) -> float | None:
    """When the stored conversations end (epoch seconds; ``None``: none, or no date)."""
    return store.last_activity()


def _time_range(span: TimeSpan, anchored: bool = False) -> dict[str, str]:
    found = {
        "phrase": span.phrase,
        "from": datetime.fromtimestamp(span.since).isoformat(timespec="minutes"),
        "to": datetime.fromtimestamp(span.until).isoformat(timespec="minutes"),
    }
    if anchored:
        found["read_against"] = "the last stored conversation (the history ends before it)"
    return found


def format_when(stamp: Any) -> str:
    """A timestamp as local time ('May 02, 2024 at 03:04 PM'); 'unknown' when absent."""
    if stamp is None:
        return "unknown"
    try:
        return datetime.fromtimestamp(float(stamp)).strftime("%B %d, %Y at %I:%M %p")
    except (TypeError, ValueError, OverflowError, OSError):
        return str(stamp)


def _message_text(store: SessionStore, hit: Mapping[str, Any]) -> str | None:
    """The text of the message *hit* names, to place a raw preview at it."""
    for message in store.get_messages(hit["session_id"]):
        if message.get("id") == hit.get("id"):
            content = message.get("content")
            return content if isinstance(content, str) else None
    return None


def _meaning_note(store: SessionStore, query: str) -> dict[str, Any] | None:
    """What the reply says when meaning could search *query* but the history is only partly
    embedded: how many messages meaning covered, and that the rest were searched by words."""
    coverage = store.meaning_coverage(query)
    if coverage is None or coverage[0] >= coverage[1]:
        return None
    embedded, total = coverage
    rest = total - embedded
    if embedded >= SEMANTIC_MIN_COVERAGE * total:
        note = (
            f"Meaning used for {embedded} of {total} messages; the other {rest} are not "
            "embedded yet and were searched by their words only."
        )
    else:
        note = (
            f"Searched by words only: just {embedded} of {total} messages are embedded for "
            f"search by meaning (it is used from {SEMANTIC_MIN_COVERAGE:.0%} on)."
        )
    return {
        "embedded": embedded,
        "messages": total,
        "note": note + " `hermes-memory sessions index` embeds the rest.",
    }


def usable_summary(text: Any) -> str | None:
    """*text* stripped and capped, or ``None`` when it is empty or not readable prose.

    Reasoning (``<think>…</think>``) and memory fences are removed first: a
    recap must not smuggle a ``<memory-context>`` block into the agent's turn.
    """
    if not isinstance(text, str):
        return None
    text = sanitize_context(strip_reasoning(text)).strip()
    if not text:
        return None
    printable = sum(1 for char in text if char.isprintable() or char in "\n\t")
    if printable / len(text) < 0.9 or not any(char.isalpha() for char in text):
        return None
    if len(text) > MAX_SUMMARY_CHARS:
        text = text[:MAX_SUMMARY_CHARS].rstrip() + "…"
    return text


class SessionSearchTool:
    """The ``session_search`` tool bound to one ``$HERMES_HOME`` and config."""

    def __init__(
        self,
        hermes_home: Path,
        config: Mapping[str, Any] | None = None,
        *,
        user_id: str | None = None,
    ) -> None:
        self.hermes_home = Path(hermes_home)
        self.user_id = user_id
        """Whose sessions are searched (``None``: every session, the single-user case)."""
        self.config: Mapping[str, Any] = config or {}
        self.db_path = self.hermes_home / "state.db"
        self.session_id: str | None = None
        self._store: SessionStore | None = None
        self._client: ChatClient | None = None
        self._client_checked = False
        self._warned_hidden_sources = False
        self._lock = threading.Lock()

    # -- lifecycle --------------------------------------------------------------------
    def set_session(self, session_id: str | None) -> None:
        """The conversation the agent is in now; its whole lineage is never returned."""
        self.session_id = session_id or None

    def close(self) -> None:
        """Close the database and the model client (safe to call twice)."""
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None
            if self._client is not None:
                self._client.close()
                self._client = None
            self._client_checked = False

    # -- settings ---------------------------------------------------------------------
    def _setting(self, key: str, default: Any = None) -> Any:
        return cfg_get(self.config, f"session_search.{key}", default)

    @property
    def hidden_sources(self) -> list[str]:
        """Sources never searched (default: ``tool``)."""
        value = self._setting("hidden_sources", DEFAULT_HIDDEN_SOURCES)
        if value is None:
            return []
        if not isinstance(value, (str, list, tuple)):
            # A number or a mapping would otherwise hide nothing: keep the default hidden.
            if not self._warned_hidden_sources:
                self._warned_hidden_sources = True
                log.warning(
                    "session_search.hidden_sources must be a list of sources (or comma-separated "
                    "text), found %.80r; using the default %s. Fix it in config.yaml.",
                    value,
                    DEFAULT_HIDDEN_SOURCES,
                )
            return list(DEFAULT_HIDDEN_SOURCES)
        return _roles(value)

    @property
    def max_concurrency(self) -> int:
        """Summaries in flight at once (``session_search.max_concurrency``, 1–5, default 3)."""
        return lenient_count(
            self._setting("max_concurrency", DEFAULT_CONCURRENCY),
            DEFAULT_CONCURRENCY,
            1,
            MAX_CONCURRENCY,
        )

    def _open_store(self) -> SessionStore | None:
        with self._lock:
            # Anything at the path but a file is opened too, so the store says what it is.
            if self._store is None:
                url = sessions_url(self.config)
                if url is not None or os.path.lexists(self.db_path):
                    self._store = open_session_store(
                        url or self.db_path,
                        read_only=True,
                        semantic=self._setting("semantic"),
                        user_id=self.user_id,
                    )
            return self._store

    def _summary_client(self) -> ChatClient | None:
        with self._lock:
            if not self._client_checked:
                self._client_checked = True
                from hermes_core.llm import ChatClient  # httpx: only when a summary is due

                try:
                    self._client = ChatClient.from_config(
                        self.config, section="session_search", max_retries=2
                    )
                except (HermesMemoryError, ValueError) as exc:
                    log.warning("session_search: summary model unusable (%s); using previews", exc)
                    self._client = None
            return self._client

    def index_recent(self, budget: float = INDEX_BUDGET) -> int:
        """Embed messages not embedded yet for semantic recall, for at most *budget* seconds.

        Does nothing (0) when semantic search is off or not installed, or there is no
        history yet; problems are logged, never raised (it runs after a turn).
        """
        try:
            store = self._open_store()
            if store is None or store.semantic_index() is None:
                return 0
            return store.index_messages(budget=budget)
        except Exception as exc:  # a background nicety: the next search catches up anyway
            log.warning("session_search: embedding new messages failed (%s)", exc)
            return 0

    # -- the tool -----------------------------------------------------------------------
    def __call__(self, args: Mapping[str, Any] | None = None) -> str:
        """Run the tool with the model's arguments; always returns a JSON string."""
        try:
            result = self._run(args if isinstance(args, Mapping) else {})
        except Exception as exc:  # the agent loop must get an answer, not a traceback
            log.exception("session_search failed")
            result = {"success": False, "error": f"Search failed: {exc}"}
        return json.dumps(result, ensure_ascii=False, default=str)

    def _run(self, args: Mapping[str, Any]) -> dict[str, Any]:
        try:
            query = _query_text(args.get("query"))
            roles = _role_filter(args.get("role_filter"))
        except _ArgumentError as exc:
            return {"success": False, "error": str(exc)}
        limit = lenient_count(args.get("limit", DEFAULT_LIMIT), DEFAULT_LIMIT, 1, MAX_LIMIT)
        try:
            store = self._open_store()
        except HermesMemoryError as exc:
            return {"success": False, "error": f"Cannot open the session history: {exc}"}
        if store is None:
            return {
                "success": True,
                "query": _echo(query),
                "results": [],
                "count": 0,
                "message": "No past conversations are stored yet.",
            }
        current = store.get_lineage_members(self.session_id) if self.session_id else set()
        if not query:
            return self._recent(store, limit, current)
        first, _ = find_time_span(query)
        if first is None:
            return self._search(store, query, roles, limit, current)
        # An archive ending in 2023 (an imported benchmark): "in May" is its last May, and
        # "this year" or "last week" is read as if asked just after its last conversation.
        found, rest, anchored = find_time_span_in_history(query, _history_end(store))
        span = found or first
        if not names_a_topic(rest):
            listed = self._recent(store, limit, current, span)
            if listed["count"]:
                if anchored:
                    listed["time_range"] = _time_range(span, anchored)
                return listed
            answer = self._recent(store, limit, current)
            answer["message"] = (
                f"No conversations in '{span.phrase}'; showing the most recent ones instead."
            )
            return answer
        answer = self._search(store, rest, roles, limit, current, span)
        if answer["count"]:
            if anchored:
                answer["time_range"] = _time_range(span, anchored)
            return answer
        answer = self._search(store, query, roles, limit, current)
        answer["message"] = (
            f"Nothing matched within '{span.phrase}'; these matches are from any time."
            if answer["count"]
            else "No matching conversations found."
        )
        return answer

    def _recent(
        self, store: SessionStore, limit: int, current: set[str], span: TimeSpan | None = None
    ) -> dict[str, Any]:
        rows = store.list_sessions(
            limit=limit + 5,
            exclude_sources=self.hidden_sources,
            order_by_last_active=True,
            active_since=span.since if span else None,
            active_until=span.until if span else None,
        )
        results = []
        for row in rows:
            ids = {row["id"], row.get("lineage_root_id"), *row.get("lineage_ids", [])}
            if ids & current:
                continue
            results.append(
                {
                    "session_id": row["id"],
                    "title": row.get("title"),
                    "source": row.get("source"),
                    "started_at": row.get("started_at"),
                    "last_active": row.get("last_active"),
                    "message_count": row.get("message_count"),
                    "preview": row.get("preview"),
                }
            )
            if len(results) >= limit:
                break
        answer: dict[str, Any] = {
            "success": True,
            "mode": "recent",
            "results": results,
            "count": len(results),
            "message": f"Showing {len(results)} most recent conversations. "
            "Pass a query to search them.",
        }
        if span is not None:
            answer["time_range"] = _time_range(span)
            answer["message"] = (
                f"Showing {len(results)} conversations from the time asked for "
                f"('{span.phrase}'). "
                "Ask about a topic to search them."
            )
        return answer

    def _search(
        self,
        store: SessionStore,
        query: str,
        roles: list[str],
        limit: int,
        current: set[str],
        span: TimeSpan | None = None,
    ) -> dict[str, Any]:
        hits = store.search_messages(
            query,
            role_filter=roles,
            exclude_sources=self.hidden_sources,
            exclude_session_ids=sorted(current),
            since=span.since if span else None,
            until=span.until if span else None,
            limit=SEARCH_POOL,
            snippets=False,
        )
        meaning = _meaning_note(store, query)
        chosen: list[dict[str, Any]] = []
        roots_seen: set[str] = set()
        roots: dict[str, str] = {}
        for hit in hits:
            if hit["session_id"] not in roots:
                roots[hit["session_id"]] = store.get_lineage_root(hit["session_id"])
            root = roots[hit["session_id"]]
            if root in roots_seen:
                continue
            roots_seen.add(root)
            chosen.append({**hit, "lineage_root": root})
            if len(chosen) >= limit:
                break
        if not chosen:
            empty: dict[str, Any] = {
                "success": True,
                "query": _echo(query),
                "results": [],
                "count": 0,
                "message": "No matching conversations found.",
            }
            if meaning:
                empty["meaning"] = meaning
            return empty
        window_chars = lenient_count(
            self._setting("max_chars", DEFAULT_WINDOW_CHARS), DEFAULT_WINDOW_CHARS, 2000, 1_000_000
        )
        prepared = []
        for hit in chosen:
            session = store.get_session(hit["session_id"]) or {}
            text = format_conversation(store.get_messages_as_conversation(hit["session_id"]))
            prepared.append((hit, session, truncate_around_matches(text, query, window_chars)))
        summaries, usage = self._summarise(query, prepared)
        results = []
        for (hit, session, window), summary in zip(prepared, summaries, strict=True):
            entry: dict[str, Any] = {
                "session_id": hit["session_id"],
                "title": session.get("title"),
                "when": format_when(session.get("started_at") or hit.get("session_started")),
                "source": session.get("source") or hit.get("source") or "unknown",
                "model": session.get("model") or hit.get("model"),
                "matched_role": hit.get("role"),
                "match_message_id": hit.get("id"),
            }
            if hit["lineage_root"] != hit["session_id"]:
                entry["lineage_root"] = hit["lineage_root"]
            if summary is not None:
                entry["summary"] = summary
            else:
                anchor = _message_text(store, hit) if window else None
                preview = match_preview(window, query, PREVIEW_CHARS, anchor) if window else ""
                entry["summary"] = f"{PREVIEW_HEADER}\n{preview or 'No preview available.'}"
                entry["preview"] = True
            results.append(entry)
        answer: dict[str, Any] = {
            "success": True,
            "query": _echo(query),
            "results": results,
            "count": len(results),
            "sessions_searched": len(chosen),
        }
        if usage:
            answer["summary_usage"] = usage
        if span is not None:
            answer["time_range"] = _time_range(span)
        if meaning:
            answer["meaning"] = meaning
        return answer

    # -- summaries ------------------------------------------------------------------------
    def _summarise(
        self, query: str, prepared: list[tuple[dict[str, Any], dict[str, Any], str]]
    ) -> tuple[list[str | None], dict[str, Any]]:
        client = self._summary_client()
        if client is None:
            return [None] * len(prepared), {}
        call_timeout = lenient_seconds(self._setting("timeout"), DEFAULT_CALL_TIMEOUT)
        overall = lenient_seconds(self._setting("overall_timeout"), DEFAULT_OVERALL_TIMEOUT)
        max_tokens = lenient_count(
            self._setting("max_tokens", DEFAULT_SUMMARY_TOKENS), DEFAULT_SUMMARY_TOKENS, 64, 32_000
        )
        deadline = time.monotonic() + overall
        executor = concurrent.futures.ThreadPoolExecutor(
            max_workers=min(self.max_concurrency, len(prepared)),
            thread_name_prefix="session-summary",
        )
        futures = [
            executor.submit(
                self._summarise_one,
                client,
                query,
                hit,
                session,
                window,
                call_timeout,
                deadline,
                max_tokens,
            )
            for hit, session, window in prepared
        ]
        concurrent.futures.wait(futures, timeout=overall)
        # Late calls are abandoned (their previews are used); queued ones never start.
        executor.shutdown(wait=False, cancel_futures=True)
        summaries: list[str | None] = []
        calls = prompt_tokens = completion_tokens = 0
        for future in futures:
            if not future.done() or future.cancelled() or future.exception() is not None:
                summaries.append(None)
                continue
            text, counts = future.result()
            summaries.append(text)
            if counts is not None:
                calls += 1
                prompt_tokens += counts[0]
                completion_tokens += counts[1]
        if not calls:
            return summaries, {}
        usage = {
            "calls": calls,
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "model": client.model,
        }
        return summaries, usage

    @staticmethod
    def _summarise_one(
        client: ChatClient,
        query: str,
        hit: dict[str, Any],
        session: dict[str, Any],
        window: str,
        timeout: float,
        deadline: float,
        max_tokens: int,
    ) -> tuple[str | None, tuple[int, int] | None]:
        # The whole call, retries included, ends by the search's deadline, so no
        # abandoned call outlives it (and keeps the process from exiting).
        budget = min(timeout, deadline - time.monotonic())
        if not window.strip() or budget <= 0:
            return None, None
        name = session.get("title") or hit["session_id"]
        user = (
            f"Search topic: {query}\n"
            f"Session: {name} (source: {session.get('source') or 'unknown'}, "
            f"started {format_when(session.get('started_at'))})\n\n"
            f"TRANSCRIPT:\n{window}\n\n"
            f"Summarise this conversation with a focus on: {query}"
        )
        try:
            response = client.chat(
                [{"role": "system", "content": _SYSTEM_PROMPT}, {"role": "user", "content": user}],
                timeout=budget,
                answer_timeout=budget,
                temperature=0.1,
                max_tokens=max_tokens,
            )
        except LLMError as exc:
            log.info("session_search: summary of %s failed: %s", hit["session_id"], exc)
            return None, None
        usage = response.usage
        counts = (usage.prompt_tokens, usage.completion_tokens) if usage else (0, 0)
        return usable_summary(response.content), counts
