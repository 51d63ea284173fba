"""Every core test runs with its own temporary HERMES_HOME and never sees ~/.hermes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def hermes_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh, empty HERMES_HOME for each test (also exported to subprocesses)."""
    home = tmp_path_factory.mktemp("hermes_home")
    monkeypatch.setenv("HERMES_HOME", str(home))
    # Full-text search only, whatever is installed; semantic tests turn it on themselves.
    monkeypatch.setenv("HERMES_SEMANTIC_SEARCH", "off")
    # Keep developer-level model settings from leaking into tests.
    for var in (
        "HERMES_MODEL_BASE_URL",
        "HERMES_MODEL",
        "HERMES_API_KEY",
        "OPENAI_BASE_URL",
        "OPENAI_API_KEY",
    ):
        monkeypatch.delenv(var, raising=False)
    return home


@pytest.fixture(params=["dangling", "loop"])
def home_link_to_nowhere(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """HERMES_HOME set to a symbolic link that leads nowhere: to a missing path, or a loop."""
    home = tmp_path / "home"
    if request.param == "dangling":
        home.symlink_to(tmp_path / "missing")
    else:
        home.symlink_to(tmp_path / "other")
        (tmp_path / "other").symlink_to(home)
    monkeypatch.setenv("HERMES_HOME", str(home))
    return home


@pytest.fixture(params=["sqlite", "postgres"])
def session_backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """Where a session store lives, once per backend: a state.db path, then a PostgreSQL URL
    with a schema of its own (dropped after the test; see hermes_core/testing/postgres.py)."""
    if request.param == "sqlite":
        yield str(tmp_path / "state.db")
        return
    from hermes_core.testing.postgres import temporary_schema

    with temporary_schema() as url:
        yield url
