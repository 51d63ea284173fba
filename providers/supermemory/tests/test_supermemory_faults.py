"""Faults: 5xx, timeouts, malformed JSON, connection refused, bad keys.

In every case the hook returns normally (empty recall, a JSON error from a
tool, a write parked for later), the breaker opens after repeated failures
and closes again once the service answers.
"""

from __future__ import annotations

import json

import pytest

from hermes_core.resilience import BreakerState


def test_server_errors_are_retried_then_give_empty_recall(make_provider, fake, sleeps) -> None:
    provider = make_provider()
    provider.flush(5)
    fake.fail_next(2, status=503, path="/search")  # both attempts (max_retries=1)
    assert provider.prefetch("what is my favourite band") == ""
    assert len(fake.calls("POST", "/search")) == 2
    assert len(sleeps.calls) == 1  # one backoff between the two attempts


def test_one_server_error_is_absorbed_by_the_retry(make_provider, fake) -> None:
    provider = make_provider()
    provider.sync_turn("My favourite band is Low.", "Low, a fine choice.")
    assert provider.flush(5)
    fake.fail_next(1, status=500, path="/search")
    assert "Low" in provider.prefetch("what is my favourite band")


def test_timeouts_give_empty_recall(make_provider, fake, configured, write_config) -> None:
    write_config({**configured, "api_timeout": 0.5, "max_retries": 0})
    provider = make_provider()
    provider.flush(5)
    fake.delay_next(1, seconds=1.5, path="/search")
    assert provider.prefetch("where did I park the car") == ""
    tool = json.loads(provider.handle_tool_call("supermemory_search", {"query": "car"}))
    assert tool.get("count") == 0 or "error" in tool


def test_malformed_json_is_an_error_not_a_crash(make_provider, fake) -> None:
    provider = make_provider()
    provider.flush(5)
    fake.malformed_next(2, path="/search")
    assert provider.prefetch("what is the wifi password at home") == ""
    fake.malformed_next(2, path="/search")
    answer = json.loads(provider.handle_tool_call("supermemory_search", {"query": "wifi"}))
    assert "failed" in answer["error"] and answer["retryable"] is True


def test_a_bad_api_key_fails_cleanly_and_is_logged_once(
    make_provider, fake, monkeypatch, caplog
) -> None:
    monkeypatch.setenv("SUPERMEMORY_API_KEY", "sm_wrong")
    provider = make_provider()
    assert provider.prefetch("do you know my name") == ""
    answer = json.loads(provider.handle_tool_call("supermemory_profile", {}))
    assert "error" in answer
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1 and "401" in warnings[0]


def test_rejected_writes_are_dropped_not_retried_forever(make_provider, fake) -> None:
    provider = make_provider()
    fake.fail_next(1, status=400, path="/document")
    provider.sync_turn("The build runs on Jenkins.", "Jenkins, right.")
    assert provider.flush(5)
    assert provider.backlog_size == 0
    assert len(fake.calls("POST", "/document")) == 1


def test_breaker_opens_then_closes_and_parked_writes_are_delivered(
    make_provider, fake, clock
) -> None:
    provider = make_provider()
    provider.flush(5)
    fake.down = True  # every request answers 503
    for i in range(3):  # breaker_threshold = 3 failed calls
        assert provider.prefetch(f"question number {i} about the garden") == ""
    assert provider.breaker.state is BreakerState.OPEN
    calls_when_open = len(fake.requests)

    # While open: no traffic, turns still complete, writes are parked.
    assert provider.prefetch("what did I plant last spring") == ""
    provider.sync_turn("I planted tulips in the front bed.", "Tulips, lovely.")
    assert not provider.flush(5)
    refused = json.loads(provider.handle_tool_call("supermemory_search", {"query": "tulips"}))
    assert "circuit breaker is open" in refused["error"]
    assert len(fake.requests) == calls_when_open
    assert provider.backlog_size == 1

    # Service back, cooldown over: one trial call closes the breaker.
    fake.down = False
    clock.advance(31)
    assert provider.breaker.state is BreakerState.HALF_OPEN
    provider.prefetch("anything about tulips")
    assert provider.breaker.state is BreakerState.CLOSED
    assert provider.flush(5)
    assert provider.backlog_size == 0
    assert "I planted tulips in the front bed." in fake.memories("hermes")


def test_failed_trial_reopens_the_breaker(make_provider, fake, clock) -> None:
    provider = make_provider()
    provider.flush(5)
    fake.down = True
    for i in range(3):
        provider.prefetch(f"question {i} about cooking pasta")
    assert provider.breaker.state is BreakerState.OPEN
    clock.advance(31)
    provider.prefetch("another question about pasta")
    assert provider.breaker.state is BreakerState.OPEN
    assert provider.breaker.retry_after() == pytest.approx(30.0)


def test_connection_refused_then_recovered(make_provider, fake, clock) -> None:
    provider = make_provider()
    provider.flush(5)
    fake.stop()
    for i in range(3):
        assert provider.prefetch(f"question {i} about the holiday in Crete") == ""
    provider.sync_turn("We fly to Crete on the 3rd of June.", "Have a great trip!")
    assert not provider.flush(5)  # parked: the writer has seen the open breaker
    assert provider.breaker.state is BreakerState.OPEN
    fake.start()  # same port
    clock.advance(31)
    provider.prefetch("when is the flight to Crete")
    assert provider.breaker.state is BreakerState.CLOSED
    assert provider.flush(5)
    assert "We fly to Crete on the 3rd of June." in fake.memories("hermes")


def test_backlog_is_bounded(make_provider, fake, configured, write_config) -> None:
    write_config({**configured, "write_backlog": 2})
    provider = make_provider()
    provider.flush(5)
    fake.down = True
    for i in range(5):
        provider.sync_turn(f"Fact number {i} about the project setup.", "Noted.")
    provider.flush(5)
    assert provider.backlog_size == 2
    fake.down = False
    provider.breaker.record_success()
    provider.sync_turn("One more fact about the project setup.", "Noted.")
    assert provider.flush(5)
    contents = [m for m in fake.memories("hermes") if "project setup" in m]
    assert contents == [
        "Fact number 3 about the project setup.",
        "Fact number 4 about the project setup.",
        "One more fact about the project setup.",
    ]
