"""A stateful local fake of Honcho's v3 HTTP API, served on 127.0.0.1.

It speaks the paths, query parameters and JSON bodies that honcho-ai 2.7 sends
(see ``honcho/http/routes.py`` and the SDK's pydantic models), stores
workspaces, peers, sessions, messages, peer cards and conclusions, and answers
searches, contexts, representations and dialectic questions from what it
stored. There is no model: a deterministic "deriver" turns each sentence an
observed peer writes into an explicit conclusion, and matching is word overlap.

Every request is recorded (method, path, query, JSON body, headers), and faults
can be injected per route: an HTTP status, a delay, a malformed body or a
dropped connection.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from hermes_core.testing.http_fake import (
    FakeHTTPServer,
    HTTPError,
    RecordedRequest,
    Reply,
    RouteHandler,
)

_WORD = re.compile(r"[a-z0-9]+")
_STOP_WORDS = (
    "a an and are as at be but by do does for from had has have he her his how i if in is it "
    "its me my no not of on or our she so than that the their them they this to was we were "
    "what when where which who why will with you your"
)
_STOP = frozenset(_STOP_WORDS.split())
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_ID = r"([A-Za-z0-9_-]+)"


def words(text: str) -> set[str]:
    """Lower-case content words of *text* (the fake's notion of meaning)."""
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 1}


def _now() -> str:
    return datetime.now(UTC).isoformat()


def _with_query_and_body(action: Callable[..., tuple[int, Any]]) -> RouteHandler:
    """Call a route as ``action(*path_ids, query=..., body=...)``."""
    return lambda request, *ids: action(*ids, query=request.query, body=request.body)


@dataclass
class _State:
    workspaces: dict[str, dict[str, Any]] = field(default_factory=dict)
    peers: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    sessions: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    session_peers: dict[tuple[str, str], dict[str, dict[str, Any]]] = field(default_factory=dict)
    messages: list[dict[str, Any]] = field(default_factory=list)
    conclusions: dict[str, dict[str, Any]] = field(default_factory=dict)
    cards: dict[tuple[str, str, str], list[str]] = field(default_factory=dict)


