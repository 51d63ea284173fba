"""hermes-memory-core's provider conformance suite, against both mem0 modes."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import ClassVar

import pytest
from conftest import local_config, platform_config
from fake_mem0 import FakeMem0Platform
from hermes_memory_mem0 import Mem0MemoryProvider

from hermes_core.provider import MemoryProvider
from hermes_core.testing import ProviderConformance

CAPABILITIES = Mem0MemoryProvider.conformance_capabilities


class Mem0Forget:
    """``forget``: find the fact with mem0_search and delete every copy with mem0_delete."""

    def forget(self, provider: MemoryProvider, fact: str, *, session_id: str) -> None:
        found = json.loads(provider.handle_tool_call("mem0_search", {"query": fact, "top_k": 50}))
        for hit in found.get("results", []):
            if hit["memory"] == fact:
                provider.handle_tool_call("mem0_delete", {"memory_id": hit["id"]})
        assert isinstance(provider, Mem0MemoryProvider)
        provider.flush(30)


class TestPlatformConformance(Mem0Forget, ProviderConformance):
    capabilities: ClassVar = CAPABILITIES

    @pytest.fixture
    def fake(self) -> Iterator[FakeMem0Platform]:
        with FakeMem0Platform() as fake:
            yield fake

    @pytest.fixture
    def create_provider(self, fake: FakeMem0Platform) -> Callable[[], Mem0MemoryProvider]:
        config = platform_config(fake, prefetch_wait=5)
        return lambda: Mem0MemoryProvider(config, env={"MEM0_API_KEY": fake.api_key})

    @pytest.fixture
    def store_inspector(self, fake: FakeMem0Platform) -> Callable[[], str]:
        return lambda: json.dumps(fake.memories)


class TestLocalEngineConformance(Mem0Forget, ProviderConformance):
    capabilities: ClassVar = CAPABILITIES

    @pytest.fixture
    def create_provider(self) -> Callable[[], Mem0MemoryProvider]:
        config = local_config(prefetch_wait=5)
        return lambda: Mem0MemoryProvider(config, env={})
