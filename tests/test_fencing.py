"""Context fencing: the block format, sanitising, and the streaming scrubber."""

from __future__ import annotations

import logging
import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from hermes_core import StreamingContextScrubber, build_memory_context_block, sanitize_context
from hermes_core.fencing import (
    CLOSE_TAG,
    MEMORY_CONTEXT_NOTE,
    OPEN_TAG,
    drop_repeated_recall_lines,
    scrub_context_spans,
)

HERMES_NOTES = [
    "[System note: The following is recalled memory context, NOT new user input. "
    "It may be stale, duplicated, or incomplete. Use it as advisory background/hints, "
    "and verify live operational facts with tools before acting.]",
    "[System note: The following is recalled memory context, NOT new user input. "
    "Treat as authoritative reference data — this is the agent's persistent memory and "
    "should inform all responses.]",
    "[System note: The following is recalled memory context, NOT new user input. "
    "Treat as informational background data.]",
]


# -- build_memory_context_block ------------------------------------------------------


def test_block_wraps_content_with_advisory_note() -> None:
    block = build_memory_context_block("## Holographic Memory\n- [0.8] user likes dark mode")
    assert block.startswith(OPEN_TAG + "\n")
    assert block.endswith("\n" + CLOSE_TAG)
    assert "NOT new user input" in block
    assert MEMORY_CONTEXT_NOTE in block
    assert "- [0.8] user likes dark mode" in block


@pytest.mark.parametrize("empty", ["", "   ", "\n\t\n", None])
def test_block_of_nothing_is_empty(empty: str | None) -> None:
    assert build_memory_context_block(empty) == ""


def test_prefenced_provider_output_keeps_its_payload(caplog: pytest.LogCaptureFixture) -> None:
    raw = f"{OPEN_TAG}\n{HERMES_NOTES[0]}\n\nuser prefers tabs\n{CLOSE_TAG}"
    with caplog.at_level(logging.WARNING, logger="hermes_core.fencing"):
        block = build_memory_context_block(raw)
    assert "user prefers tabs" in block
    assert block.count(OPEN_TAG) == 1 and block.count(CLOSE_TAG) == 1
    assert HERMES_NOTES[0] not in block
    assert "pre-fenced" in caplog.text


def test_block_that_is_only_a_fence_is_empty() -> None:
    assert build_memory_context_block(f"{OPEN_TAG}\n{CLOSE_TAG}") == ""


def test_block_drops_repeated_bullets() -> None:
    block = build_memory_context_block("## Facts\n- likes tea\n- likes tea\n- owns a cat")
    assert block.count("- likes tea") == 1
    assert "- owns a cat" in block


def test_user_text_before_the_fence_stays_outside() -> None:
    message = "What's my editor?\n\n" + build_memory_context_block("uses vim")
    outside = message.split(OPEN_TAG)[0]
    assert outside.strip() == "What's my editor?"
    assert sanitize_context(message).strip() == "What's my editor?"


# -- sanitize_context ----------------------------------------------------------------


def test_sanitize_removes_whole_block_with_content() -> None:
    text = "before " + build_memory_context_block("secret recall") + " after"
    assert sanitize_context(text) == "before  after"


def test_sanitize_close_before_open_keeps_both_facts() -> None:
    result = sanitize_context("fact one</memory-context>INJECTED<memory-context>fact two")
    assert "memory-context" not in result.lower()
    assert "fact one" in result and "fact two" in result


def test_sanitize_is_case_insensitive_for_stray_tags() -> None:
    assert "datamore" in sanitize_context("data</MEMORY-CONTEXT>more")
    assert sanitize_context("a< memory-context >b") == "ab"


@pytest.mark.parametrize("note", [*HERMES_NOTES, MEMORY_CONTEXT_NOTE])
def test_sanitize_removes_every_note_variant(note: str) -> None:
    assert sanitize_context(f"{note}\nremembered fact") == "remembered fact"


def test_sanitize_is_linear_on_many_unclosed_tags() -> None:
    hostile = "<memory-context>x" * 50_000
    result = sanitize_context(hostile)
    assert result == "x" * 50_000


