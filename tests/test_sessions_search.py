"""search_messages: FTS behaviour, the sanitiser, CJK routing, filters, questions.

The ``store`` tests run on both backends (state.db and PostgreSQL, ``session_backend``);
the ones about SQLite's indexes (FTS5 tables, triggers, routing) are ``sqlite_only``.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core.sessions import SessionStore, parse_query
from hermes_core.sessions.backends import open_session_store
from hermes_core.sessions.cjk import cjk_grams, contains_cjk
from hermes_core.sessions.query import MAX_TERMS
from hermes_core.sessions.question import plan_query, top_up
from hermes_core.sessions.routing import LIKE, match_expression, route_term
from hermes_core.sessions.wordforms import lemma, word_forms


@pytest.fixture
def store(session_backend: str) -> Iterator[SessionStore]:
    with open_session_store(session_backend) as opened:
        yield opened


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Iterator[SessionStore]:
    """A state.db store, for the tests about SQLite's own indexes."""
    with SessionStore(tmp_path / "state.db") as opened:
        yield opened


def ids(hits: list[dict]) -> list[int]:
    return [hit["id"] for hit in hits]


def sessions_of(hits: list[dict]) -> set[str]:
    return {hit["session_id"] for hit in hits}


# -- the basics (§7.1 FTS) -------------------------------------------------------------------


def test_word_found_in_user_and_assistant_rows_with_snippet(store: SessionStore) -> None:
    store.create_session("s")
    user = store.append_message("s", "user", "How do I restart docker?")
    assistant = store.append_message("s", "assistant", "Run systemctl restart docker.")
    store.append_message("s", "user", "thanks")
    hits = store.search_messages("docker")
    assert set(ids(hits)) == {user, assistant}
    assert all(">>>docker<<<" in hit["snippet"].lower() for hit in hits)
    assert {"session_id", "role", "timestamp", "source", "model", "session_started"} <= set(hits[0])


def test_a_pasted_log_gets_a_snippet_at_its_first_match(store: SessionStore) -> None:
    # FTS5 weighs every match to place its snippet (seconds for a word said 40,000 times);
    # a text over FTS_SNIPPET_MAX_CHARS gets a text snippet around its first match instead.
    store.create_session("log")
    long_id = store.append_message("log", "tool", "ok " * 4000 + "disk full " * 3000)
    short_id = store.append_message("log", "user", "the disk is full again")
    hits = {hit["id"]: hit["snippet"] for hit in store.search_messages("disk", limit=5)}
    assert set(hits) == {long_id, short_id}
    assert hits[long_id].startswith("... ok ok") and ">>>disk<<< full" in hits[long_id]
    assert len(hits[long_id]) < 400
    assert ">>>disk<<<" in hits[short_id]


@pytest.mark.parametrize("query", ["", "   ", None, "\x00\x01", "***", "!!!", '""'])
def test_empty_queries_find_nothing(store: SessionStore, query: object) -> None:
    store.create_session("s")
    store.append_message("s", "user", "anything at all")
    assert store.search_messages(query) == []


def test_every_source_is_searched_unless_filtered(store: SessionStore) -> None:
    sources = ["cli", "telegram", "signal", "homeassistant", "acp", "matrix"]
    for source in sources:
        store.create_session(source, source=source)
        store.append_message(source, "user", "shared keyword zebra")
    assert sessions_of(store.search_messages("zebra")) == set(sources)
    assert sessions_of(store.search_messages("zebra", source_filter=["telegram"])) == {"telegram"}
    assert sessions_of(store.search_messages("zebra", source_filter="cli,acp")) == {"cli", "acp"}
    excluded = store.search_messages("zebra", exclude_sources=["cli", "matrix"])
    assert sessions_of(excluded) == set(sources) - {"cli", "matrix"}


def test_role_filter(store: SessionStore) -> None:
    store.create_session("s")
    user = store.append_message("s", "user", "kubernetes question")
    store.append_message("s", "assistant", "kubernetes answer")
    assert ids(store.search_messages("kubernetes", role_filter=["user"])) == [user]
    assert len(store.search_messages("kubernetes", role_filter="user,assistant")) == 2


def test_time_filters(store: SessionStore) -> None:
    store.create_session("s")
    old = store.append_message("s", "user", "ancient topic", timestamp=1_000_000.0)
    new = store.append_message("s", "user", "recent topic")
    assert ids(store.search_messages("topic", since=time.time() - 3600)) == [new]
    assert ids(store.search_messages("topic", until=2_000_000.0)) == [old]


