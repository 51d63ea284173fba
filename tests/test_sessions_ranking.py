"""How a question's message ranking orders its hits: several conversations near the top,
content before a speaker's name, a quoted title as a preference, pages that agree."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_core.sessions import SessionStore
from hermes_core.sessions.backends import open_session_store
from hermes_core.sessions.query import Term
from hermes_core.sessions.rerank import (
    HITS_DEALT_BY_BAND,
    asks_briefly,
    band_lead,
    bands,
    fuse_with_pooled,
    group_pattern,
    hits_per_turn,
    pooled_scores,
    spread,
)


def row(mid: int, session: str) -> tuple[object, ...]:
    return (mid, None, None, session, "user", 0.0, None, None, None, None)


def test_spread_keeps_the_first_hit_and_deals_out_close_conversations() -> None:
    rows = [row(1, "a"), row(2, "a"), row(3, "a"), row(4, "b"), row(5, "b"), row(6, "c")]
    close = {"a": 1.0, "b": 0.9, "c": 0.8}
    assert [r[0] for r in spread(rows, close)] == [1, 2, 4, 5, 6, 3]


def test_spread_keeps_a_clear_leader_whole() -> None:
    rows = [row(1, "a"), row(2, "a"), row(3, "a"), row(4, "b"), row(5, "b"), row(6, "c")]
    clear = {"a": 3.0, "b": 1.0, "c": 0.9}
    assert [r[0] for r in spread(rows, clear)] == [1, 2, 3, 4, 5, 6]


def test_spread_lets_a_conversation_covering_clearly_less_wait_for_the_band() -> None:
    rows = [row(1, "a"), row(2, "a"), row(3, "a"), row(4, "b"), row(5, "b"), row(6, "c")]
    # a and b cover the question about as well; c clearly less: a's third hit comes first.
    assert [r[0] for r in spread(rows, {"a": 1.0, "b": 0.9, "c": 0.5})] == [1, 2, 4, 5, 3, 6]
    assert bands(["a", "b", "c", "d"], {"a": 3.0, "b": 1.0, "c": 0.9, "d": 0.7}) == [0, 1, 1, 2]


def test_a_cjk_question_deals_a_lookalike_leader_with_the_next_conversation() -> None:
    rows = [row(n, "a") for n in range(1, 5)] + [row(5, "b"), row(6, "b")]
    score = {"a": 1.0, "b": 0.6}
    cjk = [Term("小区"), Term("怎么"), Term("么样")]
    words = [Term("garden"), Term("flat"), Term("moved")]
    # A question in words: b covers clearly less and waits for a's first hits.
    assert [r[0] for r in spread(rows, score, hits_per_turn(words), band_lead(words))] == [
        1,
        2,
        3,
        4,
        5,
        6,
    ]
    # The same scores for a CJK question: b shares a's band and its best hit comes second.
    assert [r[0] for r in spread(rows, score, hits_per_turn(cjk), band_lead(cjk))] == [
        1,
        5,
        2,
        6,
        3,
        4,
    ]


def test_spread_deals_only_a_bounded_head_of_each_conversation_by_band() -> None:
    rows = [row(n, "a") for n in range(1, 10)] + [row(10, "b"), row(11, "b")]
    order = [r[0] for r in spread(rows, {"a": 3.0, "b": 1.0})]
    # The clear leader keeps its first HITS_DEALT_BY_BAND hits together; its tail comes
    # after the next conversation's first hits, so that conversation stays in the pool.
    assert order == [*range(1, HITS_DEALT_BY_BAND + 1), 10, 11, *range(HITS_DEALT_BY_BAND + 1, 10)]


def test_a_conversation_covering_clearly_less_waits_behind_the_close_ones(
    session_backend: str,
) -> None:
    with open_session_store(session_backend) as store:
        chats = {
            "a": [
                "The garden shed roof is green now.",
                "I painted the shed roof on Sunday.",
                "The roof of the shed took two coats.",
            ],
            "b": ["Our garden shed roof leaks.", "The shed roof needs new felt."],
            "c": ["The garden is full of roses.", "The garden party was fun."],
        }
        chats.update({f"other{n}": [f"garden note {n}"] for n in range(20)})
        for n, (sid, texts) in enumerate(chats.items()):
            store.create_session(sid, source="import", started_at=1_700_000_000 + n)
            store.append_messages(sid, [{"role": "user", "content": text} for text in texts])
        hits = store.search_messages("What colour is the garden shed roof?", limit=5)
        # a and b cover garden, shed and roof; c only the common garden: a's third hit
        # is worth more than c's best.
        assert sorted(h["session_id"] for h in hits) == ["a", "a", "a", "b", "b"]


def test_between_conversations_covering_a_question_equally_the_one_talking_more_comes_first(
    session_backend: str,
) -> None:
    with open_session_store(session_backend) as store:
        chats = {
            "once": ["Boat trip, finally."],
            "often": [
                "The boat trip is on Friday morning at the harbour.",
                "We booked the boat trip for four people and a dog.",
                "Bring a warm jacket for the boat trip, it gets windy.",
            ],
        }
        chats.update({f"other{n}": [f"a trip to the shop {n}"] for n in range(10)})
        for n, (sid, texts) in enumerate(chats.items()):
            store.create_session(sid, source="import", started_at=1_700_000_000 + n)
            store.append_messages(sid, [{"role": "user", "content": text} for text in texts])
        hits = store.search_messages("When is the boat trip?", limit=5)
        # Both cover boat and trip; "once" has the best single message (the shortest).
        assert hits[0]["session_id"] == "often"


def test_pooled_scores_count_each_conversations_candidates_holding_a_word() -> None:
    rows = [row(1, "a"), row(2, "a"), row(3, "a"), row(4, "b")]
    texts = {1: "the shed door", 2: "a shed lock", 3: "shed keys", 4: "the shed roof"}
    patterns = [group_pattern([Term("shed")]), group_pattern([Term("roof")])]
    pooled = pooled_scores(rows, texts, patterns, [1.0, 0.5])
    # a: shed in three candidates, saturated (3 * 2.2 / 4.2); b: shed once, roof once.
    assert pooled == {"a": pytest.approx(3 * 2.2 / 4.2), "b": pytest.approx(1.5)}


def test_the_pooled_order_is_fused_with_the_coverage_order() -> None:
    # Coverage puts c last, the pooled score first: c passes b, not a (second by pooled).
    place = fuse_with_pooled(["a", "b", "c"], {"a": 1.0, "b": 0.5, "c": 2.0})
    assert sorted(place, key=place.__getitem__) == ["a", "c", "b"]
    # Weighing the pooled order double, c leads.
    place = fuse_with_pooled(["a", "b", "c"], {"a": 1.0, "b": 0.5, "c": 2.0}, weight=2.0)
    assert sorted(place, key=place.__getitem__) == ["c", "a", "b"]
    # Equal pooled scores keep the coverage order; none at all is the coverage order.
    place = fuse_with_pooled(["a", "b", "c"], {"a": 1.0, "b": 1.0, "c": 1.0})
    assert sorted(place, key=place.__getitem__) == ["a", "b", "c"]
    assert fuse_with_pooled(["b", "a"], {}) == {"b": 0.0, "a": 1.0}


def test_a_friends_stating_turn_answers_a_short_question_ahead_of_the_reply(
    session_backend: str,
) -> None:
    with open_session_store(session_backend) as store:
        store.create_session("day", source="import", started_at=1_700_000_000)
        ids = store.append_messages(
            "day",
            [
                {
                    "role": "user",
                    "name": "Paola",
                    "content": "I had an exam today, which I did great on. How about you?",
                },
                {"role": "assistant", "name": "Kevin", "content": "Busy with studying law!"},
                {"role": "user", "name": "Paola", "content": "Did you finish the reading?"},
                {"role": "assistant", "name": "Kevin", "content": "Yes, all forty pages."},
            ],
        )
        for n in range(10):
            store.create_session(f"other{n}", source="import", started_at=1_600_000_000 + n)
            store.append_message(f"other{n}", "user", f"today was a slow day {n}")
        hits = [h["id"] for h in store.search_messages("When did Paola have an exam?", limit=5)]
        assert hits[:2] == [ids[0], ids[1]]  # the turn that says it, then its reply
        # An asking turn that states nothing of the question still brings its reply first.
        hits = [h["id"] for h in store.search_messages("What reading did Paola ask about?")]
        assert hits.index(ids[3]) < hits.index(ids[2])


def test_a_question_of_few_words_is_brief() -> None:
    from hermes_core.sessions.query import Term

    assert asks_briefly([Term("exam"), Term("paola")])
    assert not asks_briefly([Term(f"word{n}") for n in range(8)])
    # The forms of one word count once.
    assert asks_briefly([Term("buy"), Term("bought"), *(Term(f"w{n}") for n in range(6))])


@pytest.fixture
def friends(session_backend: str) -> Iterator[SessionStore]:
    """Two friends over three sessions; Mara's hobby is said once, in the third."""
    with open_session_store(session_backend) as store:
        chats = {
            "s1": [
                ("Mara", "Morning! Coffee first, then the long shift at the clinic."),
                ("Joe", "Same here, the bus was late again."),
                ("Mara", "Ugh, the bus. See you at lunch?"),
                ("Joe", "Sure, lunch at noon."),
            ],
            "s2": [
                ("Joe", "Did you watch the match last night?"),
                ("Mara", "No, I was too tired after work."),
                ("Joe", "Fair enough, rest is important."),
            ],
            "s3": [
                ("Joe", "What are you up to this weekend?"),
                ("Mara", "Pottery class on Saturday, I am making a blue vase."),
                ("Joe", "A vase! Send me a picture."),
            ],
        }
        for n, (sid, turns) in enumerate(chats.items()):
            store.create_session(sid, source="import", started_at=1_700_000_000 + n * 86_400)
            store.append_messages(
                sid,
                [
                    {"role": "user" if name == "Mara" else "assistant", "name": name, "content": c}
                    for name, c in turns
                ],
            )
        yield store


