"""Compression as a pure transformation: window selection, checkpoint assembly, summaries."""

from __future__ import annotations

import json
from datetime import date
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core.errors import ConfigError, LLMError
from hermes_core.runtime.compression import (
    CompressionSettings,
    ContextCompressor,
    assemble_compressed,
    repair_tool_pairs,
    select_window,
)
from hermes_core.runtime.summary import (
    MAX_EXTRACTIVE_CHARS,
    SUMMARY_END_MARKER,
    SUMMARY_PREFIX,
    SUMMARY_SECTIONS,
    build_summary_prompt,
    extractive_summary,
    serialize_turns,
    split_handoff,
    with_summary_prefix,
)

Message = dict[str, Any]


def user(text: str) -> Message:
    return {"role": "user", "content": text}


def assistant(text: str) -> Message:
    return {"role": "assistant", "content": text}


def tool_step(call_id: str, name: str, args: dict[str, Any], result: str) -> list[Message]:
    call = {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }
    return [
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "content": result, "tool_call_id": call_id, "name": name},
    ]


def conversation(turns: int, size: int = 200) -> list[Message]:
    messages: list[Message] = []
    for i in range(turns):
        messages.append(user(f"question {i} " + "x" * size))
        messages.append(assistant(f"answer {i} " + "y" * size))
    return messages


# ---------------------------------------------------------------- settings


def test_threshold_and_tail_budget_follow_the_window() -> None:
    s = CompressionSettings(context_window=100_000)
    assert s.threshold == 0.75
    assert s.threshold_tokens == 75_000
    assert s.tail_token_budget == 15_000


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"compression": {"threshold": 1.5}}, "compression.threshold"),
        ({"compression": {"threshold": "most"}}, "compression.threshold must be a finite number"),
        # YAML's .inf and .nan: int() overflows or refuses, float() would pass them on.
        ({"model": {"context_window": float("inf")}}, "model.context_window must be a finite"),
        ({"compression": {"protect_last_n": float("inf")}}, "protect_last_n must be a finite"),
        ({"compression": {"threshold": float("nan")}}, "compression.threshold must be a finite"),
        ({"model": {"context_window": 10}}, "model.context_window"),
        ({"compression": {"enabled": "yes"}}, "compression.enabled"),
        ({"compression": {"tail_ratio": 0.99}}, "compression.tail_ratio"),
    ],
)
def test_bad_settings_name_the_key(config: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        CompressionSettings.from_config(config)


def test_settings_from_config() -> None:
    s = CompressionSettings.from_config(
        {"compression": {"threshold": 0.5, "protect_last_n": 4}, "model": {"context_window": 8000}}
    )
    assert (s.threshold_tokens, s.protect_last_n, s.protect_first_n) == (4000, 4, 3)


def test_should_compress_is_inclusive_and_respects_enabled() -> None:
    on = ContextCompressor(CompressionSettings(context_window=1000))
    assert not on.should_compress(749)
    assert on.should_compress(750)
    off = ContextCompressor(CompressionSettings(enabled=False, context_window=1000))
    assert not off.should_compress(10_000)


# ---------------------------------------------------------------- window


def test_window_keeps_three_head_and_at_most_six_tail_messages() -> None:
    messages = conversation(10, size=10)
    window = select_window(messages, CompressionSettings(context_window=100_000))
    assert window.head_end == 3
    assert len(messages) - window.tail_start == 6


def test_tail_respects_the_token_budget_but_keeps_the_last_user_message() -> None:
    messages = conversation(10, size=2000)  # every message ~500 tokens
    s = CompressionSettings(context_window=4000)  # tail budget 600 tokens
    window = select_window(messages, s)
    tail = messages[window.tail_start :]
    assert tail[0]["role"] == "user"
    assert tail[-1] == messages[-1]
    assert len(tail) == 2  # the last reply alone fits; the user message is pulled in


def test_tail_never_starts_on_a_tool_result() -> None:
    messages = [user("start"), assistant("ok"), user("go")]
    for i in range(4):
        messages += tool_step(f"c{i}", "memory", {"n": i}, "done " * 50)
    messages.append(assistant("finished"))
    window = select_window(messages, CompressionSettings(context_window=1000, protect_last_n=2))
    assert messages[window.tail_start]["role"] != "tool"


def test_head_is_extended_past_tool_results() -> None:
    messages = [
        user("a"),
        *tool_step("c1", "memory", {}, "r"),
        *tool_step("c2", "x", {}, "r"),
        *conversation(6),
    ]
    window = select_window(messages, CompressionSettings())
    assert window.head_end == 3
    assert messages[window.head_end]["role"] != "tool"


# ---------------------------------------------------------------- assembly


def test_summary_after_an_assistant_head_is_a_user_message() -> None:
    result = assemble_compressed([user("a"), assistant("b")], "S", [assistant("c"), user("d")])
    assert [m["role"] for m in result] == ["user", "assistant", "user", "assistant", "user"]
    assert result[2]["content"].startswith(SUMMARY_PREFIX)


def test_summary_after_a_user_head_is_an_assistant_message() -> None:
    result = assemble_compressed([user("a")], "S", [user("b"), assistant("c")])
    assert [m["role"] for m in result] == ["user", "assistant", "user", "assistant"]
    assert result[1]["content"].startswith(SUMMARY_PREFIX)


def test_summary_role_flips_to_avoid_the_tail() -> None:
    head = [user("a"), *tool_step("c1", "memory", {}, "ok")]  # ends with a tool result
    result = assemble_compressed(head, "S", [user("b")])
    assert [m["role"] for m in result] == ["user", "assistant", "tool", "assistant", "user"]
    assert result[3]["content"].startswith(SUMMARY_PREFIX)
    empty_head = assemble_compressed([], "S", [user("b")])
    assert [m["role"] for m in empty_head] == ["assistant", "user"]


def test_assistant_head_and_user_tail_merge_into_the_tail() -> None:
    result = assemble_compressed([user("a"), assistant("b")], "S", [user("c"), assistant("d")])
    assert [m["role"] for m in result] == ["user", "assistant", "user", "assistant"]
    assert result[2]["content"].startswith(SUMMARY_PREFIX)
    assert result[2]["content"].endswith(f"{SUMMARY_END_MARKER}\n\nc")


def test_double_collision_merges_into_the_first_tail_message() -> None:
    # head ends user -> assistant summary; tail starts assistant; flipping gives user == head
    result = assemble_compressed(
        [user("a"), assistant("b"), user("c")], "the summary text", [assistant("d"), user("e")]
    )
    assert [m["role"] for m in result] == ["user", "assistant", "user", "assistant", "user"]
    assert "the summary text" in result[3]["content"]
    assert result[3]["content"].endswith("d")
    assert SUMMARY_END_MARKER in result[3]["content"]


def test_no_collision_gives_one_standalone_user_summary() -> None:
    result = assemble_compressed([user("a"), assistant("b")], "S", [assistant("c")])
    summaries = [m for m in result if SUMMARY_PREFIX in m["content"]]
    assert len(summaries) == 1 and summaries[0]["role"] == "user"
    assert summaries[0]["content"].endswith(SUMMARY_END_MARKER)


def test_repair_drops_orphans_both_ways() -> None:
    step = tool_step("c1", "memory", {}, "ok")
    orphan_result = {"role": "tool", "content": "x", "tool_call_id": "gone"}
    orphan_call = tool_step("c2", "memory", {}, "ok")[0]
    repaired = repair_tool_pairs([user("a"), *step, orphan_result, orphan_call])
    assert repaired[:3] == [user("a"), *step]
    assert repaired[3] == {"role": "assistant", "content": "(tool call removed)"}


# ---------------------------------------------------------------- property: structure survives

_role_step = st.sampled_from(["user", "assistant", "tool_step", "long"])


@st.composite
def transcripts(draw: st.DrawFn) -> list[Message]:
    kinds = draw(st.lists(_role_step, min_size=1, max_size=40))
    messages: list[Message] = [user("first")]
    for i, kind in enumerate(kinds):
        if kind == "user":
            messages.append(user(f"u{i}"))
        elif kind == "assistant":
            messages.append(assistant(f"a{i}"))
        elif kind == "long":
            messages.append(assistant("z" * draw(st.integers(100, 5000))))
        else:
            messages += tool_step(f"c{i}", "memory", {"i": i}, "r" * draw(st.integers(1, 900)))
    return messages


@settings(max_examples=150, deadline=None)
@given(transcripts(), st.integers(300, 20_000), st.integers(0, 4), st.integers(1, 8))
def test_compression_never_separates_tool_calls_and_keeps_ends(
    messages: list[Message], window: int, first: int, last: int
) -> None:
    s = CompressionSettings(context_window=window, protect_first_n=first, protect_last_n=last)
    result = ContextCompressor(s).compress(messages)
    if result is None:
        return
    out = result.messages
    issued = set()
    for message in out:
        for call in message.get("tool_calls") or []:
            issued.add(call["id"])
        if message["role"] == "tool":
            assert message["tool_call_id"] in issued
    answered = {m["tool_call_id"] for m in out if m["role"] == "tool"}
    assert issued == answered
    # the last message survives (the checkpoint may be merged in front of its text)
    assert out[-1]["role"] == messages[-1]["role"]
    assert out[-1]["content"].endswith(messages[-1]["content"])
    last_user = next(m for m in reversed(messages) if m["role"] == "user")
    assert any(m["role"] == "user" and m["content"].endswith(last_user["content"]) for m in out)
    (at,) = [i for i, m in enumerate(out) if SUMMARY_PREFIX in str(m.get("content"))]
    role = out[at]["role"]
    assert at == 0 or out[at - 1]["role"] != role
    if out[at]["content"].endswith(SUMMARY_END_MARKER):  # standalone, not merged
        assert at == len(out) - 1 or out[at + 1]["role"] != role


# ---------------------------------------------------------------- property: odd transcripts

_odd_content = st.one_of(
    st.none(),
    st.text(max_size=40),
    st.lists(
        st.one_of(st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=20)})),
        max_size=3,
    ),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
