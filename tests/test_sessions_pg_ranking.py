"""The ranking of questions, tier by tier, on both backends (SQLite and PostgreSQL).

PostgreSQL runs SQLite's pipeline (``pgsearch.py``, ``pgrerank.py`` over ``rerank.py``):
every tier pinned here must hold on both, and on the project's recall set the two
backends must rank every question's evidence at the same place.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from hermes_core.sessions.backends import open_session_store

BENCH = Path(__file__).resolve().parent.parent / "bench"


def _chat(store: Any, sid: str, turns: list[tuple[str | None, str]], started: float) -> list[int]:
    """A session of *turns* (speaker or None, text), alternating user and assistant."""
    store.create_session(sid, source="import", started_at=started)
    return store.append_messages(
        sid,
        [
            {
                "role": "user" if n % 2 == 0 else "assistant",
                "content": text,
                "timestamp": started + n,
            }
            | ({"name": who} if who else {})
            for n, (who, text) in enumerate(turns)
        ],
    )


def _notes(store: Any, sid: str, texts: list[str], started: float) -> None:
    """A session of the user's *texts*, a second apart."""
    store.create_session(sid, source="import", started_at=started)
    store.append_messages(
        sid,
        [
            {"role": "user", "content": text, "timestamp": started + n}
            for n, text in enumerate(texts)
        ],
    )


@pytest.fixture
def store(session_backend: str) -> Iterator[Any]:
    with open_session_store(session_backend, semantic="off") as opened:
        yield opened


def test_a_named_speakers_conversation_comes_first(store: Any) -> None:
    _chat(
        store,
        "ben_and_ana",
        [
            ("Ben", "The bike shop hired me."),
            ("Ana", "That suits you!"),
            ("Ben", "I fix gears and brakes."),
            ("Ana", "Every day?"),
            ("Ben", "Five days a week, mornings off."),
        ],
        1_700_000_000,
    )
    _chat(
        store,
        "grace_and_hiro",
        [("Grace", "Work is great, I got the job at the city library."), ("Hiro", "Well done.")],
        1_700_100_000,
    )
    assert store.search_messages("Where does Ben work?", limit=5)[0]["session_id"] == "ben_and_ana"
    # A name nobody speaks under leaves the topic word to decide.
    hits = store.search_messages("Where does Carol work?", limit=5)
    assert hits[0]["session_id"] == "grace_and_hiro"


def test_hits_matched_only_by_a_speakers_name_come_after_those_with_content(store: Any) -> None:
    ids = _chat(
        store,
        "day",
        [
            ("Nell", "Morning!"),
            ("Joe", "Lunch at noon? The lunch place has a new lunch menu."),
            ("Nell", "Sounds good."),
            ("Joe", "I will book lunch for two, lunch is on me."),
            ("Nell", "Lovely, thank you."),
        ],
        1_700_000_000,
    )
    for n in range(30):  # other days, where lunch is common and Nell never speaks
        _chat(store, f"other{n}", [(None, f"lunch note {n}: lunch was fine")], 1_600_000_000 + n)
    hits = store.search_messages("What did Nell say about lunch?", limit=5)
    order = [hit["id"] for hit in hits if hit["session_id"] == "day"]
    assert set(order[:2]) == {ids[1], ids[3]}


def test_a_quoted_phrase_is_a_preference_not_a_filter(store: Any) -> None:
    _chat(store, "title", [(None, "Finished Nothing Is Impossible last night!")], 1_700_000_000)
    _chat(store, "loose", [(None, "She said the book was impossible to put down")], 1_700_000_100)
    for n in range(20):
        _chat(store, f"other{n}", [(None, f"reading a book about nothing much {n}")], 1_600_000_000)
    hits = store.search_messages('When did she read the book "nothing is impossible"?')
    assert hits[0]["session_id"] == "title"
    assert len(hits) > 1  # the question's other words still find the rest


def test_a_dated_question_prefers_the_conversation_of_its_time(store: Any) -> None:
    february = datetime(2024, 2, 10, 12).timestamp()
    june = datetime(2024, 6, 5, 12).timestamp()
    _chat(store, "june", [(None, "I bake bread every week, I love to bake.")], june)
    _chat(store, "february", [(None, "I baked a lemon tart for the party.")], february)
    hits = store.search_messages("What did I bake in February?", limit=5)
    assert hits[0]["session_id"] == "february"
    # Without the month the better match leads.
    assert store.search_messages("What did I bake?", limit=5)[0]["session_id"] == "june"


