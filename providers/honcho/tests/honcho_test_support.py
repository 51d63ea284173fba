"""Small helpers shared by the Honcho tests and the benchmark."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

API_KEY = "test-key"
"""The key the fake Honcho of the tests requires."""


def write_config(home: Path, **honcho: Any) -> None:
    """Write config.yaml selecting the Honcho provider with these ``honcho.*`` settings."""
    config = {"memory": {"provider": "honcho"}, "honcho": honcho}
    (home / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")


class ManualClock:
    """A clock the test moves by hand (for the circuit breaker)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds
