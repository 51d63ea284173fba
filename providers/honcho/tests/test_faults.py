"""Failures: 5xx, timeouts, malformed JSON, refused connections, retries and the breaker.

In every case the hooks return normally (empty recall, JSON error from tools),
writes wait in the queue, the breaker opens after repeated failures and closes
again once Honcho answers.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from typing import Any

import pytest
from fake_honcho import FakeHoncho
from hermes_memory_honcho import HonchoMemoryProvider
from honcho_test_support import ManualClock

from hermes_core.resilience import BreakerState

MakeProvider = Callable[..., HonchoMemoryProvider]


def tool(provider: HonchoMemoryProvider, name: str, **args: Any) -> dict[str, Any]:
    result = json.loads(provider.handle_tool_call(name, args))
    assert isinstance(result, dict)
    return result


def breaker_state(provider: HonchoMemoryProvider) -> BreakerState:
    client = provider._get_client()
    assert client is not None
    return client.breaker.state


def a_turn(provider: HonchoMemoryProvider, text: str) -> str:
    """What the host does each turn; it must never raise."""
    recalled = provider.prefetch(text)
    provider.sync_turn(text, "Answer.")
    provider.queue_prefetch(text)
    return recalled


@pytest.mark.parametrize("status", [500, 502, 503])
def test_server_errors_degrade_to_empty_results(
    make_provider: MakeProvider, fake: FakeHoncho, configure: Callable[..., None], status: int
) -> None:
    configure(breaker_threshold=100)
    fake.fail(times=None, status=status)
    provider = make_provider("s1")
    assert a_turn(provider, "Where did I park?") == ""
    assert provider.wait_idle()
    assert "failed" in tool(provider, "honcho_search", query="park")["error"]
    assert provider.pending_writes() == 2


def test_timeouts_are_bounded_and_degrade(
    make_provider: MakeProvider, fake: FakeHoncho, configure: Callable[..., None]
) -> None:
    configure(timeout=0.2, prefetch_wait=1.0)
    fake.fail(r"context", times=None, status=None, delay=1.0)
    provider = make_provider("s1")
    assert provider.prefetch("What is my name?") == ""
    error = tool(provider, "honcho_context")["error"]
    assert "timed out after 0.2s" in error


@pytest.mark.parametrize("body", [b"{not json", b"", b"[1, 2, 3]", b'{"unexpected": true}'])
def test_malformed_responses_degrade(
    make_provider: MakeProvider, fake: FakeHoncho, body: bytes
) -> None:
    fake.fail(r"peers/\w+/(context|card)$", times=None, status=200, raw_body=body)
    provider = make_provider("s1")
    assert provider.wait_idle()
    assert provider.prefetch("What do you know?") == ""
    result = tool(provider, "honcho_profile")
    assert "error" in result or result["result"] == "No profile facts available yet."


def test_dropped_connections_are_retried(
    make_provider: MakeProvider, fake: FakeHoncho, configure: Callable[..., None]
) -> None:
    configure(max_retries=2)
    provider = make_provider("s1", user_id="alice")
    assert provider.wait_idle()
    fake.reset_log()
    fake.fail(r"/search$", times=1, status=None, drop=True)
    fake.fail(r"/search$", times=1, status=503)
    result = tool(provider, "honcho_search", query="anything")
    assert result == {"result": "No relevant context found."}
    assert len(fake.calls("POST", r".*/search")) == 3


def test_client_errors_are_not_retried_and_do_not_trip_the_breaker(
    make_provider: MakeProvider, fake: FakeHoncho, configure: Callable[..., None]
) -> None:
    configure(max_retries=3, breaker_threshold=1)
    provider = make_provider("s1", user_id="alice")
    assert provider.wait_idle()
    fake.reset_log()
    result = tool(provider, "honcho_conclude", delete_id="conc_missing")
    assert "Conclusion not found" in result["error"]
    assert len(fake.calls("GET", r".*/conclusions/conc_missing")) == 1
    assert breaker_state(provider) is BreakerState.CLOSED


def test_wrong_api_key_is_reported(
    make_provider: MakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HONCHO_API_KEY", "wrong")
    provider = make_provider("s1")
    assert provider.prefetch("Who am I?") == ""
    assert "Invalid or missing API key" in tool(provider, "honcho_profile")["error"]


def test_breaker_opens_then_closes_and_queued_writes_go_out(
    make_provider: MakeProvider, fake: FakeHoncho, configure: Callable[..., None]
) -> None:
    configure(breaker_threshold=2, breaker_cooldown=30)
    clock = ManualClock()
    provider = make_provider("s1", user_id="alice", clock=clock)
    assert provider.wait_idle()
    fake.fail(times=None, status=500)

    for n in range(3):
        a_turn(provider, f"Fact number {n} about my garden.")
        assert provider.wait_idle()
    assert breaker_state(provider) is BreakerState.OPEN
    seen = len(fake.calls())
    refused = tool(provider, "honcho_search", query="garden")
    assert "paused" in refused["error"]
    assert len(fake.calls()) == seen, "an open breaker sends nothing"
    assert provider.pending_writes() == 6

    fake.clear_faults()
    clock.advance(29)
    a_turn(provider, "Still down for me?")
    assert provider.wait_idle()
    assert len(fake.calls()) == seen
    clock.advance(1)
    a_turn(provider, "And now?")
    assert provider.wait_idle()

    assert breaker_state(provider) is BreakerState.CLOSED
    assert provider.pending_writes() == 0
    assert fake.messages_of("alice") == [
        "Fact number 0 about my garden.",
        "Fact number 1 about my garden.",
        "Fact number 2 about my garden.",
        "Still down for me?",
        "And now?",
    ]


def test_connection_refused_then_server_comes_up(
    make_provider: MakeProvider, configure: Callable[..., None]
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    configure(base_url=f"http://127.0.0.1:{port}", breaker_threshold=3, breaker_cooldown=5)
    clock = ManualClock()
    provider = make_provider("s1", user_id="alice", clock=clock)
    assert provider.wait_idle(), "the warm-up failed twice"
    assert "Connection error" in tool(provider, "honcho_search", query="tomatoes")["error"]
    assert breaker_state(provider) is BreakerState.OPEN
    assert a_turn(provider, "I grow tomatoes.") == ""
    assert provider.wait_idle()

    with FakeHoncho(port=port) as server:
        clock.advance(5)
        a_turn(provider, "I also grow basil.")
        assert provider.wait_idle()
        assert breaker_state(provider) is BreakerState.CLOSED
        assert server.messages_of("alice") == ["I grow tomatoes.", "I also grow basil."]
        assert "basil" in tool(provider, "honcho_search", query="basil")["result"]


def test_queue_is_bounded_while_honcho_is_down(
    make_provider: MakeProvider, fake: FakeHoncho, configure: Callable[..., None]
) -> None:
    configure(max_pending_messages=4)
    provider = make_provider("s1", user_id="alice")
    fake.fail(r"/messages$", times=None, status=503)
    for n in range(5):
        provider.sync_turn(f"Message {n}.", f"Reply {n}.")
    assert provider.wait_idle()
    assert provider.pending_writes() == 4
    fake.clear_faults()
    provider.on_session_end([])
    assert fake.messages_of("alice") == ["Message 3.", "Message 4."]
