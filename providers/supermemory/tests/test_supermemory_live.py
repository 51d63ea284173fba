"""Against the real Supermemory service; skipped unless SUPERMEMORY_API_KEY is set.

Each run uses a fresh namespace and deletes what it wrote. The service
processes documents asynchronously, so reads are polled for a while.
"""

from __future__ import annotations

import json
import os
import time
import uuid

import pytest
from hermes_memory_supermemory import SupermemoryProvider
from hermes_memory_supermemory.turns import Turn, turn_document_id

# Read at import, before the autouse fixture clears the variables for offline tests.
LIVE_KEY = os.environ.get("SUPERMEMORY_API_KEY", "")
LIVE_BASE_URL = os.environ.get("SUPERMEMORY_BASE_URL", "")

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(not LIVE_KEY, reason="SUPERMEMORY_API_KEY is not set"),
]


@pytest.fixture
def live_provider(hermes_home, monkeypatch):
    monkeypatch.setenv("SUPERMEMORY_API_KEY", LIVE_KEY)
    if LIVE_BASE_URL:
        monkeypatch.setenv("SUPERMEMORY_BASE_URL", LIVE_BASE_URL)
    monkeypatch.setenv("SUPERMEMORY_NAMESPACE", f"hermes_live_{uuid.uuid4().hex[:12]}")
    provider = SupermemoryProvider()
    provider.initialize("live-session", hermes_home=str(hermes_home), platform="cli")
    assert provider.active, provider.unavailable_reason()
    yield provider
    provider.shutdown()


def _poll(check, seconds: float = 90.0):
    deadline = time.monotonic() + seconds
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(3)


def test_live_store_search_forget(live_provider) -> None:
    fact = f"The user's test marker colour is ultramarine-{uuid.uuid4().hex[:6]}."
    stored = json.loads(live_provider.handle_tool_call("supermemory_store", {"content": fact}))
    assert stored.get("saved") is True, stored
    try:

        def found():
            answer = json.loads(
                live_provider.handle_tool_call(
                    "supermemory_search", {"query": "test marker colour"}
                )
            )
            return [r for r in answer.get("results", []) if "ultramarine" in r["content"]]

        hits = _poll(found)
        assert hits, "the stored fact never became searchable"
        gone = json.loads(
            live_provider.handle_tool_call("supermemory_forget", {"id": hits[0]["id"]})
        )
        assert gone["forgotten"] is True
    finally:
        live_provider.service.delete_documents(live_provider.namespace, [stored["id"]])


def test_live_turn_capture_and_recall(live_provider) -> None:
    turn = Turn("My test pet is a tortoise named Hermes-Live.", "A tortoise, lovely.")
    live_provider.sync_turn(turn.user, turn.assistant)
    assert live_provider.flush(30)
    try:
        recalled = _poll(lambda: live_provider.prefetch("what pet do I have?"), 90)
        assert "tortoise" in recalled.lower()
    finally:
        doc_id = turn_document_id("live-session", turn.cleaned())
        live_provider.service.delete_documents(live_provider.namespace, [doc_id])
