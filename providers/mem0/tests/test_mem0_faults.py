"""Fault injection: 5xx, timeouts, malformed JSON, refused and dropped connections.

In every case the turn completes (no hook raises), recall degrades to empty,
tools answer JSON errors, and the circuit breaker opens and later closes.
"""

from __future__ import annotations

import json
import socket
import time
from typing import Any

import pytest
from conftest import StartProvider, platform_config
from fake_mem0 import FakeMem0Platform
from hermes_memory_mem0 import Mem0MemoryProvider

SEARCH = "/v3/memories/search/"
ADD = "/v3/memories/add/"
MALFORMED_JSON = b'{"results": [{"id": '


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def run_turn(provider: Mem0MemoryProvider, message: str) -> tuple[str, dict]:
    """Drive every per-turn hook the way a host does; none of them may raise."""
    provider.on_turn_start(1, message)
    recalled = provider.prefetch(message)
    tool = json.loads(provider.handle_tool_call("mem0_search", {"query": message}))
    provider.sync_turn(message, "An answer.")
    provider.queue_prefetch(message)
    assert provider.flush(30)
    return recalled, tool


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def started(fake_platform: FakeMem0Platform, start_provider: StartProvider) -> StartProvider:
    def start(clock: Clock | None = None, **settings: Any) -> Mem0MemoryProvider:
        config = platform_config(fake_platform, **settings)
        provider = start_provider(
            config,
            env={"MEM0_API_KEY": fake_platform.api_key},
            user_id="alice",
            provider_kwargs={"clock": clock} if clock else {},
        )
        assert provider.flush(60)  # connected (first use imports the SDK)
        fake_platform.reset_log()
        return provider

    return start


@pytest.mark.parametrize(
    ("fault", "error_words"),
    [
        ({"status": 500}, "http 500"),
        ({"status": 503}, "http 503"),
        ({"status": None, "delay": 1.0}, "timed out"),
        ({"status": 200, "raw_body": MALFORMED_JSON}, "malformed json"),
        ({"drop": True}, "request failed"),
    ],
    ids=["500", "503", "timeout", "malformed-json", "dropped-connection"],
)
def test_a_failing_service_never_breaks_the_turn(
    started: StartProvider,
    fake_platform: FakeMem0Platform,
    fault: dict[str, Any],
    error_words: str,
) -> None:
    fake_platform.seed("The user's car is a red Fiat", user_id="alice")
    provider = started(timeout=0.3, retries=0, breaker_threshold=20)
    fake_platform.fail(times=50, **fault)
    recalled, tool = run_turn(provider, "what car do I drive")
    assert recalled == ""
    assert error_words in tool["error"].lower()
    assert provider.breaker.consecutive_failures >= 2

    fake_platform.clear_faults()
    recalled, tool = run_turn(provider, "which car is mine")
    assert tool["count"] == 1
    assert provider.breaker.consecutive_failures == 0


def test_connection_refused_degrades_and_opens_the_breaker(start_provider: StartProvider) -> None:
    clock = Clock()
    config = {
        "mem0": {
            "mode": "platform",
            "host": f"http://127.0.0.1:{closed_port()}",
            "timeout": 1,
            "retries": 1,
            "retry_backoff": 0.01,
            "breaker_threshold": 3,
            "breaker_cooldown": 60,
            "prefetch_wait": 5,
        }
    }
    provider = start_provider(
        config, env={"MEM0_API_KEY": "m0-k"}, provider_kwargs={"clock": clock}
    )
    assert provider.flush(60)
    recalled, tool = run_turn(provider, "where do I live")
    assert recalled == ""
    assert tool["error"].startswith("mem0_search failed: Cannot reach Mem0")
    assert provider.breaker.state == "open"
    tool = json.loads(provider.handle_tool_call("mem0_search", {"query": "where do I live"}))
    assert "temporarily unavailable after 3 consecutive failures" in tool["error"]


def test_breaker_opens_after_repeated_failures_and_closes_after_cooldown(
    started: StartProvider, fake_platform: FakeMem0Platform
) -> None:
    fake_platform.seed("The user's favourite tea is sencha", user_id="alice")
    clock = Clock()
    provider = started(clock=clock, retries=0, breaker_threshold=2, breaker_cooldown=30)
    fake_platform.fail(SEARCH, times=100, status=502)
    for _ in range(2):
        error = json.loads(provider.handle_tool_call("mem0_search", {"query": "tea"}))["error"]
        assert "HTTP 502" in error
    assert provider.breaker.state == "open"

    calls = len(fake_platform.requests)
    refused = json.loads(provider.handle_tool_call("mem0_search", {"query": "tea"}))
    assert "temporarily unavailable" in refused["error"]
    assert provider.prefetch("which tea do I like") == ""
    provider.sync_turn("I now prefer matcha.", "Noted.")  # skipped while open
    assert provider.flush(10)
    assert len(fake_platform.requests) == calls  # nothing was sent while open

    fake_platform.clear_faults()
    clock.now += 31
    found = json.loads(provider.handle_tool_call("mem0_search", {"query": "tea"}))
    assert found["count"] == 1
    assert provider.breaker.state == "closed"


def test_reads_are_retried_on_transient_failures(
    started: StartProvider, fake_platform: FakeMem0Platform
) -> None:
    fake_platform.seed("Standup is at 9:30", user_id="alice")
    provider = started(retries=2, timeout=0.3)
    fake_platform.fail(SEARCH, status=503)
    fake_platform.fail(SEARCH, status=None, delay=1.0)
    found = json.loads(provider.handle_tool_call("mem0_search", {"query": "standup"}))
    assert found["count"] == 1
    assert len(fake_platform.calls("POST", SEARCH)) == 3
    assert provider.breaker.consecutive_failures == 0


@pytest.mark.parametrize(
    ("fault", "sent", "stored"),
    [
        ({"status": 503}, 2, 1),  # not processed: safe to send again
        ({"status": 429}, 2, 1),
        ({"status": 500}, 1, 0),  # may have been processed: never resent
        ({"status": None, "delay": 1.0}, 1, 1),  # the server stored it after we gave up
    ],
    ids=["503-retried", "429-retried", "500-not-retried", "timeout-not-retried"],
)
def test_writes_are_retried_only_when_they_cannot_have_taken_effect(
    started: StartProvider,
    fake_platform: FakeMem0Platform,
    fault: dict[str, Any],
    sent: int,
    stored: int,
) -> None:
    provider = started(retries=2, timeout=0.3)
    fake_platform.fail(ADD, **fault)
    provider.sync_turn("My locker code is 1234.", "Got it.")
    assert provider.flush(30)
    assert len(fake_platform.calls("POST", ADD)) == sent
    # A delayed request is stored by the server after the client gave up; wait for it.
    deadline = time.monotonic() + 10
    while len(fake_platform.memories_of("alice")) < stored and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(fake_platform.memories_of("alice")) == stored


def test_a_rejected_api_key_is_reported_and_not_retried(
    fake_platform: FakeMem0Platform, start_provider: StartProvider
) -> None:
    provider = start_provider(
        platform_config(fake_platform, retries=3), env={"MEM0_API_KEY": "m0-wrong"}
    )
    assert provider.flush(60)
    result = json.loads(provider.handle_tool_call("mem0_search", {"query": "anything"}))
    assert "api key" in result["error"].lower()
    pings = fake_platform.calls("GET", "/v1/ping/")
    assert len(pings) == 2  # one at warm-up, one for the tool call: no retries
    assert provider.prefetch("anything at all") == ""
