"""Contract: the exact HTTP calls the provider makes through the real mem0ai SDK.

If an SDK upgrade changes a method, path, body or auth header, these fail loudly.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from conftest import StartProvider, platform_config
from fake_mem0 import FakeMem0Platform, RecordedRequest
from hermes_memory_mem0 import Mem0MemoryProvider

SDK_HEADER_PREFIX = "mem0-python/2."


def assert_authenticated(request: RecordedRequest, fake: FakeMem0Platform) -> None:
    assert request.headers["authorization"] == f"Token {fake.api_key}"
    assert request.headers["mem0-user-id"] == hashlib.md5(fake.api_key.encode()).hexdigest()
    assert request.headers["x-mem0-client"].startswith(SDK_HEADER_PREFIX)


def call(provider: Mem0MemoryProvider, tool: str, **args: Any) -> dict[str, Any]:
    return json.loads(provider.handle_tool_call(tool, args))


def test_every_call_has_the_documented_method_path_body_and_auth(
    fake_platform: FakeMem0Platform, start_provider: StartProvider
) -> None:
    provider = start_provider(
        platform_config(fake_platform), env={"MEM0_API_KEY": fake_platform.api_key}, user_id="u-1"
    )
    assert provider.flush(60)  # first use imports the SDK

    assert call(provider, "mem0_add", content="Prefers green tea")["result"]
    found = call(provider, "mem0_search", query="green tea", top_k=3)
    memory_id = found["results"][0]["id"]
    assert call(provider, "mem0_update", memory_id=memory_id, text="Prefers black tea")["result"]
    assert call(provider, "mem0_delete", memory_id=memory_id)["result"]
    provider.sync_turn("I moved to Lisbon.", "Noted, Lisbon it is.", session_id="s-9")
    assert provider.flush(10)

    seen = [(r.method, r.path) for r in fake_platform.requests]
    assert seen == [
        ("GET", "/v1/ping/"),  # the SDK validates the key when the client is built
        ("POST", "/v3/memories/add/"),
        ("POST", "/v3/memories/search/"),
        ("GET", f"/v1/memories/{memory_id}/"),  # ownership check before a change
        ("PUT", f"/v1/memories/{memory_id}/"),
        ("GET", f"/v1/memories/{memory_id}/"),
        ("DELETE", f"/v1/memories/{memory_id}/"),
        ("POST", "/v3/memories/add/"),
    ]
    for request in fake_platform.requests:
        assert_authenticated(request, fake_platform)
        assert request.query == {}

    ping, add, search, _, put, _, delete, sync = fake_platform.requests
    assert ping.body is None and delete.body is None
    assert add.body == {
        "messages": [{"role": "user", "content": "Prefers green tea"}],
        "user_id": "u-1",
        "agent_id": "hermes",
        "infer": False,
        "metadata": {"source": "mem0_add", "channel": "cli"},
    }
    assert search.body == {
        "query": "green tea",
        "filters": {"user_id": "u-1"},
        "top_k": 3,
        "rerank": False,
    }
    assert put.body == {"text": "Prefers black tea"}
    assert sync.body == {
        "messages": [
            {"role": "user", "content": "I moved to Lisbon."},
            {"role": "assistant", "content": "Noted, Lisbon it is."},
        ],
        "user_id": "u-1",
        "agent_id": "hermes",
        "infer": True,
        "metadata": {"channel": "cli", "session_id": "s-9"},
    }
    for request in (add, search, put, sync):
        assert request.headers["content-type"] == "application/json"


def test_prefetch_search_uses_configured_scope_and_options(
    fake_platform: FakeMem0Platform, start_provider: StartProvider
) -> None:
    provider = start_provider(
        platform_config(fake_platform, top_k=4, rerank=True, threshold=0.25, agent_id="ops-bot"),
        env={"MEM0_API_KEY": fake_platform.api_key, "MEM0_USER_ID": "pinned"},
    )
    provider.prefetch("what tea do I like")
    (search,) = fake_platform.calls("POST", "/v3/memories/search/")
    assert search.body == {
        "query": "what tea do I like",
        "filters": {"user_id": "pinned"},
        "top_k": 4,
        "rerank": True,
        "threshold": 0.25,
    }


def test_long_turns_are_cut_at_a_sentence_end_before_sending(
    fake_platform: FakeMem0Platform, start_provider: StartProvider
) -> None:
    provider = start_provider(
        platform_config(fake_platform, sync_max_chars=60),
        env={"MEM0_API_KEY": fake_platform.api_key},
    )
    user = "My cat is called Miso. " + "She likes boxes and long naps in the sun. " * 5
    provider.sync_turn(user, "ok")
    assert provider.flush(10)
    (add,) = fake_platform.calls("POST", "/v3/memories/add/")
    sent = add.body["messages"][0]["content"]
    assert len(sent) <= 60 and sent.endswith(".")
    assert sent.startswith("My cat is called Miso.")
