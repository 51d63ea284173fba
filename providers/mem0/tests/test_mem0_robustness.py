"""Isolation and robustness: user id mapping, memory ids, local.path, waits, held writes, 429."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import StartProvider, local_config, platform_config
from fake_mem0 import FakeMem0Platform
from hermes_memory_mem0 import Mem0MemoryProvider
from hermes_memory_mem0.identity import to_mem0_id
from hermes_memory_mem0.sdk import import_mem0
from hermes_memory_mem0.settings import load_settings

from hermes_core.errors import ConfigError

SEARCH = "/v3/memories/search/"
ADD = "/v3/memories/add/"


def call(provider: Mem0MemoryProvider, tool: str, **args: Any) -> dict[str, Any]:
    return json.loads(provider.handle_tool_call(tool, args))


def platform(
    start_provider: StartProvider, fake: FakeMem0Platform, user_id: Any = "alice", **settings: Any
) -> Mem0MemoryProvider:
    provider = start_provider(
        platform_config(fake, **settings), env={"MEM0_API_KEY": fake.api_key}, user_id=user_id
    )
    assert provider.flush(60)
    fake.reset_log()
    return provider


# -- 1. user ids ------------------------------------------------------------------------


def test_mem0_ids_keep_plain_ids_and_hash_everything_else() -> None:
    for plain in ("alice", "u-42", "bob@example.com", "a.b_c"):
        assert to_mem0_id(plain) == plain
    odd = ["*", " alice", "alice\n", "alice ", "a*", "telegram:42", "telegram_42", "\x00", "é"]
    mapped = [to_mem0_id(raw) for raw in odd]
    assert len(set(mapped)) == len(odd)
    assert "alice" not in mapped
    for value in mapped:
        assert value.replace("-", "").replace("_", "").replace(".", "").isalnum()
        assert "*" not in value and len(value) <= 100


@pytest.mark.parametrize("host_user", ["*", " alice", "alice\n"])
def test_a_wildcard_or_padded_host_user_reads_nobody_elses_memories(
    start_provider: StartProvider, fake_platform: FakeMem0Platform, host_user: str
) -> None:
    fake_platform.seed("Alice's bank PIN is 4321", user_id="alice")
    provider = platform(start_provider, fake_platform, user_id=host_user)
    found = call(provider, "mem0_search", query="bank PIN")
    assert found["count"] == 0
    sent = fake_platform.calls("POST", SEARCH)[-1].body["filters"]["user_id"]
    assert sent not in ("*", "alice")
    assert sent == provider.user_id == to_mem0_id(host_user)


def test_a_wildcard_user_reads_nothing_in_the_local_engine(start_provider: StartProvider) -> None:
    alice = start_provider(local_config(), user_id="alice")
    assert "memory_ids" in call(alice, "mem0_add", content="Alice's bank PIN is 4321")
    alice.shutdown()
    mallory = start_provider(local_config(), user_id="*")
    assert call(mallory, "mem0_search", query="bank PIN")["count"] == 0
    mallory.shutdown()
    alice = start_provider(local_config(), user_id="alice")
    assert call(alice, "mem0_search", query="bank PIN")["count"] == 1


def test_no_host_user_can_reach_the_fallback_store(
    start_provider: StartProvider, fake_platform: FakeMem0Platform
) -> None:
    fake_platform.seed("The operator's server password is hunter2", user_id="hermes-user")
    fake_platform.seed("Pinned owner's secret is swordfish", user_id="owner")
    default = platform(start_provider, fake_platform, user_id=None)
    assert default.user_id == "hermes-user"
    intruder = platform(start_provider, fake_platform, user_id="hermes-user")
    assert intruder.user_id != "hermes-user"
    assert call(intruder, "mem0_search", query="server password")["count"] == 0

    assert platform(start_provider, fake_platform, user_id="").user_id == "hermes-user"
    owner_cfg = platform_config(fake_platform, user_id="owner")
    env = {"MEM0_API_KEY": fake_platform.api_key}
    assert start_provider(owner_cfg, env=env).user_id == "owner"
    guest = start_provider(owner_cfg, env=env, user_id="owner")
    assert guest.user_id not in ("owner", "hermes-user")
    assert call(guest, "mem0_search", query="secret swordfish")["count"] == 0


def test_a_configured_user_and_agent_id_are_mapped_too(
    start_provider: StartProvider, fake_platform: FakeMem0Platform
) -> None:
    provider = platform(start_provider, fake_platform, user_id=None, agent_id="*")
    pinned = start_provider(
        platform_config(fake_platform, user_id="*"), env={"MEM0_API_KEY": fake_platform.api_key}
    )
    assert pinned.user_id == to_mem0_id("*") != "*"
    assert call(provider, "mem0_add", content="I like tea")["result"]
    body = fake_platform.calls("POST", ADD)[-1].body
    assert body["agent_id"] == to_mem0_id("*")


# -- 2. memory ids ------------------------------------------------------------------------


@pytest.mark.parametrize("memory_id", ["a/b?c=d#e", "../../v1/ping", "*", "x" * 36])
def test_memory_ids_that_are_not_uuids_never_reach_the_service(
    start_provider: StartProvider, fake_platform: FakeMem0Platform, memory_id: str
) -> None:
    provider = platform(start_provider, fake_platform)
    for tool, extra in (("mem0_delete", {}), ("mem0_update", {"text": "new"})):
        error = call(provider, tool, memory_id=memory_id, **extra)["error"]
        assert "not a Mem0 memory id" in error and tool in error
    assert fake_platform.calls() == []


def test_a_real_memory_id_still_works(
    start_provider: StartProvider, fake_platform: FakeMem0Platform
) -> None:
    memory_id = fake_platform.seed("I like tea", user_id="alice")
    provider = platform(start_provider, fake_platform)
    assert call(provider, "mem0_delete", memory_id=memory_id)["result"] == "Memory deleted."
    assert fake_platform.memories_of("alice") == []


# -- 3. local.path ------------------------------------------------------------------------


def test_a_relative_local_path_lives_under_hermes_home(
    start_provider: StartProvider,
    hermes_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    config = local_config(local={"embedder": "hash", "path": "rel_store"})
    provider = start_provider(config, user_id="alice")
    assert "memory_ids" in call(provider, "mem0_add", content="My locker code is 4471")
    assert (hermes_home / "rel_store" / "qdrant").is_dir()
    assert not (elsewhere / "rel_store").exists()
    assert provider.backup_paths() == []  # inside HERMES_HOME: backed up with it


@pytest.mark.parametrize("kind", ["file", "under-file", "device", "nul"])
def test_a_local_path_that_cannot_be_a_directory_is_refused_up_front(
    hermes_home: Path, kind: str
) -> None:
    (hermes_home / "afile").write_text("x")
    path = {
        "file": "afile",
        "under-file": "afile/store",
        "device": "/dev/null",
        "nul": "store\x00x",
    }[kind]
    config = local_config(local={"embedder": "hash", "path": path})
    with pytest.raises(ConfigError, match=r"mem0\.local\.path"):
        load_settings(config, {}, hermes_home)
    provider = Mem0MemoryProvider(config, env={})
    provider.initialize("s", hermes_home=str(hermes_home))
    assert "mem0.local.path" in provider.unavailable_reason()
    assert not provider.is_available()
    provider.shutdown()


# -- 4. waits ---------------------------------------------------------------------------


def test_only_the_first_recall_waits_while_the_service_hangs(
    start_provider: StartProvider, fake_platform: FakeMem0Platform
) -> None:
    provider = platform(start_provider, fake_platform, prefetch_wait=0.5, timeout=3.0, retries=0)
    fake_platform.fail(SEARCH, times=None, status=None, delay=2.5)
    started = time.monotonic()
    assert provider.prefetch("tell me about topic one") == ""
    assert time.monotonic() - started >= 0.45  # the first recall of the session waits
    for n in range(3):
        started = time.monotonic()
        assert provider.prefetch(f"tell me about topic number {n}") == ""
        assert time.monotonic() - started < 0.2  # later turns do not wait again
    fake_platform.clear_faults()
    assert provider.flush(30)


def test_a_tool_search_never_queues_behind_a_hung_background_connect(
    start_provider: StartProvider, fake_platform: FakeMem0Platform, hermes_home: Path
) -> None:
    import_mem0(hermes_home / "mem0")  # the SDK's one-time import is not what is measured
    fake_platform.fail("GET /v1/ping/", times=None, status=None, delay=3.0)
    provider = start_provider(
        platform_config(fake_platform, timeout=1.0, retries=1, retry_backoff=0.01),
        env={"MEM0_API_KEY": fake_platform.api_key},
        user_id="alice",
    )
    time.sleep(0.2)  # the background connect is now waiting on the hung ping
    started = time.monotonic()
    result = call(provider, "mem0_search", query="tea")
    elapsed = time.monotonic() - started
    assert "timed out" in result["error"].lower()
    assert elapsed < 3.0, elapsed  # its own budget (~2 x 1 s), not the connect's as well
    fake_platform.clear_faults()


# -- 5. held writes -----------------------------------------------------------------------


@pytest.mark.parametrize("outage", ["refused", "503"])
def test_turns_written_during_an_outage_are_sent_in_order_when_it_ends(
    start_provider: StartProvider, fake_platform: FakeMem0Platform, outage: str
) -> None:
    provider = platform(start_provider, fake_platform, breaker_threshold=2, breaker_cooldown=0)
    if outage == "refused":
        fake_platform.stop()
    else:
        fake_platform.fail(".*", times=None, status=503)
    for n in (1, 2, 3):
        provider.sync_turn(f"Outage turn {n} about topic{n}.", "Noted.")
    assert provider.flush(30)
    assert fake_platform.memories_of("alice") == []
    if outage == "refused":
        fake_platform.start()
    else:
        fake_platform.clear_faults()
    provider.sync_turn("Recovered turn 4 about topic4.", "Noted.")
    assert provider.flush(30)
    assert fake_platform.memories_of("alice") == [
        f"Outage turn {n} about topic{n}." for n in (1, 2, 3)
    ] + ["Recovered turn 4 about topic4."]


def test_a_successful_recall_sends_the_held_writes(
    start_provider: StartProvider, fake_platform: FakeMem0Platform
) -> None:
    provider = platform(start_provider, fake_platform)
    fake_platform.fail(ADD, times=None, status=502)
    provider.sync_turn("I keep bees in the garden.", "Lovely.")
    assert provider.flush(30)
    fake_platform.clear_faults()
    assert call(provider, "mem0_search", query="anything at all")["count"] == 0
    assert provider.flush(30)
    assert fake_platform.memories_of("alice") == ["I keep bees in the garden."]


def test_held_writes_are_bounded(
    start_provider: StartProvider, fake_platform: FakeMem0Platform
) -> None:
    provider = platform(start_provider, fake_platform, max_pending_writes=2, retries=0)
    fake_platform.fail(ADD, times=None, status=503)
    for n in (1, 2, 3):
        provider.sync_turn(f"Held turn {n}.", "ok")
        assert provider.flush(30)
    fake_platform.clear_faults()
    provider.sync_turn("Held turn 4.", "ok")
    assert provider.flush(30)
    assert fake_platform.memories_of("alice") == ["Held turn 2.", "Held turn 3.", "Held turn 4."]


def test_a_write_that_may_have_been_stored_is_not_held(
    start_provider: StartProvider, fake_platform: FakeMem0Platform
) -> None:
    provider = platform(start_provider, fake_platform)
    fake_platform.fail(ADD, times=1, status=500)
    provider.sync_turn("I moved to Lisbon.", "ok")
    assert provider.flush(30)
    provider.sync_turn("I have a cat.", "ok")
    assert provider.flush(30)
    assert fake_platform.memories_of("alice") == ["I have a cat."]


# -- 6. Retry-After -----------------------------------------------------------------------


def test_a_retry_after_beyond_the_budget_fails_at_once_and_says_so(
    start_provider: StartProvider, fake_platform: FakeMem0Platform
) -> None:
    provider = platform(start_provider, fake_platform, timeout=1.0, retries=3)
    fake_platform.rate_limited, fake_platform.retry_after = 10, 30
    started = time.monotonic()
    error = call(provider, "mem0_search", query="tea")["error"]
    assert time.monotonic() - started < 1.0
    assert "rate limited" in error and "retry after 30 s" in error
    assert len(fake_platform.calls("POST", SEARCH)) == 1


def test_a_short_retry_after_is_honoured(
    start_provider: StartProvider, fake_platform: FakeMem0Platform
) -> None:
    provider = platform(start_provider, fake_platform, timeout=2.0, retries=2)
    fake_platform.rate_limited, fake_platform.retry_after = 1, 1
    started = time.monotonic()
    assert call(provider, "mem0_search", query="tea")["count"] == 0
    assert time.monotonic() - started >= 0.95
    assert len(fake_platform.calls("POST", SEARCH)) == 2


# -- 7. small things --------------------------------------------------------------------


def test_an_add_answered_without_ids_is_not_reported_as_stored(
    start_provider: StartProvider, fake_platform: FakeMem0Platform
) -> None:
    provider = platform(start_provider, fake_platform)
    fake_platform.fail(ADD, times=1, status=200, raw_body=b"{}")
    result = call(provider, "mem0_add", content="I like tea")
    assert "without confirming" in result["result"]
    assert result["memory_ids"] == []


@pytest.mark.parametrize("name", ["-1", "MY KEY", "1ABC", "A=B", ""])
def test_api_key_env_must_be_a_variable_name(name: str) -> None:
    config = {"mem0": {"api_key_env": name}}
    if not name:
        assert load_settings(config, {}).api_key_env == "MEM0_API_KEY"  # blank: the default
        return
    with pytest.raises(ConfigError, match=r"mem0\.api_key_env must name an environment variable"):
        load_settings(config, {})