def test_turns_matched_only_through_a_speaker_name_rank_below_turns_with_content(
    session_backend: str,
) -> None:
    # Every turn of Nell's is indexed with her name; lunch is said often, Nell rarely.
    with open_session_store(session_backend) as store:
        store.create_session("day", source="import", started_at=1_700_000_000)
        turns = [
            ("Nell", "Morning!"),
            ("Joe", "Lunch at noon? The lunch place has a new lunch menu."),
            ("Nell", "Sounds good."),
            ("Joe", "I will book lunch for two, lunch is on me."),
            ("Nell", "Lovely, thank you."),
        ]
        store.append_messages(
            "day",
            [
                {"role": "user" if who == "Nell" else "assistant", "name": who, "content": text}
                for who, text in turns
            ],
        )
        for n in range(30):  # other days, where lunch is common and Nell never speaks
            store.create_session(f"other{n}", source="import", started_at=1_600_000_000 + n)
            store.append_message(f"other{n}", "user", f"lunch note {n}: lunch was fine")
        ids = [m["id"] for m in store.get_messages("day")]
        hits = store.search_messages("What did Nell say about lunch?", limit=5)
        order = [h["id"] for h in hits if h["session_id"] == "day"]
        with_content = [ids[1], ids[3]]
        assert order[:2] == with_content or set(order[:2]) == set(with_content)


