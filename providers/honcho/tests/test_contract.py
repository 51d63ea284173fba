"""Contract tests: the exact HTTP calls the provider makes through honcho-ai.

Each step drives the provider, waits for its background workers, and compares
(method, path, query, JSON body) of every request with what Honcho's v3 API
expects, and checks the auth and client headers on all of them. An SDK upgrade
that changes the wire fails here.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from fake_honcho import FakeHoncho
from hermes_memory_honcho import HonchoMemoryProvider
from honcho_test_support import API_KEY

WS = "/v3/workspaces/ws"
USER_IN = {"observe_me": True, "observe_others": False}
AI_IN = {"observe_me": False, "observe_others": True}

Call = tuple[str, str, dict[str, str], Any]


def take(fake: FakeHoncho) -> list[Call]:
    """The calls since the last take, after checking every one's headers."""
    calls = fake.calls()
    fake.reset_log()
    for request in calls:
        assert request.headers.get("authorization") == f"Bearer {API_KEY}", request.path
        assert request.headers.get("x-honcho-host", "").startswith("honcho-python/2.")
        if request.body is not None:
            assert request.headers.get("content-type") == "application/json"
    return [(r.method, r.path, r.query, r.body) for r in calls]


@pytest.fixture
def provider(make_provider: Callable[..., HonchoMemoryProvider]) -> HonchoMemoryProvider:
    return make_provider("s1", user_id="alice")


def test_initialize_warms_the_session_and_recall(
    provider: HonchoMemoryProvider, fake: FakeHoncho
) -> None:
    assert provider.wait_idle()
    assert take(fake) == [
        ("POST", "/v3/workspaces", {}, {"id": "ws"}),
        ("POST", f"{WS}/peers", {}, {"id": "alice"}),
        ("GET", f"{WS}/peers/alice/context", {}, None),
        ("POST", f"{WS}/peers", {}, {"id": "hermes"}),
        ("POST", f"{WS}/sessions", {}, {"id": "s1", "peers": {"alice": USER_IN, "hermes": AI_IN}}),
        (
            "GET",
            f"{WS}/sessions/s1/context",
            {"summary": "true", "limit_to_session": "false", "tokens": "800"},
            None,
        ),
    ]


def test_sync_turn_writes_both_messages_in_one_call(
    provider: HonchoMemoryProvider, fake: FakeHoncho
) -> None:
    provider.wait_idle()
    fake.reset_log()
    provider.sync_turn("I live in Porto.", "Porto is lovely.", session_id="s1")
    assert provider.wait_idle()
    assert take(fake) == [
        (
            "POST",
            f"{WS}/sessions/s1/messages",
            {},
            {
                "messages": [
                    {"content": "I live in Porto.", "peer_id": "alice"},
                    {"content": "Porto is lovely.", "peer_id": "hermes"},
                ]
            },
        )
    ]


def test_queue_prefetch_reads_context_and_asks_the_dialectic(
    provider: HonchoMemoryProvider, fake: FakeHoncho
) -> None:
    provider.wait_idle()
    fake.reset_log()
    provider.queue_prefetch("where do I live?", session_id="s1")
    assert provider.wait_idle()
    assert take(fake) == [
        ("GET", f"{WS}/peers/alice/context", {"search_query": "where do I live?"}, None),
        (
            "GET",
            f"{WS}/sessions/s1/context",
            {"summary": "true", "limit_to_session": "false", "tokens": "800"},
            None,
        ),
        (
            "POST",
            f"{WS}/peers/alice/chat",
            {},
            {"query": "where do I live?", "stream": False, "reasoning_level": "low"},
        ),
    ]


