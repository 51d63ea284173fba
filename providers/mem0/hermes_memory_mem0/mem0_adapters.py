"""Classes plugged into mem0's local engine: our offline embedders and LLM bridges.

mem0 builds its embedder and LLM by provider name through ``EmbedderFactory``
and ``LlmFactory``. :func:`register_adapters` adds our names to those
registries (new names only; mem0's own stay untouched). This module imports
mem0, so only :mod:`hermes_memory_mem0.local_engine` imports it, after
:func:`hermes_memory_mem0.sdk.import_mem0`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from mem0.embeddings.base import EmbeddingBase
from mem0.llms.base import LLMBase
from mem0.memory.utils import extract_json, remove_code_blocks
from mem0.utils.factory import EmbedderFactory, LlmFactory

from hermes_core.errors import LLMNotConfiguredError
from hermes_core.llm import ChatClient
from hermes_memory_mem0.embedders import (
    DEFAULT_HASH_DIMS,
    MINILM_DIMS,
    HashEmbedder,
    MiniLMEncoder,
)
from hermes_memory_mem0.errors import UnusableExtractionError

__all__ = [
    "DISABLED_LLM",
    "HASH_EMBEDDER",
    "MINILM_EMBEDDER",
    "ChatClientLLM",
    "DisabledLLM",
    "HashEmbedding",
    "MiniLMEmbedding",
    "checked_extraction",
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


def checked_extraction(answer: str) -> str:
    """*answer* as JSON mem0 reads without fail, or :class:`UnusableExtractionError`.

    mem0 2.2 reads an extraction answer with ``remove_code_blocks``, then
    ``json.loads`` (``extract_json`` as a fallback) and ``.get("memory", [])``;
    when that fails it logs an ERROR and stores *nothing*, exactly as if the model
    had found no facts, so the turn would be lost. This reads the answer the
    same way, with mem0's own helpers, and raises instead when it is empty, not
    JSON, not an object, has no ``"memory"`` list, or lists facts none of which
    has a text. The one answer that means "nothing worth remembering" is a
    ``"memory"`` list that is empty (what mem0's prompt asks for). Facts without
    a text are dropped (mem0 would crash on some of them and lose the rest).
    """
    text = remove_code_blocks(answer)
    if not text:
        raise UnusableExtractionError("it is empty")
    try:
        data = json.loads(text, strict=False)
    except json.JSONDecodeError:
        try:
            data = json.loads(extract_json(text), strict=False)
        except json.JSONDecodeError:
            raise UnusableExtractionError(f"it is not JSON ({_size(text)})") from None
    if not isinstance(data, Mapping):
        raise UnusableExtractionError(f"it is not a JSON object ({_size(text)})")
    facts = data.get("memory")
    if not isinstance(facts, list):
        raise UnusableExtractionError(f'it has no "memory" list ({_size(text)})')
    usable = [
        fact
        for fact in facts
        if isinstance(fact, Mapping) and isinstance(fact.get("text"), str) and fact["text"].strip()
    ]
    if facts and not usable:
        raise UnusableExtractionError(f"none of its facts has a text ({_size(text)})")
    # Canonical JSON that mem0 parses as it is: "<" escaped (valid JSON) so that mem0's
    # second pass of remove_code_blocks finds no <think> pair to cut out of it.
    return json.dumps({**data, "memory": usable}, ensure_ascii=False).replace("<", "\\u003c")


def _size(text: str) -> str:
    # The size, not the text: the answer restates what the user said, and this is logged.
    return f"{len(text)} characters"


class ChatClientLLM(LLMBase):
    """mem0 LLM that talks to the configured OpenAI-compatible endpoint via hermes-memory-core.

    Inside :meth:`extracting` (scoped to the calling thread), answers go through
    :func:`checked_extraction`: an answer mem0 could not use raises, and mem0
    re-raises a failed model call, so the caller sees the failure instead of an
    empty result.
    """

    def __init__(self, client: ChatClient) -> None:
        super().__init__({"model": client.model})
        self._client = client
        self._scope = threading.local()

    @contextmanager
    def extracting(self) -> Iterator[None]:
        """Check the answers of model calls made by this thread inside the block."""
        previous = getattr(self._scope, "active", False)
        self._scope.active = True
        try:
            yield
        finally:
            self._scope.active = previous

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
        answer = self._client.chat(list(messages), **options).content or ""
        if getattr(self._scope, "active", False):
            return checked_extraction(answer)
        return answer


def register_adapters() -> None:
    """Make our embedders and the disabled LLM constructible by name (idempotent)."""
    EmbedderFactory.provider_to_class[HASH_EMBEDDER] = f"{__name__}.HashEmbedding"
    EmbedderFactory.provider_to_class[MINILM_EMBEDDER] = f"{__name__}.MiniLMEmbedding"
    LlmFactory.register_provider(DISABLED_LLM, f"{__name__}.DisabledLLM")