def test_filters_reach_past_the_first_candidates(store: SessionStore) -> None:
    store.create_session("busy", source="cli")
    store.append_messages("busy", [{"role": "user", "content": "needle " * 5}] * 300)
    store.create_session("rare", source="telegram")
    rare = store.append_message("rare", "user", "one needle here among many words")
    hits = store.search_messages("needle", source_filter=["telegram"], limit=5)
    assert ids(hits) == [rare]


def test_context_uses_neighbours_of_the_same_session(store: SessionStore) -> None:
    store.create_session("a")
    store.create_session("b")
    store.append_message("a", "user", "before needle")
    store.append_message("b", "user", "other session noise")
    store.append_message("a", "assistant", "needle match")
    store.append_message("b", "user", "more noise")
    store.append_message("a", "user", "after needle")
    hits = store.search_messages('"needle match"', context=True)
    assert len(hits) == 1
    assert [c["content"] for c in hits[0]["context"]] == [
        "before needle",
        "needle match",
        "after needle",
    ]


def test_offset_pages_are_distinct(store: SessionStore) -> None:
    store.create_session("s")
    store.append_messages("s", [{"role": "user", "content": f"paging word {i}"} for i in range(9)])
    first = ids(store.search_messages("paging", limit=4))
    second = ids(store.search_messages("paging", limit=4, offset=4))
    assert len(first) == 4 and len(second) == 4 and not set(first) & set(second)


def test_hits_carry_current_session_fields_across_writers(session_backend: str) -> None:
    """Session fields are cached per store, yet never stale after any connection writes."""
    path = session_backend
    with open_session_store(path) as writer, open_session_store(path, read_only=True) as reader:
        writer.create_session("s", source="telegram", model="m1", title="First name")
        writer.append_message("s", "user", "zebra crossing")
        for store in (writer, reader):
            (hit,) = store.search_messages("zebra")
            assert (hit["source"], hit["model"], hit["session_title"]) == (
                "telegram",
                "m1",
                "First name",
            )
        writer.set_session_title("s", "Second name")  # own write: the writer forgets
        assert writer.search_messages("zebra")[0]["session_title"] == "Second name"
        # another connection's write: the reader sees it (SQLite: data_version moves)
        assert reader.search_messages("zebra")[0]["session_title"] == "Second name"
        with open_session_store(path) as other:
            other.set_session_title("s", "Third name")
        assert writer.search_messages("zebra")[0]["session_title"] == "Third name"
        assert reader.search_messages("zebra")[0]["session_title"] == "Third name"


# -- the sanitiser ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "query",
    [
        "C++",
        '"unterminated',
        "(problem",
        "hello AND",
        "***",
        "{test}",
        "OR hello",
        "a AND OR b",
        "TODO: fix",
        "NOT",
        "a NOT",
        "foo^bar",
        "col:value",
        "NEAR(a b)",
        "-foo",
        "a OR OR OR b",
        "'single quotes'",
        "x" * 5000,
        "docker " * 2000,
        "\ud800\udfff",
        "emoji 🚀 query",
    ],
)
def test_dangerous_queries_return_lists(store: SessionStore, query: str) -> None:
    store.create_session("s")
    store.append_message("s", "user", "hello problem test fix value foo bar docker")
    assert isinstance(store.search_messages(query), list)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("hello world", '"hello" AND "world"'),
        ("C++", '"C"'),
        ("hello AND", '"hello"'),
        ("OR world", '"world"'),
        ("deploy*", '"deploy"*'),
        ("**deploy", '"deploy"'),
        ('"exact phrase"', '"exact phrase"'),
        ('"docker networking" setup', '"docker networking" AND "setup"'),
        ('"hello world" OR "foo bar"', '("hello world") OR ("foo bar")'),
        ("chat-send", '"chat-send"'),
        ("docker-compose-up", '"docker-compose-up"'),
        ("chat-send OR deploy-prod", '("chat-send") OR ("deploy-prod")'),
        ('"chat-send"', '"chat-send"'),
        ('"my chat-send thing"', '"my chat-send thing"'),
        ("P2.2", '"P2.2"'),
        ("simulate.p2.test.ts", '"simulate.p2.test.ts"'),
        ("my-app.config", '"my-app.config"'),
        ("a AND OR b", '("a") OR ("b")'),
        ("a NOT b", '("a") NOT "b"'),
        ("TODO: fix", '"TODO" AND "fix"'),
        ("{test}", '"test"'),
    ],
)
@pytest.mark.sqlite_only("the FTS5 MATCH expression the sanitiser writes")
def test_sanitised_match_expressions(sqlite_store: SessionStore, query: str, expected: str) -> None:
    parsed = parse_query(query)
    assert match_expression(parsed, "messages_fts", sqlite_store.layout) == expected


