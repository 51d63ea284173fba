"""The hashing embedder (the MiniLM encoder is hermes_core.embeddings, tested in the core)."""

from __future__ import annotations

import math

import pytest
from hermes_memory_mem0.embedders import HashEmbedder
from hypothesis import given, settings
from hypothesis import strategies as st


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


@given(st.text(max_size=200), st.sampled_from([8, 64, 256, 1024]))
@settings(max_examples=60, deadline=None)
def test_hash_embedding_is_deterministic_and_unit_length(text: str, dims: int) -> None:
    vector = HashEmbedder(dims).embed(text)
    assert len(vector) == dims
    assert vector == HashEmbedder(dims).embed(text)
    norm = math.sqrt(sum(x * x for x in vector))
    assert norm == pytest.approx(1.0) or norm == 0.0


def test_hash_embedding_scores_shared_words_above_unrelated_text() -> None:
    embedder = HashEmbedder()
    fact = embedder.embed("My sister Ana lives in Porto")
    related = embedder.embed("where does my sister live?")
    unrelated = embedder.embed("quarterly revenue forecast spreadsheet")
    assert cosine(fact, related) > 0.2
    assert cosine(fact, related) > cosine(fact, unrelated) + 0.15


def test_hash_embedder_rejects_bad_dims() -> None:
    with pytest.raises(ValueError, match=r"8\.\.4096"):
        HashEmbedder(3)
