"""Message chunking and Honcho id mapping."""

from __future__ import annotations

import re

import pytest
from hermes_memory_honcho.chunking import CONTINUED, chunk_text
from hermes_memory_honcho.identity import to_honcho_id
from hypothesis import given
from hypothesis import strategies as st


def test_short_text_is_one_chunk_and_blank_text_none() -> None:
    assert chunk_text("  hello world  ", 100) == ["hello world"]
    assert chunk_text(" \n\t ", 100) == []


def test_splits_at_paragraphs_then_sentences() -> None:
    text = ("First paragraph is here. " * 3).strip() + "\n\n" + "Second one. " * 3
    chunks = chunk_text(text, 90)
    assert chunks[0].endswith("here.")
    assert all(chunk.startswith(CONTINUED) for chunk in chunks[1:])
    assert all(len(chunk) <= 90 for chunk in chunks)


@given(
    text=st.text(alphabet=st.characters(codec="utf-8"), max_size=600),
    limit=st.integers(min_value=len(CONTINUED) + 1, max_value=200),
)
def test_chunks_fit_and_keep_every_word_in_order(text: str, limit: int) -> None:
    chunks = chunk_text(text, limit)
    assert all(0 < len(chunk) <= limit for chunk in chunks)
    rebuilt = "".join(
        chunk.removeprefix(CONTINUED) if index else chunk for index, chunk in enumerate(chunks)
    )
    assert re.sub(r"\s+", "", rebuilt) == re.sub(r"\s+", "", text)


def test_limit_must_leave_room_for_the_prefix() -> None:
    with pytest.raises(ValueError, match="limit"):
        chunk_text("text", len(CONTINUED))


def test_valid_ids_are_kept() -> None:
    assert to_honcho_id("alice_01-x") == "alice_01-x"


@given(st.text(min_size=0, max_size=300))
def test_any_id_maps_to_a_valid_honcho_id(raw: str) -> None:
    assert re.fullmatch(r"[A-Za-z0-9_-]{1,100}", to_honcho_id(raw))


def test_cleaned_ids_do_not_collide_with_similar_ones() -> None:
    ids = {to_honcho_id(raw) for raw in ("telegram:42", "telegram_42", "telegram 42", "x" * 150)}
    assert len(ids) == 4
    assert to_honcho_id("x" * 150) != to_honcho_id("x" * 151)
