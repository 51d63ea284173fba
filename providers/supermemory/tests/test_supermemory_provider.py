"""Behaviour of the provider against the stateful fake: recall, capture, mirror, tools."""

from __future__ import annotations

import json

import pytest
from hermes_memory_supermemory import SupermemoryProvider

from hermes_core.provider import MemoryProvider, RecallStatus


def test_is_a_memory_provider_named_supermemory() -> None:
    provider = SupermemoryProvider()
    assert isinstance(provider, MemoryProvider)
    assert provider.name == "supermemory"


def test_round_trip_a_synced_turn_is_recalled_by_a_later_prefetch(make_provider, fake) -> None:
    provider = make_provider()
    provider.sync_turn("My favourite colour is teal.", "Teal is a lovely colour.")
    assert provider.flush(5)
    recalled = provider.prefetch("what is my favourite colour?")
    assert "My favourite colour is teal." in recalled
    assert recalled.startswith("## Supermemory")
    status = provider.recall_status()
    assert isinstance(status, RecallStatus) and status.count >= 1


def test_queued_prefetch_is_served_on_the_next_turn_without_a_new_search(
    make_provider, fake
) -> None:
    provider = make_provider()
    provider.sync_turn("The staging database is postgres 16.", "Good to know.")
    assert provider.flush(5)
    provider.queue_prefetch("which database runs staging")
    provider._pending.future.result(timeout=5)  # the background recall has finished
    searches_before = len(fake.calls("POST", "/search"))
    recalled = provider.prefetch("tell me about staging")
    assert "postgres 16" in recalled
    assert len(fake.calls("POST", "/search")) == searches_before


def test_prefetch_that_is_not_ready_returns_empty_and_serves_the_result_later(
    make_provider, fake, configured, write_config
) -> None:
    write_config({**configured, "prefetch_wait": 0.0})
    provider = make_provider()
    provider.sync_turn("Our office is in Lisbon near the river.", "Lisbon, noted.")
    assert provider.flush(5)
    fake.delay_next(1, seconds=0.3, path="/search")
    first = provider.prefetch("where is the office")
    assert first == ""
    assert provider.recall_status() is None
    provider._pending.future.result(timeout=5)
    assert "Lisbon" in provider.prefetch("where is the office again")


@pytest.mark.parametrize("prompt", ["ok", "thanks!", "/help", "   "])
def test_trivial_prompts_do_not_recall(make_provider, fake, prompt: str) -> None:
    provider = make_provider()
    provider.flush(5)
    assert provider.prefetch(prompt) == ""
    provider.queue_prefetch(prompt)
    assert fake.calls("POST", "/search") == []


def test_trivial_and_tiny_turns_are_not_captured(make_provider, fake) -> None:
    provider = make_provider()
    provider.sync_turn("ok", "Great, anything else I can help with today?")
    provider.sync_turn("hm?", "Yes.")
    assert provider.flush(5)
    assert fake.calls("POST", "/document") == []


def test_recalled_context_is_never_stored_again(make_provider, fake) -> None:
    provider = make_provider()
    fenced = "<memory-context>\n## Supermemory\n- secret recalled fact\n</memory-context>\n"
    provider.sync_turn(fenced + "Please plan my week around the gym.", "Here is a plan.")
    assert provider.flush(5)
    (request,) = fake.calls("POST", "/document")
    assert "secret recalled fact" not in request.body["content"]
    assert "plan my week around the gym" in request.body["content"]


def test_the_same_turn_is_written_once(make_provider, fake) -> None:
    provider = make_provider()
    for _ in range(3):
        provider.sync_turn("I live in Porto these days.", "Porto, lovely.")
    provider.on_session_end(
        [
            {"role": "user", "content": "I live in Porto these days."},
            {"role": "assistant", "content": "Porto, lovely."},
        ]
    )
    assert len(fake.calls("POST", "/document")) == 1


