"""Live tests against a real Honcho; skipped unless HONCHO_API_KEY is set.

``HONCHO_BASE_URL`` points them at a self-hosted server instead of the hosted
service. Each run uses its own workspace and peers, named with a random suffix.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from hermes_memory_honcho import HonchoMemoryProvider
from honcho_test_support import write_config

# Read at import: the autouse fixture removes Honcho variables from each test's environment.
LIVE_KEY = os.environ.get("HONCHO_API_KEY", "")
LIVE_URL = os.environ.get("HONCHO_BASE_URL", "")

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(not LIVE_KEY, reason="HONCHO_API_KEY is not set"),
]


@pytest.fixture
def live(hermes_home: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    run = uuid.uuid4().hex[:10]
    settings: dict[str, Any] = {"workspace": f"hermes-memory-test-{run}", "timeout": 30.0}
    if LIVE_URL:
        settings["base_url"] = LIVE_URL
    write_config(hermes_home, **settings)
    monkeypatch.setenv("HONCHO_API_KEY", LIVE_KEY)
    provider = HonchoMemoryProvider()
    provider.initialize(
        f"live-{run}", hermes_home=str(hermes_home), platform="cli", user_id=f"live-user-{run}"
    )
    yield provider
    provider.shutdown()


def call(provider: HonchoMemoryProvider, name: str, **args: Any) -> dict[str, Any]:
    result = json.loads(provider.handle_tool_call(name, args))
    assert "error" not in result, result
    return result


def test_live_round_trip(live: HonchoMemoryProvider) -> None:
    live.sync_turn("My favourite tree is the ginkgo.", "Ginkgos are ancient trees.")
    assert live.wait_idle(60)
    assert live.pending_writes() == 0

    deadline = time.monotonic() + 60
    found = ""
    while time.monotonic() < deadline and "ginkgo" not in found.lower():
        found = call(live, "honcho_search", query="favourite tree")["result"]
        time.sleep(2)
    assert "ginkgo" in found.lower()

    assert call(live, "honcho_profile", card=["Likes trees"])["card"] == ["Likes trees"]
    assert call(live, "honcho_profile")["result"] == ["Likes trees"]
    saved = call(live, "honcho_conclude", conclusion="The user likes ginkgo trees")
    assert "deleted" in call(live, "honcho_conclude", delete_id=saved["id"])["result"]