_odd_call = st.one_of(
    st.fixed_dictionaries(
        {
            "id": st.sampled_from(["a", "b", "c", None]),
            "function": st.fixed_dictionaries(
                {"name": st.text(max_size=5), "arguments": st.text(max_size=10)}
            ),
        }
    ),
    st.text(max_size=3),
    st.none(),
)
_odd_message = st.one_of(
    st.fixed_dictionaries(
        {
            "role": st.sampled_from(["user", "assistant", "system", "tool", "?"]),
            "content": _odd_content,
        }
    ),
    st.fixed_dictionaries(
        {
            "role": st.just("assistant"),
            "content": _odd_content,
            "tool_calls": st.one_of(st.lists(_odd_call, max_size=3), st.just('[{"id": "a"}]')),
        }
    ),
    st.fixed_dictionaries(
        {
            "role": st.just("tool"),
            "content": _odd_content,
            "tool_call_id": st.sampled_from(["a", "b", "c", None]),
        }
    ),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_odd_message, max_size=25), st.booleans())
def test_odd_transcripts_compress_into_answered_tool_calls(
    messages: list[Message], with_model: bool
) -> None:
    # Tool results before their call or without one, tool_calls as a JSON string,
    # parts lists, empty content: compression neither fails nor leaves a call unanswered.
    s = CompressionSettings(context_window=256, protect_first_n=2, protect_last_n=3)
    compressor = ContextCompressor(
        s, summarizer=(lambda prompt: "checkpoint") if with_model else None
    )
    result = compressor.compress(messages)
    if result is None:
        return
    for at, message in enumerate(result.messages):
        calls = message.get("tool_calls")
        if message.get("role") == "assistant" and calls is not None:
            assert isinstance(calls, list) and calls
            for call in calls:
                later = result.messages[at + 1 :]
                assert any(m.get("tool_call_id") == call["id"] for m in later)
        if message.get("role") == "tool":
            earlier = [c for m in result.messages[:at] for c in m.get("tool_calls") or []]
            assert any(c["id"] == message.get("tool_call_id") for c in earlier)


# ---------------------------------------------------------------- summaries


def test_prefix_is_never_duplicated() -> None:
    once = with_summary_prefix("did work")
    assert once == f"{SUMMARY_PREFIX}\ndid work"
    assert with_summary_prefix(once) == once
    assert with_summary_prefix("[CONTEXT SUMMARY]: did work") == once
    assert with_summary_prefix("") == SUMMARY_PREFIX
    assert with_summary_prefix(None) == SUMMARY_PREFIX


def test_split_handoff_recovers_body_and_following_text() -> None:
    content = f"{with_summary_prefix('body text')}\n{SUMMARY_END_MARKER}\n\nreal question"
    assert split_handoff(content) == ("body text", "real question")
    assert split_handoff("plain message") is None