def test_fix_chat_send_bug_keeps_every_term() -> None:
    parsed = parse_query("fix chat-send bug")
    assert [t.text for t in parsed.terms] == ["fix", "chat-send", "bug"]


@pytest.mark.parametrize("query", ["chat-send", "P2.2", "simulate.p2.test.ts", '"quoted phrase"'])
def test_compound_terms_are_found(store: SessionStore, query: str) -> None:
    store.create_session("s")
    store.append_message(
        "s",
        "user",
        "the chat-send tool broke in P2.2 while running simulate.p2.test.ts; a quoted phrase",
    )
    assert len(store.search_messages(query)) == 1


def test_lowercase_operators_are_words() -> None:
    parsed = parse_query("rock and roll or not")
    assert not parsed.explicit
    assert [t.text for t in parsed.terms] == ["rock", "and", "roll", "or", "not"]


def test_query_is_bounded() -> None:
    parsed = parse_query(" ".join(f"w{i}" for i in range(1000)))
    assert len(parsed.terms) == MAX_TERMS == 64
    assert len(parse_query("y" * 100_000).text) == 2048


_WORDISH = st.lists(
    st.sampled_from([*"aZ9_é\u0301ｶﾞ内存泄漏한국어ⅷ²", "AND", "OR", "NOT"]), min_size=1, max_size=6
).map("".join)


@settings(max_examples=300)
@given(
    word=_WORDISH,
    before=st.sampled_from(["", " ", "\t", "\u3000"]),
    after=st.sampled_from(["", " \n"]),
)
def test_one_word_queries_parse_as_the_general_rules_say(
    word: str, before: str, after: str
) -> None:
    """A one-word query takes a shortcut; it must agree with the full parser.

    An unpaired quote is dropped by the full parser, so appending one forces
    the general path without changing what the query means.
    """
    quick, general = parse_query(before + word + after), parse_query(before + word + after + ' "')
    assert (quick.clauses, quick.terms, quick.explicit, quick.question) == (
        general.clauses,
        general.terms,
        general.explicit,
        general.question,
    )
    if word in {"AND", "OR", "NOT"} or not any(c.isalnum() for c in word):
        assert quick.empty
    elif all(c.isalnum() or c == "_" for c in word):
        assert [t.text for t in quick.terms] == [word]


# -- tool calls and tool names are indexed -------------------------------------------------------


def test_tool_call_names_and_arguments_are_searchable(store: SessionStore) -> None:
    store.create_session("s")
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "fetch_weather", "arguments": json.dumps({"city": "Reykjavik"})},
    }
    calling = store.append_message("s", "assistant", "", tool_calls=[call])
    result = store.append_message("s", "tool", "", tool_call_id="c1", tool_name="zxqtool")
    store.append_message("s", "user", "plain content mentions ferret")
    assert ids(store.search_messages("fetch_weather")) == [calling]
    assert ids(store.search_messages("Reykjavik")) == [calling]
    assert ids(store.search_messages("zxqtool")) == [result]
    ferret = store.search_messages("ferret")
    assert len(ferret) == 1 and ">>>ferret<<<" in ferret[0]["snippet"]
    assert store.search_messages("Reykjavik", role_filter=["user"]) == []
    assert ids(store.search_messages("Reykjavik", role_filter=["assistant"])) == [calling]
    # The JSON envelope itself is not indexed.
    assert store.search_messages("function") == []


def test_a_hit_in_tool_call_arguments_shows_the_call_in_its_snippet(store: SessionStore) -> None:
    store.create_session("s")
    command = {"command": "kubectl rollout undo deploy/web", "note": "回滚"}
    function = {"name": "terminal", "arguments": json.dumps(command, ensure_ascii=False)}
    call = {"id": "c1", "type": "function", "function": function}
    calling = store.append_message("s", "assistant", None, tool_calls=[call])
    # A question gets a text snippet: the call reads as written, not as its JSON envelope.
    question = store.search_messages("how did we roll back with kubectl rollout?")
    assert ids(question) == [calling]
    assert question[0]["snippet"].startswith('terminal({"command": ">>>kubectl<<< rollout undo')
    assert '"function"' not in question[0]["snippet"]
    keywords = store.search_messages("kubectl rollout")
    assert ids(keywords) == [calling] and ">>>kubectl<<< >>>rollout<<<" in keywords[0]["snippet"]
    assert ">>>回滚<<<" in store.search_messages("回滚")[0]["snippet"]