@pytest.mark.parametrize("context", ["subagent", "cron", "flush"])
def test_non_primary_contexts_never_write(make_provider, fake, context: str) -> None:
    provider = make_provider(agent_context=context)
    provider.sync_turn("My dog is named Pixel.", "Pixel, got it.")
    provider.on_memory_write("add", "user", "Has a dog named Pixel")
    provider.on_session_end(
        [{"role": "user", "content": "x" * 30}, {"role": "assistant", "content": "y" * 30}]
    )
    stored = json.loads(provider.handle_tool_call("supermemory_store", {"content": "A fact."}))
    assert "read-only" in stored["error"]
    assert provider.flush(5)
    assert [
        r
        for r in fake.requests
        if r.method != "POST" or not r.path.endswith(("/search", "/profile"))
    ] == []
    assert "reads Supermemory only" in provider.system_prompt_block()


def test_each_user_gets_an_isolated_namespace(make_provider, fake) -> None:
    alice = make_provider(user_id="alice")
    bob = make_provider(user_id="bob")
    alice.sync_turn("My locker code is 4711, remember it.", "Remembered.")
    assert alice.flush(5)
    assert alice.namespace != bob.namespace
    assert "4711" not in bob.prefetch("what is my locker code")
    assert "4711" in alice.prefetch("what is my locker code")


def test_identity_template_names_the_namespace(make_provider, configured, write_config) -> None:
    write_config({**configured, "namespace": "team_{identity}"})
    assert make_provider(agent_identity="coder").namespace == "team_coder"
    assert make_provider().namespace == "team_default"


def test_session_end_captures_turns_that_were_never_synced(make_provider, fake) -> None:
    provider = make_provider()
    messages = [
        {"role": "user", "content": "Book the flight to Oslo on Tuesday."},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "1"}]},
        {"role": "tool", "content": "booked"},
        {"role": "assistant", "content": "Your flight to Oslo is booked for Tuesday."},
        {"role": "user", "content": "And a hotel close to the station."},
        {"role": "assistant", "content": "Hotel booked next to Oslo S."},
    ]
    provider.on_session_end(messages)  # waits for the writes
    contents = [r.body["content"] for r in fake.calls("POST", "/document")]
    assert contents == [
        "user: Book the flight to Oslo on Tuesday.\n"
        "assistant: Your flight to Oslo is booked for Tuesday.",
        "user: And a hotel close to the station.\nassistant: Hotel booked next to Oslo S.",
    ]


def test_pre_compress_captures_the_turns_and_adds_nothing(make_provider, fake) -> None:
    provider = make_provider()
    messages = [
        {"role": "user", "content": "The release branch is called r-42."},
        {"role": "assistant", "content": "Understood, r-42."},
    ]
    assert provider.on_pre_compress(messages) == ""
    assert provider.flush(5)
    assert "The release branch is called r-42." in fake.memories("hermes")


def test_builtin_memory_mirror_follows_add_replace_remove(make_provider, fake) -> None:
    provider = make_provider()
    provider.on_memory_write("add", "memory", "Project uses uv for packaging")
    provider.on_memory_write(
        "replace",
        "memory",
        "Project uses hatch for packaging",
        metadata={"previous_content": "Project uses uv for packaging"},
    )
    assert provider.flush(5)
    assert fake.memories("hermes") == ["Project uses hatch for packaging"]
    provider.on_memory_write(
        "remove", "memory", "", metadata={"previous_content": "Project uses hatch for packaging"}
    )
    assert provider.flush(5)
    assert fake.memories("hermes") == []


def test_mirror_can_be_turned_off(make_provider, fake, configured, write_config) -> None:
    write_config({**configured, "mirror_builtin": False})
    provider = make_provider()
    provider.on_memory_write("add", "user", "Likes jazz")
    assert provider.flush(5)
    assert fake.calls("POST", "/document") == []


def test_tools_round_trip_store_search_forget_profile(make_provider, fake) -> None:
    provider = make_provider()
    saved = json.loads(
        provider.handle_tool_call(
            "supermemory_store",
            {"content": "The user prefers window seats.", "category": "preference"},
        )
    )
    assert saved["saved"] is True
    found = json.loads(provider.handle_tool_call("supermemory_search", {"query": "window seats"}))
    assert found["count"] == 1
    assert found["results"][0]["content"] == "The user prefers window seats."
    assert 0 < found["results"][0]["similarity"] <= 100
    profile = json.loads(provider.handle_tool_call("supermemory_profile", {}))
    assert "The user prefers window seats." in profile["profile"]
    assert profile["static_count"] == 1
    gone = json.loads(
        provider.handle_tool_call("supermemory_forget", {"id": found["results"][0]["id"]})
    )
    assert gone["forgotten"] is True
    again = json.loads(provider.handle_tool_call("supermemory_search", {"query": "window seats"}))
    assert all(r["content"] != "The user prefers window seats." for r in again["results"])