def test_a_day_in_a_question_prefers_the_conversations_around_it(store: Any) -> None:
    # Nothing was said on the 5th; the next day's conversation tells of it.
    _chat(store, "later", [(None, "I play chess every week, I love to play.")], _day(20))
    _chat(
        store, "next_day", [(None, "The game yesterday was great, we played till dark.")], _day(6)
    )
    _chat(store, "day_before", [(None, "Packing for the trip, so excited.")], _day(4))
    hits = store.search_messages("What did I play on 05.01.2024?", limit=5)
    assert hits[0]["session_id"] == "next_day"
    # Without the day the better match leads; and a conversation on the day comes first.
    assert store.search_messages("What did I play?", limit=5)[0]["session_id"] == "later"
    _chat(store, "that_day", [(None, "Played a round of golf this morning.")], _day(5))
    assert store.search_messages("What did I play on 5 Jan 2024?")[0]["session_id"] == "that_day"


def _day(day: int) -> float:
    """Noon on *day* January 2024."""
    return datetime(2024, 1, day, 12).timestamp()


def test_the_conversation_covering_more_of_the_question_comes_first(store: Any) -> None:
    _chat(
        store,
        "plumber",
        [(None, "The plumber came by this morning."), (None, "He recommended a new kitchen tap.")],
        1_700_000_000,
    )
    _chat(store, "kitchen", [(None, "Kitchen, kitchen, kitchen: paint ideas.")], 1_700_100_000)
    for n in range(10):
        _chat(store, f"filler{n}", [(None, f"the kitchen light {n} is fine")], 1_600_000_000 + n)
    hits = store.search_messages("What did the plumber recommend for the kitchen?", limit=5)
    assert hits[0]["session_id"] == "plumber"


def test_the_reply_to_an_asking_turn_comes_next_to_it(store: Any) -> None:
    ids = _chat(
        store,
        "pottery",
        [
            ("Ana", "I had my first pottery lesson today."),
            ("Ben", "What did you make in your first pottery lesson?"),
            ("Ana", "A very lopsided bowl."),
        ],
        1_700_000_000,
    )
    found = [hit["id"] for hit in store.search_messages("What did Ana make?", limit=5)]
    assert ids[2] in found  # the answer says none of the question's words
    assert found.index(ids[2]) == found.index(ids[1]) - 1


def test_a_question_about_now_prefers_the_latest_conversation(store: Any) -> None:
    _chat(store, "old", [(None, "I work at the bakery on Main Street.")], 1_600_000_000)
    _chat(store, "new", [(None, "I work at the library on Main Street.")], 1_700_000_000)
    hits = store.search_messages("Where do I work currently?", limit=5)
    assert hits[0]["session_id"] == "new"


def test_the_ranking_does_not_depend_on_the_limit(store: Any) -> None:
    _chat(
        store,
        "s1",
        [("Mara", "Coffee first, then the long shift at the clinic."), ("Joe", "Bus was late.")],
        1_700_000_000,
    )
    _chat(
        store,
        "s2",
        [("Joe", "What are you up to this weekend?"), ("Mara", "Pottery class, a blue vase.")],
        1_700_086_400,
    )
    for question in ("What is Mara making in her pottery class?", "When was the bus late?"):
        wide = [hit["id"] for hit in store.search_messages(question, limit=50)]
        for limit in (1, 3, 5):
            assert [h["id"] for h in store.search_messages(question, limit=limit)] == wide[:limit]


LONG_QUESTION = (
    "Back again about the garden shed. The roof panels arrived, the timber frame is "
    "painted, and the concrete base has cured. Which screws and brackets should I order?"
)


def _shed_and_lookalike(store: Any) -> list[int]:
    """A conversation answering :data:`LONG_QUESTION` over three turns, two turns elsewhere
    each matching more of its words alone, and filler: the ids of the three turns."""
    ids = _chat(
        store,
        "shed",
        [
            (None, "The shed roof panels need stainless screws."),
            (None, "Brackets for the timber frame: galvanised, eight of them."),
            (None, "Bolt the frame to the concrete base once it has cured."),
        ],
        1_700_000_000,
    )
    _chat(
        store,
        "fence",
        [
            (
                None,
                "Garden fence painted, timber panels arrived; order screws, brackets and the roof.",
            )
        ],
        1_700_100_000,
    )
    _chat(
        store,
        "path",
        [(None, "The concrete garden path has cured, painted timber edging arrived.")],
        1_700_200_000,
    )
    for n in range(10):
        _chat(store, f"filler{n}", [(None, f"garden note {n}: watered the roses")], 1_600_000_000)
    return ids


def test_a_long_questions_conversation_with_several_strong_hits_comes_first(store: Any) -> None:
    # A long question's best message by its own score stays first; then the conversation
    # matching it in several turns comes before single turns that match more words each.
    ids = _shed_and_lookalike(store)
    hits = store.search_messages(LONG_QUESTION, limit=5)
    assert hits[0]["session_id"] == "fence"
    assert {hit["id"] for hit in hits[1:4]} == set(ids)
    assert hits[4]["session_id"] == "path"


def test_a_long_questions_ranking_does_not_depend_on_the_limit(store: Any) -> None:
    _shed_and_lookalike(store)
    wide = [hit["id"] for hit in store.search_messages(LONG_QUESTION, limit=50)]
    for limit in (1, 2, 4):
        narrow = [hit["id"] for hit in store.search_messages(LONG_QUESTION, limit=limit)]
        assert narrow == wide[:limit]