@given(st.text())
def test_sanitize_never_leaves_a_tag(text: str) -> None:
    result = sanitize_context(text)
    assert not re.search(r"<\s*/?\s*memory-context\s*>", result, re.IGNORECASE)


# -- drop_repeated_recall_lines ------------------------------------------------------


def test_dedupe_scopes_reset_at_headings() -> None:
    text = "## A\n- x\n- x\n## B\n- x"
    assert drop_repeated_recall_lines(text) == "## A\n- x\n## B\n- x"


def test_dedupe_keeps_bullets_with_continuations_and_numbered_items() -> None:
    text = "- x\n  more about x\n- x\n1. y\n1. y\n\n- z\n- z"
    assert drop_repeated_recall_lines(text) == "- x\n  more about x\n- x\n1. y\n1. y\n\n- z"


# -- StreamingContextScrubber: pinned behaviours --------------------------------------


def stream(chunks: list[str]) -> str:
    scrubber = StreamingContextScrubber()
    return "".join(scrubber.feed(c) for c in chunks) + scrubber.flush()


def test_scrubber_passes_plain_text_through() -> None:
    assert stream(["Hello, ", "world!"]) == "Hello, world!"


def test_scrubber_removes_block_split_across_chunks() -> None:
    chunks = ["Answer: 42\n<mem", "ory-context>\nsecret", " stuff\n</memory-", "context>\nBye"]
    assert stream(chunks) == "Answer: 42\n\nBye"


def test_scrubber_removes_block_that_starts_mid_line() -> None:
    # Deliberate: the original only scrubbed tags that started a line.
    assert stream(["Sure! <memory-context>\nsecret\n</memory-context> done"]) == "Sure!  done"


def test_scrubber_keeps_inline_mentions_of_the_tag() -> None:
    text = "Wrap recall in `<memory-context>` tags, e.g. <memory-context> like this."
    assert stream([text]) == text


def test_scrubber_tag_at_line_start_without_newline_is_prose() -> None:
    assert stream(["text\n<memory-context>secret"]) == "text\n<memory-context>secret"


def test_scrubber_complete_tag_at_chunk_end_waits_for_next_char() -> None:
    scrubber = StreamingContextScrubber()
    assert scrubber.feed("ok <memory-context>") == "ok "
    assert scrubber.feed("\nhidden") == ""
    assert scrubber.feed("</memory-context>shown") == "shown"
    assert scrubber.flush() == ""


def test_scrubber_open_tag_with_trailing_spaces_still_opens_a_span() -> None:
    # A model echoing the fence may leave a space or tab before the line break.
    assert stream(["Sure <memory-context> \nSECRET\n</memory-context> done"]) == "Sure  done"
    scrubber = StreamingContextScrubber()
    assert scrubber.feed("ok <memory-context>\t ") == "ok "  # undecided: held back
    assert scrubber.feed(" \nSECRET</memory-context>!") == "!"
    assert stream(["a <memory-context>  b"]) == "a <memory-context>  b"  # prose: shown


def test_scrubber_unterminated_span_is_discarded_at_flush() -> None:
    assert stream(["visible\n<memory-context>\nleaked recall"]) == "visible\n"


def test_scrubber_holds_partial_tag_then_releases_it_at_flush() -> None:
    scrubber = StreamingContextScrubber()
    assert scrubber.feed("value <memory-con") == "value "
    assert scrubber.flush() == "<memory-con"


def test_scrubber_is_case_insensitive() -> None:
    assert stream(["a<MEMORY-CONTEXT>\nx</Memory-Context>b"]) == "ab"


def test_scrubber_first_close_ends_span_without_nesting() -> None:
    text = "<memory-context>\nA<memory-context>\nB</memory-context>C</memory-context>D"
    assert stream([text]) == "C</memory-context>D"


