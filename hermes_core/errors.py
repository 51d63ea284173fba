"""The one exception hierarchy of hermes-memory.

Every error raised on purpose by hermes-memory-core or a bundled provider derives from
:class:`HermesMemoryError`, so a host can catch them all with one ``except``.
Messages say what was wrong and what to do next. :class:`PluginCrash` is not
one of them: it stands for plugin or provider code failing with a
``BaseException`` (``sys.exit()``, say), which :func:`contain` turns into an
ordinary exception wherever such code is called.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class HermesMemoryError(Exception):
    """Base class of every deliberate hermes-memory error."""


class ConfigError(HermesMemoryError):
    """``config.yaml`` or an environment variable holds an unusable value."""


class PluginError(HermesMemoryError):
    """A plugin could not be found, loaded or instantiated."""


class ProviderError(HermesMemoryError):
    """A memory provider failed or was used outside its contract."""


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


class LockError(HermesMemoryError):
    """A lock file could not be opened or locked (see :mod:`hermes_core.locking`)."""


class MemoryStoreError(HermesMemoryError):
    """The L1 memory files could not be read, locked or written safely."""


class SessionStoreError(HermesMemoryError):
    """``state.db`` could not be opened, migrated, read or written."""


class SessionStoreUnavailableError(SessionStoreError):
    """The session database could not be reached (refused, dropped, timed out), even after
    retries: the write may be kept and tried again later (see
    :mod:`hermes_core.sessions.spool`)."""


class SessionTitleError(SessionStoreError, ValueError):
    """A session title is too long or already used by another session."""


class SessionNotFoundError(SessionStoreError):
    """Messages were sent to a session ``state.db`` does not hold (never created, or
    deleted since by ``hermes-memory sessions delete``)."""


class SessionImportError(SessionStoreError):
    """An import file is malformed; the message lists each bad line. Nothing was written."""


class BackupError(HermesMemoryError):
    """A backup could not be written, or an archive cannot be restored; nothing was changed."""


class LLMError(HermesMemoryError):
    """The OpenAI-compatible model endpoint failed or answered malformed data."""


class LLMNotConfiguredError(LLMError):
    """No model endpoint is configured (set ``model.base_url`` and ``model.model``)."""


class MessageTooLongError(LLMError, ValueError):
    """A user message cannot fit the model's context window; it was not stored."""


def describe_exception(exc: BaseException) -> str:
    """``"ValueError: bad key"`` — the cause as shown in warnings and listings."""
    if isinstance(exc, PluginCrash):
        return str(exc)
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def first_line(exc: BaseException) -> str:
    """The first line of *exc*'s message (a database driver's runs to several lines), or
    its ``repr`` when the message is empty."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else repr(exc)


class PluginCrash(Exception):
    """A plugin raised a :class:`BaseException` that is not :class:`Exception`.

    ``SystemExit`` (``sys.exit()`` in a plugin), ``GeneratorExit``,
    ``asyncio.CancelledError`` or a plugin's own ``BaseException`` subclass is
    the plugin failing, not the process being asked to stop: :func:`contain`
    turns it into this exception so every ``except Exception`` on the way treats
    it as the plugin's failure. Only ``KeyboardInterrupt`` (the user's Ctrl-C)
    is let through.
    """

    def __init__(self, original: BaseException) -> None:
        super().__init__(describe_exception(original))
        self.original = original


def contain(call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``call(*args, **kwargs)``; a plugin's non-``Exception`` failure raised as PluginCrash."""
    try:
        return call(*args, **kwargs)
    except (Exception, KeyboardInterrupt):
        raise
    except BaseException as exc:
        raise PluginCrash(exc) from exc
