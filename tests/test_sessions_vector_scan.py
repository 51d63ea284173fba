"""A one-shot search by meaning without numpy: the question's vector worked out in pure
Python and the mapped records scored by simsimd pick what numpy's path picks."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vector_kit import cli_search, embedded_store

from hermes_core.embeddings import STATIC_DIR, StaticEncoder, missing_encoder_requirements
from hermes_core.sessions import SessionStore
from hermes_core.sessions.neighbours import Held, best, scores
from hermes_core.sessions.semantic import semantic_available
from hermes_core.sessions.vectorfile import from_rows, record_bytes, records_of
from hermes_core.sessions.vectorscan import nearest_records, top

np = pytest.importorskip("numpy")
pytestmark = pytest.mark.skipif(
    not semantic_available() or missing_encoder_requirements("static") != [],
    reason="the semantic extra is not installed",
)

texts = st.lists(
    st.text(alphabet=st.characters(codec="utf-8"), max_size=30)
    | st.text(alphabet=st.characters(max_codepoint=127), max_size=30)
    | st.sampled_from(["[SEP]", "##ing", "Kubernetes", "don't", "e-mail", "\x00", "\t", " "]),
    max_size=8,
).map("".join)


@given(texts)
@settings(max_examples=300, deadline=None)
def test_a_questions_vector_is_the_encoders_bit_for_bit(text: str) -> None:
    from hermes_core.static_query import StaticQuery

    expected = StaticEncoder.load().encode([text])[0]
    assert np.array_equal(np.asarray(StaticQuery.load().vector(text), dtype=np.float32), expected)


@cache
def _reference_tokenizer() -> Any:
    """The model's own tokenizer, loaded once for every example (it is only read)."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(STATIC_DIR / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=200))
@settings(max_examples=300, deadline=None)
def test_ascii_text_is_pieced_as_the_tokenizer_pieces_it(text: str) -> None:
    from hermes_core.asciipieces import AsciiPieces

    pieces = AsciiPieces.read(STATIC_DIR / "tokenizer.json")
    assert pieces is not None
    tokenizer = _reference_tokenizer()
    expected = tokenizer.encode(text, add_special_tokens=False).ids
    found = pieces.ids(text)
    assert found is None or found == expected
    assert found is not None or "[" in text  # only an added token ([SEP]...) is left over


@st.composite
def stores(draw: st.DrawFn) -> tuple[list[int], list[int], list[list[float]], list[float]]:
    """Vectors of small whole numbers (so that every sum is exact, whatever the order),
    some messages with two pieces, ids of any size; and a query.

    The matrix's numbers, -4 to 4, come from one drawn byte string (one byte each, 0 -> 0):
    the same matrices as a number drawn at a time, at a fraction of the drawing's cost.
    """
    dims = draw(st.integers(1, 24))
    count = draw(st.integers(0, 60))
    value = st.integers(-4, 4).map(float)
    cells = draw(st.binary(min_size=dims * count, max_size=dims * count))
    numbers = [float((byte + 4) % 9 - 4) for byte in cells]
    matrix = [numbers[row * dims : (row + 1) * dims] for row in range(count)]
    mids = draw(st.lists(st.integers(-(2**63), 2**63 - 1), min_size=1, max_size=max(1, count)))
    ids = [mids[draw(st.integers(0, len(mids) - 1))] for _ in range(count)]
    checksums = draw(st.lists(st.integers(0, 2**32 - 1), min_size=count, max_size=count))
    query = draw(st.lists(value, min_size=dims, max_size=dims))
    return ids, checksums, matrix, query


@given(stores(), st.integers(1, 40))
@settings(max_examples=300, deadline=None)
def test_the_records_scored_without_numpy_give_numpys_neighbours(
    store: tuple[list[int], list[int], list[list[float]], list[float]], n: int
) -> None:
    ids, checksums, matrix, query = store
    dims = len(query)
    held = from_rows(ids, checksums, matrix, dims)
    assert len(held.records) == len(ids) * record_bytes(dims)
    numpy_held = Held()
    numpy_held.set(
        np.array(ids, dtype=np.int64),
        np.array(checksums, dtype=np.uint32),
        np.array(matrix, dtype=np.float32).reshape(len(ids), dims),
    )
    similarity = scores(numpy_held, np.array(query, dtype=np.float32))
    assert nearest_records(held, query, n) == best(numpy_held, similarity, n)
    assert [held.tail(row) for row in range(len(ids))] == list(zip(ids, checksums, strict=True))
    back_ids, back_checksums, back_matrix = held.arrays()
    assert back_ids.tolist() == ids and back_checksums.tolist() == checksums
    assert np.array_equal(back_matrix, np.array(matrix, dtype=np.float32).reshape(len(ids), dims))
    assert records_of(back_ids, back_checksums, back_matrix, dims) == bytes(held.records)


@given(
    st.lists(st.integers(-6, 6).map(lambda v: v / 4), max_size=400),
    st.integers(1, 500),
)
@settings(max_examples=300, deadline=None)
def test_the_sampled_cut_gives_the_start_of_the_whole_order(scores: list[float], take: int) -> None:
    everything = sorted(range(len(scores)), key=lambda row: (-scores[row], row))
    found = top(scores, take)
    assert len(found) >= min(take, len(scores))
    assert found == everything[: len(found)]


QUESTION = "Which instrument is my daughter learning?"
TEXTS = [
    "My daughter started violin lessons; she practises scales every evening.",
    "The tomatoes in the garden finally ripened after the heatwave.",
    "The oven's thermostat broke, so the bread burned again.",
    "We booked a ferry to the islands for the first week of August.",
    *(f"Note {n}: the cello teacher moved the lesson to Thursday." for n in range(20)),
]


@pytest.mark.parametrize(
    "query", [QUESTION, "violin practice", "What did we say about the garden and the bread?"]
)
def test_a_cli_search_with_the_extra_finds_what_the_library_finds(
    tmp_path: Path, query: str
) -> None:
    path = tmp_path / "state.db"
    embedded_store(
        path, {f"s{n}": [{"role": "user", "content": text}] for n, text in enumerate(TEXTS)}
    )
    with SessionStore(path, read_only=True, semantic="on") as store:
        expected = [hit["id"] for hit in store.search_messages(query, limit=10)]
    answer = cli_search(path, query, tmp_path / "home", mode="on")
    assert [hit["id"] for hit in answer["hits"]] == expected
    assert "numpy" not in answer["loaded"]


def test_beyond_the_most_vectors_searched_the_newest_are_searched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hermes_core.sessions import neighbours, semantic

    path = tmp_path / "state.db"
    embedded_store(
        path,
        {
            f"s{n}": [{"role": "user", "content": f"Violin lesson {n}: scales and bowing."}]
            for n in range(6)
        },
    )
    monkeypatch.setattr(semantic, "MAX_VECTORS", 3)
    monkeypatch.setattr(neighbours, "MAX_VECTORS", 3)
    with SessionStore(path, read_only=True, semantic="on") as store:
        index = store.semantic_index()
        assert index is not None
        found = store._read(lambda conn: index.nearest(lambda fn: fn(conn), "violin", 6))
    assert sorted(found) == [4, 5, 6]  # numpy picks the newest three
