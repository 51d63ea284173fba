"""Fixtures: a temporary HERMES_HOME for every test and a running fake Honcho."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from fake_honcho import FakeHoncho
from hermes_memory_honcho import HonchoMemoryProvider
from honcho_test_support import API_KEY, write_config

_HONCHO_ENV = (
    "HONCHO_API_KEY",
    "HONCHO_BASE_URL",
    "HONCHO_URL",
    "HONCHO_ENVIRONMENT",
    "HONCHO_WORKSPACE_ID",
    "HONCHO_AI_PEER",
    "HONCHO_USER_PEER",
    "HONCHO_RECALL_MODE",
    "HONCHO_TIMEOUT",
    "HONCHO_MAX_RETRIES",
)


@pytest.fixture(autouse=True)
def hermes_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh, empty HERMES_HOME for each test; no developer Honcho settings leak in."""
    home = tmp_path_factory.mktemp("hermes_home")
    monkeypatch.setenv("HERMES_HOME", str(home))
    for name in _HONCHO_ENV:
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture
def fake() -> Iterator[FakeHoncho]:
    """A running fake Honcho that requires ``Authorization: Bearer test-key``."""
    with FakeHoncho(api_key=API_KEY) as server:
        yield server


@pytest.fixture
def configure(
    hermes_home: Path, fake: FakeHoncho, monkeypatch: pytest.MonkeyPatch
) -> Callable[..., None]:
    """Point the provider at the fake with fast test settings (overridable)."""

    def apply(**overrides: Any) -> None:
        settings: dict[str, Any] = {
            "base_url": fake.url,
            "workspace": "ws",
            "timeout": 2.0,
            "max_retries": 0,
            "retry_backoff": 0.0,
            "prefetch_wait": 5.0,
        }
        settings.update(overrides)
        write_config(hermes_home, **settings)
        monkeypatch.setenv("HONCHO_API_KEY", API_KEY)

    apply()
    return apply


@pytest.fixture
def make_provider(
    hermes_home: Path, configure: Callable[..., None]
) -> Iterator[Callable[..., HonchoMemoryProvider]]:
    """Build and initialize providers against the fake; all are shut down afterwards."""
    made: list[HonchoMemoryProvider] = []

    def build(
        session_id: str = "s1", *, clock: Callable[[], float] | None = None, **kwargs: Any
    ) -> HonchoMemoryProvider:
        provider = (
            HonchoMemoryProvider(clock=clock, sleep=lambda _: None)
            if clock is not None
            else HonchoMemoryProvider(sleep=lambda _: None)
        )
        kwargs.setdefault("platform", "cli")
        kwargs.setdefault("hermes_home", str(hermes_home))
        provider.initialize(session_id, **kwargs)
        made.append(provider)
        return provider

    yield build
    for provider in made:
        provider.shutdown()
