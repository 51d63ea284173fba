"""Id validation, fence stripping on writes and Retry-After, against the fake Honcho."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fake_honcho import FakeHoncho
from hermes_memory_honcho import HonchoMemoryProvider
from hermes_memory_honcho.identity import is_honcho_id, to_honcho_id
from honcho_test_support import API_KEY, write_config

from hermes_core.fencing import build_memory_context_block
from hermes_core.testing.http_fake import RecordedRequest, Reply

MakeProvider = Callable[..., HonchoMemoryProvider]


def tool(provider: HonchoMemoryProvider, name: str, **args: Any) -> dict[str, Any]:
    result = json.loads(provider.handle_tool_call(name, args))
    assert isinstance(result, dict)
    return result


def start(home: Path, fake: FakeHoncho, workspace: str, **extra: Any) -> HonchoMemoryProvider:
    write_config(
        home,
        base_url=fake.url,
        workspace=workspace,
        timeout=2.0,
        max_retries=0,
        retry_backoff=0.0,
        **extra,
    )
    provider = HonchoMemoryProvider(sleep=lambda _: None)
    provider.initialize("s1", hermes_home=str(home), platform="cli")
    return provider


# -- item 1: ids that reach a URL path ---------------------------------------------------


@pytest.mark.parametrize(
    "bad_id",
    [
        "../../team-b/conclusions/{victim}",
        "..%2F..%2Fteam-b%2Fconclusions%2F{victim}",
        "{victim}/../../../team-b/conclusions/{victim}",
        "{victim}?x=1",
        "{victim}#frag",
        "a" * 101,
    ],
)
def test_delete_id_cannot_reach_a_conclusion_of_another_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake: FakeHoncho, bad_id: str
) -> None:
    monkeypatch.setenv("HONCHO_API_KEY", API_KEY)
    (tmp_path / "b").mkdir()
    (tmp_path / "a").mkdir()
    team_b = start(tmp_path / "b", fake, "team-b")
    victim = tool(team_b, "honcho_conclude", conclusion="Team B user is allergic to penicillin")
    team_b.shutdown()
    victim_id = victim["id"]
    team_a = start(tmp_path / "a", fake, "team-a")
    try:
        before = len(fake.requests)
        answer = tool(team_a, "honcho_conclude", delete_id=bad_id.format(victim=victim_id))
    finally:
        team_a.shutdown()
    assert "error" in answer
    assert "delete_id" in answer["error"] and "Nothing was deleted" in answer["error"]
    assert victim_id in fake.state.conclusions
    conclusion_requests = [r for r in fake.requests[before:] if "/conclusions/" in r.path]
    assert conclusion_requests == []  # refused before any request


def test_a_valid_delete_id_only_addresses_the_providers_own_workspace(
    make_provider: MakeProvider, fake: FakeHoncho
) -> None:
    provider = make_provider("s1")
    saved = tool(provider, "honcho_conclude", conclusion="Alice keeps bees")
    before = len(fake.requests)
    assert "deleted" in tool(provider, "honcho_conclude", delete_id=saved["id"])["result"]
    paths = [r.path for r in fake.requests[before:] if "/conclusions/" in r.path]
    assert paths and all(p == f"/v3/workspaces/ws/conclusions/{saved['id']}" for p in paths)


def test_host_ids_with_a_trailing_line_break_are_not_taken_as_is() -> None:
    assert not is_honcho_id("alice\n")
    assert not is_honcho_id("../x")
    assert is_honcho_id("V1StGXR8_Z5jdHi6B-myT")  # a nanoid, as real Honcho ids are
    mapped = to_honcho_id("alice\n")
    assert mapped != "alice\n" and is_honcho_id(mapped)


def test_the_client_refuses_a_bad_conclusion_id_itself(make_provider: MakeProvider) -> None:
    from hermes_memory_honcho.client import InvalidIdError

    provider = make_provider("s1")
    client = provider._get_client()
    assert client is not None
    with pytest.raises(InvalidIdError, match="conclusion id"):
        client.delete_conclusion("hermes", "user", "../other/conclusions/x")


# -- item 4: recalled context is never written back ----------------------------------------

FENCED = build_memory_context_block("- RECALLED-SECRET lives at 12 Elm St")


def test_mirrored_builtin_writes_drop_memory_context_fences(
    make_provider: MakeProvider, fake: FakeHoncho
) -> None:
    provider = make_provider("s1")
    assert provider.wait_idle()
    provider.on_memory_write("add", "user", "User likes cats. " + FENCED)
    provider.on_memory_write("add", "user", FENCED)  # nothing left once sanitised
    assert provider.wait_idle()
    contents = [c["content"] for c in fake.state.conclusions.values()]
    assert contents == ["User likes cats."]
    assert not any("RECALLED-SECRET" in c or "memory-context" in c for c in contents)


def test_conclude_tool_strips_fences_and_skips_an_empty_write(
    make_provider: MakeProvider, fake: FakeHoncho
) -> None:
    provider = make_provider("s1")
    saved = tool(provider, "honcho_conclude", conclusion="Alice rides a bike. " + FENCED)
    assert fake.state.conclusions[saved["id"]]["content"] == "Alice rides a bike."
    skipped = tool(provider, "honcho_conclude", conclusion=FENCED)
    assert skipped["saved"] is False and "Nothing saved" in skipped["result"]
    assert len(fake.state.conclusions) == 1


def test_profile_card_facts_drop_fences(make_provider: MakeProvider) -> None:
    provider = make_provider("s1")
    answer = tool(provider, "honcho_profile", card=["Likes tea. " + FENCED, FENCED])
    assert answer["card"] == ["Likes tea."]
    assert "1 fact(s)" in answer["skipped"]


# -- item 7: 429 with Retry-After ------------------------------------------------------------


class RateLimitedHoncho(FakeHoncho):
    """Answers every search with 429 and the Retry-After given."""

    retry_after = "30"

    def before_route(self, request: RecordedRequest) -> Reply | None:
        if re.search(r"/search$", request.path):
            return Reply(429, {"detail": "rate limited"}, headers={"Retry-After": self.retry_after})
        return super().before_route(request)


def test_retry_after_longer_than_the_budget_gives_up_at_once_and_says_so(
    hermes_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HONCHO_API_KEY", API_KEY)
    slept: list[float] = []
    with RateLimitedHoncho(api_key=API_KEY) as fake:
        write_config(hermes_home, base_url=fake.url, workspace="ws", timeout=2.0, max_retries=3)
        provider = HonchoMemoryProvider(sleep=slept.append)
        provider.initialize("s1", hermes_home=str(hermes_home), platform="cli")
        assert provider.wait_idle()
        slept.clear()
        try:
            started = time.monotonic()
            answer = tool(provider, "honcho_search", query="q")
            elapsed = time.monotonic() - started
        finally:
            provider.shutdown()
        searches = [r for r in fake.requests if r.path.endswith("/search")]
    assert len(searches) == 1 and slept == [] and elapsed < 2
    assert "rate limiting requests (HTTP 429), retry after 30 s" in answer["error"]


def test_a_short_retry_after_is_waited_for_before_retrying(
    hermes_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HONCHO_API_KEY", API_KEY)
    slept: list[float] = []
    with RateLimitedHoncho(api_key=API_KEY) as fake:
        fake.retry_after = "1.5"
        write_config(
            hermes_home,
            base_url=fake.url,
            workspace="ws",
            timeout=2.0,
            max_retries=2,
            retry_backoff=0.01,
        )
        provider = HonchoMemoryProvider(sleep=slept.append)
        provider.initialize("s1", hermes_home=str(hermes_home), platform="cli")
        assert provider.wait_idle()
        slept.clear()
        try:
            answer = tool(provider, "honcho_search", query="q")
        finally:
            provider.shutdown()
    assert slept == [1.5, 1.5]  # what Honcho asked for, not the 0.01 s backoff
    assert "retry after 1.5 s" in answer["error"]
