"""hermes-memory-core's provider conformance suite against the Supermemory provider and its fake.

The fake extracts memories from documents sentence by sentence and ranks them by
word overlap, so recall is a real round trip (capture → extraction → search).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, ClassVar

import pytest
from conftest import FakeClock, Sleeps
from fake_supermemory import FakeSupermemory
from hermes_memory_supermemory import SupermemoryProvider

from hermes_core.testing import ProviderConformance


class TestSupermemoryConformance(ProviderConformance):
    capabilities: ClassVar = {
        "tools",
        "prefetch",
        "sync",
        "recall",
        "session_end_extraction",
        "cross_session",
        "multi_user",
        "persistence",
        "mirror",
    }
    """No ``cjk``: the fake matches ASCII words only; no ``session_scoped``: memories are
    per user namespace, not per session."""

    @pytest.fixture
    def create_provider(
        self, configured: dict[str, Any], clock: FakeClock, sleeps: Sleeps
    ) -> Callable[[], SupermemoryProvider]:
        return lambda: SupermemoryProvider(clock=clock, sleep=sleeps)

    @pytest.fixture
    def store_inspector(self, fake: FakeSupermemory) -> Callable[[], str]:
        """Every document and memory the fake server holds, in every namespace."""

        def dump() -> str:
            with fake._lock:
                spaces = list(fake.namespaces.items())
            return json.dumps(
                {
                    name: [list(ns.documents.values()), list(ns.memories.values())]
                    for name, ns in spaces
                },
                default=lambda item: getattr(item, "__dict__", str(item)),
            )

        return dump
