"""Long queries (a user's whole turn, a request of several sentences): prose, not FTS syntax,
and ranked message first, so the turn that answers them is not buried under one conversation
that shares their common words. Both backends."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from hermes_core.sessions import SessionStore
from hermes_core.sessions.backends import open_session_store
from hermes_core.sessions.query import parse_query
from hermes_core.sessions.question import is_prose, message_first, plan_query

LONG_TURN = (
    "Okay, my business plan for the week is still a mess. Between the budget, the phone "
    "calls, the customers and the market stall, I keep forgetting the remittance agents "
    "and the payment reports. Can we set up the tracker so it works for me?"
)


def test_a_long_turn_ranks_message_first_a_short_question_by_conversation() -> None:
    assert message_first(plan_query(parse_query(LONG_TURN)))
    assert not message_first(plan_query(parse_query("What did I decide about the deploy script?")))
    assert not message_first(plan_query(parse_query("staging wireguard")))
    # Added forms (bought for buy, eighteen for 18) do not make a question long.
    assert not message_first(plan_query(parse_query("Where did I buy the 18 plants?")))


def test_markdown_in_prose_is_not_fts_syntax() -> None:
    turn = (
        "That sounds right, but I want **one single payment** for the customer, and *only* "
        "if the agents NOT in Lagos can still use it from their phones."
    )
    assert is_prose(turn)
    plan = plan_query(parse_query(turn))
    assert plan.mode == "question"
    words = {term.text.lower() for term in plan.primary.terms}
    assert {"payment", "customer", "agents", "lagos"} <= words
    assert not any(term.prefix for term in plan.primary.terms)
    # Short syntax stays syntax: a prefix, an operator.
    assert not is_prose("deploy* AND staging NOT prod")
    assert plan_query(parse_query("deploy* staging")).mode == "literal"


@pytest.fixture
def history(session_backend: str) -> Iterator[SessionStore]:
    """A long planning conversation that shares the long turn's common words on every turn,
    and a short one whose single turn is the one the long turn refers to."""
    with open_session_store(session_backend) as store:
        store.create_session("planning", source="import", started_at=1_700_000_000)
        common = [
            "Let us plan the week for the business: budget first, then the phone calls.",
            "The customers at the market stall want the budget numbers by the week's end.",
            "For the business, keep the phone close and the market stall open all week.",
            "Your plan: calls to customers on the phone, then the budget, then the stall.",
            "A business week: the market, the customers, the budget and the plan again.",
            "Check the phone for customers, update the budget, plan the market week.",
        ]
        for n, text in enumerate(common):
            store.append_message(
                "planning", "user" if n % 2 == 0 else "assistant", text, timestamp=1_700_000_000 + n
            )
        store.create_session("agents", source="import", started_at=1_700_100_000)
        store.append_message(
            "agents",
            "user",
            "I pay my remittance agents every Friday and check their payment reports then.",
            timestamp=1_700_100_000,
        )  # the answer: the only message of this conversation the turn's rare words find
        store.append_message(
            "agents", "assistant", "Noted: Friday payouts to the agents.", timestamp=1_700_100_001
        )
        yield store


def test_a_long_turn_finds_the_message_that_answers_it(history: SessionStore) -> None:
    hits = history.search_messages(LONG_TURN, limit=5)
    assert (hits[0]["session_id"], hits[0]["role"]) == ("agents", "user")
    # The common words still find the planning conversation's turns after it.
    assert any(hit["session_id"] == "planning" for hit in hits[1:])
