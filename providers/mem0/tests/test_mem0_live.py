"""Against the real Mem0 platform; runs only when MEM0_API_KEY is set (skipped otherwise)."""

from __future__ import annotations

import json
import time
import uuid

import pytest
from conftest import LIVE_API_KEY, StartProvider

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(not LIVE_API_KEY, reason="set MEM0_API_KEY to run the live Mem0 tests"),
]


def test_live_add_search_delete_round_trip(start_provider: StartProvider) -> None:
    user = f"hermes-memory-live-{uuid.uuid4().hex[:12]}"
    provider = start_provider(
        {"mem0": {"mode": "platform", "timeout": 30}},
        env={"MEM0_API_KEY": LIVE_API_KEY},
        user_id=user,
    )
    fact = f"The live-test user keeps a pet axolotl named {uuid.uuid4().hex[:6]}."
    added = json.loads(provider.handle_tool_call("mem0_add", {"content": fact}))
    assert "error" not in added, added

    found: list = []
    deadline = time.monotonic() + 90  # the platform processes adds asynchronously
    while time.monotonic() < deadline and not found:
        result = json.loads(provider.handle_tool_call("mem0_search", {"query": "pet axolotl"}))
        assert "error" not in result, result
        found = result["results"]
        if not found:
            time.sleep(3)
    assert found and "axolotl" in found[0]["memory"].lower()
    for hit in found:
        deleted = json.loads(provider.handle_tool_call("mem0_delete", {"memory_id": hit["id"]}))
        assert "error" not in deleted, deleted