def test_a_message_that_only_mentions_a_checkpoint_prefix_is_kept_whole() -> None:
    # A user pasting a log that says "[CONTEXT SUMMARY]:" lost the message to compression.
    pasted = "Server notes: bastion-7 is the jump host. [CONTEXT SUMMARY]: old stuff"
    assert split_handoff(pasted) is None
    assert split_handoff("[CONTEXT SUMMARY]: starts like one but never ends") is None
    assert split_handoff(pasted, anywhere=True) == ("old stuff", "")
    seen: list[str] = []
    compressor = ContextCompressor(
        CompressionSettings(context_window=1000), lambda p: seen.append(p) or "checkpoint"
    )
    messages = conversation(8)
    messages[3] = {"role": "user", "content": pasted}
    assert compressor.compress(messages) is not None
    assert "bastion-7" in seen[0] and "PREVIOUS CHECKPOINT" not in seen[0]


@pytest.mark.parametrize(
    "reply",
    [
        "<think>plan</think>the checkpoint",
        "the checkpoint<think>cut off by max_tokens",
        "reasoning the template opened</think>the checkpoint",
        "<thinking>plan</thinking>the checkpoint",
        "<REASONING>plan</REASONING>the checkpoint",
    ],
)
def test_reasoning_in_the_summarisers_reply_never_becomes_the_checkpoint(reply: str) -> None:
    compressor = ContextCompressor(CompressionSettings(context_window=1000), lambda p: reply)
    result = compressor.compress(conversation(8))
    assert result is not None and result.summary == "the checkpoint"


def test_past_turns_keep_a_mention_of_an_unclosed_reasoning_tag() -> None:
    turn = {"role": "user", "content": "wrap it in a <reasoning> tag please"}
    assert "<reasoning> tag please" in serialize_turns([turn])


def test_serialize_labels_roles_tools_and_truncates() -> None:
    messages = [user("hi"), *tool_step("c9", "memory", {"content": "a" * 3000}, "b" * 7000)]
    text = serialize_turns(messages)
    assert "[USER]: hi" in text
    assert "[ASSISTANT TOOL CALL]: memory(" in text
    assert "[TOOL RESULT c9]: " in text
    assert "...[truncated]..." in text
    assert len(text) < 8000


def test_serialize_caps_huge_transcripts() -> None:
    text = serialize_turns([user("q" * 5000) for _ in range(100)])
    assert len(text) < 161_000
    assert "characters of turns omitted" in text


def test_prompt_first_and_iterative_forms() -> None:
    first = build_summary_prompt("[USER]: hi", today=date(2025, 5, 14), target_tokens=900)
    assert "TURNS TO SUMMARIZE:\n[USER]: hi" in first
    assert "PREVIOUS CHECKPOINT" not in first
    assert "2025-05-14" in first and "about 900 tokens" in first
    positions = [first.index(f"## {name}") for name in SUMMARY_SECTIONS]
    assert positions == sorted(positions)
    update = build_summary_prompt(
        "[USER]: more",
        previous_summary="old body",
        provider_context="user likes tea",
        focus="deploys",
    )
    assert "PREVIOUS CHECKPOINT:\nold body" in update
    assert "NEW TURNS TO FOLD IN:\n[USER]: more" in update
    assert '"user likes tea"' in update and "FOCUS TOPIC: deploys" in update


def test_extractive_summary_is_deterministic_and_keeps_facts() -> None:
    messages = [
        user("Please fix the deploy script"),
        *tool_step("c1", "terminal", {"cmd": "cat scripts/deploy.sh"}, "Error: permission denied"),
        assistant("The script in scripts/deploy.sh lacks +x."),
        user("Then make it executable"),
    ]
    first = extractive_summary(messages, provider_context="prefers bash")
    assert first == extractive_summary(messages, provider_context="prefers bash")
    assert "Then make it executable" in first.split("## Goal")[0]
    assert "Please fix the deploy script" in first
    assert "terminal(" in first and "[tool: terminal]" in first
    assert "scripts/deploy.sh" in first
    assert "Error: permission denied" in first
    assert "prefers bash" in first


def test_extractive_summary_carries_the_previous_one_within_bounds() -> None:
    previous = "## Goal\nship v2\n" + "detail " * 3000
    text = extractive_summary(conversation(3), previous_summary=previous)
    assert "## Earlier Checkpoint\n## Goal\nship v2" in text
    assert len(text) <= MAX_EXTRACTIVE_CHARS


