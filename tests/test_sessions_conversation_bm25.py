"""Conversations ranked by their BM25 over all their messages, fused into the conversation
order of a question (``hermes_core.sessions.convbm25``). Both backends."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from hermes_core.sessions.backends import open_session_store
from hermes_core.sessions.convbm25 import CONVERSATION_CAP, conversation_bm25
from hermes_core.sessions.query import Term
from hermes_core.sessions.rerank import fuse_with_pooled

HELD = {
    "rare": {"talks": 4, "once": 1},
    "common": {"talks": 1, "once": 1, "other": 1},
    "everywhere": None,  # more than the cap: left out
}


def counts(forms: Sequence[Term], cap: int) -> dict[str, int] | None:
    assert cap == CONVERSATION_CAP
    return HELD[forms[0].text]


def groups(*words: str) -> list[list[Term]]:
    return [[Term(word)] for word in words]


def test_a_conversation_coming_back_to_a_rare_word_scores_above_one_saying_it_once() -> None:
    sizes = {"talks": 10, "once": 10, "other": 10}
    scores = conversation_bm25(groups("rare", "common", "everywhere"), counts, sizes, 20, 200)
    assert scores["talks"] > scores["once"] > scores["other"] > 0
    # A word held by more messages than the cap adds nothing; one skipped (a speaker) neither.
    assert conversation_bm25(groups("everywhere"), counts, sizes, 20, 200) == {}
    skipped = conversation_bm25(groups("rare", "common"), counts, sizes, 20, 200, [True, False])
    assert skipped["talks"] == pytest.approx(skipped["once"])


def test_a_longer_conversation_holding_a_word_as_often_scores_less() -> None:
    sizes = {"talks": 40, "once": 4}
    held = {"w": {"talks": 2, "once": 2}}
    scores = conversation_bm25(groups("w"), lambda forms, cap: held[forms[0].text], sizes, 20, 200)
    assert scores["once"] > scores["talks"]


def test_the_conversation_order_is_a_further_vote_of_the_fusion() -> None:
    # Coverage a, b, c; pooled equal (no change); the conversations' BM25 puts c first.
    place = fuse_with_pooled(["a", "b", "c"], {}, more=(({"c": 3.0, "a": 2.0, "b": 1.0}, 1.0),))
    assert sorted(place, key=place.__getitem__) == ["a", "c", "b"]
    # With no weight it is the coverage order itself.
    place = fuse_with_pooled(["a", "b", "c"], {}, more=(({"c": 3.0}, 0.0),))
    assert place == {"a": 0.0, "b": 1.0, "c": 2.0}


QUESTION = (
    "Which waterproof hiking boots with ankle support did I finally order for the alpine "
    "trek next summer?"
)


def test_a_long_question_ranks_the_conversation_it_continues_above_a_lookalike(
    session_backend: str,
) -> None:
    chats = {
        # The best single message, in a conversation about parcels.
        "order": [
            "I ordered the waterproof hiking boots with ankle support for the alpine trek.",
            *(f"Parcel tracking update number {n}." for n in range(12)),
        ],
        # A lookalike: three short turns sharing the question's common words, in a long
        # conversation about a shop.
        "shop": [
            "Waterproof hiking boots on sale.",
            "Ankle support boots, waterproof.",
            "Hiking boots, waterproof, ankle support.",
            *(f"The shop also sells tents and stoves, aisle {n}." for n in range(30)),
        ],
        # The conversation about the trek: every turn comes back to it, each at length, so
        # none ranks high as a message.
        "trek": [
            "For the alpine trek next summer we still need to sort out the route, the huts, "
            "the permits, the train there and back, and who carries the first aid kit.",
            "My old hiking boots gave me blisters on the last trek, so I am reading reviews "
            "of new ones this week and asking friends which brands they trust most.",
            "The alpine huts want a deposit by March; the trek itself is six days long, with "
            "two rest days in between if the weather turns, which it often does up there.",
            "Ankle support matters on scree, the guide said, so the boots should be high "
            "cut even if they are heavier than trail shoes and take longer to break in.",
        ],
    }
    chats.update({f"other{n}": [f"Dinner plans for friday number {n}."] for n in range(20)})
    with open_session_store(session_backend) as store:
        for n, (sid, texts) in enumerate(chats.items()):
            store.create_session(sid, source="import", started_at=1_700_000_000 + n * 1000)
            store.append_messages(
                sid,
                [
                    {"role": "user" if k % 2 == 0 else "assistant", "content": text}
                    for k, text in enumerate(texts)
                ],
            )
        hits = store.search_messages(QUESTION, limit=20)
        order = list(dict.fromkeys(hit["session_id"] for hit in hits))
        # The best message stays first; by their hits alone the shop's three strong turns
        # came next, but the trek's conversation holds the question's rare words (alpine,
        # trek, summer) in most of its few turns.
        assert order == ["order", "trek", "shop"]
        assert hits[0]["session_id"] == "order"
        assert [hit["session_id"] for hit in hits[1:3]] == ["trek", "trek"]
