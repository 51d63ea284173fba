"""Rebuild the learned detector shipped in hermes_memory_builtin/data/.

    uv pip install scikit-learn   # training only; not a run-time dependency
    python bench/train_detector.py          # writes the data files
    python bench/train_detector.py --check  # rebuilds in memory, compares with the shipped files

Data: the generated corpus of bench/safety_corpus.py (templates written for this
project). The regularisation strength is chosen on the dev split, thresholds
are calibrated on the dev benign scores (review: at most 1 % of dev benign
entries reach it, never below REVIEW_FLOOR; block: at most 0.25 %, never below
BLOCK_FLOOR, which means never), and the held-out test split is reported, never used
for a choice.
Weights are stored as one signed byte each
(times a scale), so a rebuild with the same scikit-learn version (liblinear is
deterministic) is byte for byte identical; across versions a weight may move
by one step of the scale.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import numpy as np
from scipy.sparse import csr_matrix
from sklearn.linear_model import LogisticRegression

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "providers" / "builtin"))

import safety_corpus  # noqa: E402
from hermes_memory_builtin.detector import DIMENSIONS, WEIGHTS_FILE, feature_indices  # noqa: E402

DATA = ROOT / "providers" / "builtin" / "hermes_memory_builtin" / "data"
REVIEW_FP = 0.01
BLOCK_FP = 0.0025
REVIEW_FLOOR = 0.9
"""The review threshold is never below this: the dev split is generated, so real entries
score higher than its benign ones. Measured on real text the corpus never saw (12,355
chat messages of a public multi-session chat set and the lines of docs/), a band from
0.5 held 20 % of chat messages and 12 % of doc lines; from 0.9 it holds 0.1 %."""
BLOCK_FLOOR = 1.0
"""The detector alone never blocks (a score reaches 1.0 only in the limit): what it
catches is held for review, which a person can accept, so its false positives lose
nothing. Blocking stays with the pattern catalogue."""


def matrix(texts: list[str]) -> csr_matrix:
    rows, cols, values = [], [], []
    for row, text in enumerate(texts):
        indices = feature_indices(text)
        scale = 1.0 / np.sqrt(len(indices)) if indices else 0.0
        rows.extend([row] * len(indices))
        cols.extend(indices)
        values.extend([scale] * len(indices))
    return csr_matrix((values, (rows, cols)), shape=(len(texts), DIMENSIONS), dtype=np.float64)


def quantised(coef: np.ndarray) -> tuple[np.ndarray, float]:
    """*coef* as signed bytes and the scale that turns them back (what ships)."""
    scale = float(np.float32(np.abs(coef).max() / 127.0)) or 1.0
    return np.clip(np.rint(coef / scale), -127, 127).astype(np.int8), scale


def scores(weights: np.ndarray, scale: float, bias: float, x: csr_matrix) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-(x @ (weights.astype(np.float64) * scale) + bias)))


def threshold(benign: np.ndarray, rate: float) -> float:
    """The lowest score that at most *rate* of *benign* scores reach."""
    ordered = np.sort(benign)[::-1]
    allowed = int(np.floor(rate * len(ordered)))
    return float(np.nextafter(ordered[allowed], 1.0)) if allowed < len(ordered) else 0.0


def train() -> tuple[np.ndarray, dict[str, object]]:
    samples = list(safety_corpus.generate())
    corpus_hash = hashlib.sha256(
        "\n".join(f"{s.label}\t{s.split}\t{s.text}" for s in samples).encode()
    ).hexdigest()
    split = {name: [s for s in samples if s.split == name] for name in ("train", "dev", "test")}
    x = {name: matrix([s.text for s in rows]) for name, rows in split.items()}
    y = {name: np.array([s.label for s in rows]) for name, rows in split.items()}
    best = None
    for c in (1.0, 4.0, 16.0):
        model = LogisticRegression(C=c, solver="liblinear", class_weight="balanced", max_iter=1000)
        model.fit(x["train"], y["train"])
        weights, scale = quantised(model.coef_[0])
        bias = round(float(model.intercept_[0]), 6)
        dev = scores(weights, scale, bias, x["dev"])
        review = threshold(dev[y["dev"] == 0], REVIEW_FP)
        recall = float((dev[y["dev"] == 1] >= review).mean())
        if best is None or recall > best[0]:
            block = threshold(dev[y["dev"] == 0], BLOCK_FP)
            best = (recall, c, weights, scale, bias, review, block)
    assert best is not None
    recall, c, weights, scale, bias, review, block = best
    review = max(review, REVIEW_FLOOR)
    block = max(block, review, BLOCK_FLOOR)
    test = scores(weights, scale, bias, x["test"])
    attacks, benign = test[y["test"] == 1], test[y["test"] == 0]
    meta: dict[str, object] = {
        "format": 1,
        "dimensions": DIMENSIONS,
        "bias": bias,
        "scale": scale,
        "review": round(review, 6),
        "block": round(block, 6),
        "C": c,
        "dev_stopped_at_review": round(recall, 4),
        "test": {
            "attacks": len(attacks),
            "benign": len(benign),
            "blocked": round(float((attacks >= block).mean()), 4),
            "stopped": round(float((attacks >= review).mean()), 4),
            "false_positive_blocked": round(float((benign >= block).mean()), 4),
            "false_positive_held_or_blocked": round(float((benign >= review).mean()), 4),
        },
        "corpus": {
            "generator": "bench/safety_corpus.py",
            "seed": safety_corpus.SEED,
            "samples": len(samples),
            "sha256": corpus_hash,
            "licence": "project's own",
        },
    }
    return weights, meta


def encoded(weights: np.ndarray, meta: dict[str, object]) -> tuple[bytes, bytes]:
    raw = weights.astype(np.int8).tobytes()
    meta = {**meta, "weights_sha256": hashlib.sha256(raw).hexdigest()}
    return raw, (json.dumps(meta, indent=2, sort_keys=True) + "\n").encode()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the shipped files")
    args = parser.parse_args()
    raw, meta = encoded(*train())
    if args.check:
        same = (DATA / WEIGHTS_FILE).read_bytes() == raw
        print("weights identical" if same else "weights DIFFER")
        return 0 if same else 1
    DATA.mkdir(exist_ok=True)
    (DATA / WEIGHTS_FILE).write_bytes(raw)
    (DATA / "detector.json").write_bytes(meta)
    print(meta.decode())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
