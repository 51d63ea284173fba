"""Question recall: the planner's frame words, forms and weights, replies and previews.

Each test here failed before the change it covers (see docs/session-search.md,
"Recall on questions").
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from hermes_core.sessions import SessionStore, parse_query
from hermes_core.sessions.backends import open_session_store
from hermes_core.sessions.query import Term
from hermes_core.sessions.question import plan_query, stem_regex
from hermes_core.sessions.rerank import group_pattern
from hermes_core.sessions.transcript import match_preview
from hermes_core.sessions.wordforms import lemma, number_forms


@pytest.fixture
def store(session_backend: str) -> Iterator[SessionStore]:
    with open_session_store(session_backend) as opened:
        yield opened


def words(question: str) -> list[str]:
    return [term.text.lower() for term in plan_query(parse_query(question)).primary.terms]


def chat(store: SessionStore, sid: str, *turns: tuple[str, str], started: float = 0.0) -> list[int]:
    store.create_session(sid, started_at=started or None)
    return store.append_messages(
        sid,
        [
            {"role": role, "content": text, "timestamp": (started or 1_700_000_000.0) + n}
            for n, (role, text) in enumerate(turns)
        ],
    )


# -- the question's frame is not its topic -----------------------------------------------------


@pytest.mark.parametrize(
    ("question", "dropped", "kept"),
    [
        ("How long is my bus ride to work?", {"long"}, {"bus", "ride"}),
        ("How often should I water the tomatoes?", {"often"}, {"water", "tomatoes"}),
        (
            "How many weeks passed between my half marathon and the full one?",
            {"many", "weeks", "passed"},
            {"half", "marathon"},
        ),
        ("How many days after adopting the kitten was her jab?", {"days"}, {"kitten", "jab"}),
        # A bare "how much" stays: "How much was it?" in the history asks the same.
        ("How much did the brake repair cost?", set(), {"much", "brake", "repair"}),
        ("How long did it take to learn the kana?", {"long", "take"}, {"learn", "kana"}),
        ("What's my job title these days?", {"these", "days"}, {"job", "title"}),
        ("What car am I driving at the moment?", {"moment"}, {"car", "driving"}),
    ],
)
def test_frame_words_are_not_searched(question: str, dropped: set[str], kept: set[str]) -> None:
    found = set(words(question))
    assert not dropped & found
    assert kept <= found


def test_a_question_made_only_of_its_frame_keeps_it() -> None:
    assert "long" in words("how long?")
    # Time units outside a counting frame are topic words.
    assert "weeks" in words("What did the twelve weeks of training look like?")


@pytest.mark.parametrize(
    "question",
    ["What's my job title these days?", "Which car am I driving at the moment?", "so far?"],
)
def test_present_phrases_ask_for_the_newest_answer(question: str) -> None:
    assert plan_query(parse_query(question)).prefer_recent


def test_these_days_prefers_the_newest_conversation(store: SessionStore) -> None:
    chat(store, "old", ("user", "My job title is junior designer for two more days."), started=1e9)
    chat(store, "new", ("user", "New job title: project architect."), started=1.2e9)
    hits = store.search_messages("What's my job title these days?")
    assert hits[0]["session_id"] == "new"


# -- words the plan adds are guesses ----------------------------------------------------------


def test_an_unknown_added_word_is_not_searched_inside_other_words(store: SessionStore) -> None:
    # "rental in" suggests the one-word spelling "rentalin", which no message has;
    # inside a glued word it would match text the question never meant.
    chat(store, "glued", ("user", "see parentalinsurance.example for the forms"))
    chat(store, "flat", ("user", "The rental agreement ends in June."))
    hits = store.search_messages("Is my rental in good shape?")
    assert {hit["session_id"] for hit in hits} == {"flat"}
    # A word the user typed is still looked up inside other words.
    found = store.search_messages("what about the insurance of parentalins?")
    assert "glued" in {hit["session_id"] for hit in found}


def test_a_known_added_word_is_still_searched(store: SessionStore) -> None:
    chat(store, "s", ("user", "We did the rollback at noon."))
    assert store.search_messages("how did we roll back the release?")


def test_a_compound_the_history_never_wrote_is_looked_up_by_its_head(store: SessionStore) -> None:
    chat(store, "plants", ("user", "The move was brutal, I'm down to nine plants."))
    chat(store, "house", ("user", "Our house has a red door."))
    chat(store, "other", ("user", "How do I make pancakes without eggs?"))
    hits = store.search_messages("How many houseplants do I have?")
    assert hits[0]["session_id"] == "plants"
    # Both parts must be words of the history: "housexplants" is no compound of it.
    assert "plants" not in {hit["session_id"] for hit in store.search_messages("housexplants?")}


# -- a word's forms weigh as one word ---------------------------------------------------------


def test_a_synonym_match_weighs_as_common_as_its_commonest_form(store: SessionStore) -> None:
    # "journey" is in no message; "trip" is in many. A conversation matching only
    # "trip" must not weigh as if it held the rare word the question used.
    for n in range(6):
        chat(store, f"trip{n}", ("user", f"Packing for the trip number {n}."))
    chat(
        store,
        "podcasts",
        ("user", "Which podcasts are good for a bus commute?"),
        ("assistant", "History podcasts: The Rest Is History."),
    )
    hits = store.search_messages("Recommend some podcasts for my journey to the office.")
    assert hits[0]["session_id"] == "podcasts"


def test_a_word_losing_its_silent_e_still_covers_the_question(store: SessionStore) -> None:
    # "save" is cut to "save", which does not start "savings": the conversation
    # that says "savings" must still cover it.
    for n in range(4):
        chat(store, f"much{n}", ("user", f"How much is rent this month, {n}?"))
    chat(store, "budget", ("assistant", "Put 490 into savings every month on payday."))
    hits = store.search_messages("How much should I save each month?")
    assert hits[0]["session_id"] == "budget"


@pytest.mark.parametrize(
    ("stem", "text", "found"),
    [
        ("save", "savings", True),
        ("practise", "practising", True),
        ("relocate", "relocation", True),
        ("move", "moved", True),
        ("free", "frees", True),
        ("note", "nothing", False),
        ("deploy", "deployment", True),
        ("hobbi", "hobby", True),  # hobbies: Porter's y -> i
        ("party", "parties", True),
        ("studi", "studying", True),
        ("play", "plain", False),  # a vowel's y stays
    ],
)
def test_stem_regex(stem: str, text: str, found: bool) -> None:
    assert bool(re.match(stem_regex(stem) + r"(?:\w{0,4}\b)", text)) is found


def test_a_plural_in_y_covers_the_singular_in_the_history(store: SessionStore) -> None:
    # "hobbies" stems to "hobbi", which "hobby" does not start with: the conversation
    # saying "hobby" covered only the name before.
    chat(store, "talk", ("user", "Kate, my favourite hobby is pottery."), ("assistant", "Nice!"))
    chat(store, "hello", ("user", "Hey Kate, long day?"), ("assistant", "Hi Kate!"))
    for n in range(10):
        chat(store, f"other{n}", ("user", f"the hobby shop was closed {n}"))
    hits = store.search_messages("What are Kate's hobbies?", limit=3)
    assert hits[0]["session_id"] == "talk"


def test_a_word_joined_by_an_underscore_is_covered_only_as_written(store: SessionStore) -> None:
    chat(
        store,
        "redis",
        ("user", "We set allkeys-lru and the database gets hammered."),
        ("assistant", "Set a short lock so one worker rebuilds the value."),
        ("user", "Which database settings did we set for the cache?"),
        ("assistant", "We set maxmemory to 2gb in the database config."),
    )
    chat(
        store,
        "deploy",
        ("user", "The release failed: DATABASE_URL is not set."),
        ("assistant", "Add DATABASE_URL to .env.staging."),
    )
    hits = store.search_messages("where should DATABASE_URL be set?", limit=3)
    assert hits[0]["session_id"] == "deploy"
    # "database gets hammered" does not cover DATABASE_URL (the stemmer's "databas" did).
    assert not group_pattern([Term("DATABASE_URL")]).search("the database gets hammered")
    assert group_pattern([Term("DATABASE_URL")]).search("add database_url to .env")


# -- numbers in digits and words --------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "forms"),
    [
        ("18", ("18", "eighteen")),
        ("eighteen", ("18", "eighteen")),
        ("45", ("45", "forty-five")),
        ("forty-five", ("45", "forty-five")),
        ("12-week", ("12-week", "twelve-week")),
        ("two", ()),
        ("2023", ()),
        ("x-ray", ()),
    ],
)
def test_number_forms(text: str, forms: tuple[str, ...]) -> None:
    assert number_forms(text) == forms


def test_numbers_meet_their_other_spelling(store: SessionStore) -> None:
    words_ = chat(store, "words", ("assistant", "Keep it below eighteen at night."))
    digits = chat(store, "digits", ("user", "My plan is a 12-week block."))
    assert store.search_messages("did you say under 18 degrees?")[0]["id"] == words_[0]
    assert store.search_messages("what was my twelve-week plan?")[0]["id"] == digits[0]
    assert lemma("eighteen") == lemma("18")


# -- a user's message to an assistant answers by itself ---------------------------------------


def test_a_stating_user_turn_stays_ahead_of_the_assistants_reply(store: SessionStore) -> None:
    ids_ = chat(
        store,
        "uke",
        ("user", "My sister gave me a ukulele for my birthday! What should I learn first?"),
        ("assistant", "Start with the C, A minor, F and G chords."),
    )
    hits = store.search_messages("What did I get for my birthday?")
    assert [hit["id"] for hit in hits[:2]] == ids_


def test_a_bare_question_still_brings_its_reply_ahead(store: SessionStore) -> None:
    ids_ = chat(
        store,
        "s",
        ("assistant", "What did you name the puppy?"),
        ("user", "Biscuit."),
    )
    assert store.search_messages("What did I name the puppy?")[0]["id"] == ids_[1]


# -- previews show the turn the search ranked --------------------------------------------------


def test_a_preview_shows_the_ranked_turn_when_the_words_cluster_elsewhere() -> None:
    filler = "[USER]: " + "We talked about the garden beds and the garden soil. " * 4
    answer = "[ASSISTANT]: Go no-dig: cardboard, then compost on top."
    text = "\n\n".join([filler, "[USER]: unrelated " + "x" * 700, answer, "[USER]: ok"])
    query = "which method for my garden beds?"
    assert answer not in match_preview(text, query, 600)
    assert answer in match_preview(text, query, 600, anchor=answer.split(": ", 1)[1])
