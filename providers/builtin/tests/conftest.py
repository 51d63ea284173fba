"""Every test of the builtin provider gets its own empty HERMES_HOME."""

from __future__ import annotations

from pathlib import Path

import pytest
from hermes_memory_builtin.store import MemoryStore


@pytest.fixture(autouse=True)
def hermes_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh HERMES_HOME for each test (exported to subprocesses too)."""
    home = tmp_path_factory.mktemp("hermes_home")
    monkeypatch.setenv("HERMES_HOME", str(home))
    # Full-text search only, whatever is installed; semantic tests turn it on themselves.
    monkeypatch.setenv("HERMES_SEMANTIC_SEARCH", "off")
    for var in (
        "HERMES_MODEL_BASE_URL",
        "HERMES_MODEL",
        "HERMES_API_KEY",
        "OPENAI_BASE_URL",
        "OPENAI_API_KEY",
    ):
        monkeypatch.delenv(var, raising=False)
    return home


@pytest.fixture
def memory_dir(hermes_home: Path) -> Path:
    """``$HERMES_HOME/memories``."""
    return hermes_home / "memories"


@pytest.fixture
def store(memory_dir: Path) -> MemoryStore:
    """A loaded store with small budgets (memory 500, user 300)."""
    memory_store = MemoryStore(memory_dir, memory_char_limit=500, user_char_limit=300)
    memory_store.load_from_disk()
    return memory_store
