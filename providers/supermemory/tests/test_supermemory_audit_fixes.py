"""Settings limits, half-written saves, fences, checkpoints, Retry-After and id-less replies."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import MakeProvider, Sleeps
from fake_supermemory import FakeSupermemory
from hermes_memory_supermemory import SupermemoryProvider
from hermes_memory_supermemory.settings import load_settings
from hermes_memory_supermemory.turns import turns_from_messages

from hermes_core.errors import ConfigError
from hermes_core.fencing import build_memory_context_block
from hermes_core.runtime.summary import SUMMARY_END_MARKER, with_summary_prefix
from hermes_core.testing.http_fake import RecordedRequest, Reply

# -- item 3: non-finite numbers and non-URLs -------------------------------------------------


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("max_recall_results", float("nan")),
        ("max_recall_results", float("inf")),
        ("write_backlog", float("inf")),
        ("write_backlog", float("-inf")),
        ("api_timeout", float("nan")),
        ("profile_frequency", 1e308),
        ("max_retries", ".nan"),
        ("base_url", "abc"),
        ("base_url", "ftp://x"),
        ("base_url", "http://"),
    ],
)
def test_non_finite_numbers_and_bad_urls_are_config_errors_naming_the_key(
    hermes_home, write_config, monkeypatch, key: str, value: Any
) -> None:
    monkeypatch.setenv("SUPERMEMORY_API_KEY", "k")
    write_config({key: value})
    with pytest.raises(ConfigError, match=rf"supermemory\.{key}"):
        load_settings(hermes_home, {})
    provider = SupermemoryProvider()
    assert provider.is_available() is False  # reported, never raised
    assert f"supermemory.{key}" in provider.unavailable_reason()


def test_non_finite_environment_base_url_is_refused(hermes_home) -> None:
    with pytest.raises(ConfigError, match=r"supermemory\.base_url"):
        load_settings(hermes_home, {"SUPERMEMORY_BASE_URL": "localhost:8080"})


# -- item 6: save_config checks everything before writing anything -------------------------


@pytest.mark.parametrize("broken", ["invalid_yaml", "directory", "section_not_mapping"])
def test_save_config_writes_no_env_when_config_yaml_is_unusable(
    hermes_home: Path, broken: str
) -> None:
    config = hermes_home / "config.yaml"
    if broken == "invalid_yaml":
        config.write_text("memory: [unclosed\n")
    elif broken == "directory":
        config.mkdir()
    else:
        config.write_text("supermemory: [1]\n")
    before = config.read_text() if config.is_file() else None
    with pytest.raises(ConfigError) as caught:
        SupermemoryProvider().save_config(
            {"api_key": "sm_NEWKEY", "namespace": "team"}, str(hermes_home)
        )
    assert not (hermes_home / ".env").exists()
    if before is not None:
        assert config.read_text() == before  # a malformed section is never replaced
    if broken == "section_not_mapping":
        assert "'supermemory'" in str(caught.value) and "mapping" in str(caught.value)


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write a read-only folder")
def test_save_config_writes_no_env_when_config_yaml_target_is_read_only(
    hermes_home: Path, tmp_path: Path
) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    (hermes_home / "config.yaml").symlink_to(locked / "config.yaml")
    locked.chmod(0o500)
    try:
        with pytest.raises(ConfigError, match="not writable"):
            SupermemoryProvider().save_config(
                {"api_key": "sm_NEWKEY", "namespace": "team"}, str(hermes_home)
            )
    finally:
        locked.chmod(0o700)
    assert not (hermes_home / ".env").exists()


def test_save_config_writes_no_env_when_config_yaml_links_below_a_file(
    hermes_home: Path, tmp_path: Path
) -> None:
    a_file = tmp_path / "plain"
    a_file.write_text("x")
    (hermes_home / "config.yaml").symlink_to(a_file / "sub" / "config.yaml")
    with pytest.raises(ConfigError, match=r"Cannot (read|write)"):
        SupermemoryProvider().save_config(
            {"api_key": "sm_NEWKEY", "namespace": "team"}, str(hermes_home)
        )
    assert not (hermes_home / ".env").exists()


def test_save_config_keeps_other_settings_of_the_section(hermes_home: Path) -> None:
    (hermes_home / "config.yaml").write_text("supermemory: {search_mode: chunks}\n")
    SupermemoryProvider().save_config({"api_key": "sm_K", "namespace": "team"}, str(hermes_home))
    section = yaml.safe_load((hermes_home / "config.yaml").read_text())["supermemory"]
    assert section == {"search_mode": "chunks", "namespace": "team"}
    assert "sm_K" in (hermes_home / ".env").read_text()


# -- item 4: fences are never stored ---------------------------------------------------------

FENCED = build_memory_context_block("- RECALLED-SECRET lives at 12 Elm St")


def _all_text(fake: FakeSupermemory, namespace: str) -> str:
    return json.dumps([doc.content for doc in fake.documents(namespace).values()])


def test_mirrored_builtin_writes_drop_memory_context_fences(
    make_provider: MakeProvider, fake: FakeSupermemory
) -> None:
    provider = make_provider()
    provider.on_memory_write("add", "user", "User likes cats. " + FENCED)
    provider.on_memory_write("add", "memory", FENCED)  # empty once sanitised: not sent
    assert provider.flush(5)
    docs = fake.documents(provider.namespace)
    assert [doc.content for doc in docs.values()] == ["User likes cats."]
    # the removal finds the document its (sanitised) add created
    provider.on_memory_write(
        "remove", "user", "", {"previous_content": "User likes cats. " + FENCED}
    )
    assert provider.flush(5)
    assert fake.documents(provider.namespace) == {}


def test_store_tool_strips_fences_and_skips_an_empty_write(
    make_provider: MakeProvider, fake: FakeSupermemory
) -> None:
    provider = make_provider()
    saved = json.loads(
        provider.handle_tool_call("supermemory_store", {"content": "Prefers tea. " + FENCED})
    )
    assert saved["saved"] is True and saved["preview"] == "Prefers tea."
    skipped = json.loads(provider.handle_tool_call("supermemory_store", {"content": FENCED}))
    assert skipped["saved"] is False and "Nothing saved" in skipped["message"]
    text = _all_text(fake, provider.namespace)
    assert "RECALLED-SECRET" not in text and "memory-context" not in text


# -- item 5: compaction checkpoints are not stored at session end ----------------------------


def checkpoint(body: str) -> str:
    return f"{with_summary_prefix(body)}\n{SUMMARY_END_MARKER}"


def test_turns_skip_compaction_checkpoints() -> None:
    messages = [
        {"role": "user", "content": "Turn 0: deploy detail number 0 is important."},
        {"role": "assistant", "content": checkpoint("SUMMARY-ONLY-FACT: deploy to prod-eu")},
        {"role": "user", "content": "Another question after compression please."},
        {"role": "assistant", "content": "Sure, here is the answer."},
    ]
    turns = turns_from_messages(messages)
    assert all("CHECKPOINT" not in t.user + t.assistant for t in turns)
    assert all("SUMMARY-ONLY-FACT" not in t.user + t.assistant for t in turns)
    assert [t.user for t in turns] == ["Another question after compression please."]


def test_text_after_a_checkpoint_in_the_same_message_is_kept() -> None:
    merged = checkpoint("SUMMARY-ONLY-FACT") + "\nWhat was the deploy region again?"
    turns = turns_from_messages(
        [{"role": "user", "content": merged}, {"role": "assistant", "content": "prod-eu."}]
    )
    assert [(t.user, t.assistant) for t in turns] == [
        ("What was the deploy region again?", "prod-eu.")
    ]


def test_session_end_does_not_store_the_checkpoint(
    make_provider: MakeProvider, fake: FakeSupermemory
) -> None:
    provider = make_provider()
    provider.on_session_end(
        [
            {"role": "system", "content": "You are Hermes."},
            {"role": "user", "content": "Please remember the deploy detail number 7."},
            {"role": "assistant", "content": checkpoint("SUMMARY-ONLY-FACT prod-eu")},
            {"role": "user", "content": "Another question after compression please."},
            {"role": "assistant", "content": "Here is a long enough answer to keep."},
        ]
    )
    text = _all_text(fake, provider.namespace)
    assert "SUMMARY-ONLY-FACT" not in text and "CHECKPOINT" not in text
    assert "Another question after compression please." in text


# -- item 7: Retry-After ----------------------------------------------------------------------


class RateLimited(FakeSupermemory):
    retry_after = "30"

    def before_route(self, request: RecordedRequest) -> Reply | None:
        if request.path.endswith("/search"):
            return Reply(429, {"error": "rate limited"}, headers={"Retry-After": self.retry_after})
        return super().before_route(request)


def _rate_limited_provider(
    home: Path, fake: FakeSupermemory, monkeypatch: pytest.MonkeyPatch, sleeps: Sleeps
) -> SupermemoryProvider:
    config = {
        "memory": {"provider": "supermemory"},
        "supermemory": {"base_url": fake.url, "api_timeout": 2.0, "max_retries": 3},
    }
    (home / "config.yaml").write_text(yaml.safe_dump(config))
    monkeypatch.setenv("SUPERMEMORY_API_KEY", fake.api_key)
    provider = SupermemoryProvider(sleep=sleeps)
    provider.initialize("s1", hermes_home=str(home), platform="cli")
    return provider


def test_a_long_retry_after_gives_up_at_once_and_says_so(
    hermes_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sleeps = Sleeps()
    with RateLimited() as fake:
        provider = _rate_limited_provider(hermes_home, fake, monkeypatch, sleeps)
        try:
            started = time.monotonic()
            answer = json.loads(provider.handle_tool_call("supermemory_search", {"query": "q"}))
            elapsed = time.monotonic() - started
        finally:
            provider.shutdown()
        searches = [r for r in fake.requests if r.path.endswith("/search")]
    # Not retried, and the 30 s asked for was never waited (a backoff sleep of the
    # background profile warm-up may land in the same recorder: it is well under 1 s).
    assert len(searches) == 1 and elapsed < 2
    assert all(seconds < 1 for seconds in sleeps.calls), sleeps.calls
    assert "rate limited (HTTP 429), retry after 30 s" in answer["error"]


def test_a_short_retry_after_is_waited_for(
    hermes_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sleeps = Sleeps()
    with RateLimited() as fake:
        fake.retry_after = "1.5"
        provider = _rate_limited_provider(hermes_home, fake, monkeypatch, sleeps)
        try:
            answer = json.loads(provider.handle_tool_call("supermemory_search", {"query": "q"}))
        finally:
            provider.shutdown()
    # Each retry of the search waits the 1.5 s asked for (shorter sleeps may be the
    # background profile warm-up's own backoff, which shares the recorder).
    assert [seconds for seconds in sleeps.calls if seconds >= 1] == [1.5, 1.5, 1.5]
    assert "retry after 1.5 s" in answer["error"]


# -- item 8: a 2xx reply without an id is not a success --------------------------------------


@pytest.mark.parametrize("body", [b"{}", b'{"status": "queued"}', b'{"id": null}', b'{"id": ""}'])
def test_store_reports_a_reply_without_an_id(
    make_provider: MakeProvider, fake: FakeSupermemory, body: bytes
) -> None:
    provider = make_provider()
    fake.fail(r"POST /ns/.*/document", times=None, status=200, raw_body=body)
    answer = json.loads(provider.handle_tool_call("supermemory_store", {"content": "Likes tea."}))
    assert "saved" not in answer
    assert "without a document id" in answer["error"]
