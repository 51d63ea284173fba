"""Transcripts for summaries: formatting and cutting around matches (§7.2)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hermes_core.sessions.transcript import (
    CALL_ARGUMENTS_KEEP,
    EARLIER_MARKER,
    EXCERPT_GAP,
    LATER_MARKER,
    describe_tool_calls,
    format_conversation,
    match_preview,
    truncate_around_matches,
)


def test_format_conversation_roles_and_tools() -> None:
    assert format_conversation([]) == ""
    text = format_conversation(
        [
            {"role": "user", "content": "Hello"},
            {"role": "assistant", "content": "Hi there!"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"function": {"name": "web_search", "arguments": "{}"}},
                    {"name": "read_file"},
                    {},
                ],
            },
            {"role": "tool", "name": "web_search", "content": "x" * 1000},
            {"role": "assistant", "content": "Done", "tool_calls": [{"name": "a"}]},
            {"role": "system", "content": [{"type": "text", "text": "parts"}]},
        ]
    )
    blocks = text.split("\n\n")
    assert blocks[0] == "[USER]: Hello"
    assert blocks[1] == "[ASSISTANT]: Hi there!"
    assert blocks[2] == "[ASSISTANT]: [Called: web_search, read_file, ?]"
    assert blocks[3].startswith("[TOOL:web_search]: " + "x" * 250 + "\n...[truncated]...\n")
    assert len(blocks[3]) < 600
    # The text the model wrote before calling the tool comes first, as it was said.
    assert blocks[4:6] == ["[ASSISTANT]: Done", "[ASSISTANT]: [Called: a]"]
    assert blocks[6] == "[SYSTEM]: parts"


def test_tool_calls_show_their_arguments() -> None:
    calls = [
        {
            "id": "call_1",
            "type": "function",
            "function": {
                "name": "terminal",
                "arguments": '{"command": "kubectl rollout undo deploy/web", '
                '"city": "\\u5317\\u4eac"}',
            },
        },
        {"name": "read_file", "arguments": {"path": "/etc/nginx/nginx.conf"}},
        {"function": {"name": "note", "arguments": "not json,\n  kept   as text"}},
        {"function": {"name": "ping", "arguments": "{}"}},
    ]
    described = describe_tool_calls(calls)
    assert described == (
        'terminal({"command": "kubectl rollout undo deploy/web", "city": "北京"}), '
        'read_file({"path": "/etc/nginx/nginx.conf"}), note(not json, kept as text), ping'
    )
    assert describe_tool_calls(json.dumps(calls)) == described  # the stored column's JSON text
    text = format_conversation([{"role": "assistant", "content": None, "tool_calls": calls}])
    assert text == f"[ASSISTANT]: [Called: {described}]"


def test_long_tool_call_arguments_keep_their_start() -> None:
    body = "x" * 5000
    arguments = json.dumps({"path": "a.py", "body": body})
    described = describe_tool_calls([{"function": {"name": "write_file", "arguments": arguments}}])
    assert described.startswith('write_file({"path": "a.py", "body": "xxx')
    assert described.endswith("…)")
    assert len(described) == len("write_file()") + CALL_ARGUMENTS_KEEP + 1


@pytest.mark.parametrize("junk", [None, "", "not json", "{}", 42, [1, None, "x"], {"a": 1}])
def test_malformed_tool_calls_never_raise(junk: object) -> None:
    assert isinstance(describe_tool_calls(junk), str)
    assert describe_tool_calls([None, 3]) == "?, ?"


def test_tool_call_json_too_deep_or_too_long_to_decode_is_still_shown() -> None:
    deep_text = "[" * 100_000 + "]" * 100_000
    nested: dict[str, object] = {}
    inner = nested
    for _ in range(100_000):
        inner["a"] = {}
        inner = inner["a"]  # type: ignore[assignment]
    calls = [
        {"function": {"name": "deep", "arguments": deep_text}},
        {"name": "nested", "arguments": nested},
        {"name": "long", "arguments": "x" * 10_000_000},
    ]
    deep, nested_call, long = describe_tool_calls(calls).split(", ")
    assert deep.startswith("deep([[[") and deep.endswith("…)")
    assert nested_call == "nested((arguments nested too deeply to show))"
    assert long == "long(" + "x" * CALL_ARGUMENTS_KEEP + "…)"
    assert describe_tool_calls(deep_text) == ""
    text = format_conversation([{"role": "assistant", "content": "", "tool_calls": calls}])
    assert text.startswith("[ASSISTANT]: [Called: deep(")


def test_short_text_is_unchanged() -> None:
    assert truncate_around_matches("short text", "text", max_chars=100) == "short text"


def test_long_text_keeps_the_keyword_within_bounds() -> None:
    text = "filler " * 3000 + "KEYWORD here" + " filler" * 3000
    cut = truncate_around_matches(text, "keyword", max_chars=1000)
    assert "KEYWORD" in cut
    assert len(cut) <= 1000 + len(EARLIER_MARKER) + len(LATER_MARKER)
    assert "truncated" in cut
    body = cut[len(EARLIER_MARKER) : -len(LATER_MARKER)]
    position = body.index("KEYWORD")
    assert 200 <= position <= 300  # a quarter of the window before the match


def test_no_match_keeps_the_start() -> None:
    text = "beginning " + "x" * 5000
    cut = truncate_around_matches(text, "absent", max_chars=500)
    assert cut.startswith("beginning ") and cut.endswith(LATER_MARKER)


def test_match_at_the_beginning_is_kept() -> None:
    text = "needle first " + "y" * 5000
    cut = truncate_around_matches(text, "needle", max_chars=500)
    assert cut.startswith("needle first")


def test_phrase_beats_an_earlier_single_word() -> None:
    text = "docker " + "a" * 5000 + " docker networking " + "b" * 5000
    cut = truncate_around_matches(text, "docker networking", max_chars=1000)
    assert "docker networking" in cut


def test_co_occurring_words_beat_scattered_ones() -> None:
    text = "alpha " + "z" * 4000 + " beta " + "z" * 4000 + " alpha and beta together " + "z" * 4000
    cut = truncate_around_matches(text, "beta alpha", max_chars=600)
    assert "alpha and beta together" in cut


def test_two_phrase_matches_close_enough_are_both_kept() -> None:
    text = "q" * 20_000 + "exact phrase one" + "w" * 10_000 + "exact phrase two" + "e" * 50_000
    cut = truncate_around_matches(text, "exact phrase", max_chars=30_000)
    assert "exact phrase one" in cut and "exact phrase two" in cut


def test_window_slides_back_at_the_end() -> None:
    text = "s" * 10_000 + " tail match"
    cut = truncate_around_matches(text, "match", max_chars=2000)
    assert cut.endswith("tail match") and cut.startswith(EARLIER_MARKER)


def test_stems_and_stop_words_guide_the_cut() -> None:
    text = "x" * 5000 + " we deployed the new build " + "x" * 5000
    cut = truncate_around_matches(text, "What about the deployment?", max_chars=500)
    assert "deployed" in cut


def test_match_preview() -> None:
    assert match_preview("tiny", "q") == "tiny"
    text = "a" * 2000 + " the answer is 42 " + "b" * 2000
    preview = match_preview(text, "answer", chars=200)
    assert "answer is 42" in preview and len(preview) <= 202


def _conversation(turns: list[tuple[str, str, str]]) -> str:
    return format_conversation(
        [{"role": role, "name": name, "content": text} for role, name, text in turns]
    )


def test_a_rare_word_beats_many_mentions_of_a_name() -> None:
    chatter = [("user", "Ana", f"Chatting about nothing much, item {n}.") for n in range(12)]
    answer = ("user", "Ana", "Back from the pottery class: I made a lopsided bowl.")
    text = _conversation([*chatter, ("assistant", "Ben", "filler " * 80), answer])
    preview = match_preview(text, "What did Ana make at pottery?", chars=300)
    assert "[USER:Ana]: Back from the pottery class: I made a lopsided bowl." in preview


def test_needles_match_at_word_starts() -> None:
    text = "banana bread recipe " + "x " * 600 + "and Ana said the recipe was hers"
    preview = match_preview(text, "ana", chars=100)
    assert "Ana said" in preview and "banana" not in preview
    # a stem still finds longer forms, and CJK needles match inside CJK runs
    assert "running" in match_preview("y " * 500 + "kept running", "runs", chars=60)
    assert "内存泄漏" in match_preview("文" * 800 + "我们的内存泄漏修好了", "内存泄漏", chars=60)


def test_the_window_opens_at_a_turn() -> None:
    answer = "[ASSISTANT:Ben]: Yeah, it swelled up after my long run. A week off running now."
    turns: list[tuple[str, str | None, str]] = [
        ("user", None, f"Unrelated message number {n}, " + "words " * 20) for n in range(12)
    ]
    turns[5] = ("assistant", "Ben", answer.split(": ", 1)[1])
    text = format_conversation([{"role": r, "content": t, "name": n} for r, n, t in turns])
    question = "Why did Ben take a week off running?"
    # the turn before the match fits in the window's first quarter: it is kept whole
    preview = match_preview(text, question, chars=400)
    assert preview.startswith("…[USER]: Unrelated message number 4,") and answer in preview
    # a long turn before the match is left out rather than cut mid-sentence
    turns[4] = ("user", None, "Unrelated and long. " * 60)
    text = format_conversation([{"role": r, "content": t, "name": n} for r, n, t in turns])
    assert match_preview(text, question, chars=400).startswith("…" + answer)


def test_possessives_are_cut_before_matching() -> None:
    text = (
        "[USER:Hiro]: the marathon was fun\n\n"
        + "z " * 800
        + "\n\n[USER:Grace]: my marathon ended in four hours"
    )
    preview = match_preview(text, "How was Grace's marathon?", chars=200)
    assert "four hours" in preview


def test_a_window_at_the_end_still_opens_at_a_turn() -> None:
    turns = [("user", None, f"Message {n}: " + "padding words " * 12) for n in range(10)]
    turns[-1] = ("assistant", None, "The final answer mentions zebras.")
    text = format_conversation([{"role": r, "content": t} for r, _, t in turns])
    preview = match_preview(text, "zebras", chars=500)
    assert preview.startswith("…[USER]: Message 7:") and preview.endswith("mentions zebras.")


def test_words_the_excerpt_missed_get_a_second_one() -> None:
    turns = [f"[USER]: Filler message {n}, " + "nothing at all " * 10 for n in range(40)]
    turns[3] = "[USER]: I signed up for a pottery class."
    turns[30] = "[ASSISTANT]: My glazed bowl came out of the kiln today."
    text = "\n\n".join(turns)
    preview = match_preview(text, "pottery glazed bowl", chars=400)
    first, second = preview.split(EXCERPT_GAP)
    assert "pottery class" in first and "glazed bowl came out" in second
    assert first.startswith("…") and second.endswith("…")
    assert len(preview) <= 400 + 200 + len(EXCERPT_GAP) + 2
    # everything in the first excerpt: no second one
    assert EXCERPT_GAP not in match_preview(text, "pottery class", chars=400)


_TRANSCRIPT_PIECES = st.sampled_from(
    ["\n\n", "[USER:Ana]: ", "[ASSISTANT]: ", "pottery ", "Ana ", "banana ", "run ", "内存", "x"]
)


@given(
    text=st.lists(_TRANSCRIPT_PIECES, max_size=200).map("".join),
    query=st.lists(_TRANSCRIPT_PIECES, max_size=6).map("".join),
    chars=st.integers(min_value=0, max_value=300),
)
def test_previews_and_windows_are_cut_from_the_text(text: str, query: str, chars: int) -> None:
    preview = match_preview(text, query, chars=chars)
    if len(text) <= chars:
        assert preview == text
    else:
        excerpts = preview.removeprefix("…").removesuffix("…").split(EXCERPT_GAP)
        assert 1 <= len(excerpts) <= 2
        assert all(excerpt in text for excerpt in excerpts)
        assert sum(map(len, excerpts)) <= chars + chars // 2
    cut = truncate_around_matches(text, query, max_chars=max(chars, 1))
    body = cut.removeprefix(EARLIER_MARKER).removesuffix(LATER_MARKER)
    assert body in text and len(body) <= max(chars, 1)


def test_a_long_transcript_with_a_long_query_is_cut_around_its_rare_words() -> None:
    common = ["deploy", "server", "error", "fix", "config", "restart", "log", "user"]
    filler = [f"{common[i % 8]}{'' if i % 3 else 's'} note{i % 97}" for i in range(90_000)]
    middle = len(filler) // 2
    filler[middle:middle] = ["the pottery kiln cracked at 1200 degrees"]
    text = " ".join(filler)
    query = " ".join(["pottery", "kiln", *common, *(f"note{n}" for n in range(22))])
    window = truncate_around_matches(text, query, 20_000)
    assert "pottery kiln cracked" in window
    assert window.startswith(EARLIER_MARKER) and window.endswith(LATER_MARKER)
    assert "pottery kiln" in match_preview(window, query, 600)


def test_a_multi_line_command_reads_as_words_and_is_found_in_a_preview() -> None:
    command = "cd /srv/charts\nhelm rollback payments 41\tnow"
    calls = [{"function": {"name": "terminal", "arguments": json.dumps({"command": command})}}]
    assert describe_tool_calls(calls) == (
        'terminal({"command": "cd /srv/charts helm rollback payments 41 now"})'
    )
    windows = json.dumps({"path": "C:\\new\\tab", "quote": 'say "hi"'})
    assert describe_tool_calls([{"name": "read", "arguments": windows}]) == (
        'read({"path": "C:\\\\new\\\\tab", "quote": "say \\"hi\\""})'  # other escapes stay
    )
    filler = [{"role": "user", "content": f"unrelated chatter number {n} " * 8} for n in range(40)]
    transcript = format_conversation(
        [*filler, {"role": "assistant", "content": None, "tool_calls": calls}, *filler]
    )
    assert "helm rollback" in match_preview(transcript, "helm")