def test_the_ranking_does_not_depend_on_the_limit(friends: SessionStore) -> None:
    for question in (
        "What is Mara making in her pottery class?",
        "When was the bus late?",
        "What did Joe ask about the match?",
    ):
        wide = [h["id"] for h in friends.search_messages(question, limit=50)]
        for limit in (1, 3, 5, 10):
            assert [h["id"] for h in friends.search_messages(question, limit=limit)] == wide[:limit]


@pytest.fixture
def reading(session_backend: str) -> Iterator[SessionStore]:
    with open_session_store(session_backend) as store:
        store.create_session("title", source="import")
        store.append_message("title", "user", "Finished Nothing Is Impossible last night!")
        store.create_session("loose", source="import")
        store.append_message("loose", "user", "She said the book was impossible to put down")
        for n in range(20):
            store.create_session(f"other{n}", source="import")
            store.append_message(f"other{n}", "user", f"reading a book about nothing much {n}")
        yield store


def test_a_quoted_title_in_a_question_is_a_preference_not_a_filter(reading: SessionStore) -> None:
    hits = reading.search_messages('When did she read the book "nothing is impossible"?')
    assert hits[0]["session_id"] == "title"
    assert len(hits) > 1  # the question's other words still find the rest
    # A title that nothing quotes: the question is answered by its words, never emptied.
    missing = reading.search_messages('When did she read the book "a title nobody wrote"?')
    assert missing and all(hit["session_id"].startswith("other") for hit in missing[:3])


def test_quotes_without_a_sentence_stay_literal(reading: SessionStore) -> None:
    assert [h["session_id"] for h in reading.search_messages('"nothing is impossible"')] == [
        "title"
    ]
    assert reading.search_messages('"a title nobody wrote" book') == []


def test_the_best_messages_by_their_own_score_keep_a_place_near_the_top() -> None:
    from hermes_core.sessions.search import keep_best_messages

    ranked = [row(n, "a" if n < 6 else "b") for n in range(1, 9)]  # a's six hits, then b's
    best = [row(7, "b"), row(2, "a")]  # BM25's two best: one in b, one already near the top
    assert [r[0] for r in keep_best_messages(ranked, best)] == [1, 7, 2, 3, 4, 5, 6, 8]
    assert keep_best_messages(ranked, []) == ranked