@pytest.mark.sqlite_only("FTS5 triggers kept exact under a raw sqlite3 writer")
def test_updates_and_deletes_keep_every_index_exact(store: SessionStore) -> None:
    """Any writer (here the plain sqlite3 module) keeps the three indexes exact."""
    store.create_session("s")
    mid = store.append_message("s", "user", "original wording 原来的内容")
    raw = sqlite3.connect(store.path, isolation_level=None)
    try:
        raw.execute("UPDATE messages SET content = ? WHERE id = ?", ("replaced 新内容", mid))
        assert store.search_messages("original") == []
        assert store.search_messages("原来") == []
        assert ids(store.search_messages("replaced")) == [mid]
        assert ids(store.search_messages("新内容")) == [mid]
        raw.execute("UPDATE messages SET token_count = 7 WHERE id = ?", (mid,))
        assert ids(store.search_messages("replaced")) == [mid]
        raw.execute("DELETE FROM messages WHERE id = ?", (mid,))
        assert store.search_messages("replaced") == []
        assert store.search_messages("新内容") == []
        for table in ("messages_fts", "messages_fts_trigram", "messages_cjk_grams"):
            raw.execute(f"INSERT INTO {table}({table}) VALUES ('integrity-check')")
    finally:
        raw.close()


# -- CJK ----------------------------------------------------------------------------------------


def test_contains_cjk() -> None:
    for text in ("记忆", "ひらがな", "カタカナ", "한국어", "가", "힣", "mixed 中文"):
        assert contains_cjk(text)
    for text in ("", "ascii only", "café", "。、"):
        assert not contains_cjk(text)


def test_cjk_grams() -> None:
    assert cjk_grams(["记忆断裂", None, "x 通信"]) == "记 忆 断 裂 记忆 忆断 断裂 通 信 通信"
    assert cjk_grams(["no cjk"]) == ""


@pytest.fixture
def cjk(store: SessionStore) -> SessionStore:
    store.create_session("zh", source="telegram")
    store.create_session("zh2", source="cli")
    store.create_session("ja")
    store.create_session("ko")
    store.append_message("zh", "user", "我们讨论了记忆断裂的问题，以及Agent通信协议。")
    store.append_message("zh", "assistant", "昨晚的测试显示 100%完成，修改youer服务端后正常。")
    store.append_message("zh2", "user", "昨晚我们又测试了一次，100完成了")
    store.append_message("ja", "user", "こんにちは、世界")
    store.append_message("ko", "user", "안녕하세요 여러분")
    store.append_message(
        "zh2", "assistant", "长文档" + "填充内容" * 50 + "关键词在中间" + "填充" * 50
    )
    store.append_message("zh2", "tool", "", tool_call_id="c", tool_name="查")
    return store


@pytest.mark.parametrize(
    ("query", "sessions"),
    [
        ("记忆断裂", {"zh"}),  # 4 characters
        ("记忆问题", {"zh"}),  # not in the text as such: its bigrams 记忆 + 问题 top up
        ("通信", {"zh"}),  # 2 characters
        ("记", {"zh"}),  # 1 character
        ("안녕", {"ko"}),
        ("こんにちは", {"ja"}),
        ("世界", {"ja"}),
        ("Agent通信", {"zh"}),  # Latin glued to CJK
        ("昨晚", {"zh", "zh2"}),
        ("记忆系统 OR 断裂", {"zh"}),
        ("广西 OR 桂林 OR 漓江 OR 通信", {"zh"}),  # OR of 2-character terms
        ("不存在的词", set()),
        ("youer", {"zh"}),  # a Latin word glued inside CJK text
        ("docker OR 世界", {"ja"}),
        ("昨晚 NOT 完成了", {"zh"}),
    ],
)
def test_cjk_queries(cjk: SessionStore, query: str, sessions: set[str]) -> None:
    assert sessions_of(cjk.search_messages(query)) == sessions


@pytest.mark.sqlite_only("routing to SQLite's FTS5 / gram tables")
def test_cjk_terms_are_answered_by_an_index(cjk: SessionStore) -> None:
    for text in ("记", "通信", "记忆断裂", "Agent通信", "안녕"):
        term = parse_query(text).terms[0]
        assert route_term(term, cjk.layout) != LIKE


def test_cjk_results_have_no_duplicates(cjk: SessionStore) -> None:
    hits = cjk.search_messages("测试")
    assert len(hits) == len(set(ids(hits))) == 2


def test_literal_percent_in_cjk(cjk: SessionStore) -> None:
    hits = cjk.search_messages("100%完成")
    assert sessions_of(hits) == {"zh"}


def test_cjk_keeps_filters(cjk: SessionStore) -> None:
    assert sessions_of(cjk.search_messages("昨晚", source_filter=["cli"])) == {"zh2"}
    assert sessions_of(cjk.search_messages("昨晚", exclude_sources=["cli"])) == {"zh"}
    assert sessions_of(cjk.search_messages("昨晚", role_filter=["assistant"])) == {"zh"}