def test_scrubber_reset_between_turns() -> None:
    scrubber = StreamingContextScrubber()
    scrubber.feed("<memory-context>\nunfinished")
    scrubber.reset()
    assert scrubber.feed("fresh turn") == "fresh turn"
    assert scrubber.flush() == ""


def test_scrubber_empty_feed_keeps_state() -> None:
    scrubber = StreamingContextScrubber()
    assert scrubber.feed("<memory") == ""
    assert scrubber.feed("") == ""
    assert scrubber.feed("-context>\nx</memory-context>y") == "y"


# -- StreamingContextScrubber: properties ---------------------------------------------


def reference_scrub(text: str) -> str:
    """An independent whole-string implementation of the span rule."""
    folded = text.translate(
        str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
    )
    span_open = re.compile(re.escape(OPEN_TAG) + r"(?=[ \t]*[\r\n])")
    out, pos = [], 0
    while pos < len(text):
        opening = span_open.search(folded, pos)
        if opening is None:
            out.append(text[pos:])
            break
        out.append(text[pos : opening.start()])
        close = folded.find(CLOSE_TAG, opening.end())
        if close < 0:
            break
        pos = close + len(CLOSE_TAG)
    return "".join(out)


# Texts built from fragments that are likely to form (or almost form) tags.
fragments = st.sampled_from(
    [
        OPEN_TAG,
        CLOSE_TAG,
        "<memory-context>\n",
        "<MEMORY-context>\r",
        "<memory-context> \t\n",
        "\t",
        "<memory-",
        "context>",
        "</memory",
        "<",
        ">",
        "\n",
        "\r",
        " ",
        "payload",
        "é",
        "İ",
        "`",
    ]
)
tag_heavy_text = st.lists(st.one_of(fragments, st.text(max_size=5)), max_size=30).map("".join)


def split_points(draw: st.DrawFn, text: str) -> list[str]:
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=12)))
    pieces, last = [], 0
    for cut in [*cuts, len(text)]:
        pieces.append(text[last:cut])
        last = cut
    return pieces


@st.composite
def text_and_chunks(draw: st.DrawFn) -> tuple[str, list[str]]:
    text = draw(st.one_of(tag_heavy_text, st.text()))
    return text, split_points(draw, text)


@settings(max_examples=400)
@given(text_and_chunks())
@example(
    (
        "a\n<memory-context>\nb</memory-context>c",
        ["a\n<memory-", "context>", "\nb</mem", "ory-context>c"],
    )
)
def test_streaming_equals_whole_text_for_any_chunking(case: tuple[str, list[str]]) -> None:
    text, chunks = case
    assert stream(chunks) == scrub_context_spans(text) == reference_scrub(text)


@st.composite
def text_with_fenced_payload(draw: st.DrawFn) -> tuple[str, list[str]]:
    prefix = draw(tag_heavy_text)
    suffix = draw(tag_heavy_text)
    payload = "SECRET-" + draw(st.text(alphabet="abcdefghij0123456789 \n", max_size=40))
    text = prefix + build_memory_context_block(payload) + suffix
    return text, split_points(draw, text)


@settings(max_examples=300)
@given(text_with_fenced_payload())
def test_no_fenced_payload_escapes(case: tuple[str, list[str]]) -> None:
    _text, chunks = case
    output = stream(chunks)
    assert "SECRET-" not in output
    assert "NOT new user input" not in output


@pytest.mark.timeout(60)
def test_a_whole_reply_full_of_spans_is_scrubbed_in_linear_time() -> None:
    # A non-streamed reply is scrubbed as one chunk; re-scanning the rest after each
    # span made a 1 MB reply of echoed blocks take minutes.
    span = f"{OPEN_TAG}\nsecret{CLOSE_TAG}ok "
    reply = span * (1_000_000 // len(span))
    assert scrub_context_spans(reply) == "ok " * (1_000_000 // len(span))
    scrubber = StreamingContextScrubber()
    streamed = "".join(scrubber.feed(reply[i : i + 65_536]) for i in range(0, len(reply), 65_536))
    assert streamed + scrubber.flush() == "ok " * (1_000_000 // len(span))
