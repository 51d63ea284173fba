"""Every test of the builtin provider gets its own empty HERMES_HOME, and the memory
tests run on both memory backends.

A test that asks for ``backend`` (or ``store``, which uses it) runs twice: on the
files under ``memories/`` (``[file]``) and on rows in PostgreSQL (``[postgres]``,
``memory.url``), each PostgreSQL case in a schema of its own, created and dropped.
Without a server the PostgreSQL cases skip, saying why, unless CI=true or
HERMES_REQUIRE_POSTGRES=1 (then they fail; see :mod:`hermes_core.testing.postgres`).
A test about the files themselves (bytes on disk, renames, permissions) carries
``@pytest.mark.files_only("why")`` and runs on the files only.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hermes_memory_builtin.documents import MEMORY_URL_ENV
from hermes_memory_builtin.store import MemoryStore
from memory_support import MemoryBackend

from hermes_core.testing.postgres import temporary_schema

BACKENDS = ("file", "postgres")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "files_only(reason): a memory test about the files themselves; it runs on the file "
        "store only (not on PostgreSQL rows)",
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend_kind" in metafunc.fixturenames:
        only_files = metafunc.definition.get_closest_marker("files_only") is not None
        metafunc.parametrize("backend_kind", ["file"] if only_files else list(BACKENDS))


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
        MEMORY_URL_ENV,
    ):
        monkeypatch.delenv(var, raising=False)
    return home


@pytest.fixture
def backend(
    backend_kind: str, hermes_home: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[MemoryBackend]:
    """Where this test's memory lives: the files of ``hermes_home``, or a fresh PostgreSQL
    schema that the provider and the CLI (subprocesses too) use through
    ``$HERMES_MEMORY_URL``."""
    if backend_kind == "file":
        yield MemoryBackend("file", hermes_home)
        return
    with temporary_schema() as url:
        monkeypatch.setenv(MEMORY_URL_ENV, url)
        rows = MemoryBackend("postgres", hermes_home, url)
        yield rows
        rows.close()


@pytest.fixture
def postgres_backend(hermes_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[MemoryBackend]:
    """The PostgreSQL backend alone, for a test whose file twin is written for files."""
    with temporary_schema() as url:
        monkeypatch.setenv(MEMORY_URL_ENV, url)
        rows = MemoryBackend("postgres", hermes_home, url)
        yield rows
        rows.close()


@pytest.fixture
def memory_dir(hermes_home: Path) -> Path:
    """``$HERMES_HOME/memories``."""
    return hermes_home / "memories"


@pytest.fixture
def store(backend: MemoryBackend) -> MemoryStore:
    """A loaded store with small budgets (memory 500, user 300), on each backend."""
    memory_store = backend.store(memory_char_limit=500, user_char_limit=300)
    memory_store.load_from_disk()
    return memory_store