def test_cjk_snippet_finds_the_term_mid_document(cjk: SessionStore) -> None:
    hits = cjk.search_messages("关键词")
    assert len(hits) == 1 and ">>>关键词<<<" in hits[0]["snippet"]
    assert len(hits[0]["snippet"]) < 300


def test_one_character_tool_name_is_found(cjk: SessionStore) -> None:
    hits = cjk.search_messages("查")
    assert len(hits) == 1 and "查" in hits[0]["snippet"]


def test_english_still_works_beside_cjk(cjk: SessionStore) -> None:
    cjk.create_session("en")
    cjk.append_message("en", "user", "docker compose is broken")
    assert sessions_of(cjk.search_messages("docker")) == {"en"}


@pytest.mark.sqlite_only("SQLite's CJK pending queue under a raw sqlite3 writer")
def test_rows_written_by_another_program_are_found(store: SessionStore, tmp_path: Path) -> None:
    """A plain sqlite3 writer only queues CJK rows; readers still find them at once."""
    import sqlite3

    store.create_session("s")
    raw = sqlite3.connect(store.path, isolation_level=None)
    raw.execute(
        "INSERT INTO messages(session_id, role, content, timestamp) VALUES ('s', 'user', ?, 1)",
        ("外部写入的通信记录",),
    )
    raw.close()
    with SessionStore(store.path, read_only=True) as reader:
        assert sessions_of(reader.search_messages("通信")) == {"s"}
        assert reader.search_messages("缓存") == []
        raw = sqlite3.connect(store.path, isolation_level=None)
        raw.execute(  # queued after the reader last looked at the queue
            "INSERT INTO messages(session_id, role, content, timestamp) VALUES ('s', 'user', ?, 2)",
            ("缓存又满了",),
        )
        raw.close()
        assert sessions_of(reader.search_messages("缓存")) == {"s"}
    assert sessions_of(store.search_messages("通信")) == {"s"}  # through the queue
    store.create_session("t")
    store.append_message("t", "user", "any write drains the queue")
    assert store._conn.execute("SELECT COUNT(*) FROM messages_cjk_pending").fetchone()[0] == 0
    assert sessions_of(store.search_messages("写入")) == {"s"}


# -- natural-language questions -------------------------------------------------------------------


@pytest.fixture
def history(store: SessionStore) -> SessionStore:
    store.create_session("deploy")
    store.append_message("deploy", "user", "The deploy script keeps failing on the staging box.")
    store.append_message(
        "deploy", "assistant", "We decided to rewrite deploy.sh as a Makefile target."
    )
    store.create_session("cooking")
    store.append_message("cooking", "user", "What's a good recipe for sourdough bread?")
    store.create_session("alice")
    store.append_message("alice", "user", "Alice's laptop can't connect to the VPN anymore.")
    store.append_message("alice", "assistant", "Her WireGuard key had expired; we rotated it.")
    return store


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What did I decide about the deploy script?", "deploy"),
        ("what did we decide about deploying?", "deploy"),
        ("Why couldn't Alice's laptop connect to the VPN?", "alice"),
        ("How do I bake sourdough?", "cooking"),
        ("remember the wireguard thing?", "alice"),
        ("deploy script... failing!!", "deploy"),
    ],
)
def test_questions_find_their_session_first(
    history: SessionStore, question: str, expected: str
) -> None:
    hits = history.search_messages(question)
    assert hits and hits[0]["session_id"] == expected


def test_a_conversation_covering_more_of_the_question_ranks_first(store: SessionStore) -> None:
    """Messages repeating one word of the question lose to the turns that answer all of it."""
    store.create_session("birds")
    store.append_messages(
        "birds",
        [
            {"role": "user", "content": "canary canary canary"},
            {"role": "assistant", "content": "canary release canary"},
            {"role": "user", "content": "canary canary"},
            {"role": "assistant", "content": "canary is loud"},
        ],
    )
    store.create_session("answer")
    store.append_messages(
        "answer",
        [
            {
                "role": "user",
                "content": "The canary release of the payments service went bad in eu-west.",
            },
            {"role": "assistant", "content": "Run a rollback to v2.3 and pin the image digest."},
        ],
    )
    for n in range(6):  # ordinary history, so the question's words stay rare
        store.create_session(f"other{n}")
        store.append_message(f"other{n}", "user", f"Lunch plans for day {n}.")
    hits = store.search_messages("Why did the canary release go wrong, and did we do a rollback?")
    assert [hit["session_id"] for hit in hits[:2]] == ["answer", "answer"]