class FakeHoncho(FakeHTTPServer):
    """The fake server. Use as a context manager, or call :meth:`start` / :meth:`stop`."""

    name = "fake-honcho"

    def __init__(
        self, *, api_key: str | None = "test-key", port: int = 0, summary_after: int = 4
    ) -> None:
        super().__init__(port=port)
        self.api_key = api_key
        self.summary_after = summary_after
        self.state = _State()
        self._ids = itertools.count(1)
        ws, sess, peer = f"/v3/workspaces/{_ID}", f"/sessions/{_ID}", f"/peers/{_ID}"
        routes: list[tuple[str, str, Callable[..., tuple[int, Any]]]] = [
            ("POST", r"/v3/workspaces", self._workspace),
            ("POST", f"{ws}/peers", self._peer),
            ("POST", f"{ws}/sessions", self._session),
            ("POST", f"{ws}{sess}/peers", self._add_peers),
            ("GET", f"{ws}{sess}{peer}/config", self._peer_config),
            ("POST", f"{ws}{sess}/messages", self._add_messages),
            ("POST", f"{ws}{sess}/messages/list", self._list_messages),
            ("GET", f"{ws}{sess}/context", self._session_context),
            ("GET", f"{ws}{peer}/context", self._peer_context),
            ("POST", f"{ws}{peer}/representation", self._representation),
            ("GET", f"{ws}{peer}/card", self._get_card),
            ("PUT", f"{ws}{peer}/card", self._set_card),
            ("POST", f"{ws}{peer}/chat", self._chat),
            ("POST", f"{ws}{peer}/search", self._peer_search),
            ("POST", f"{ws}/search", self._workspace_search),
            ("POST", f"{ws}/conclusions", self._create_conclusions),
            ("POST", f"{ws}/conclusions/query", self._query_conclusions),
            ("POST", f"{ws}/conclusions/list", self._list_conclusions),
            ("GET", f"{ws}/conclusions/{_ID}", self._get_conclusion),
            ("DELETE", f"{ws}/conclusions/{_ID}", self._delete_conclusion),
        ]
        for method, pattern, action in routes:
            self.route(method, pattern, _with_query_and_body(action))

    def before_route(self, request: RecordedRequest) -> Reply | None:
        if self.api_key and request.headers.get("authorization") != f"Bearer {self.api_key}":
            return Reply(401, {"detail": "Invalid or missing API key"})
        return None

    def error_body(self, status: int, message: str) -> Any:
        return {"detail": message}

    def dispatch(self, request: RecordedRequest) -> Reply | tuple[int, Any]:
        with self._lock:  # the routes share the state
            return super().dispatch(request)

    def messages_of(self, peer_id: str) -> list[str]:
        """Contents of every stored message written by *peer_id*."""
        with self._lock:
            return [m["content"] for m in self.state.messages if m["peer_id"] == peer_id]

    # -- validation helpers ------------------------------------------------------------------

    @staticmethod
    def _object(body: Any, allowed: set[str], required: Collection[str] = ()) -> dict[str, Any]:
        if body is None:
            body = {}
        if not isinstance(body, dict):
            raise HTTPError(422, "Body must be a JSON object")
        extra = set(body) - allowed
        if extra:
            raise HTTPError(422, f"Unknown fields: {sorted(extra)}")
        missing = set(required) - set(body)
        if missing:
            raise HTTPError(422, f"Missing fields: {sorted(missing)}")
        return body

    def _need_workspace(self, ws: str) -> None:
        if ws not in self.state.workspaces:
            raise HTTPError(404, f"Workspace {ws} not found")

    def _need_peer(self, ws: str, peer: str) -> dict[str, Any]:
        self._need_workspace(ws)
        found = self.state.peers.get((ws, peer))
        if found is None:
            raise HTTPError(404, f"Peer {peer} not found")
        return found

    def _need_session(self, ws: str, sid: str) -> dict[str, Any]:
        self._need_workspace(ws)
        found = self.state.sessions.get((ws, sid))
        if found is None:
            raise HTTPError(404, f"Session {sid} not found")
        return found

    def _get_or_create_peer(self, ws: str, peer: str) -> dict[str, Any]:
        return self.state.peers.setdefault(
            (ws, peer),
            {
                "id": peer,
                "workspace_id": ws,
                "created_at": _now(),
                "metadata": {},
                "configuration": {},
            },
        )

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}_{next(self._ids)}"

    # -- matching ---------------------------------------------------------------------------

    @staticmethod
    def _rank(
        items: list[dict[str, Any]], query: str | None, key: str = "content", limit: int = 10
    ) -> list[dict[str, Any]]:
        """Items sharing words with *query*, best first (newest first without a query)."""
        if not query:
            return list(reversed(items))[:limit]
        wanted = words(query)
        scored = [(len(wanted & words(item[key])), index, item) for index, item in enumerate(items)]
        scored = [entry for entry in scored if entry[0] > 0]
        scored.sort(key=lambda entry: (-entry[0], -entry[1]))
        return [item for _, _, item in scored[:limit]]

    def _facts(self, ws: str, observed: str, observer: str | None) -> list[dict[str, Any]]:
        return [
            c
            for c in self.state.conclusions.values()
            if c["workspace_id"] == ws
            and c["observed_id"] == observed
            and (observer is None or c["observer_id"] == observer)
        ]

    def _representation_text(
        self,
        ws: str,
        observed: str,
        observer: str | None,
        search_query: str | None,
        top_k: int,
        max_facts: int,
    ) -> str:
        facts = self._facts(ws, observed, observer)
        chosen = self._rank(facts, search_query, limit=top_k) if search_query else []
        for fact in reversed(facts):
            if len(chosen) >= max_facts:
                break
            if fact not in chosen:
                chosen.append(fact)
        return "\n".join(f"- {fact['content']}" for fact in chosen[:max_facts])

    def _conclusion(
        self, ws: str, observer: str, observed: str, content: str, session_id: str | None
    ) -> dict[str, Any]:
        item: dict[str, Any] = {
            "id": self._new_id("conc"),
            "content": content,
            "observer_id": observer,
            "observed_id": observed,
            "session_id": session_id,
            "level": "explicit",
            "source_ids": None,
            "times_derived": 1,
            "created_at": _now(),
            "workspace_id": ws,
        }
        self.state.conclusions[item["id"]] = item
        return item

    @staticmethod
    def _public(item: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in item.items() if k != "workspace_id"}

    # -- routes -----------------------------------------------------------------------------

    def _workspace(self, *, query: dict[str, str], body: Any) -> tuple[int, Any]:
        data = self._object(body, {"id", "metadata", "configuration"}, {"id"})
        workspace = self.state.workspaces.setdefault(
            data["id"],
            {"id": data["id"], "metadata": {}, "configuration": {}, "created_at": _now()},
        )
        return 200, workspace

    def _peer(self, ws: str, *, query: dict[str, str], body: Any) -> tuple[int, Any]:
        data = self._object(body, {"id", "metadata", "configuration"}, {"id"})
        self._need_workspace(ws)
        peer = self._get_or_create_peer(ws, data["id"])
        if data.get("metadata") is not None:
            peer["metadata"] = data["metadata"]
        if data.get("configuration") is not None:
            peer["configuration"] = data["configuration"]
        return 200, peer

    def _session(self, ws: str, *, query: dict[str, str], body: Any) -> tuple[int, Any]:
        data = self._object(body, {"id", "metadata", "configuration", "peers", "scopes"}, {"id"})
        self._need_workspace(ws)
        session = self.state.sessions.setdefault(
            (ws, data["id"]),
            {
                "id": data["id"],
                "workspace_id": ws,
                "is_active": True,
                "metadata": {},
                "configuration": {},
                "created_at": _now(),
            },
        )
        if data.get("peers"):
            self._add_peers(ws, data["id"], query=query, body=data["peers"])
        return 200, session

    def _add_peers(self, ws: str, sid: str, *, query: dict[str, str], body: Any) -> tuple[int, Any]:
        session = self._need_session(ws, sid)
        if not isinstance(body, dict):
            raise HTTPError(422, "Body must map peer ids to configurations")
        members = self.state.session_peers.setdefault((ws, sid), {})
        for peer_id, config in body.items():
            self._object(config, {"observe_me", "observe_others"})
            self._get_or_create_peer(ws, peer_id)
            members[peer_id] = {
                "observe_me": config.get("observe_me"),
                "observe_others": config.get("observe_others"),
            }
        return 200, session

    def _peer_config(
        self, ws: str, sid: str, peer: str, *, query: dict[str, str], body: Any
    ) -> tuple[int, Any]:
        self._need_session(ws, sid)
        config = self.state.session_peers.get((ws, sid), {}).get(peer)
        if config is None:
            raise HTTPError(404, f"Peer {peer} is not in session {sid}")
        return 200, config

    def _add_messages(
        self, ws: str, sid: str, *, query: dict[str, str], body: Any
    ) -> tuple[int, Any]:
        data = self._object(body, {"messages"}, {"messages"})
        self._need_session(ws, sid)
        batch = data["messages"]
        if not isinstance(batch, list) or not 1 <= len(batch) <= 100:
            raise HTTPError(422, "messages must hold 1 to 100 items")
        members = self.state.session_peers.setdefault((ws, sid), {})
        created = []
        for entry in batch:
            item = self._object(
                entry,
                {"content", "peer_id", "metadata", "configuration", "created_at"},
                {"content", "peer_id"},
            )
            if not isinstance(item["content"], str) or not isinstance(item["peer_id"], str):
                raise HTTPError(422, "content and peer_id must be strings")
            self._get_or_create_peer(ws, item["peer_id"])
            members.setdefault(item["peer_id"], {"observe_me": None, "observe_others": None})
            message = {
                "id": self._new_id("msg"),
                "content": item["content"],
                "peer_id": item["peer_id"],
                "session_id": sid,
                "metadata": item.get("metadata") or {},
                "created_at": _now(),
                "workspace_id": ws,
                "token_count": len(item["content"].split()),
            }
            self.state.messages.append(message)
            created.append(message)
            if members[item["peer_id"]].get("observe_me") is not False:
                for sentence in _SENTENCE.split(item["content"].strip()):
                    if words(sentence):
                        self._conclusion(ws, item["peer_id"], item["peer_id"], sentence, sid)
        return 200, created

    def _list_messages(
        self, ws: str, sid: str, *, query: dict[str, str], body: Any
    ) -> tuple[int, Any]:
        self._need_session(ws, sid)
        items = [
            m for m in self.state.messages if m["workspace_id"] == ws and m["session_id"] == sid
        ]
        page, size = int(query.get("page", 1)), int(query.get("size", 50))
        chunk = items[(page - 1) * size : page * size]
        pages = max(1, -(-len(items) // size))
        return 200, {
            "items": chunk,
            "page": page,
            "size": size,
            "total": len(items),
            "pages": pages,
        }

    def _session_context(
        self, ws: str, sid: str, *, query: dict[str, str], body: Any
    ) -> tuple[int, Any]:
        self._need_session(ws, sid)
        messages = [
            m for m in self.state.messages if m["workspace_id"] == ws and m["session_id"] == sid
        ]
        budget = int(query.get("tokens") or 100000)
        chosen: list[dict[str, Any]] = []
        for message in reversed(messages):
            if sum(m["token_count"] for m in chosen) + message["token_count"] > budget:
                break
            chosen.insert(0, message)
        summary = None
        if query.get("summary") == "true" and len(messages) >= self.summary_after:
            text = "Earlier in this conversation: " + " / ".join(
                m["content"][:60] for m in messages[:5]
            )
            summary = {
                "content": text,
                "message_id": messages[-1]["id"],
                "summary_type": "short",
                "created_at": _now(),
                "token_count": len(text.split()),
            }
        target = query.get("peer_target")
        representation, card = None, None
        if target:
            perspective = query.get("peer_perspective")
            representation = (
                self._representation_text(
                    ws,
                    target,
                    perspective,
                    query.get("search_query"),
                    int(query.get("search_top_k") or 10),
                    int(query.get("max_conclusions") or 25),
                )
                or None
            )
            card = self.state.cards.get((ws, perspective or target, target))
        return 200, {
            "id": sid,
            "messages": chosen,
            "summary": summary,
            "peer_representation": representation,
            "peer_card": card,
        }

    def _peer_context(
        self, ws: str, peer: str, *, query: dict[str, str], body: Any
    ) -> tuple[int, Any]:
        self._need_peer(ws, peer)
        target = query.get("target") or peer
        observer = None if target == peer else peer
        representation = self._representation_text(
            ws,
            target,
            observer,
            query.get("search_query"),
            int(query.get("search_top_k") or 10),
            int(query.get("max_conclusions") or 25),
        )
        return 200, {
            "peer_id": peer,
            "target_id": target,
            "representation": representation or None,
            "peer_card": self.state.cards.get((ws, peer, target)),
        }

    def _representation(
        self, ws: str, peer: str, *, query: dict[str, str], body: Any
    ) -> tuple[int, Any]:
        data = self._object(
            body,
            {
                "session_id",
                "target",
                "search_query",
                "search_top_k",
                "search_max_distance",
                "include_most_frequent",
                "max_conclusions",
                "scope",
                "filters",
            },
        )
        self._need_peer(ws, peer)
        target = data.get("target") or peer
        text = self._representation_text(
            ws,
            target,
            None if target == peer else peer,
            data.get("search_query"),
            int(data.get("search_top_k") or 10),
            int(data.get("max_conclusions") or 25),
        )
        return 200, {"representation": text}

    def _get_card(self, ws: str, peer: str, *, query: dict[str, str], body: Any) -> tuple[int, Any]:
        self._need_peer(ws, peer)
        target = query.get("target") or peer
        return 200, {"peer_card": self.state.cards.get((ws, peer, target))}

    def _set_card(self, ws: str, peer: str, *, query: dict[str, str], body: Any) -> tuple[int, Any]:
        data = self._object(body, {"peer_card"}, {"peer_card"})
        self._need_peer(ws, peer)
        card = data["peer_card"]
        if not isinstance(card, list) or not all(isinstance(f, str) for f in card):
            raise HTTPError(422, "peer_card must be a list of strings")
        self.state.cards[(ws, peer, query.get("target") or peer)] = list(card)
        return 200, {"peer_card": list(card)}

    def _chat(self, ws: str, peer: str, *, query: dict[str, str], body: Any) -> tuple[int, Any]:
        data = self._object(
            body,
            {
                "query",
                "stream",
                "target",
                "session_id",
                "reasoning_level",
                "response_format",
                "include_evidence",
                "scope",
                "filters",
            },
            {"query"},
        )
        self._need_peer(ws, peer)
        if data.get("reasoning_level") not in (None, "minimal", "low", "medium", "high", "max"):
            raise HTTPError(422, "Invalid reasoning_level")
        target = data.get("target") or peer
        facts = self._facts(ws, target, None if target == peer else peer)
        best = self._rank(facts, data["query"], limit=3)
        content = None
        if best:
            content = "From what I know: " + "; ".join(f["content"] for f in best)
        return 200, {"content": content}

    def _search_messages(self, ws: str, body: Any, author: str | None) -> list[dict[str, Any]]:
        data = self._object(body, {"query", "filters", "limit", "scope"}, {"query"})
        filters = data.get("filters") or {}
        items = [
            m
            for m in self.state.messages
            if m["workspace_id"] == ws and (author is None or m["peer_id"] == author)
        ]
        for key in ("peer_id", "session_id"):
            wanted = filters.get(key)
            if isinstance(wanted, dict) and "in" in wanted:
                items = [m for m in items if m[key] in wanted["in"]]
            elif isinstance(wanted, str):
                items = [m for m in items if m[key] == wanted]
        limit = int(data.get("limit") or 10)
        if not 1 <= limit <= 100:
            raise HTTPError(422, "limit must be between 1 and 100")
        return self._rank(items, data["query"], limit=limit)

    def _peer_search(
        self, ws: str, peer: str, *, query: dict[str, str], body: Any
    ) -> tuple[int, Any]:
        self._need_peer(ws, peer)
        return 200, self._search_messages(ws, body, author=peer)

    def _workspace_search(self, ws: str, *, query: dict[str, str], body: Any) -> tuple[int, Any]:
        self._need_workspace(ws)
        return 200, self._search_messages(ws, body, author=None)

    def _create_conclusions(self, ws: str, *, query: dict[str, str], body: Any) -> tuple[int, Any]:
        data = self._object(body, {"conclusions"}, {"conclusions"})
        self._need_workspace(ws)
        created = []
        for entry in data["conclusions"]:
            item = self._object(
                entry,
                {"content", "observer_id", "observed_id", "session_id"},
                {"content", "observer_id", "observed_id"},
            )
            self._need_peer(ws, item["observer_id"])
            self._need_peer(ws, item["observed_id"])
            if item.get("session_id") is not None:
                self._need_session(ws, item["session_id"])
            created.append(
                self._public(
                    self._conclusion(
                        ws,
                        item["observer_id"],
                        item["observed_id"],
                        item["content"],
                        item.get("session_id"),
                    )
                )
            )
        return 200, created

    def _filtered_conclusions(self, ws: str, filters: dict[str, Any]) -> list[dict[str, Any]]:
        items = [c for c in self.state.conclusions.values() if c["workspace_id"] == ws]
        for key, wanted in filters.items():
            if isinstance(wanted, dict) and "in" in wanted:
                items = [c for c in items if c.get(key) in wanted["in"]]
            else:
                items = [c for c in items if c.get(key) == wanted]
        return items

    def _query_conclusions(self, ws: str, *, query: dict[str, str], body: Any) -> tuple[int, Any]:
        data = self._object(body, {"query", "top_k", "distance", "filters"}, {"query"})
        self._need_workspace(ws)
        items = self._filtered_conclusions(ws, data.get("filters") or {})
        ranked = self._rank(items, data["query"], limit=int(data.get("top_k") or 10))
        return 200, [self._public(c) for c in ranked]

    def _list_conclusions(self, ws: str, *, query: dict[str, str], body: Any) -> tuple[int, Any]:
        data = self._object(body, {"filters"})
        self._need_workspace(ws)
        items = self._filtered_conclusions(ws, data.get("filters") or {})
        page, size = int(query.get("page", 1)), int(query.get("size", 50))
        chunk = [self._public(c) for c in items[(page - 1) * size : page * size]]
        return 200, {
            "items": chunk,
            "page": page,
            "size": size,
            "total": len(items),
            "pages": max(1, -(-len(items) // size)),
        }

    def _get_conclusion(
        self, ws: str, cid: str, *, query: dict[str, str], body: Any
    ) -> tuple[int, Any]:
        found = self.state.conclusions.get(cid)
        if found is None or found["workspace_id"] != ws:
            raise HTTPError(404, "Conclusion not found")
        return 200, self._public(found)

    def _delete_conclusion(
        self, ws: str, cid: str, *, query: dict[str, str], body: Any
    ) -> tuple[int, Any]:
        found = self.state.conclusions.get(cid)
        if found is None or found["workspace_id"] != ws:
            raise HTTPError(404, "Conclusion not found")
        del self.state.conclusions[cid]
        return 204, None
