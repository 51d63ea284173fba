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
    MAX_TAG_CHARS,
    MEMORY_CONTEXT_NOTE,
    OPEN_TAG,
    PARTIAL,
    drop_repeated_recall_lines,
    find_tag,
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


def test_sanitize_drops_what_an_unbalanced_open_tag_starts() -> None:
    # A stray close tag goes, the text around it stays; an open tag starts a span
    # that is never closed, so it is dropped to the end (fail closed).
    result = sanitize_context("fact one</memory-context>INJECTED<memory-context>fact two")
    assert result == "fact oneINJECTED"


def test_sanitize_is_case_insensitive_for_stray_tags() -> None:
    assert "datamore" in sanitize_context("data</MEMORY-CONTEXT>more")
    assert sanitize_context("a</ memory-context >b") == "ab"


@pytest.mark.parametrize("note", [*HERMES_NOTES, MEMORY_CONTEXT_NOTE])
def test_sanitize_removes_every_note_variant(note: str) -> None:
    assert sanitize_context(f"{note}\nremembered fact") == "remembered fact"


def test_sanitize_is_linear_on_many_unclosed_tags() -> None:
    hostile = "<memory-context>x" * 50_000
    assert sanitize_context(hostile) == ""
    assert sanitize_context("</memory-context>x" * 50_000) == "x" * 50_000


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


def test_scrubber_removes_inline_spans() -> None:
    # Decided: a model echoing recall inline must not show it, so every open tag
    # starts a span, also when text follows it on the same line.
    assert stream(["a <memory-context>SECRET</memory-context> b"]) == "a  b"
    assert sanitize_context("a <memory-context>SECRET</memory-context> b") == "a  b"


def test_scrubber_an_inline_mention_without_close_drops_the_rest() -> None:
    # The price of failing closed: an unmatched open tag hides what follows.
    assert stream(["Wrap recall in `<memory-context>` tags."]) == "Wrap recall in `"


def test_scrubber_complete_tag_at_chunk_end_opens_a_span() -> None:
    scrubber = StreamingContextScrubber()
    assert scrubber.feed("ok <memory-context>") == "ok "
    assert scrubber.in_span
    assert scrubber.feed("\nhidden") == ""
    assert scrubber.feed("</memory-context>shown") == "shown"
    assert scrubber.flush() == ""


def test_scrubber_unterminated_span_is_discarded_at_flush() -> None:
    assert stream(["visible\n<memory-context>\nleaked recall"]) == "visible\n"
    assert sanitize_context("visible\n<memory-context>\nleaked recall") == "visible\n"


def test_scrubber_holds_partial_tag_then_releases_it_at_flush() -> None:
    scrubber = StreamingContextScrubber()
    assert scrubber.feed("value <memory-con") == "value "
    assert scrubber.flush() == "<memory-con"


def test_scrubber_is_case_insensitive() -> None:
    assert stream(["a<MEMORY-CONTEXT>\nx</Memory-Context>b"]) == "ab"


def test_nested_spans_end_at_the_balancing_close_tag() -> None:
    text = "<memory-context>\nA<memory-context>\nB</memory-context>C</memory-context>D"
    assert stream([text]) == "D"
    assert sanitize_context(text) == "D"


@pytest.mark.parametrize(
    "variant",
    [
        ('<memory-context reason="x">', "</memory-context>"),
        ("< memory-context >", "< / memory-context >"),
        ("\uff1cmemory-context\uff1e", "\uff1c/memory-context\uff1e"),
        ("\ufe64memory-context\ufe65", "\uff1c\uff0fmemory-context\uff1e"),
        ("<memory\u200b-con\u2060text>", "</memory\u00ad-context>"),
        ("<\uff2d\uff25\uff2dory-context>", "</MEMORY-CONTEXT data-x='1'>"),
    ],
)
def test_every_tag_form_is_a_fence_for_both(variant: tuple[str, str]) -> None:
    opening, closing = variant
    text = f"before {opening}SECRET{closing} after"
    assert stream([text]) == sanitize_context(text) == "before  after"
    assert stream(list(text)) == "before  after"
    assert stream([f"before {opening}SECRET"]) == sanitize_context(f"before {opening}SECRET")
    assert sanitize_context(f"before {opening}SECRET") == "before "


def test_self_closing_tag_is_removed_without_opening_a_span() -> None:
    assert stream(["a<memory-context/>b"]) == sanitize_context("a<memory-context/>b") == "ab"


@pytest.mark.parametrize(
    "prose", ["</memory-contextual>", "&lt;/memory-context&gt;", "<memory context>", "a < b"]
)
def test_lookalike_prose_is_kept(prose: str) -> None:
    assert stream([f"x {prose} y"]) == sanitize_context(f"x {prose} y") == f"x {prose} y"


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


def test_scrubber_holds_back_at_most_one_tag() -> None:
    scrubber = StreamingContextScrubber()
    assert scrubber.feed("ok <memory-context " + "a" * (MAX_TAG_CHARS + 10)) == (
        "ok <memory-context " + "a" * (MAX_TAG_CHARS + 10)
    )


def test_removals_that_join_a_new_tag_are_removed_too() -> None:
    text = "<memory-</memory-context>context>\nSECRET"
    assert "SECRET" not in sanitize_context(text)
    block = build_memory_context_block("fact <memory-<memory-context>context> more")
    assert block.count(OPEN_TAG) == 1 and block.count(CLOSE_TAG) == 1


# -- properties: one matcher, any tag form, any chunking -------------------------------