def test_a_cjk_questions_answer_spread_over_turns_beats_a_lookalike_turn(store: Any) -> None:
    # A CJK question's character pairs sit in several turns of the conversation answering
    # it, one or two each; a lookalike repeats several of them in one turn. Read from its
    # best three hits the answer covered less than the lookalike's one turn; from eight, more.
    answer = ["我去了海滨。", "婶婶今天来了。", "工作很顺利。", "生日快乐。", "舅妈也来了。"]
    _notes(store, "answer", [*answer, "上司出差了。", "身高一米九。"], 1_700_000_000)
    _notes(store, "lookalike", ["海滨公园里婶婶和舅妈散步。", "天气不错。"], 1_700_100_000)
    for n in range(6):
        _notes(store, f"other{n}", [f"今天去超市买菜{n}。"], 1_600_000_000 + n)
    question = "海滨公园、婶婶的工作、婶婶的生日、舅妈住哪里、上司的身高分别是什么？"
    hits = store.search_messages(question, limit=10)
    assert hits[0]["session_id"] == "answer"


def test_a_cjk_question_asking_which_place_finds_the_conversation_naming_that_kind(
    store: Any,
) -> None:
    # The shape of MemDaily's places and items questions (issue 29): a short question of
    # which-words and particles (哪个, 来着, 怎么样) around one kind of place or thing; the
    # conversations naming other kinds share its frame (我…的那个…是) but not its topic.
    _notes(store, "home", ["我住的那个小区叫世纪花园。", "世纪花园环境很好。"], 1_700_000_000)
    _notes(store, "park", ["我去的那个公园是人民公园。", "公园里人很多。"], 1_700_100_000)
    _notes(store, "mall", ["我去的那个商场是大润发。", "大润发东西很全。"], 1_700_200_000)
    _notes(store, "phone", ["我用的那个手机是小米。", "小米用起来很顺。"], 1_700_300_000)
    for question, answer in (
        ("我住的那个小区是哪个来着？", "home"),
        ("我去的那个商场怎么样啊？", "mall"),
        ("我用的手机性能怎么样？", "phone"),
    ):
        hits = store.search_messages(question, limit=10)
        assert hits[0]["session_id"] == answer, question


def test_filters_apply_to_ranked_questions(store: Any) -> None:
    _chat(store, "cli", [(None, "The plumber fixed the kitchen tap.")], 1_700_000_000)
    store.create_session("tg", source="telegram", started_at=1_700_000_100)
    store.append_message("tg", "user", "The plumber said the kitchen tap is fine.")
    hits = store.search_messages("What did the plumber do?", source_filter="telegram")
    assert [hit["session_id"] for hit in hits] == ["tg"]
    hits = store.search_messages("What did the plumber do?", until=1_700_000_050)
    assert [hit["session_id"] for hit in hits] == ["cli"]


def _evidence_ranks(target: str) -> dict[str, int | None]:
    sys.path.insert(0, str(BENCH))
    try:
        import bench_sessions_recall as recall
    finally:
        sys.path.remove(str(BENCH))
    ranks: dict[str, int | None] = {}
    with open_session_store(target, semantic="off") as store:
        turn_ids, questions = recall.load(store)
        for question in questions:
            evidence = {turn_ids[(sid, n)] for sid, n in question["evidence"]}
            ids = [h["id"] for h in store.search_messages(question["q"], limit=10, snippets=False)]
            ranks[question["q"]] = next((n for n, mid in enumerate(ids) if mid in evidence), None)
    return ranks


def test_postgresql_ranks_the_recall_set_as_sqlite_does(tmp_path: Path) -> None:
    from hermes_core.testing.postgres import temporary_schema

    sqlite = _evidence_ranks(str(tmp_path / "state.db"))
    with temporary_schema() as url:
        postgres = _evidence_ranks(url)
    assert {q: r for q, r in postgres.items() if r != sqlite[q]} == {}


def test_a_tie_in_score_goes_to_the_earlier_message_on_both_backends(store: Any) -> None:
    # The same words in three conversations score alike (within ties.TIE_TOLERANCE: the
    # backends' BM25 differ in the last bits). 'berry', never a word of its own, is looked
    # up inside words: SQLite's query then sums its index branches and returns the tie
    # newest first, PostgreSQL's oldest first. The earlier message ranks first on both.
    line = "We planted strawberry bushes in the garden on Sunday."
    for n, sid in enumerate(("first_garden", "second_garden", "third_garden")):
        _notes(store, sid, [line, "Then we had lunch outside."], 1_700_000_000 + n * 86_400)
    hits = store.search_messages("What berry did we plant in the garden?", limit=5)
    assert [hit["session_id"] for hit in hits[:3]] == [
        "first_garden",
        "second_garden",
        "third_garden",
    ]
