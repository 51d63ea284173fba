"""The one exception hierarchy of hermes-memory.

Every error raised on purpose by hermes-core or a bundled provider derives from
:class:`HermesMemoryError`, so a host can catch them all with one ``except``.
Messages say what was wrong and what to do next.
"""

from __future__ import annotations


class HermesMemoryError(Exception):
    """Base class of every deliberate hermes-memory error."""


class ConfigError(HermesMemoryError):
    """``config.yaml`` or an environment variable holds an unusable value."""


class PluginError(HermesMemoryError):
    """A plugin could not be found, loaded or instantiated."""


class ProviderError(HermesMemoryError):
    """A memory provider failed or was used outside its contract."""


class ProviderUnavailableError(ProviderError):
    """The selected provider reports ``is_available() == False``."""


class CircuitOpenError(ProviderError):
    """A call was refused without being attempted: the service's circuit breaker is open.

    ``service`` names the service and ``retry_after`` is how many seconds remain
    before the breaker lets a trial call through.
    """

    def __init__(self, service: str, retry_after: float, failures: int) -> None:
        self.service = service
        self.retry_after = max(0.0, retry_after)
        super().__init__(
            f"{service} is unreachable after {failures} consecutive failed calls: the circuit "
            f"breaker is open, so calls are paused for another {self.retry_after:.0f}s."
        )


class PreCompressCheckpointError(ProviderError, RuntimeError):
    """A required pre-compress checkpoint was not taken; keep the uncompressed transcript."""


class MemoryStoreError(HermesMemoryError):
    """The L1 memory files could not be read, locked or written safely."""


class SessionStoreError(HermesMemoryError):
    """``state.db`` could not be opened, migrated, read or written."""


class SessionTitleError(SessionStoreError, ValueError):
    """A session title is too long or already used by another session."""


class SessionImportError(SessionStoreError):
    """An import file is malformed; the message lists each bad line. Nothing was written."""


class LLMError(HermesMemoryError):
    """The OpenAI-compatible model endpoint failed or answered malformed data."""


class LLMNotConfiguredError(LLMError):
    """No model endpoint is configured (set ``model.base_url`` and ``model.model``)."""


class MessageTooLongError(LLMError, ValueError):
    """A user message cannot fit the model's context window; it was not stored."""
