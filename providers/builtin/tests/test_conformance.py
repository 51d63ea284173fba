"""hermes-memory-core's provider conformance suite against the builtin provider.

Run on both memory backends (files, PostgreSQL rows). The builtin provider stores
through its ``memory`` tool and recalls through the prompt snapshot a new session
takes from ``$HERMES_HOME/memories`` (it has no ``prefetch``); the suite's
``remember`` / ``recall`` / ``forget`` helpers are overridden to say so. Query-based
recall of past sessions (``session_search``) is covered by the session-search tests.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

import pytest
from hermes_memory_builtin import BuiltinMemoryProvider
from memory_support import MemoryBackend

from hermes_core import MemoryProvider
from hermes_core.testing import ProviderConformance


class TestBuiltinConformance(ProviderConformance):
    capabilities: ClassVar = {
        "tools",
        "recall",
        "cross_session",
        "persistence",
        "forget",
        "cjk",
        "multi_user",
    }
    tool_examples: ClassVar = {
        "memory": [{"action": "add", "target": "user", "content": "Prefers metric units."}],
        "session_search": [{"query": "metric units"}, {}],
    }

    @pytest.fixture
    def create_provider(
        self, hermes_home: Path, backend: MemoryBackend
    ) -> Callable[[], MemoryProvider]:
        """The provider on each memory backend (files, PostgreSQL rows)."""
        self.home = hermes_home
        return BuiltinMemoryProvider

    @pytest.fixture
    def store_inspector(self, backend: MemoryBackend) -> Callable[[], str]:
        """MEMORY.md and USER.md read straight from disk (or their rows)."""
        return lambda: "\n".join(backend.raw(target) or "" for target in ("memory", "user"))

    def _memory(self, provider: MemoryProvider, **args: str) -> dict[str, object]:
        result: dict[str, object] = json.loads(provider.handle_tool_call("memory", args))
        return result

    def remember(self, provider: MemoryProvider, fact: str, *, session_id: str) -> None:
        result = self._memory(provider, action="add", target="memory", content=fact)
        assert result.get("success"), result

    def forget(self, provider: MemoryProvider, fact: str, *, session_id: str) -> None:
        self._memory(provider, action="remove", target="memory", old_text=fact)

    def recall(self, provider: MemoryProvider, query: str, *, session_id: str) -> str:
        """The snapshot a new session of this HERMES_HOME would put in its prompt."""
        fresh = BuiltinMemoryProvider()
        user = provider.user_id if isinstance(provider, BuiltinMemoryProvider) else None
        fresh.initialize(
            session_id or "recall-probe", hermes_home=str(self.home), platform="cli", user_id=user
        )
        try:
            return fresh.system_prompt_block()
        finally:
            fresh.shutdown()
