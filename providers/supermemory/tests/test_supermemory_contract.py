"""Contract: the exact HTTP calls (method, path, body, auth) the provider makes.

These pin the supermemory 5.x wire format. An SDK upgrade that changes a path,
a body key or the auth scheme fails here.
"""

from __future__ import annotations

import json

from fake_supermemory import FakeSupermemory, RecordedRequest


def _assert_common(request: RecordedRequest, fake: FakeSupermemory) -> None:
    assert request.headers["authorization"] == f"Bearer {fake.api_key}"
    assert request.headers["x-sm-source"] == "hermes-memory"
    assert request.headers["content-type"].startswith("application/json")


def test_session_start_warms_the_profile(make_provider, fake: FakeSupermemory) -> None:
    provider = make_provider()
    provider.flush(5)
    provider.prefetch("what do I like to drink?")  # waits for the warm-up's queue slot
    profile_calls = fake.calls("POST", "/profile")
    assert profile_calls, fake.requests
    request = profile_calls[0]
    assert request.path == "/ns/hermes/profile"
    assert request.body == {}
    _assert_common(request, fake)


def test_prefetch_searches_the_namespace(make_provider, fake: FakeSupermemory) -> None:
    provider = make_provider()
    provider.prefetch("which editor does the user prefer")
    (request,) = fake.calls("POST", "/search")
    assert request.path == "/ns/hermes/search"
    assert request.body == {
        "query": "which editor does the user prefer",
        "limit": 10,
        "searchMode": "hybrid",
    }
    _assert_common(request, fake)


def test_sync_turn_adds_one_document_with_a_stable_id(make_provider, fake) -> None:
    provider = make_provider()
    provider.sync_turn("My cat is called Miso.", "Noted, Miso it is.", session_id="session-1")
    assert provider.flush(5)
    (request,) = fake.calls("POST", "/document")
    assert request.path == "/ns/hermes/document"
    assert set(request.body) == {"content", "id", "metadata"}
    assert request.body["content"] == "user: My cat is called Miso.\nassistant: Noted, Miso it is."
    assert request.body["id"].startswith("hermes_turn_")
    assert request.body["metadata"] == {
        "source": "hermes",
        "type": "conversation_turn",
        "session_id": "session-1",
    }
    _assert_common(request, fake)


def test_supporting_context_is_sent_when_configured(
    make_provider, fake, configured, write_config
) -> None:
    write_config({**configured, "supporting_context": "Focus on the user's preferences."})
    provider = make_provider()
    provider.sync_turn("I prefer tea over coffee.", "Tea it is.")
    assert provider.flush(5)
    (request,) = fake.calls("POST", "/document")
    assert request.body["supportingContext"] == "Focus on the user's preferences."


def test_memory_write_mirrors_add_and_remove(make_provider, fake) -> None:
    provider = make_provider()
    provider.on_memory_write("add", "user", "Prefers metric units")
    provider.on_memory_write(
        "remove", "user", "", metadata={"previous_content": "Prefers metric units"}
    )
    assert provider.flush(5)
    add, delete = fake.calls("POST", "/document")[0], fake.calls("DELETE", "/document")[0]
    assert add.body["content"] == "Prefers metric units"
    assert add.body["metadata"] == {"source": "hermes", "type": "builtin_memory", "target": "user"}
    assert delete.path == "/ns/hermes/document"
    assert delete.body == {"ids": [add.body["id"]]}
    _assert_common(delete, fake)


def test_tools_call_their_endpoints(make_provider, fake) -> None:
    provider = make_provider()
    stored = json.loads(
        provider.handle_tool_call("supermemory_store", {"content": "Deploys happen on Fridays."})
    )
    (add,) = fake.calls("POST", "/document")
    assert add.body["id"] == stored["id"]
    assert add.body["metadata"]["type"] == "explicit_fact"

    provider.handle_tool_call("supermemory_search", {"query": "deploys", "limit": 3})
    search = fake.calls("POST", "/search")[-1]
    assert search.body == {"query": "deploys", "limit": 3, "searchMode": "memories"}

    forgotten = json.loads(provider.handle_tool_call("supermemory_forget", {"query": "deploys"}))
    by_query = fake.calls("POST", "/search")[-1]
    assert by_query.body == {"query": "deploys", "limit": 1, "searchMode": "memories"}
    (forget,) = fake.calls("DELETE", "/memories")
    assert forget.path == "/ns/hermes/memories"
    assert forget.body == {"ids": [forgotten["id"]]}
    _assert_common(forget, fake)

    provider.handle_tool_call("supermemory_profile", {})
    assert fake.calls("POST", "/profile")[-1].body == {}


def test_per_user_namespace_reaches_the_path(make_provider, fake) -> None:
    provider = make_provider(user_id="alice@example.com", agent_identity="coder")
    provider.prefetch("anything about my projects")
    paths = {request.path for request in fake.requests}
    assert paths, "no request made"
    assert all(path.startswith(f"/ns/{provider.namespace}/") for path in paths)
    assert provider.namespace.startswith("hermes-alice_example_com_")
