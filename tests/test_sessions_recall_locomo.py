"""Recall on LoCoMo-shaped histories: two named friends, dated sessions, questions about them.

Each test here failed before the change it covers (see docs/session-search.md,
"Recall on questions"): a speaker's name covered by the sessions they speak in,
a question's time phrase read against the history's dates, and a rare word
found as the head of a glued compound (*gym* in "FlexGym").
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from hermes_core.sessions import SessionStore
from hermes_core.sessions.backends import open_session_store
from hermes_core.sessions.timespan import find_time_span_in_history
from tests.backend_kit import is_postgres

JAN = datetime(2023, 1, 14, 19, 20).timestamp()
FEB = datetime(2023, 2, 5, 11, 5).timestamp()
MAR = datetime(2023, 3, 19, 18, 30).timestamp()
APR = datetime(2023, 4, 16, 14, 15).timestamp()


@pytest.fixture
def store(session_backend: str) -> Iterator[SessionStore]:
    with open_session_store(session_backend) as opened:
        yield opened


def friends(store: SessionStore, sid: str, started: float, *turns: tuple[str, str]) -> list[int]:
    """A session between Priya (user) and Tom (assistant), each turn named by its speaker."""
    store.create_session(sid, started_at=started)
    return store.append_messages(
        sid,
        [
            {
                "role": "user" if name == "Priya" else "assistant",
                "content": text,
                "name": name,
                "timestamp": started + n,
            }
            for n, (name, text) in enumerate(turns)
        ],
    )


def first_session(store: SessionStore, question: str) -> str:
    hits = store.search_messages(question, limit=20, snippets=False)
    assert hits, question
    return str(hits[0]["session_id"])


# -- a speaker's name -------------------------------------------------------------------------


def test_a_named_speaker_covers_their_name_whether_or_not_it_is_said(
    store: SessionStore,
) -> None:
    # Tom names his starter where nobody says "Tom"; in another chat Priya greets
    # him by name and the starter comes up in passing. Before, the greeting made
    # the second chat cover "Tom" and the first did not.
    friends(
        store,
        "s_feb",
        FEB,
        ("Priya", "Morning! How are the loaves coming along?"),
        ("Tom", "I made a starter and named him Clive. He lives on the fridge."),
        ("Priya", "Of course you named it."),
    )
    friends(
        store,
        "s_may",
        APR,
        ("Priya", "Tom! Congratulations on the news."),
        ("Tom", "Thanks! Lena is doing well."),
        ("Priya", "You already keep a starter alive, that's basically parenting."),
    )
    store.create_session("names", started_at=MAR)  # "name" is a common word here
    store.append_messages(
        "names",
        [
            {"role": "user", "content": f"Baby name idea number {n}: a name from a book."}
            for n in range(6)
        ],
    )
    assert first_session(store, "What did Tom name his starter?") == "s_feb"


# -- time in a question -----------------------------------------------------------------------


def bakers(store: SessionStore) -> None:
    friends(
        store,
        "s_jan",
        JAN,
        ("Priya", "One resolution each. Go."),
        ("Tom", "I want to bake proper bread this year."),
    )
    friends(
        store,
        "s_feb",
        FEB,
        ("Priya", "How is the bread going, Tom?"),
        ("Tom", "First loaf with Clive came out of the oven this afternoon, a real crumb."),
    )
    friends(
        store,
        "s_apr",
        APR,
        ("Priya", "I ran the Riverside 10k this morning!"),
        ("Tom", "Brilliant. I baked you a cake to celebrate."),
    )


def test_a_month_in_a_question_prefers_the_conversations_of_that_month(
    store: SessionStore,
) -> None:
    bakers(store)
    # Asked years later, of a history that ended in April 2023: "in February" is
    # February 2023. The February chat never says "bake" or "February".
    assert first_session(store, "What did Tom bake in February?") == "s_feb"
    # Without the month, the chats saying "bake" come first: nothing is filtered.
    assert first_session(store, "What did Tom bake?") != "s_feb"


def test_a_time_span_holding_no_conversation_changes_nothing(store: SessionStore) -> None:
    bakers(store)
    hits = store.search_messages("What did Tom bake in 2021?", limit=10, snippets=False)
    assert {hit["session_id"] for hit in hits} >= {"s_jan", "s_apr"}


def test_a_calendar_date_stays_searched_as_words(store: SessionStore) -> None:
    store.create_session("boiler", started_at=MAR)
    store.append_messages(
        "boiler",
        [
            {"role": "user", "content": "Help me write to my landlord.", "timestamp": MAR},
            {
                "role": "assistant",
                "content": "Dear Mr Patel, the boiler stopped working on 16 March.",
                "timestamp": MAR + 1,
            },
        ],
    )
    store.create_session("later", started_at=APR)
    store.append_messages(
        "later",
        [{"role": "user", "content": "Which plant pots are frost proof?", "timestamp": APR}],
    )
    hits = store.search_messages("What stopped working in March?", limit=5, snippets=False)
    assert hits[0]["session_id"] == "boiler"


def test_a_relative_phrase_is_read_against_the_end_of_a_past_history(store: SessionStore) -> None:
    friends(
        store,
        "s_2022",
        datetime(2022, 6, 1, 12, 0).timestamp(),
        ("Priya", "I ran the city half marathon, two hours flat."),
    )
    friends(
        store,
        "s_2023",
        APR,
        ("Priya", "I ran the Riverside 10k this morning!"),
        ("Tom", "Amazing, which one is next?"),
    )
    # "this year" is the year of the last conversation (2023), not the year asked in;
    # the words "this year" are not searched (no turn's "year" is meant).
    assert first_session(store, "Which races did Priya run this year?") == "s_2023"
    span, rest, anchored = find_time_span_in_history("races this year", APR)
    assert anchored and span is not None and rest == "races"
    assert datetime.fromtimestamp(span.since) == datetime(2023, 1, 1)
    assert span.since <= APR < span.until


def test_a_holiday_in_a_question_prefers_the_conversations_of_that_day(
    store: SessionStore,
) -> None:
    for sid, when in (
        ("s_dec20", datetime(2023, 12, 20, 18, 0)),
        ("s_xmas", datetime(2023, 12, 25, 20, 0)),
    ):
        friends(
            store,
            sid,
            when.timestamp(),
            ("Priya", "What did you cook for the family dinner?"),
            ("Tom", "A roast, and a pudding I set on fire."),
        )
    friends(store, "s_jan", JAN, ("Priya", "Dinner plans for the weekend?"))
    # Neither chat says "Christmas": the day the question names picks one, on both backends
    # (a bare "Christmas" is read after "on"; the history ends in 2023, so it is 2023's).
    assert first_session(store, "What did Tom cook for dinner on Christmas?") == "s_xmas"
    assert first_session(store, "What did Tom cook for dinner?") == "s_dec20"


def test_find_time_span_in_history_leaves_a_current_history_alone() -> None:
    now = datetime(2026, 12, 1, 12, 0).astimezone()
    span, rest, anchored = find_time_span_in_history("the bug last week", now.timestamp(), now)
    assert span is not None and not anchored and rest == "the bug"
    assert find_time_span_in_history("no time here", None) == (None, "no time here", False)


# -- glued compounds --------------------------------------------------------------------------


def test_a_rare_word_is_found_as_the_head_of_a_glued_compound(store: SessionStore) -> None:
    friends(
        store,
        "s_gym",
        FEB,
        ("Priya", "You look tired."),
        ("Tom", "I joined FlexGym across the road. Lifting before first period."),
    )
    friends(
        store,
        "s_word",
        MAR,
        ("Priya", "My gym is closed for repairs all month."),
        ("Tom", "Shame, walk instead."),
    )
    friends(
        store,
        "s_other",
        APR,
        ("Priya", "Did you join the choir in the end?"),
        ("Tom", "I did, we sing on Thursdays."),
    )
    # "flexgym" is one word to the word index; the trigram index finds "gym" glued
    # to it, and the chat covering *join* and (half) *gym* beats the one with *gym* alone.
    hits = store.search_messages("Which gym did Tom join?", limit=10, snippets=False)
    assert hits[0]["session_id"] == "s_gym"


def test_a_compound_of_known_words_covers_its_head(store: SessionStore) -> None:
    store.create_session("plants", started_at=FEB)
    store.append_messages(
        "plants",
        [
            {
                "role": "user",
                "content": "I'm up to twelve houseplants in the flat.",
                "timestamp": FEB,
            },
            {"role": "assistant", "content": "Try a trailing pothos.", "timestamp": FEB + 1},
        ],
    )
    store.create_session("shop", started_at=MAR)
    store.append_messages(
        "shop",
        [{"role": "user", "content": "The market sells plants cheaply.", "timestamp": MAR}],
    )
    store.create_session("house", started_at=APR)
    store.append_messages(
        "house",
        [{"role": "user", "content": "We bought a house with a garden.", "timestamp": APR}],
    )
    hits = store.search_messages("How many plants are in my flat?", limit=5, snippets=False)
    assert hits and hits[0]["session_id"] == "plants"


@pytest.mark.parametrize(
    ("question", "text"),
    [
        ("What art did she make?", "We missed the start of the race."),  # st|art: too short
        ("What art did she make?", "The train will depart at noon."),  # dep is no word
        ("Which gym do you like?", "The gymnasium was closed."),  # gym starts the word
    ],
)
def test_a_word_inside_an_unrelated_word_is_not_a_compound(
    store: SessionStore, question: str, text: str
) -> None:
    store.create_session("noise", started_at=FEB)
    store.append_messages("noise", [{"role": "user", "content": text, "timestamp": FEB}])
    store.create_session("filler", started_at=MAR)
    store.append_messages(
        "filler",
        [{"role": "user", "content": "An art class at the gym, imagine.", "timestamp": MAR}],
    )
    hits = store.search_messages(question, limit=5, snippets=False)
    assert [hit["session_id"] for hit in hits] == ["filler"]


def test_a_locomo_file_answers_when_with_the_session_date(
    session_backend: str, tmp_path: Path
) -> None:
    sample = {
        "sample_id": "t-1",
        "conversation": {
            "speaker_a": "Priya",
            "speaker_b": "Tom",
            "session_1_date_time": "1:10 pm on 15 June, 2023",
            "session_1": [
                {"speaker": "Priya", "text": "Guess who passed her driving test yesterday?"},
                {"speaker": "Tom", "text": "No way! First time?"},
            ],
            "session_2_date_time": "9:00 pm on 2 July, 2023",
            "session_2": [
                {"speaker": "Tom", "text": "Thanks for coming to the gig last night!"},
                {"speaker": "Priya", "text": "Best night out in ages."},
            ],
        },
    }
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([sample]), encoding="utf-8")
    from hermes_memory_builtin.session_search import SessionSearchTool

    from hermes_core.sessions.importer import read_jsonl

    with open_session_store(session_backend) as store:
        store.import_sessions(read_jsonl(path))
    config: dict[str, Any] = {"session_search": {"base_url": ""}}
    if is_postgres(session_backend):
        config["sessions"] = {"url": session_backend}
    tool = SessionSearchTool(tmp_path, config)  # SQLite: session_backend is tmp_path/state.db
    try:
        answer = json.loads(tool({"query": "When did Priya pass her driving test?"}))
    finally:
        tool.close()
    best = answer["results"][0]
    assert best["session_id"] == "t-1_session_1"
    assert "June 15, 2023" in best["when"]
    assert "passed her driving test yesterday" in best["summary"]