def test_memory_writes_are_mirrored_as_conclusions(
    provider: HonchoMemoryProvider, fake: FakeHoncho
) -> None:
    provider.wait_idle()
    fake.reset_log()
    provider.on_memory_write("add", "user", "Prefers tea over coffee")
    assert provider.wait_idle()
    created = take(fake)
    assert created == [
        (
            "POST",
            f"{WS}/conclusions",
            {},
            {
                "conclusions": [
                    {
                        "observer_id": "hermes",
                        "observed_id": "alice",
                        "content": "Prefers tea over coffee",
                        "session_id": "s1",
                    }
                ]
            },
        )
    ]
    (conclusion_id,) = list(fake.state.conclusions)

    provider.on_memory_write(
        "remove", "user", "", metadata={"previous_content": "Prefers tea over coffee"}
    )
    assert provider.wait_idle()
    assert take(fake) == [
        (
            "POST",
            f"{WS}/conclusions/query",
            {},
            {
                "query": "Prefers tea over coffee",
                "top_k": 10,
                "filters": {"observer_id": "hermes", "observed_id": "alice"},
            },
        ),
        ("GET", f"{WS}/conclusions/{conclusion_id}", {}, None),
        ("DELETE", f"{WS}/conclusions/{conclusion_id}", {}, None),
    ]
    assert fake.state.conclusions == {}


def tool(provider: HonchoMemoryProvider, name: str, **args: Any) -> dict[str, Any]:
    result = json.loads(provider.handle_tool_call(name, args))
    assert isinstance(result, dict)
    return result


def test_every_tool_call_on_the_wire(provider: HonchoMemoryProvider, fake: FakeHoncho) -> None:
    provider.wait_idle()
    fake.reset_log()

    tool(provider, "honcho_profile")
    assert take(fake) == [("GET", f"{WS}/peers/alice/card", {}, None)]

    tool(provider, "honcho_profile", card=["Name: Alice"])
    assert take(fake) == [("PUT", f"{WS}/peers/alice/card", {}, {"peer_card": ["Name: Alice"]})]

    tool(provider, "honcho_search", query="porto", max_tokens=300)
    assert take(fake) == [
        ("POST", f"{WS}/peers/alice/search", {}, {"query": "porto", "filters": None, "limit": 4})
    ]

    tool(provider, "honcho_context", query="travel")
    assert take(fake) == [
        (
            "GET",
            f"{WS}/sessions/s1/context",
            {
                "summary": "true",
                "limit_to_session": "false",
                "tokens": "1600",
                "search_query": "travel",
                "peer_target": "alice",
            },
            None,
        )
    ]

    tool(provider, "honcho_reasoning", query="What does Alice drink?", reasoning_level="high")
    assert take(fake) == [
        (
            "POST",
            f"{WS}/peers/alice/chat",
            {},
            {"query": "What does Alice drink?", "stream": False, "reasoning_level": "high"},
        )
    ]

    saved = tool(provider, "honcho_conclude", conclusion="Alice is vegetarian")
    assert take(fake) == [
        (
            "POST",
            f"{WS}/conclusions",
            {},
            {
                "conclusions": [
                    {
                        "observer_id": "hermes",
                        "observed_id": "alice",
                        "content": "Alice is vegetarian",
                        "session_id": "s1",
                    }
                ]
            },
        )
    ]

    tool(provider, "honcho_conclude", delete_id=saved["id"])
    assert take(fake) == [
        ("GET", f"{WS}/conclusions/{saved['id']}", {}, None),
        ("DELETE", f"{WS}/conclusions/{saved['id']}", {}, None),
    ]


def test_no_auth_header_without_a_key(
    make_provider: Callable[..., HonchoMemoryProvider],
    configure: Callable[..., None],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A self-hosted server without auth: the SDK sends no Authorization header."""
    with FakeHoncho(api_key=None) as open_server:
        configure(base_url=open_server.url)
        monkeypatch.delenv("HONCHO_API_KEY")
        provider = make_provider("s1")
        assert provider.wait_idle()
        calls = open_server.calls()
        assert calls, "the warm-up reached the server"
        assert all("authorization" not in request.headers for request in calls)
        assert calls[1].body == {"id": "user"}, "the configured default user peer"