def test_questions_about_the_present_prefer_the_newest_answer(store: SessionStore) -> None:
    store.create_session("old")
    store.append_message(
        "old", "user", "I work at Initech, a small company; work is fine.", timestamp=1_600_000_000
    )
    store.create_session("new")
    store.append_message(
        "new",
        "user",
        "Big change this spring: I switched jobs and I work at Globex as a team lead.",
        timestamp=1_700_000_000,
    )
    store.create_session("noise")
    store.append_message("noise", "user", "Lunch plans again.", timestamp=1_650_000_000)
    assert plan_query(parse_query("Where do I work now?")).prefer_recent
    assert store.search_messages("Where do I work now?")[0]["session_id"] == "new"
    assert store.search_messages("Where do I currently work?")[0]["session_id"] == "new"
    # without a cue for the present, the stronger match leads
    assert not plan_query(parse_query("Where did I work, at which company?")).prefer_recent
    assert store.search_messages("Where did I work, at which company?")[0]["session_id"] == "old"


def test_phrasal_verbs_find_their_one_word_spelling(store: SessionStore) -> None:
    store.create_session("login")
    store.append_message("login", "user", "Sam's login is locked.")
    store.create_session("rollback")
    store.append_message("rollback", "user", "We did a quick rollback yesterday.")
    store.create_session("other")  # the verbs alone are known words here
    store.append_message("other", "user", "Log the hours in the log book for Sam, roll the dice.")
    assert store.search_messages("why can't Sam log in?")[0]["session_id"] == "login"
    assert "rollback" in sessions_of(store.search_messages("how do I roll back?"))
    plan = plan_query(parse_query("how do I set up the mirror and roll back the tag?"))
    assert {"setup", "rollback"} <= {term.text for term in plan.primary.terms}


def test_irregular_words_meet_their_other_forms(store: SessionStore) -> None:
    store.create_session("camera")
    store.append_messages(
        "camera",
        [
            {"role": "user", "content": "I finally bought a Fujifilm X-T5!"},
            {"role": "assistant", "content": "Nice. Which lens did you get with it?"},
        ],
    )
    store.create_session("kids")
    store.append_message("kids", "user", "Both of my children start school in September.")
    store.create_session("shopping")  # says camera, but is not about a purchase
    store.append_message("shopping", "user", "Which camera strap looks better, leather or nylon?")
    for n in range(6):
        store.create_session(f"other{n}")
        store.append_message(f"other{n}", "user", f"Lunch plans for day {n}.")
    assert store.search_messages("What did I buy?")[0]["session_id"] == "camera"
    assert store.search_messages("What camera did I buy last month?")[0]["session_id"] == "camera"
    assert store.search_messages("When does my child start school?")[0]["session_id"] == "kids"
    plan = plan_query(parse_query("Where did we go after we met?"))
    texts = {term.text for term in plan.primary.terms}
    assert {"went", "gone", "meet"} <= texts
    # keyword searches keep AND and reach the other forms only when topping up
    assert [t.text for t in plan_query(parse_query("buy camera")).primary.terms] == [
        "buy",
        "camera",
    ]


@pytest.mark.parametrize(
    ("word", "forms"),
    [
        ("bought", ("buy", "bought", "purchase")),
        ("Went", ("go", "went", "gone")),
        ("children", ("child", "children", "kid")),
        ("camera", ("camera",)),
        ("won", ("won",)),  # won't is tokenised won + t: not joined to win
        ("job", ("work", "job", "career", "employer", "workplace")),
        ("wives", ("wife", "wives", "partner", "boyfriend", "girlfriend", "husband", "spouse")),
        ("home", ("home",)),  # also technical vocabulary: not listed
    ],
)
def test_word_forms_table(word: str, forms: tuple[str, ...]) -> None:
    assert word_forms(word) == forms
    assert lemma(word) == forms[0]


def test_near_synonyms_find_the_update_of_a_life_fact(store: SessionStore) -> None:
    day = 86_400.0
    start = 1_700_000_000.0
    for sid, offset, text in (
        ("acme", 0, "I work at Acme as a designer, mostly on the mobile app."),
        ("berlin", 5, "I live in Berlin, in Kreuzberg."),
        ("pasta", 10, "Can you suggest a pasta recipe for dinner?"),
        ("globex", 30, "Big news: I just started a new job at Globex as a product manager."),
        ("lisbon", 50, "I moved to Lisbon last month."),
    ):
        store.create_session(sid, started_at=start + offset * day)
        store.append_message(sid, "user", text, timestamp=start + offset * day)

    def order(question: str) -> list[str]:
        return list(dict.fromkeys(hit["session_id"] for hit in store.search_messages(question)))

    assert order("Where do I work now?")[:2] == ["globex", "acme"]
    assert order("Which city do I live in now?")[:2] == ["lisbon", "berlin"]