def test_no_user_turns_use_the_neutral_sentinel() -> None:
    text = extractive_summary([assistant("just me")])
    assert "None. This part of the session contains no user-authored turns." in text


# ---------------------------------------------------------------- compressor


def test_compressor_uses_the_model_iteratively() -> None:
    prompts: list[str] = []

    def summarize(prompt: str) -> str:
        prompts.append(prompt)
        return f"<think>hidden</think>summary #{len(prompts)}"

    compressor = ContextCompressor(CompressionSettings(context_window=1000), summarize)
    first = compressor.compress(conversation(8), provider_context="from provider")
    assert first is not None
    assert first.summary == "summary #1" and first.summary_source == "model"
    assert "MEMORY PROVIDER CONTEXT" in prompts[0] and "from provider" in prompts[0]
    second = compressor.compress([*first.messages, *conversation(6)])
    assert second is not None and second.summary == "summary #2"
    assert "PREVIOUS CHECKPOINT:\nsummary #1" in prompts[1]
    assert SUMMARY_PREFIX not in prompts[1].split("NEW TURNS TO FOLD IN:")[1]
    assert compressor.compression_count == 2


def test_previous_checkpoint_is_rehydrated_from_the_transcript() -> None:
    first = ContextCompressor(CompressionSettings()).compress(conversation(8))
    assert first is not None
    prompts: list[str] = []
    fresh = ContextCompressor(CompressionSettings(), lambda p: prompts.append(p) or "next")
    fresh.compress([*first.messages, *conversation(6)])
    assert "PREVIOUS CHECKPOINT:\n(Built offline" in prompts[0]


def test_a_failing_model_falls_back_to_an_extractive_summary() -> None:
    def broken(prompt: str) -> str:
        raise LLMError("endpoint down")

    result = ContextCompressor(CompressionSettings(), broken).compress(conversation(8))
    assert result is not None
    assert result.summary_source == "fallback" and result.error == "endpoint down"
    assert "## Historical Task Snapshot" in result.summary


def test_an_empty_model_answer_falls_back() -> None:
    result = ContextCompressor(CompressionSettings(), lambda p: "  ").compress(conversation(8))
    assert result is not None and result.summary_source == "fallback"


def test_without_a_model_the_summary_is_extractive_and_redacted() -> None:
    secret = "sk-" + "A1b2C3d4" * 5
    messages = conversation(8, size=1000)
    messages[4] = user(f"my key is {secret}")
    result = ContextCompressor(CompressionSettings()).compress(
        messages, redact=lambda text: text.replace(secret, "[redacted]")
    )
    assert result is not None and result.summary_source == "extractive"
    assert secret not in json.dumps(result.messages)
    assert result.tokens_after < result.tokens_before


def test_too_little_to_drop_is_a_no_op_that_counts_as_ineffective() -> None:
    compressor = ContextCompressor(CompressionSettings(context_window=1000))
    assert compressor.compress(conversation(2)) is None
    assert compressor.compress(conversation(2)) is None
    assert compressor.paused
    assert not compressor.should_compress(10_000)


def test_compressions_that_do_not_get_under_pause_automatic_compression() -> None:
    compressor = ContextCompressor(CompressionSettings(context_window=1000))
    compressor.note_context(900)
    assert not compressor.paused
    compressor.note_context(400)  # a good one resets the streak
    compressor.note_context(800)
    assert not compressor.paused
    compressor.note_context(760)
    assert compressor.paused
    assert not compressor.should_compress(10_000)


def test_a_model_checkpoint_that_ignores_its_budget_is_cut() -> None:
    compressor = ContextCompressor(
        CompressionSettings(max_summary_tokens=100), lambda p: "x" * 5000
    )
    result = compressor.compress(conversation(8))
    assert result is not None
    assert len(result.summary) == 800 and result.summary.endswith("…")


@pytest.mark.parametrize("tool_calls", [5, "abc", {"function": {"name": "x"}}, None])
def test_tool_calls_that_are_not_a_list_are_no_calls(tool_calls: object) -> None:
    messages = [
        user("fix the build"),
        {"role": "assistant", "content": "ok", "tool_calls": tool_calls},
    ]
    assert "TOOL CALL" not in serialize_turns(messages)
    summary = extractive_summary(messages)
    assert "fix the build" in summary and "[tool:" not in summary