@pytest.mark.sqlite_only("the SQLite filter pruning behind search (store._read, fetch.py)")
def test_excluding_a_source_no_session_has_changes_nothing(tmp_path: Path) -> None:
    from hermes_core.sessions.fetch import SearchFilters, without_absent_sources

    with SessionStore(tmp_path / "state.db") as store:
        for n in range(3):
            store.create_session(f"cli{n}", source="cli")
            store.append_message(f"cli{n}", "user", f"the deploy script failed again {n}")
        question = "Why did the deploy script fail?"
        plain = store.search_messages(question)
        assert store.search_messages(question, exclude_sources=["tool"]) == plain
        filters = SearchFilters(exclude_sources=("tool",), roles=("user",))
        kept = store._read(lambda conn: without_absent_sources(conn, filters))
        assert kept == SearchFilters(roles=("user",))
        store.create_session("t", source="tool")
        store.append_message("t", "user", "deploy script failed in the tool run")
        assert store._read(lambda conn: without_absent_sources(conn, filters)) == filters
        hidden = store.search_messages(question, exclude_sources=["tool"])
        assert "t" not in {hit["session_id"] for hit in hidden}
        assert "t" in {hit["session_id"] for hit in store.search_messages(question)}


def test_a_number_glued_to_cjk_in_a_question_finds_the_message_that_glues_it_otherwise(
    session_backend: str,
) -> None:
    with open_session_store(session_backend) as store:
        numbers = ["18486487257", "13912345678", "15055554444", "17722223333"]
        ids = {}
        for n, number in enumerate(numbers):
            sid = f"uncle{n}"
            store.create_session(sid, source="import", started_at=1_700_000_000 + n)
            ids[sid] = store.append_messages(
                sid,
                [
                    {"role": "user", "content": f"我叔叔的电话号是{number}。"},
                    {"role": "user", "content": "我叔叔特喜欢旅游。"},
                ],
            )
        # The question and the message hold the number between different CJK letters: one
        # token each (电话号是18486487257的人, 我叔叔的电话号是18486487257) that never meet.
        hits = store.search_messages("那个电话号是18486487257的人，他平时喜欢干点啥呀？", limit=5)
        assert hits[0]["id"] == ids["uncle0"][0]
        hits = store.search_messages("电话号是13912345678的人叫什么？", limit=5)
        assert hits[0]["id"] == ids["uncle1"][0]


def test_a_cjk_question_deals_one_hit_per_conversation_among_lookalikes(
    session_backend: str,
) -> None:
    with open_session_store(session_backend) as store:
        homes = ["绿洲家园", "紫荆花园", "阳光小镇", "金色港湾", "翠湖天地"]
        first = {}
        for n, name in enumerate(homes):
            sid = f"home{n}"
            store.create_session(sid, source="import", started_at=1_700_000_000 + n)
            turns = [f"我住的那个小区叫{name}。", f"{name}这个小区环境真不错，住着很舒服。"]
            first[sid] = store.append_messages(
                sid, [{"role": "user", "content": text} for text in turns]
            )[0]
        hits = store.search_messages("我住的那个小区叫什么名字来着？", limit=5)
        # Five conversations cover the question alike: their naming turns come first, one
        # each, instead of two turns each of the first three.
        assert len({h["session_id"] for h in hits}) == 5
        assert {h["id"] for h in hits} == set(first.values())
        # An English question still deals two hits of a conversation at a time.
        for n, name in enumerate(["Oasis Gardens", "Bauhinia Court", "Sunny Town"]):
            sid = f"estate{n}"
            store.create_session(sid, source="import", started_at=1_700_000_100 + n)
            store.append_messages(
                sid,
                [
                    {"role": "user", "content": f"The estate I live in is {name}."},
                    {"role": "user", "content": f"{name} is a quiet estate to live in."},
                ],
            )
        hits = store.search_messages("Which estate do I live in?", limit=4)
        assert hits[0]["session_id"] == hits[1]["session_id"] != hits[2]["session_id"]


def test_a_cjk_question_framed_by_dui_yu_ranks_its_topic_over_the_frame(
    session_backend: str,
) -> None:
    with open_session_store(session_backend) as store:
        talks = {
            f"mall{n}": [f"我去逛的商场是{name}。", f"{name}里面的东西特别全，逛起来挺舒服的。"]
            for n, name in enumerate(["大润发", "万象城", "大悦城", "恒隆广场"])
        }
        talks["cooker"] = [
            "我家里有一个美的的电饭煲。",
            "美的那个电饭煲真是挺不错的，对于我们这些早出晚归的人来说，真是太方便了。",
        ]
        for n, (sid, turns) in enumerate(talks.items()):
            store.create_session(sid, source="import", started_at=1_700_000_000 + n)
            store.append_messages(sid, [{"role": "user", "content": text} for text in turns])
        # 对于 ("as for") frames the question as 以下 does: a rarer pair than the topic's, but
        # no topic. The conversations that say 商场 come first, not the one that says 对于.
        hits = store.search_messages("对于我参观的商场，以下哪个是最可能的描述？", limit=5)
        assert all(hit["session_id"].startswith("mall") for hit in hits[:4])