def test_question_plan_drops_stop_words_and_ors_the_rest() -> None:
    plan = plan_query(parse_query("What did I decide about the deploy script?"))
    assert plan.mode == "question"
    assert [t.text for t in plan.primary.terms] == ["decide", "deploy", "script"]
    assert len(plan.primary.clauses) == 3
    assert plan.boosts


def test_keywords_use_and_then_top_up_with_or(history: SessionStore) -> None:
    plan = plan_query(parse_query("staging wireguard"))
    assert plan.mode == "keywords" and plan.fallback is not None
    hits = history.search_messages("staging wireguard")
    assert sessions_of(hits) == {"deploy", "alice"}


def test_a_top_up_leaves_out_the_keyword_the_primary_already_searched() -> None:
    plan = plan_query(parse_query("记忆断裂"))
    assert plan.fallback is not None
    assert [t.text for t in plan.fallback.terms] == ["记忆断裂", "记忆", "忆断", "断裂"]
    assert [t.text for t in top_up(plan, plan.fallback).terms] == ["记忆", "忆断", "断裂"]
    plan = plan_query(parse_query("staging wireguard"))  # two keywords: each still needed
    assert plan.fallback is not None and top_up(plan, plan.fallback) == plan.fallback


def test_explicit_syntax_is_taken_literally(history: SessionStore) -> None:
    assert plan_query(parse_query('"deploy script"')).mode == "literal"
    assert history.search_messages("staging AND wireguard") == []


# -- fuzzing --------------------------------------------------------------------------------------

# Placeholders expand to operators and compound terms, so they turn up often.
_EXPAND = {"①": " AND ", "②": " OR ", "③": " NOT ", "④": "NEAR", "⑤": "chat-send", "⑥": "P2.2"}
_CHARS = [
    *"\"*()[]{}:^+-~|&!?'%\\/.,;_ \t\nabcXYZ019",
    *_EXPAND,
    *"记忆断裂通信안녕こんにちは",
    "\x00",
    "\ud800",
    "\u200b",
    "é",
    "🚀",
]
_HOSTILE = st.text(alphabet=st.one_of(st.sampled_from(_CHARS), st.characters()), max_size=60).map(
    lambda text: "".join(_EXPAND.get(char, char) for char in text)
)