def test_tool_arguments_are_checked(make_provider) -> None:
    provider = make_provider()
    call = provider.handle_tool_call
    assert "'content' is required" in json.loads(call("supermemory_store", {}))["error"]
    assert "'query' is required" in json.loads(call("supermemory_search", {"query": None}))["error"]
    assert (
        "'limit' must be"
        in json.loads(call("supermemory_search", {"query": "x", "limit": "5"}))["error"]
    )
    assert (
        "Give 'id'" in json.loads(call("supermemory_forget", {"id": None, "query": None}))["error"]
    )
    assert (
        "category"
        in json.loads(call("supermemory_store", {"content": "x", "category": "y"}))["error"]
    )
    assert "Unknown" in json.loads(call("supermemory_nope", {}))["error"]


def test_tool_schemas_suit_strict_backends() -> None:
    schemas = SupermemoryProvider().get_tool_schemas()
    assert [s["name"] for s in schemas] == [
        "supermemory_store",
        "supermemory_search",
        "supermemory_forget",
        "supermemory_profile",
    ]
    for schema in schemas:
        json.dumps(schema)
        assert set(schema) == {"name", "description", "parameters"}
        params = schema["parameters"]
        assert params["type"] == "object"
        assert params["additionalProperties"] is False
        assert not {"anyOf", "oneOf", "allOf", "not", "enum"} & set(params)
        assert set(params["required"]) <= set(params["properties"])
        for prop in params["properties"].values():
            assert prop["type"] in {"string", "integer"} and prop["description"]


def test_system_prompt_block_is_static(make_provider) -> None:
    provider = make_provider()
    first = provider.system_prompt_block()
    provider.sync_turn("I work on the billing service.", "Billing, noted.")
    provider.prefetch("what do I work on")
    assert provider.system_prompt_block() == first
    assert "namespace `hermes`" in first and "supermemory_search" in first


def test_inactive_provider_is_harmless(hermes_home) -> None:
    provider = SupermemoryProvider()
    provider.initialize("s", hermes_home=str(hermes_home), platform="cli")
    assert not provider.active
    assert provider.system_prompt_block() == ""
    assert provider.prefetch("anything at all here") == ""
    provider.sync_turn("My name is Ada.", "Hello Ada.")
    provider.on_memory_write("add", "user", "Name is Ada")
    assert (
        "not configured"
        in json.loads(provider.handle_tool_call("supermemory_search", {"query": "x"}))["error"]
    )
    provider.shutdown()


def test_session_switch_with_reset_drops_recall_for_the_old_topic(make_provider, fake) -> None:
    provider = make_provider()
    provider.sync_turn("The cat's vet is Dr. Lind.", "Dr. Lind, noted.")
    assert provider.flush(5)
    provider.queue_prefetch("who is the vet of the cat")
    provider._pending.future.result(timeout=5)
    provider.on_session_switch("session-2", parent_session_id="session-1", reset=True)
    searches = len(fake.calls("POST", "/search"))
    provider.prefetch("plan a birthday party")
    assert len(fake.calls("POST", "/search")) == searches + 1
    assert fake.calls("POST", "/search")[-1].body["query"] == "plan a birthday party"


def test_inspection_mode_reads_but_never_writes_or_warms(make_provider, fake, hermes_home) -> None:
    provider = SupermemoryProvider()
    provider.initialize_for_inspection("inspect", hermes_home=str(hermes_home), platform="cli")
    try:
        assert provider.active
        provider.sync_turn("My bike is a green Brompton.", "Nice bike.")
        provider.on_memory_write("add", "user", "Rides a Brompton")
        assert provider.flush(5)
        assert fake.requests == []
        found = json.loads(provider.handle_tool_call("supermemory_search", {"query": "bike"}))
        assert found == {"results": [], "count": 0}
    finally:
        provider.shutdown()
