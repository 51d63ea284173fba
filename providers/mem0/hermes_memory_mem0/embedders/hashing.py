"""A fast, deterministic, dependency-free embedder for tests and tiny deployments.

Feature hashing of lower-cased word tokens plus their character trigrams into a
fixed number of signed buckets, then L2 normalisation. Texts that share words
(or word stems) get a positive cosine; unrelated texts score near zero. It has
no notion of synonyms: use the MiniLM embedder for real semantic recall.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence

__all__ = ["DEFAULT_HASH_DIMS", "HashEmbedder"]

DEFAULT_HASH_DIMS = 256
_WORD = re.compile(r"\w+", re.UNICODE)
_TRIGRAM_WEIGHT = 0.5


class HashEmbedder:
    """Embed text into *dims* signed hash buckets; same input, same vector, in any process."""

    def __init__(self, dims: int = DEFAULT_HASH_DIMS) -> None:
        if not isinstance(dims, int) or isinstance(dims, bool) or not 8 <= dims <= 4096:
            raise ValueError(f"hash embedder dims must be an integer in 8..4096, got {dims!r}")
        self.dims = dims

    def embed(self, text: str) -> list[float]:
        """One unit-length vector (all zeros for text without word characters)."""
        vector = [0.0] * self.dims
        for word in _WORD.findall(str(text).lower()):
            self._add(vector, "w:" + word, 1.0)
            padded = f"<{word}>"
            for i in range(len(padded) - 2):
                self._add(vector, "t:" + padded[i : i + 3], _TRIGRAM_WEIGHT)
        norm = math.sqrt(sum(value * value for value in vector))
        return [value / norm for value in vector] if norm else vector

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed several texts."""
        return [self.embed(text) for text in texts]

    def _add(self, vector: list[float], feature: str, weight: float) -> None:
        digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
        value = int.from_bytes(digest, "little")
        vector[value % self.dims] += weight if (value >> 63) & 1 else -weight
