"""Offline embedders for mem0's local engine: MiniLM (semantic) and hashing (fast, for tests)."""

from __future__ import annotations

from hermes_memory_mem0.embedders.hashing import DEFAULT_HASH_DIMS, HashEmbedder
from hermes_memory_mem0.embedders.minilm import (
    MINILM_DIMS,
    MiniLMEncoder,
    default_model_dir,
    missing_minilm_requirements,
)

__all__ = [
    "DEFAULT_HASH_DIMS",
    "MINILM_DIMS",
    "HashEmbedder",
    "MiniLMEncoder",
    "default_model_dir",
    "missing_minilm_requirements",
]