class _Warnings(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@pytest.fixture(scope="module")
def fuzz_store(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[SessionStore, _Warnings]]:
    store = SessionStore(tmp_path_factory.mktemp("fuzz") / "state.db")
    store.create_session("s")
    store.append_message("s", "user", "docker chat-send P2.2 记忆断裂 通信 100%完成 C++ TODO: fix")
    store.append_message("s", "tool", "tool output 工具", tool_call_id="c", tool_name="t")
    warnings = _Warnings()
    # The search pipeline, and the question ranking it calls, warn when SQLite rejects a query.
    loggers = [logging.getLogger(f"hermes_core.sessions.{name}") for name in ("search", "rerank")]
    for logger in loggers:
        logger.addHandler(warnings)
    yield store, warnings
    for logger in loggers:
        logger.removeHandler(warnings)
    store.close()


def _never_fails(fuzz: tuple[SessionStore, _Warnings], query: str) -> None:
    store, warnings = fuzz
    assert isinstance(store.search_messages(query, limit=5), list)
    # A warning means SQLite rejected what the sanitiser produced.
    assert not warnings.messages, (query, warnings.messages)


@settings(max_examples=300, deadline=None)
@given(query=_HOSTILE)
def test_sanitiser_never_fails(fuzz_store: tuple[SessionStore, _Warnings], query: str) -> None:
    _never_fails(fuzz_store, query)


@pytest.mark.slow
@settings(max_examples=10_000, deadline=None)
@given(query=_HOSTILE)
def test_sanitiser_never_fails_long(fuzz_store: tuple[SessionStore, _Warnings], query: str) -> None:
    _never_fails(fuzz_store, query)


@pytest.mark.sqlite_only("the state.db session-field cache")
def test_session_info_is_bounded_and_names_unknown_sessions(store: SessionStore) -> None:
    from hermes_core.sessions.sessioninfo import SessionInfo

    for n in range(5):
        store.create_session(f"s{n}", source="cli", title=f"T{n}")
    info = SessionInfo(store.layout, capacity=3)
    conn = store._conn
    fields = info.fields(conn, ["s0", "s1", "s2", "s3", "gone"])
    assert fields["s3"][0] == "cli" and fields["s3"][3] == "T3"
    assert fields["gone"] == (None, None, None, None)  # a hit whose session row is missing
    assert len(info._fields) <= 3  # over capacity: the cache starts again, never grows past it
    assert info.fields(conn, ["s4"])["s4"][3] == "T4"


# -- a reply comes with its question -------------------------------------------------------------


def test_the_reply_to_a_matching_question_turn_comes_just_ahead_of_it(
    store: SessionStore,
) -> None:
    store.create_session("pottery")
    store.append_message("pottery", "user", "I had my first pottery lesson today!", name="Ana")
    asked = store.append_message(
        "pottery", "assistant", "Great, Ana! What did you make?", name="Ben"
    )
    store.append_message("pottery", "tool", "{}")  # tool output is never the reply
    reply = store.append_message(
        "pottery", "user", "A very lopsided bowl. Centering clay is hard.", name="Ana"
    )
    store.create_session("other")
    store.append_message("other", "user", "We make a pottery stand for the market.")

    question = "What did Ana make in her first pottery lesson?"
    found = ids(store.search_messages(question))
    assert reply in found[:3] and found[found.index(reply) + 1] == asked
    # keywords are not a question: no reply is brought in
    assert reply not in ids(store.search_messages("pottery make"))
    # a role filter keeps to the role asked for, a time filter to its window
    assert reply not in ids(store.search_messages(question, role_filter="assistant"))
    reply_time = store.get_messages("pottery")[-1]["timestamp"]
    assert reply not in ids(store.search_messages(question, until=reply_time))
    assert reply in ids(store.search_messages(question, until=reply_time + 1))


def test_no_reply_for_a_statement_or_the_same_speaker_going_on(store: SessionStore) -> None:
    store.create_session("s")
    statement = store.append_message("s", "user", "My tomatoes have dark spots on the bottom.")
    answer = store.append_message("s", "assistant", "That sounds like blossom end rot.")
    asked = store.append_message("s", "user", "Should I water the tomatoes more?")
    going_on = store.append_message("s", "user", "Also the leaves curl.")

    found = ids(store.search_messages("why do my tomatoes have spots?"))
    assert found[0] == statement and answer not in found  # a statement brings nothing
    found = ids(store.search_messages("how often should I water the tomatoes?"))
    assert found[0] == asked and going_on not in found  # the same speaker is no reply


def test_a_question_inside_a_turn_brings_no_reply(store: SessionStore) -> None:
    store.create_session("s")
    answer = store.append_message(
        "s", "assistant", "Why does the deploy hang? The health check waits on redis. Restart it."
    )
    thanks = store.append_message("s", "user", "Thanks, that worked.")
    found = ids(store.search_messages("why did the deploy hang?"))
    assert found[0] == answer and thanks not in found


def test_asking_again_sees_what_was_written_in_between(store: SessionStore) -> None:
    # Parsing, planning and compiling are remembered per query; the answers are not.
    store.create_session("s1", source="cli")
    store.append_message("s1", "user", "the kestrel nests on the tower")
    first = store.search_messages("kestrel", snippets=False)
    assert [(h["session_id"], h["role"], h["name"], h["snippet"]) for h in first] == [
        ("s1", "user", None, None)
    ]
    store.create_session("s2", source="telegram", model="m2")
    store.set_session_title("s2", "Birds")
    store.append_message("s2", "assistant", "a kestrel hovered", name="Ana")
    again = store.search_messages("kestrel", snippets=False)
    assert {(h["session_id"], h["role"], h["name"], h["source"]) for h in again} == {
        ("s1", "user", None, "cli"),
        ("s2", "assistant", "Ana", "telegram"),
    }
    assert next(h for h in again if h["session_id"] == "s2")["session_title"] == "Birds"
    assert all(isinstance(h["timestamp"], float) for h in again)


def test_threads_searching_many_queries_at_once_get_their_own_answers(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Compiled queries are shared by every thread of a store, and the memory of them starts
    # afresh when full: under churn, each search still answers its own query.
    import threading

    from hermes_core.sessions import routing

    monkeypatch.setattr(routing, "COMPILED_QUERIES", 4)
    words = [f"word{n}x" for n in range(12)]
    for n, word in enumerate(words):
        store.create_session(f"s{n}", source="cli")
        store.append_message(f"s{n}", "user", f"about {word} and 记忆{n}")
    errors: list[str] = []

    def search(offset: int) -> None:
        for round_ in range(30):
            n = (offset + round_) % len(words)
            for query in (words[n], f'"about {words[n]}"', f"{words[n]} OR nothing"):
                found = sessions_of(store.search_messages(query, snippets=round_ % 2 == 0))
                if found != {f"s{n}"}:
                    errors.append(f"{query!r}: {sorted(found)}")

    threads = [threading.Thread(target=search, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
