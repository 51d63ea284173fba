"""Hostile writes: a refused message or unencodable text never blocks the writes after it."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from fake_honcho import FakeHoncho
from hermes_memory_honcho import HonchoMemoryProvider

MakeProvider = Callable[..., HonchoMemoryProvider]


@pytest.mark.parametrize("status", [400, 404, 409, 422])
def test_a_write_refused_for_good_is_dropped_and_later_writes_still_go_out(
    make_provider: MakeProvider, fake: FakeHoncho, status: int
) -> None:
    provider = make_provider("s1")
    assert provider.wait_idle()
    fake.fail(r"POST .*/messages$", times=None, status=status)
    provider.sync_turn("The server refuses this message every time.", "Noted.")
    assert provider.wait_idle()
    assert provider.pending_writes() == 0  # dropped, not queued forever
    fake.clear_faults()
    provider.sync_turn("My cat is called Felix.", "Felix, nice.")
    assert provider.wait_idle()
    assert provider.pending_writes() == 0
    assert "My cat is called Felix." in fake.messages_of("user")


def test_one_refused_message_in_a_batch_does_not_drop_the_others(
    make_provider: MakeProvider, fake: FakeHoncho
) -> None:
    provider = make_provider("s1")
    assert provider.wait_idle()
    fake.fail(r"POST .*/messages$", times=None, status=503)  # Honcho down: writes queue up
    provider.sync_turn("I live in Lyon.", "Lyon, lovely.")
    provider.sync_turn("I work as a baker.", "Early mornings!")
    assert provider.wait_idle()
    assert provider.pending_writes() == 4
    fake.clear_faults()
    fake.fail(r"POST .*/messages$", times=1, status=422)  # the batch is refused once
    provider.sync_turn("I have two kids.", "Busy home.")
    assert provider.wait_idle()
    assert provider.pending_writes() == 0
    sent = fake.messages_of("user")
    # Only the message refused on its own is lost; the rest of the batch arrived.
    assert "I work as a baker." in sent and "I have two kids." in sent


def test_auth_and_rate_limit_errors_keep_writes_queued(
    make_provider: MakeProvider, fake: FakeHoncho
) -> None:
    provider = make_provider("s1")
    assert provider.wait_idle()
    for status in (401, 403, 429):
        fake.clear_faults()
        fake.fail(r"POST .*/messages$", times=None, status=status)
        provider.sync_turn(f"Message sent while Honcho answers {status}.", "Ok.")
        assert provider.wait_idle()
    assert provider.pending_writes() == 6
    fake.clear_faults()
    provider.sync_turn("Honcho is back.", "Good.")
    assert provider.wait_idle()
    assert provider.pending_writes() == 0
    assert "Message sent while Honcho answers 401." in fake.messages_of("user")


def test_lone_surrogates_in_turns_and_mirrored_writes_are_replaced_not_fatal(
    make_provider: MakeProvider, fake: FakeHoncho
) -> None:
    provider = make_provider("s1")
    assert provider.wait_idle()
    provider.sync_turn("My dog is called \ud800Rex.", "Rex \udc00 is a good name.")
    provider.sync_turn("x", "y", session_id="odd\ud800session")
    provider.on_memory_write("add", "user", "User likes \udfff tea", {})
    provider.sync_turn("My bird is Tweety.", "Tweety!")
    assert provider.wait_idle()
    assert provider.pending_writes() == 0
    sent = fake.messages_of("user")
    assert "My dog is called \ufffdRex." in sent and "My bird is Tweety." in sent
    answer = json.loads(provider.handle_tool_call("honcho_search", {"query": "dog \ud800"}))
    assert "error" not in answer
    saved = json.loads(provider.handle_tool_call("honcho_conclude", {"conclusion": "Likes \ud800"}))
    assert "error" not in saved and "\ufffd" in saved["result"]
