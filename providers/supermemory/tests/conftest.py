"""Fixtures: a temporary HERMES_HOME for every test, the fake service, a fake clock."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from fake_supermemory import FakeSupermemory
from hermes_memory_supermemory import SupermemoryProvider

_ENV_VARS = (
    "SUPERMEMORY_API_KEY",
    "SUPERMEMORY_BASE_URL",
    "SUPERMEMORY_NAMESPACE",
    "SUPERMEMORY_CONTAINER_TAG",
    "SUPERMEMORY_CUSTOM_HEADERS",
)


@pytest.fixture(autouse=True)
def hermes_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own HERMES_HOME and no Supermemory variables from the shell."""
    home = tmp_path / "hermes_home"
    home.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(home))
    for name in _ENV_VARS:
        monkeypatch.delenv(name, raising=False)
    return home


class FakeClock:
    """A monotonic clock that only moves when told to."""

    def __init__(self) -> None:
        self.now = 1000.0
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            return self.now

    def advance(self, seconds: float) -> None:
        with self._lock:
            self.now += seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def fake() -> Iterator[FakeSupermemory]:
    with FakeSupermemory() as server:
        yield server


def _write_config(home: Path, section: dict[str, Any]) -> None:
    config = {"memory": {"provider": "supermemory"}, "supermemory": section}
    (home / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")


@pytest.fixture
def write_config(hermes_home: Path) -> Callable[[dict[str, Any]], None]:
    """Write ``config.yaml`` selecting supermemory with the given settings section."""
    return lambda section: _write_config(hermes_home, section)


@pytest.fixture
def configured(
    hermes_home: Path, fake: FakeSupermemory, monkeypatch: pytest.MonkeyPatch
) -> dict[str, Any]:
    """Settings pointing at the fake: short timeouts, one retry, generous recall wait."""
    section: dict[str, Any] = {
        "base_url": fake.url,
        "api_timeout": 1.0,
        "max_retries": 1,
        "prefetch_wait": 5.0,
        "breaker_threshold": 3,
        "breaker_cooldown": 30.0,
    }
    _write_config(hermes_home, section)
    monkeypatch.setenv("SUPERMEMORY_API_KEY", fake.api_key)
    return section


class Sleeps:
    """Records retry backoff sleeps instead of sleeping."""

    def __init__(self) -> None:
        self.calls: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


MakeProvider = Callable[..., SupermemoryProvider]


@pytest.fixture
def make_provider(
    configured: dict[str, Any], hermes_home: Path, clock: FakeClock, sleeps: Sleeps
) -> Iterator[MakeProvider]:
    """Build and initialize providers against the fake; all are shut down afterwards."""
    made: list[SupermemoryProvider] = []

    def make(session_id: str = "session-1", **kwargs: Any) -> SupermemoryProvider:
        provider = SupermemoryProvider(clock=clock, sleep=sleeps)
        kwargs.setdefault("hermes_home", str(hermes_home))
        kwargs.setdefault("platform", "cli")
        provider.initialize(session_id, **kwargs)
        made.append(provider)
        return provider

    yield make
    for provider in made:
        provider.shutdown()
