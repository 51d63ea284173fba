"""The fixtures and helpers every conformance check uses (see :mod:`.suite`)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

from hermes_core.provider import MemoryProvider
from hermes_core.testing.capabilities import (
    Capability,
    declared_capabilities,
    inferred_capabilities,
    parse_capabilities,
)
from hermes_core.testing.pool import DEFAULT_SESSION, ProviderPool, call_within, describe_outcome
from hermes_core.testing.probes import fix_message, query_text, recall_text
from hermes_core.threads import threads_left_running
from hermes_core.writeshim import MemoryWriteShim

THREAD_EXIT_WAIT = 3.0
"""Seconds threads a provider started may take to end after ``shutdown()``."""

StoreInspector = Callable[[], str]
"""Reads everything the backend stored, without going through the provider."""


def raised_in_availability(label: str, exc: Exception) -> str:
    return fix_message(
        f"is_available()/unavailable_reason() on {label} provider raised {exc!r}.",
        "never raise there: return False from is_available() and say what is missing in "
        "unavailable_reason() (the host asks at startup, and a raise counts the provider broken).",
    )


class ConformanceHarness:
    """What every check of :class:`~hermes_core.testing.ProviderConformance` builds on.

    The settings a provider's test class may change (``capabilities`` and the
    time budgets), the fixtures (``create_provider``, ``provider``,
    ``provider_factory``, ``store_inspector``) and the helpers that store,
    recall and forget a fact the way the host does.
    """

    _hermes_conformance_suite: ClassVar[bool] = True

    capabilities: ClassVar[Collection[str] | None] = None
    """Declared capabilities; ``None`` reads the provider's ``conformance_capabilities``
    attribute, or else infers ``tools`` / ``prefetch`` / ``sync`` from its hooks."""

    prefetch_budget: ClassVar[float] = 8.0
    """Seconds ``prefetch`` may take (the manager abandons it after ``memory.prefetch_timeout``)."""

    nonblocking_budget: ClassVar[float] = 2.0
    """Seconds ``sync_turn``, ``queue_prefetch``, ``on_turn_start``, ``on_turn_end`` and
    ``on_memory_write`` may take: the host expects them to hand work to the background."""

    shutdown_budget: ClassVar[float] = 15.0
    """Seconds ``shutdown`` may take, queued writes included."""

    settle_timeout: ClassVar[float] = 30.0
    """Seconds :meth:`settle` waits for background work before the test fails."""

    tool_examples: ClassVar[Mapping[str, Sequence[Mapping[str, Any]]]] = {}
    """Realistic arguments per tool name; each must give a JSON object without ``"error"``."""

    stateful_max_examples: ClassVar[int] = 4
    stateful_step_count: ClassVar[int] = 8

    # ------------------------------------------------------------------ fixtures

    @pytest.fixture
    def create_provider(self) -> Callable[[], MemoryProvider]:
        """A zero-argument callable: a new, uninitialized provider on an empty backend."""
        raise NotImplementedError(
            f"{type(self).__name__} must define a `create_provider` fixture returning a "
            "zero-argument callable that makes a new, uninitialized provider (for example "
            "the provider class itself) wired to an empty backend for this test."
        )

    @pytest.fixture
    def init_kwargs(self, hermes_home: Path) -> dict[str, Any]:
        """Keyword arguments of ``initialize`` (``hermes_home`` and ``platform`` always)."""
        return {"hermes_home": str(hermes_home), "platform": "cli"}

    @pytest.fixture
    def provider_factory(
        self, create_provider: Callable[[], MemoryProvider], init_kwargs: dict[str, Any]
    ) -> Iterator[ProviderPool]:
        """Makes more providers on the same backend: a second user, a new session, a restart."""
        before = set(threading.enumerate())
        pool = ProviderPool(create_provider, init_kwargs, shutdown_timeout=self.shutdown_budget)
        try:
            yield pool
        finally:
            pool.close()
        stray = threads_left_running(before, THREAD_EXIT_WAIT)
        assert not stray, fix_message(
            f"after shutdown() the provider left non-daemon threads running: {stray}. Such a "
            "thread keeps the host process (and this pytest run) from exiting.",
            "stop background threads in shutdown() and join them with a timeout, or start "
            "them with daemon=True.",
        )

    @pytest.fixture
    def provider(self, provider_factory: ProviderPool) -> MemoryProvider:
        """A fresh, empty, initialized provider."""
        return provider_factory.start(DEFAULT_SESSION)

    @pytest.fixture
    def store_inspector(self) -> StoreInspector | None:
        """Override to return a callable reading the backend directly (zarr's out-of-band get)."""
        return None

    # ------------------------------------------------------------------ helpers

    def declared(self, provider: MemoryProvider) -> frozenset[Capability]:
        """The capabilities the suite holds *provider* to."""
        if self.capabilities is not None:
            try:
                return parse_capabilities(self.capabilities)
            except ValueError as exc:
                raise ValueError(
                    fix_message(
                        f"{type(self).__name__}.capabilities: {exc}",
                        "declare only those names in the test class's `capabilities` "
                        "(or None to use the provider's own conformance_capabilities).",
                    )
                ) from None
        declared = declared_capabilities(provider)
        return declared if declared is not None else inferred_capabilities(provider)

    def require(self, provider: MemoryProvider, *needed: Capability) -> None:
        """Skip the test unless every capability in *needed* is declared."""
        missing = [c.value for c in needed if c not in self.declared(provider)]
        if missing:
            pytest.skip(f"capability not declared: {', '.join(missing)}")

    def settle(self, provider: MemoryProvider) -> None:
        """Wait for the provider's background work: its ``wait_idle`` or ``flush`` if any."""
        for name in ("wait_idle", "flush"):
            method = getattr(provider, name, None)
            if callable(method):
                outcome = call_within(self.settle_timeout + 1.0, method, self.settle_timeout)
                if not outcome.finished or outcome.error is not None:
                    what = describe_outcome(outcome)
                else:
                    what = f"returned {outcome.result!r}"
                assert outcome.finished and outcome.error is None and outcome.result is not False, (
                    fix_message(
                        f"{name}({self.settle_timeout}) did not report the provider idle "
                        f"(it {what}).",
                        "background writes and recalls must finish while the backend answers; "
                        "check the worker threads, or raise settle_timeout for a slow backend.",
                    )
                )
                return

    def _hook(self, provider: MemoryProvider, hook: str, *args: Any, **kwargs: Any) -> Any:
        """Call *provider*'s *hook*; one that hangs fails the test instead of the whole run.

        ``on_memory_write`` goes through :class:`MemoryWriteShim`, as the manager
        delivers it, so each of Hermes' signatures for it is called the way it accepts.
        """
        method = MemoryWriteShim(provider) if hook == "on_memory_write" else getattr(provider, hook)
        outcome = call_within(self.settle_timeout, method, *args, **kwargs)
        assert outcome.finished, fix_message(
            f"{hook}() did not return within {self.settle_timeout}s (settle_timeout).",
            f"{hook}() must return promptly: bound every backend call it makes with a timeout "
            "and hand slow work to a background thread.",
        )
        if outcome.error is not None:
            raise AssertionError(
                fix_message(
                    f"{hook}() raised {outcome.error!r}.",
                    f"{hook}() must not raise: log backend failures and return (the host calls "
                    "it on every turn, and an exception there costs the user the turn).",
                )
            ) from outcome.error
        return outcome.result

    def remember(self, provider: MemoryProvider, fact: str, *, session_id: str) -> None:
        """Store *fact* (default: a completed turn through ``sync_turn``), then settle."""
        self._hook(provider, "sync_turn", fact, "Noted.", session_id=session_id)
        self.settle(provider)

    def recall(self, provider: MemoryProvider, query: str, *, session_id: str) -> str:
        """What the provider recalls for *query* (default: ``queue_prefetch`` then ``prefetch``)."""
        self.settle(provider)
        self._hook(provider, "queue_prefetch", query, session_id=session_id)
        self.settle(provider)
        outcome = call_within(self.prefetch_budget, provider.prefetch, query, session_id=session_id)
        assert outcome.finished, fix_message(
            f"prefetch() did not return within {self.prefetch_budget}s.",
            "serve recall from a cache filled in the background (queue_prefetch) instead of "
            "querying the backend inside prefetch().",
        )
        if outcome.error is not None:
            raise AssertionError(
                fix_message(
                    f"prefetch({query!r}) raised {outcome.error!r}.",
                    'degrade to "" (and log) when the backend fails; never raise into the turn.',
                )
            ) from outcome.error
        result = recall_text(outcome.result)
        assert isinstance(result, str), fix_message(
            f"prefetch() returned {type(outcome.result).__name__}.", 'return a str ("" for none).'
        )
        return result

    def forget(self, provider: MemoryProvider, fact: str, *, session_id: str) -> None:
        """Remove *fact*; override it (and declare ``forget``) when the provider can."""
        raise NotImplementedError(
            f"{type(self).__name__} declares the 'forget' capability but does not override "
            "forget(provider, fact, *, session_id)."
        )

    def _session_after(self, provider: MemoryProvider, ended: str, new: str) -> str:
        """Where a later recall of what *ended* stored runs: *new* when memory is declared to
        cross sessions (``cross_session``), else *ended* itself, resumed."""
        return new if Capability.CROSS_SESSION in self.declared(provider) else ended

    def _recalls(self, provider: MemoryProvider, topic: str, session_id: str) -> str:
        return self.recall(provider, query_text(topic), session_id=session_id)

    def _assert_recalled(self, text: str, token: str, what: str, fix: str) -> None:
        assert token in text, fix_message(
            f"{what}: the recall did not contain {token!r}.\nRecalled: {text[:600]!r}", fix
        )

    def _assert_not_recalled(self, text: str, token: str, what: str, fix: str) -> None:
        assert token not in text, fix_message(
            f"{what}: the recall contained {token!r}.\nRecalled: {text[:600]!r}", fix
        )
