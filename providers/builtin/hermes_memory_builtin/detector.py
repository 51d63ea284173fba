"""The learned injection detector: hashed character and word n-grams, a linear model.

The catalogue (:mod:`hermes_memory_builtin.threats`) knows phrasings; this model
generalises across wording and languages. A text is read the way the catalogue
reads it (NFKD, look-alike letters as Latin, invisible characters dropped), plus
a reading with leetspeak digits as letters and letter-spaced words joined and one
of every base64 run, Morse passage and pig-Latin passage decoded
(:mod:`hermes_memory_builtin.decodings`); its
character 3–5-grams, character 2-grams inside runs of kana and CJK ideographs
(unspaced scripts, where a word is often two characters) and word 1–2-grams are
hashed (CRC-32) into
:data:`DIMENSIONS` buckets, and the score is the logistic of the weights of the
buckets present (L2-normalised). The weights (one signed byte each, times a
scale) and the calibrated thresholds ship in ``data/`` and are rebuilt by
``bench/train_detector.py``; scoring needs nothing beyond the standard library.

A score at or above ``block`` refuses a write; one in ``[review, block)`` holds
it for the user's review (:mod:`hermes_memory_builtin.quarantine`).
"""

from __future__ import annotations

import array
import functools
import json
import math
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources

from hermes_core.errors import MemoryStoreError
from hermes_memory_builtin.decodings import decoded_readings
from hermes_memory_builtin.threats import MAX_SCAN_CHARS, folded_text

__all__ = ["DIMENSIONS", "WEIGHTS_FILE", "Detector", "Verdict", "feature_indices", "load_detector"]

DIMENSIONS = 1 << 18
"""Hash buckets of the feature space."""
WEIGHTS_FILE = "detector_weights.bin"
"""One signed byte per bucket, in bucket order."""

_LEET = str.maketrans("431057@$", "aeiostas")
_WORD = re.compile(r"\w+", re.UNICODE)
_SPACE = re.compile(r"\s+")
_UNSPACED = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]{2,}")
"""Runs of kana and CJK ideographs: scripts without spaces, whose two-character words
("無視", "出力", "指示") a 3-gram only sees glued to a neighbour."""


def _despaced(text: str) -> str:
    """``"i g n o r e  a l l"`` → ``"ignore all"`` when most words are one letter long."""
    words = text.split(" ")
    if len(words) < 6 or sum(len(w) == 1 for w in words) < 0.6 * len(words):
        return text
    return _SPACE.sub(" ", text.replace("   ", "\0").replace(" ", "").replace("\0", " "))


def _reading(text: str) -> str:
    return _SPACE.sub(" ", folded_text(text).lower()).strip()


def _readings(text: str) -> list[str]:
    text = text[:MAX_SCAN_CHARS]
    base = _reading(text)
    readings = [base, *(_reading(plain) for plain in decoded_readings(text))]
    despaced = _despaced(base)
    if despaced != base:
        readings.append(despaced)
    if any(ch.isdigit() or ch in "@$" for ch in base):
        readings.append(despaced.translate(_LEET))
    return readings


def feature_indices(text: str) -> list[int]:
    """The sorted, distinct hash buckets of *text*'s features."""
    found: set[int] = set()
    crc = zlib.crc32
    for reading in _readings(text):
        padded = f" {reading} "
        for n in (3, 4, 5):
            for start in range(len(padded) - n + 1):
                found.add(crc(padded[start : start + n].encode("utf-8", "replace")) % DIMENSIONS)
        for run in _UNSPACED.findall(reading):
            for start in range(len(run) - 1):
                found.add(crc(run[start : start + 2].encode("utf-8")) % DIMENSIONS)
        words = _WORD.findall(reading)
        for index, word in enumerate(words):
            found.add(crc(b"w:" + word.encode("utf-8", "replace")) % DIMENSIONS)
            if index:
                pair = f"{words[index - 1]} {word}".encode("utf-8", "replace")
                found.add(crc(b"b:" + pair) % DIMENSIONS)
    return sorted(found)


@dataclass(frozen=True)
class Verdict:
    """A scan: the *score* (0–1) and what it means (``"allow"``, ``"review"``, ``"block"``)."""

    score: float
    action: str


class Detector:
    """Scores texts with shipped weights; thresholds come with the weights.

    *weights* holds one integer per bucket; a bucket's weight is that times *scale*.
    """

    def __init__(
        self, weights: Sequence[int], scale: float, bias: float, review: float, block: float
    ) -> None:
        self._weights = weights
        self.scale = scale
        self.bias = bias
        self.review = review
        self.block = block

    def score(self, text: str) -> float:
        """The probability-like score that *text* is an injection."""
        indices = feature_indices(text)
        if not indices:
            return 0.0
        weights = self._weights
        total = sum(weights[index] for index in indices) * self.scale / math.sqrt(len(indices))
        return 1.0 / (1.0 + math.exp(-(self.bias + total)))

    def verdict(self, text: str) -> Verdict:
        """:meth:`score` and the action its thresholds give."""
        value = self.score(text)
        action = "block" if value >= self.block else "review" if value >= self.review else "allow"
        return Verdict(value, action)


@functools.cache
def load_detector() -> Detector:
    """The shipped detector (weights read once per process)."""
    data = resources.files("hermes_memory_builtin") / "data"
    meta = json.loads((data / "detector.json").read_text(encoding="utf-8"))
    weights = array.array("b")
    weights.frombytes((data / WEIGHTS_FILE).read_bytes())
    if len(weights) != DIMENSIONS:
        raise MemoryStoreError(
            f"The detector weights hold {len(weights):,} values, not {DIMENSIONS:,}; "
            "reinstall hermes-memory-core or rebuild them with bench/train_detector.py."
        )
    return Detector(
        weights,
        float(meta["scale"]),
        float(meta["bias"]),
        float(meta["review"]),
        float(meta["block"]),
    )
