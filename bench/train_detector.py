"""Rebuild the learned detector shipped in hermes_memory_builtin/data/.

    uv pip install scikit-learn   # training only; not a run-time dependency
    python bench/detector_data.py fetch     # the pinned public attack sets (needed first)
    python bench/public_sets.py fetch       # REALTALK chats (calibration only)
    python bench/train_detector.py          # writes the data files
    python bench/train_detector.py --check  # rebuilds in memory, compares with the shipped files

Data: the generated corpus of bench/safety_corpus.py (templates written for this
project) plus real text (bench/detector_data.py): public attack prompts fetched at
pinned commits, this repository's docs at a pinned commit and standard-library
docstrings, split by source file. The regularisation strength is chosen on the dev
splits, thresholds are calibrated on the dev benign scores (review: at most 1 % of
generated and 0.5 % of real dev benign text reach it, never below REVIEW_FLOOR;
block: at most 0.25 %, never below BLOCK_FLOOR, which means never), and the held-out
test splits are reported, never used for a choice.
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
from scipy.sparse import csr_matrix, vstack
from sklearn.linear_model import LogisticRegression

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "providers" / "builtin"))

import detector_data  # noqa: E402
import safety_corpus  # noqa: E402
from hermes_memory_builtin.detector import DIMENSIONS, WEIGHTS_FILE, feature_indices  # noqa: E402

DATA = ROOT / "providers" / "builtin" / "hermes_memory_builtin" / "data"
REVIEW_FP = 0.01
REAL_REVIEW_FP = 0.005
"""At most this share of the dev split of *real* benign text (docs, docstrings) reaches review."""
REAL_ATTACK_WEIGHT = 8.0
"""Sample weight of a real attack prompt (a few dozen, against thousands generated)."""
BLOCK_FP = 0.0025
REVIEW_FLOOR = 0.8
"""The review threshold is never below this. It was 0.9 while the dev split was all
generated; the threshold is now calibrated on real dev text, chat messages included
(calibrated on docs and docstrings alone it would start near 0.26): the model trained
on generated text only held 20 % of REALTALK chat messages from 0.5, this one 6 %.
The calibration alone gives 0.73, where one short personal fact in thirty written
for a check ("I'm allergic to peanuts and shellfish.") was held; from 0.8 held-out
chat messages are held at 0.07 % instead of 0.27 %, for one real attack in 14 less."""
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


def real_rows() -> list[tuple[str, str, int, str]]:
    """(source, split, label, text) of the fetched attacks and the real benign text."""
    problem = detector_data.verify()
    if problem:
        raise SystemExit(f"the detector is trained on fetched public data too: {problem}")
    rows = [(src, split, 1, text) for src, split, text in detector_data.real_attacks()]
    rows += [(src, split, 0, text) for src, split, text in detector_data.real_benign()]
    rows += [(src, split, 0, text) for src, split, text in detector_data.chat_messages()]
    return rows


def rates(values: np.ndarray, cut: float) -> float:
    return round(float((values >= cut).mean()), 4) if len(values) else 0.0


def train() -> tuple[np.ndarray, dict[str, object]]:
    samples = list(safety_corpus.generate())
    corpus_hash = hashlib.sha256(
        "\n".join(f"{s.label}\t{s.split}\t{s.text}" for s in samples).encode()
    ).hexdigest()
    real = real_rows()
    real_hash = hashlib.sha256(
        "\n".join(f"{label}\t{split}\t{text}" for _, split, label, text in real).encode()
    ).hexdigest()
    split = {name: [s for s in samples if s.split == name] for name in ("train", "dev", "test")}
    x = {name: matrix([s.text for s in rows]) for name, rows in split.items()}
    y = {name: np.array([s.label for s in rows]) for name, rows in split.items()}
    real_split = {name: [r for r in real if r[1] == name] for name in ("train", "dev", "test")}
    rx = {name: matrix([r[3] for r in rows]) for name, rows in real_split.items()}
    ry = {name: np.array([r[2] for r in rows]) for name, rows in real_split.items()}
    x_train = vstack([x["train"], rx["train"]]).tocsr()
    y_train = np.concatenate([y["train"], ry["train"]])
    weight = np.concatenate(
        [np.ones(len(y["train"])), np.where(ry["train"] == 1, REAL_ATTACK_WEIGHT, 1.0)]
    )
    best = None
    for c in (1.0, 4.0, 16.0):
        model = LogisticRegression(C=c, solver="liblinear", class_weight="balanced", max_iter=1000)
        model.fit(x_train, y_train, sample_weight=weight)
        weights, scale = quantised(model.coef_[0])
        bias = round(float(model.intercept_[0]), 6)
        dev = scores(weights, scale, bias, x["dev"])
        real_dev = scores(weights, scale, bias, rx["dev"])
        chat = np.array([r[0] == "chat" for r in real_split["dev"]])
        review = max(
            threshold(dev[y["dev"] == 0], REVIEW_FP),
            threshold(real_dev[(ry["dev"] == 0) & ~chat], REAL_REVIEW_FP),
            threshold(real_dev[chat], REAL_REVIEW_FP),
        )
        stopped = np.concatenate([dev[y["dev"] == 1], real_dev[ry["dev"] == 1]])
        recall = float((stopped >= review).mean())
        if best is None or recall > best[0]:
            block = threshold(dev[y["dev"] == 0], BLOCK_FP)
            best = (recall, c, weights, scale, bias, review, block)
    assert best is not None
    recall, c, weights, scale, bias, review, block = best
    review = max(review, REVIEW_FLOOR)
    block = max(block, review, BLOCK_FLOOR)
    test = scores(weights, scale, bias, x["test"])
    attacks, benign = test[y["test"] == 1], test[y["test"] == 0]
    real_test = scores(weights, scale, bias, rx["test"])
    sources = [r[0] for r in real_split["test"]]
    real_report = {
        "attacks": int((ry["test"] == 1).sum()),
        "stopped": rates(real_test[ry["test"] == 1], review),
    }
    for name in ("docs", "stdlib", "chat"):
        mask = np.array([s == name for s in sources]) & (ry["test"] == 0)
        real_report[f"{name}_benign"] = int(mask.sum())
        real_report[f"{name}_false_positive_held"] = rates(real_test[mask], review)
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
        "real_test": real_report,
        "real": {
            "attacks": [
                {k: src[k] for k in ("name", "repository", "commit", "licence")}
                for src in detector_data.ATTACK_SOURCES
            ],
            "benign": {
                "docs": "docs/*.md and README*.md of this repository at "
                + detector_data.DOCS_COMMIT,
                "stdlib": f"docstrings of {detector_data.STDLIB_FILES} standard-library modules"
                f" of Python {sys.version_info.major}.{sys.version_info.minor} (PSF licence)",
                "chat": "REALTALK (danny911kr/REALTALK, bench/public_sets.py; no licence "
                "stated): messages of the odd chats calibrate, of the even chats are reported; "
                "never trained on",
            },
            "samples": len(real),
            "sha256": real_hash,
            "split": "by source file: 60 % train, 20 % dev (calibration), 20 % test",
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