# An independent statement of the tag grammar, as one regular expression.
_INV = "\u00ad\u034f\u061c\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff"
_NAME_RE = f"[{_INV}]{{0,32}}".join(
    f"[{re.escape(ch)}{chr(ord(ch) + 0xFEE0)}]" for ch in "memory-context"
)
ORACLE_TAG = re.compile(
    rf"[<\uff1c\ufe64][\s{_INV}]{{0,32}}(?P<slash>[/\uff0f][\s{_INV}]{{0,32}})?{_NAME_RE}"
    rf"(?:(?P<attrs>[\s/\uff0f{_INV}][^<>\uff1c\uff1e\ufe64\ufe65]{{0,200}}))?[>\uff1e\ufe65]",
    re.IGNORECASE,
)


def reference_scrub(text: str) -> str:
    """The span rule over a whole string, with the oracle expression as the matcher."""
    out, depth, pos = [], 0, 0
    while True:
        at = re.compile(r"[<\uff1c\ufe64]").search(text, pos)
        if at is None:
            if not depth:
                out.append(text[pos:])
            return "".join(out)
        if not depth:
            out.append(text[pos : at.start()])
        tag = ORACLE_TAG.match(text, at.start())
        if tag is None:
            if not depth:
                out.append(text[at.start()])
            pos = at.start() + 1
            continue
        pos = tag.end()
        attrs = (tag.group("attrs") or "").rstrip()
        if tag.group("slash"):
            depth = max(0, depth - 1)
        elif not attrs.endswith(("/", "\uff0f")):
            depth += 1


def _fullwidth(ch: str) -> str:
    return chr(ord(ch) + 0xFEE0) if "!" <= ch <= "~" else ch


@st.composite
def tag_variant(draw: st.DrawFn, closing: bool) -> str:
    """A tag in any form the matcher accepts."""
    blanks = st.text(alphabet=" \t\n\u200b\u2060\ufeff\u00ad", max_size=3)
    invisible = st.text(alphabet="\u200b\u200d\u2060\u00ad\u202e", max_size=2)
    name = ""
    for index, ch in enumerate("memory-context"):
        if index:
            name += draw(invisible)
        if draw(st.booleans()):
            ch = ch.upper()
        name += _fullwidth(ch) if draw(st.integers(0, 4)) == 0 else ch
    attrs = draw(st.sampled_from(["", "", ' reason="x"', " data-a=1 b", "\u200b x"]))
    lt = draw(st.sampled_from(["<", "<", "\uff1c", "\ufe64"]))
    gt = draw(st.sampled_from([">", ">", "\uff1e", "\ufe65"]))
    slash = draw(st.sampled_from(["/", "/", "\uff0f"])) + draw(blanks) if closing else ""
    return f"{lt}{draw(blanks)}{slash}{name}{attrs}{gt}"


PAYLOAD = "\U0001f512"
filler = st.one_of(
    st.sampled_from(["<", ">", "<memory-", "context>", "</memory", "\n", " ", "`", "é"]),
    st.text(alphabet=st.characters(blacklist_characters=PAYLOAD), max_size=6),
)


@st.composite
def fenced_text(draw: st.DrawFn, depth: int = 0) -> str:
    """Filler and fenced spans (some nested, the last maybe unclosed) around payloads."""
    pieces = []
    for _ in range(draw(st.integers(0, 4))):
        pieces.append(draw(filler))
        if draw(st.booleans()):
            inner = PAYLOAD * draw(st.integers(1, 3))
            if depth < 2 and draw(st.booleans()):
                inner += draw(fenced_text(depth + 1)) + PAYLOAD
            pieces.append(draw(tag_variant(False)) + inner + draw(tag_variant(True)))
    if draw(st.integers(0, 3)) == 0:
        pieces.append(draw(tag_variant(False)) + PAYLOAD + draw(filler))
    return "".join(pieces)


def split_points(draw: st.DrawFn, text: str) -> list[str]:
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=12)))
    pieces, last = [], 0
    for cut in [*cuts, len(text)]:
        pieces.append(text[last:cut])
        last = cut
    return pieces


@st.composite
def text_and_chunks(draw: st.DrawFn) -> tuple[str, list[str]]:
    text = draw(st.one_of(fenced_text(), st.lists(filler, max_size=20).map("".join)))
    return text, split_points(draw, text)


@settings(max_examples=500, deadline=None)
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


@settings(max_examples=500, deadline=None)
@given(text_and_chunks())
def test_no_payload_character_escapes_either_path(case: tuple[str, list[str]]) -> None:
    text, chunks = case
    assert PAYLOAD not in stream(chunks)
    assert PAYLOAD not in sanitize_context(text)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(filler, tag_variant(False), tag_variant(True)), max_size=12))
def test_matcher_agrees_with_the_oracle_at_every_bracket(parts: list[str]) -> None:
    text = "".join(parts)
    for at in (m.start() for m in re.finditer(r"[<\uff1c\ufe64]", text)):
        found, oracle = find_tag(text, at), ORACLE_TAG.match(text, at)
        if found == PARTIAL:
            assert oracle is None
        else:
            assert (found[0] if isinstance(found, tuple) else None) == (
                oracle.end() if oracle else None
            )


@settings(max_examples=200, deadline=None)
@given(tag_variant(False), tag_variant(True))
def test_every_generated_variant_is_recognised(opening: str, closing: str) -> None:
    assert find_tag(opening, 0) == (len(opening), "open")
    assert find_tag(closing, 0) == (len(closing), "close")


@given(st.text())
def test_sanitize_never_leaves_a_tag_in_any_form(text: str) -> None:
    result = sanitize_context(text)
    assert ORACLE_TAG.search(result) is None


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
