"""hermes-memory-core's provider conformance suite against the Honcho provider and the fake Honcho.

The fake derives one conclusion per sentence a peer writes and matches by word
overlap, so recall is real (write → representation → prefetch) but English only.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import ClassVar

import pytest
from fake_honcho import FakeHoncho
from hermes_memory_honcho import HonchoMemoryProvider

from hermes_core.testing import ProviderConformance


class TestHonchoConformance(ProviderConformance):
    capabilities: ClassVar = {
        "tools",
        "prefetch",
        "sync",
        "recall",
        "cross_session",
        "multi_user",
        "persistence",
        "mirror",
    }
    """No ``cjk``: the fake matches ASCII words only; no ``forget``: turns are Honcho messages,
    which the API cannot delete; no ``session_scoped``: Honcho models the user across sessions."""

    @pytest.fixture
    def create_provider(self, configure: Callable[..., None]) -> Callable[[], HonchoMemoryProvider]:
        return lambda: HonchoMemoryProvider(sleep=lambda _: None)

    @pytest.fixture
    def store_inspector(self, fake: FakeHoncho) -> Callable[[], str]:
        """Every message and conclusion the fake server holds, read from its state."""

        def dump() -> str:
            state = fake.state
            return json.dumps([state.messages, list(state.conclusions.values())], default=str)

        return dump
