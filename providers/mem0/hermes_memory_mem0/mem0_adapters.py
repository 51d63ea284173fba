"""Classes plugged into mem0's local engine: our offline embedders and LLM bridges.

mem0 builds its embedder and LLM by provider name through ``EmbedderFactory``
and ``LlmFactory``. :func:`register_adapters` adds our names to those
registries (new names only; mem0's own stay untouched). This module imports
mem0, so only :mod:`hermes_memory_mem0.local_engine` imports it, after
:func:`hermes_memory_mem0.sdk.import_mem0`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mem0.embeddings.base import EmbeddingBase
from mem0.llms.base import LLMBase
from mem0.utils.factory import EmbedderFactory, LlmFactory

from hermes_core.errors import LLMNotConfiguredError
from hermes_core.llm import ChatClient
from hermes_memory_mem0.embedders import (
    DEFAULT_HASH_DIMS,
    MINILM_DIMS,
    HashEmbedder,
    MiniLMEncoder,
)

__all__ = [
    "DISABLED_LLM",
    "HASH_EMBEDDER",
    "MINILM_EMBEDDER",
    "ChatClientLLM",
    "DisabledLLM",
    "HashEmbedding",
    "MiniLMEmbedding",
    "register_adapters",
]

HASH_EMBEDDER = "hermes_hash"
MINILM_EMBEDDER = "hermes_minilm"
DISABLED_LLM = "hermes_disabled"


class HashEmbedding(EmbeddingBase):
    """mem0 embedder backed by :class:`~hermes_memory_mem0.embedders.HashEmbedder`."""

    def __init__(self, config: Any = None) -> None:
        super().__init__(config)
        dims = self.config.embedding_dims or DEFAULT_HASH_DIMS
        self.config.embedding_dims = dims
        self._embedder = HashEmbedder(int(dims))

    def embed(self, text: Any, memory_action: Any = None) -> list[float]:
        return self._embedder.embed(str(text))

    def embed_batch(self, texts: Sequence[Any], memory_action: Any = "add") -> list[list[float]]:
        return self._embedder.encode([str(text) for text in texts])


class MiniLMEmbedding(EmbeddingBase):
    """mem0 embedder backed by the numpy all-MiniLM-L6-v2 encoder (``config.model`` = model dir)."""

    def __init__(self, config: Any = None) -> None:
        super().__init__(config)
        self.config.embedding_dims = MINILM_DIMS
        self._encoder = MiniLMEncoder.load(self.config.model or None)

    def embed(self, text: Any, memory_action: Any = None) -> list[float]:
        return [float(x) for x in self._encoder.encode([str(text)])[0]]

    def embed_batch(self, texts: Sequence[Any], memory_action: Any = "add") -> list[list[float]]:
        return [[float(x) for x in row] for row in self._encoder.encode([str(t) for t in texts])]


class DisabledLLM(LLMBase):
    """The LLM slot when no model is configured: writes use ``infer=False`` and never call it."""

    def generate_response(self, messages: Any, *args: Any, **kwargs: Any) -> str:
        raise LLMNotConfiguredError(
            "mem0's local engine has no model configured; set mem0.llm (or model.*) in "
            "config.yaml to let it extract facts."
        )


class ChatClientLLM(LLMBase):
    """mem0 LLM that talks to the configured OpenAI-compatible endpoint via hermes-core."""

    def __init__(self, client: ChatClient) -> None:
        super().__init__({"model": client.model})
        self._client = client

    def generate_response(
        self,
        messages: Any,
        tools: Any = None,
        tool_choice: Any = "auto",
        response_format: Any = None,
        **kwargs: Any,
    ) -> str:
        options: dict[str, Any] = {}
        if response_format:
            options["response_format"] = response_format
        return self._client.chat(list(messages), **options).content or ""


def register_adapters() -> None:
    """Make our embedders and the disabled LLM constructible by name (idempotent)."""
    EmbedderFactory.provider_to_class[HASH_EMBEDDER] = f"{__name__}.HashEmbedding"
    EmbedderFactory.provider_to_class[MINILM_EMBEDDER] = f"{__name__}.MiniLMEmbedding"
    LlmFactory.register_provider(DISABLED_LLM, f"{__name__}.DisabledLLM")
