"""Behaviour of the provider against the stateful fake: recall, writes, tools, isolation."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from fake_honcho import FakeHoncho
from hermes_memory_honcho import HonchoMemoryProvider
from hermes_memory_honcho.chunking import CONTINUED

from hermes_core.fencing import build_memory_context_block
from hermes_core.provider import RecallStatus

MakeProvider = Callable[..., HonchoMemoryProvider]


def tool(provider: HonchoMemoryProvider, name: str, args: Any = None) -> dict[str, Any]:
    result = json.loads(provider.handle_tool_call(name, {} if args is None else args))
    assert isinstance(result, dict)
    return result


def remember(provider: HonchoMemoryProvider, user: str, assistant: str = "Noted.") -> None:
    provider.sync_turn(user, assistant)
    assert provider.wait_idle()


# -- recall ------------------------------------------------------------------------------


def test_prefetch_serves_the_background_result_without_network(
    make_provider: MakeProvider, fake: FakeHoncho
) -> None:
    provider = make_provider("s1", user_id="alice")
    remember(provider, "My sister Ana lives in Porto.")
    provider.queue_prefetch("Where does my sister live?")
    assert provider.wait_idle()
    before = len(fake.calls())

    recalled = provider.prefetch("Where does my sister live?")

    assert "My sister Ana lives in Porto." in recalled
    assert len(fake.calls()) == before, "prefetch must not call Honcho on the turn path"
    assert provider.recall_status() == RecallStatus("Honcho", 0)


def test_first_prefetch_of_a_session_gets_what_earlier_sessions_taught(
    make_provider: MakeProvider,
) -> None:
    first = make_provider("s1", user_id="alice")
    remember(first, "I am allergic to peanuts.")
    first.shutdown()

    second = make_provider("s2", user_id="alice")
    assert "allergic to peanuts" in second.prefetch("Suggest a snack for me")


def test_trivial_prompts_recall_nothing_and_cost_nothing(
    make_provider: MakeProvider, fake: FakeHoncho
) -> None:
    provider = make_provider("s1")
    remember(provider, "I play the cello.")
    provider.queue_prefetch("music")
    assert provider.wait_idle()
    before = len(fake.calls())
    for prompt in ("ok", "thanks!", "/help", "   "):
        assert provider.prefetch(prompt) == ""
        provider.queue_prefetch(prompt)
    assert provider.wait_idle()
    assert len(fake.calls()) == before
    assert provider.recall_status() is None


def test_recall_includes_card_summary_and_dialectic_within_budget(
    make_provider: MakeProvider, fake: FakeHoncho, configure: Callable[..., None]
) -> None:
    configure(context_tokens=60)
    provider = make_provider("s1", user_id="alice")
    for fact in ("I run marathons.", "I work as a nurse.", "I have two cats.", "I like jazz."):
        remember(provider, fact)
    tool(provider, "honcho_profile", {"card": ["Name: Alice"]})
    provider.queue_prefetch("Tell me about my cats")
    assert provider.wait_idle()

    recalled = provider.prefetch("Tell me about my cats")

    assert recalled.startswith("## What Honcho knows about the user\n")
    assert len(recalled) <= 60 * 4
    configure(context_tokens=2000)
    big = make_provider("s1", user_id="alice")
    big.queue_prefetch("Tell me about my cats")
    assert big.wait_idle()
    recalled = big.prefetch("Tell me about my cats")
    assert "- Name: Alice" in recalled
    assert "## Session summary\nEarlier in this conversation:" in recalled
    assert "## Honcho's answer about this message\nFrom what I know: I have two cats." in recalled


def test_dialectic_can_be_switched_off(
    make_provider: MakeProvider, fake: FakeHoncho, configure: Callable[..., None]
) -> None:
    configure(dialectic=False)
    provider = make_provider("s1")
    provider.queue_prefetch("anything about me?")
    assert provider.wait_idle()
    assert fake.calls("POST", r".*/chat") == []


def test_tools_mode_has_no_automatic_recall(
    make_provider: MakeProvider, fake: FakeHoncho, configure: Callable[..., None]
) -> None:
    configure(recall_mode="tools")
    provider = make_provider("s1")
    assert provider.wait_idle()
    assert fake.calls() == [], "no warm-up in tools mode"
    assert provider.prefetch("What do you know about me?") == ""
    provider.queue_prefetch("What do you know about me?")
    assert provider.wait_idle()
    assert fake.calls() == []
    assert {s["name"] for s in provider.get_tool_schemas()} >= {"honcho_search"}
    assert "automatically" not in provider.system_prompt_block()
    assert "honcho_search" in provider.system_prompt_block()


def test_context_mode_has_no_tools(
    make_provider: MakeProvider, configure: Callable[..., None]
) -> None:
    configure(recall_mode="context")
    provider = make_provider("s1")
    assert provider.get_tool_schemas() == []
    assert "automatically" in provider.system_prompt_block()
    assert "honcho_search" not in provider.system_prompt_block()


def test_system_prompt_block_is_static(make_provider: MakeProvider) -> None:
    provider = make_provider("s1")
    block = provider.system_prompt_block()
    assert block.startswith("# Honcho memory\n")
    remember(provider, "I moved to Berlin.")
    provider.queue_prefetch("Berlin")
    assert provider.wait_idle()
    assert provider.system_prompt_block() == block


# -- writes -------------------------------------------------------------------------------


def test_sync_turn_strips_recalled_context_before_storing(
    make_provider: MakeProvider, fake: FakeHoncho
) -> None:
    provider = make_provider("s1", user_id="alice")
    fenced = build_memory_context_block("- the user likes secrets")
    remember(provider, f"What should I cook tonight?\n\n{fenced}", "Try a risotto.")
    assert fake.messages_of("alice") == ["What should I cook tonight?"]
    assert fake.messages_of("hermes") == ["Try a risotto."]


def test_long_messages_are_chunked_in_order(
    make_provider: MakeProvider, fake: FakeHoncho, configure: Callable[..., None]
) -> None:
    configure(message_max_chars=120)
    provider = make_provider("s1", user_id="alice")
    text = " ".join(f"Sentence number {n} is here." for n in range(20))
    remember(provider, text, "ok")
    stored = fake.messages_of("alice")
    assert len(stored) > 1
    assert all(len(chunk) <= 120 for chunk in stored)
    assert all(chunk.startswith(CONTINUED) for chunk in stored[1:])
    joined = " ".join(chunk.removeprefix(CONTINUED) for chunk in stored)
    assert joined.split() == text.split()


def test_messages_keep_their_session_across_a_switch(
    make_provider: MakeProvider, fake: FakeHoncho
) -> None:
    provider = make_provider("s1", user_id="alice")
    provider.sync_turn("First session message.", "Reply one.")
    provider.on_session_switch("s2", parent_session_id="s1", reset=True)
    provider.sync_turn("Second session message.", "Reply two.")
    assert provider.wait_idle()
    by_session = {(m["session_id"], m["content"]) for m in fake.state.messages}
    assert ("s1", "First session message.") in by_session
    assert ("s2", "Second session message.") in by_session


def test_user_profile_writes_are_mirrored_as_conclusions(
    make_provider: MakeProvider, fake: FakeHoncho
) -> None:
    provider = make_provider("s1", user_id="alice")
    provider.on_memory_write("add", "user", "Works night shifts", {"write_origin": "tool"})
    provider.on_memory_write("add", "memory", "The repo uses tabs")
    provider.on_memory_write(
        "replace", "user", "Works day shifts", {"previous_content": "Works night shifts"}
    )
    assert provider.wait_idle()
    mirrored = {
        c["content"] for c in fake.state.conclusions.values() if c["observer_id"] == "hermes"
    }
    assert mirrored == {"Works day shifts"}

    provider.on_memory_write("remove", "user", "", {"previous_content": "Works day shifts"})
    assert provider.wait_idle()
    assert not [c for c in fake.state.conclusions.values() if c["observer_id"] == "hermes"]


def test_session_end_and_pre_compress_flush_queued_writes(
    make_provider: MakeProvider, fake: FakeHoncho
) -> None:
    provider = make_provider("s1", user_id="alice")
    tool(provider, "honcho_profile", {"card": ["Name: Alice", "Vegetarian"]})
    provider.queue_prefetch("what do I eat")
    assert provider.wait_idle()
    fake.fail(r"/messages$", times=1, status=503)
    provider.sync_turn("Before compression.", "Noted.")
    assert provider.wait_idle()
    assert provider.pending_writes() == 2

    kept = provider.on_pre_compress([{"role": "user", "content": "Before compression."}])

    assert provider.pending_writes() == 0
    assert fake.messages_of("alice") == ["Before compression."]
    assert kept == "Honcho's profile of the user (keep these facts):\n- Name: Alice\n- Vegetarian"

    fake.fail(r"/messages$", times=1, status=503)
    provider.sync_turn("At the end.", "Bye.")
    assert provider.wait_idle()
    provider.on_session_end([])
    assert fake.messages_of("alice")[-1] == "At the end."


def test_shutdown_sends_what_is_queued(make_provider: MakeProvider, fake: FakeHoncho) -> None:
    provider = make_provider("s1", user_id="alice")
    provider.sync_turn("Last words before exit.", "Goodbye.")
    provider.shutdown()
    assert fake.messages_of("alice") == ["Last words before exit."]
    assert provider.system_prompt_block() == ""
    assert "not active" in tool(provider, "honcho_search", {"query": "x"})["error"]


# -- agent contexts and isolation ------------------------------------------------------------


def test_subagents_read_but_never_write(make_provider: MakeProvider, fake: FakeHoncho) -> None:
    primary = make_provider("s1", user_id="alice")
    remember(primary, "I keep bees.")
    sub = make_provider("s1-sub", user_id="alice", agent_context="subagent")
    sub.sync_turn("Subagent chatter.", "More chatter.")
    sub.on_memory_write("add", "user", "Should not be mirrored")
    assert sub.wait_idle()
    assert "Subagent chatter." not in fake.messages_of("alice")
    assert not [c for c in fake.state.conclusions.values() if "mirrored" in c["content"]]
    assert "read-only" in tool(sub, "honcho_conclude", {"conclusion": "x"})["error"]
    assert "read-only" in tool(sub, "honcho_profile", {"card": ["x"]})["error"]
    assert "bees" in tool(sub, "honcho_search", {"query": "bees"})["result"]


@pytest.mark.parametrize(
    "kwargs", [{"agent_context": "cron"}, {"agent_context": "flush"}, {"platform": "cron"}]
)
def test_cron_and_flush_runs_leave_honcho_alone(
    make_provider: MakeProvider, fake: FakeHoncho, kwargs: dict[str, str]
) -> None:
    provider = make_provider("s1", **kwargs)
    provider.sync_turn("cron output", "done")
    assert provider.prefetch("status report please") == ""
    assert provider.system_prompt_block() == ""
    assert "not active" in tool(provider, "honcho_search", {"query": "x"})["error"]
    assert fake.calls() == []


def test_each_user_gets_their_own_memory(make_provider: MakeProvider) -> None:
    alice = make_provider("chat-a", user_id="alice")
    bob = make_provider("chat-b", user_id="telegram:1234")
    remember(alice, "My locker code is 4711.")
    remember(bob, "I collect stamps.")

    for provider in (alice, bob):
        provider.queue_prefetch("What is my locker code? Do I collect stamps?")
        assert provider.wait_idle()
    alice_recall = alice.prefetch("What is my locker code? Do I collect stamps?")
    bob_recall = bob.prefetch("What is my locker code? Do I collect stamps?")

    assert "4711" in alice_recall and "stamps" not in alice_recall
    assert "stamps" in bob_recall and "4711" not in bob_recall
    assert "4711" not in json.dumps(tool(bob, "honcho_search", {"query": "locker code"}))
    assert "4711" not in json.dumps(tool(bob, "honcho_reasoning", {"query": "locker code"}))
    assert "4711" in json.dumps(tool(alice, "honcho_reasoning", {"query": "locker code"}))


def test_a_user_cannot_delete_another_users_conclusion(make_provider: MakeProvider) -> None:
    alice = make_provider("chat-a", user_id="alice")
    bob = make_provider("chat-b", user_id="bob")
    saved = tool(alice, "honcho_conclude", {"conclusion": "Alice speaks Finnish"})
    refused = tool(bob, "honcho_conclude", {"delete_id": saved["id"]})
    assert "not found" in refused["error"].lower()
    assert "deleted" in tool(alice, "honcho_conclude", {"delete_id": saved["id"]})["result"]


# -- tools ------------------------------------------------------------------------------------


def test_tool_schemas_suit_strict_backends() -> None:
    schemas = HonchoMemoryProvider().get_tool_schemas()
    assert [s["name"] for s in schemas] == [
        "honcho_profile",
        "honcho_search",
        "honcho_context",
        "honcho_reasoning",
        "honcho_conclude",
    ]

    def check(node: dict[str, Any]) -> None:
        assert isinstance(node.get("type"), str)
        assert "default" not in node
        if node["type"] == "object":
            assert node["additionalProperties"] is False
            assert set(node.get("required", [])) <= set(node["properties"])
            for child in node["properties"].values():
                check(child)
        if node["type"] == "array":
            check(node["items"])

    for schema in schemas:
        assert set(schema) == {"name", "description", "parameters"}
        assert schema["description"]
        params = schema["parameters"]
        assert params["type"] == "object"
        assert not {"anyOf", "oneOf", "allOf", "enum", "not"} & set(params)
        check(params)


def test_tool_results_are_json_with_useful_errors(make_provider: MakeProvider) -> None:
    provider = make_provider("s1")
    assert "required" in tool(provider, "honcho_search", {})["error"]
    assert "required" in tool(provider, "honcho_search", {"query": "  "})["error"]
    assert (
        "'max_tokens' must be an integer"
        in tool(provider, "honcho_search", {"query": "x", "max_tokens": "lots"})["error"]
    )
    assert (
        "exactly one"
        in tool(provider, "honcho_conclude", {"conclusion": "a", "delete_id": "b"})["error"]
    )
    assert (
        "one of minimal"
        in tool(provider, "honcho_reasoning", {"query": "x", "reasoning_level": "extreme"})["error"]
    )
    assert "list of strings" in tool(provider, "honcho_profile", {"card": [1, 2]})["error"]
    assert "Unknown Honcho tool" in tool(provider, "honcho_dance", {})["error"]
    not_an_object: Any = ["x"]
    answer = json.loads(provider.handle_tool_call("honcho_search", not_an_object))
    assert "JSON object" in answer["error"]


def test_null_optional_arguments_count_as_absent(make_provider: MakeProvider) -> None:
    """Strict backends send every declared parameter, with null for the unused ones."""
    provider = make_provider("s1", user_id="alice")
    remember(provider, "I sail on weekends.")
    found = tool(provider, "honcho_search", {"query": "sail", "max_tokens": None})
    assert "I sail on weekends." in found["result"]
    assert tool(provider, "honcho_profile", {"card": None})["result"] == (
        "No profile facts available yet."
    )
    saved = tool(provider, "honcho_conclude", {"conclusion": "Sails", "delete_id": None})
    assert saved["result"] == "Conclusion saved: Sails"


def test_search_and_context_tools_answer_from_stored_conversation(
    make_provider: MakeProvider,
) -> None:
    provider = make_provider("s1", user_id="alice")
    remember(provider, "My favourite mountain is Triglav.", "A beautiful peak.")
    assert tool(provider, "honcho_search", {"query": "mountain"})["result"] == (
        "[alice · s1] My favourite mountain is Triglav."
    )
    assert tool(provider, "honcho_search", {"query": "submarine"})["result"] == (
        "No relevant context found."
    )
    context = tool(provider, "honcho_context", {"query": "mountain"})["result"]
    assert "## Representation\n- My favourite mountain is Triglav." in context
    assert "## Recent messages\nalice: My favourite mountain is Triglav.\nhermes: A beaut" in (
        context
    )
    assert tool(provider, "honcho_reasoning", {"query": "quantum chromodynamics"})["result"] == (
        "No result from Honcho."
    )


def test_tools_before_initialize_explain_themselves() -> None:
    result = json.loads(HonchoMemoryProvider().handle_tool_call("honcho_search", {"query": "x"}))
    assert result == {"error": "Honcho is not active: Honcho is not initialized yet."}


def test_initialize_without_credentials_stays_inert(
    hermes_home: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HONCHO_API_KEY", raising=False)
    (hermes_home / "config.yaml").write_text("memory:\n  provider: honcho\n")
    provider = HonchoMemoryProvider()
    provider.initialize("s1", hermes_home=str(hermes_home), platform="cli")
    assert provider.prefetch("what do you know?") == ""
    provider.sync_turn("hello there", "hi")
    assert "HONCHO_API_KEY" in tool(provider, "honcho_search", {"query": "x"})["error"]
    provider.shutdown()


def test_inspection_mode_starts_nothing(
    make_provider: MakeProvider, fake: FakeHoncho, hermes_home: Any
) -> None:
    provider = HonchoMemoryProvider()
    provider.initialize_for_inspection("s1", hermes_home=str(hermes_home), platform="cli")
    assert provider.prefetch("what do you know about me?") == ""
    assert fake.calls() == []


def test_conclusions_work_before_any_other_call(
    make_provider: MakeProvider, fake: FakeHoncho, configure: Callable[..., None]
) -> None:
    """In tools mode nothing warms up; the first write must create the peers it needs."""
    configure(recall_mode="tools")
    provider = make_provider("s1", user_id="alice")
    saved = tool(provider, "honcho_conclude", {"conclusion": "Alice plays go"})
    assert saved["result"] == "Conclusion saved: Alice plays go"
    assert [c["observed_id"] for c in fake.state.conclusions.values()] == ["alice"]
