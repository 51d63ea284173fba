"""The stemmer for text read outside the index agrees with the word index's ``porter`` tokenizer,
and both backends index and search the same stems (PostgreSQL's vector holds FTS5's tokens).

The expected tokens are read back from a table built like the store's word index.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from hermes_core.sessions.backends import open_session_store
from hermes_core.sessions.porter import porter_stem
from hermes_core.sessions.question import stem
from hermes_core.sessions.schema import WORD_TOKENIZER
from tests.backend_kit import is_postgres, raw_sql

WORDS = """
deploy deployed deploying deployment deployments happy happiness happily relational
generalization notes fixes running ran caresses ponies agreed feed sky skies dying lying
organization university universe national news bus analysis analyses crying rollback
houseplants plants painting painted paints hiking hiked hikes traveled travelling cats
adopted adoption meeting meetings decided decision configuring configuration babies
baking baked bakery studies studying studied lessons children running swimming swam
possibly probably notably terribly apology biology sses as ay is café naïve Größe
""".split()  # noqa: SIM905


def fts5_tokens(words: list[str]) -> dict[str, str]:
    """What FTS5's porter tokenizer stores for each word, read back through fts5vocab."""
    conn = sqlite3.connect(":memory:")
    conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize='{WORD_TOKENIZER}')")
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
    conn.executemany("INSERT INTO t(rowid, x) VALUES (?, ?)", enumerate(words, start=1))
    found = dict(conn.execute("SELECT doc, term FROM v"))
    return {word: found[n] for n, word in enumerate(words, start=1)}


@pytest.mark.sqlite_only("FTS5's porter tokenizer (PostgreSQL stems query and index alike)")
def test_porter_stem_is_the_token_fts5_stores() -> None:
    tokens = fts5_tokens(WORDS)
    assert {w: porter_stem(w) for w in WORDS} == tokens


LETTERS = "abcdefghijklmnopqrstuvwxyz"


@pytest.mark.sqlite_only("FTS5's porter tokenizer (PostgreSQL stems query and index alike)")
@given(st.lists(st.text(alphabet=LETTERS, min_size=1, max_size=14), min_size=1))
def test_porter_stem_agrees_with_fts5_on_any_word(words: list[str]) -> None:
    tokens = fts5_tokens(words)
    assert all(porter_stem(w) == tokens[w] for w in words)


def test_stem_is_a_prefix_every_form_of_a_family_starts_with() -> None:
    assert stem("deployments") == stem("deployed") == stem("deploying") == "deploy"
    assert stem("fixes") == "fix"
    assert stem("notes") == "note"
    assert stem("grace's") == "grace"
    for word in WORDS:
        assert word.lower().startswith(stem(word))
        assert len(stem(word)) >= 3 or stem(word) == word.lower()


# -- both backends stem as the word index does ---------------------------------------------------

DISAGREEING = """
painfully painful pain monthly month possibly possible probably probable generously generous
biology biological happily happy happiness terribly terrible organization organize university
universe national nation generalization general relational relate news new apology apologize
""".split()  # noqa: SIM905
"""Words where Snowball (PostgreSQL's ``english``) and FTS5's Porter stem apart: Snowball says
*pain* for *painfully* and *month* for *monthly*, the word index *painfulli* and *monthli*."""


class Said:
    """A store holding one message per word of :data:`DISAGREEING` ("I said painfully.")."""

    def __init__(self, store: Any) -> None:
        store.create_session("words", started_at=1_700_000_000)
        ids = store.append_messages(
            "words", [{"role": "user", "content": f"I said {word}."} for word in DISAGREEING]
        )
        self.store = store
        self.word_of = dict(zip(ids, DISAGREEING, strict=True))

    def found(self, query: str) -> set[str]:
        """The words of the messages *query* finds."""
        hits = self.store.search_messages(query, limit=50, snippets=False)
        return {self.word_of[hit["id"]] for hit in hits}


@pytest.fixture
def stem_store(session_backend: str) -> Iterator[Said]:
    with open_session_store(session_backend, semantic="off") as opened:
        yield Said(opened)


@pytest.mark.parametrize("word", DISAGREEING)
def test_a_word_finds_the_messages_sharing_its_index_stem(stem_store: Said, word: str) -> None:
    # The same on SQLite and PostgreSQL: what the word index's Porter joins, never Snowball's.
    expected = {other for other in DISAGREEING if porter_stem(other) == porter_stem(word)}
    assert stem_store.found(word) == expected


@pytest.mark.parametrize(
    ("typed", "finds"),
    [("possib*", {"possibly", "possible"}), ("pain*", {"pain", "painful", "painfully"})],
)
def test_a_prefix_is_read_as_the_word_index_reads_it(
    stem_store: Said, typed: str, finds: set[str]
) -> None:
    assert stem_store.found(typed) == finds


TEXT = st.lists(
    st.one_of(
        st.sampled_from(DISAGREEING + WORDS),
        st.text(alphabet=LETTERS + "ÀéßÖ0123456789", min_size=1, max_size=12),
    ),
    min_size=1,
    max_size=12,
).map(" ".join)

NUMBER_THEN_WORD = re.compile(r"\d+e\d+[^\W\d_]")
"""A token PostgreSQL's parser reads as a number and a word (``0e0a``: ``0e0``, ``a``), in
the vector and in a query alike (see the test of ids that read as numbers)."""


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=TEXT)
def test_postgresql_indexes_the_tokens_fts5_stores(session_backend: str, text: str) -> None:
    if not is_postgres(session_backend):
        pytest.skip("PostgreSQL's vector (SQLite's word index is the tokenizer itself)")
    expected = fts5_texts([text])[0]
    assume(not any(NUMBER_THEN_WORD.match(token) for token in expected))
    with open_session_store(session_backend, semantic="off") as store:
        session = f"s{abs(hash(text))}"
        store.create_session(session)
        (message_id,) = store.append_messages(session, [{"role": "user", "content": text}])
    (vector,) = raw_sql(
        session_backend,
        "SELECT array_agg(u.lexeme || '@' || p ORDER BY p) FROM messages AS m, "
        "unnest(ts_filter(m.tsv, '{a}')) AS u, unnest(u.positions) AS p WHERE m.id = ?",
        (message_id,),
    )[0]
    assert vector == [f"{token}@{n}" for n, token in enumerate(expected, start=1)]


def fts5_texts(texts: list[str]) -> list[list[str]]:
    """Each text's tokens as FTS5's porter tokenizer stores them, in order."""
    conn = sqlite3.connect(":memory:")
    conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize='{WORD_TOKENIZER}')")
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
    conn.executemany("INSERT INTO t(rowid, x) VALUES (?, ?)", enumerate(texts))
    found: list[list[str]] = [[] for _ in texts]
    for doc, term in conn.execute("SELECT doc, term FROM v ORDER BY doc, offset"):
        found[doc].append(term)
    return found


def test_migration_4_gives_an_older_postgresql_store_the_index_stems() -> None:
    from hermes_core.sessions.pgschema import PG_SCHEMA_VERSION
    from hermes_core.testing.postgres import admin_connection, migrated_to, temporary_schema

    texts = ["It hurt painfully.", "A monthly report.", "The pain of it.", "Every month."]
    with temporary_schema() as url:
        schema = url.rsplit("%3D", 1)[-1]
        admin = admin_connection()
        admin.execute(f"SET search_path = {schema}")
        migrated_to(admin, 3)  # a store written by the build before stems
        admin.execute("INSERT INTO sessions(id, source, started_at) VALUES ('old', 'cli', 1)")
        ids = [
            admin.execute(
                "INSERT INTO messages(session_id, role, timestamp, content, search_text) "
                "VALUES ('old', 'user', 1, %s, %s) RETURNING id",
                (text, text),
            ).fetchone()[0]
            for text in texts
        ]
        old = admin.execute(
            "SELECT count(*) FROM messages WHERE tsv @@ to_tsquery('english', 'pain')"
        ).fetchone()[0]
        assert old == 2  # Snowball: "painfully" is "pain"
        with open_session_store(url, semantic="off") as store:
            hits = store.search_messages("painfully", snippets=False)
            assert [hit["id"] for hit in hits] == [ids[0]]  # not "The pain of it."
            hits = store.search_messages("month", snippets=False)
            assert [hit["id"] for hit in hits] == [ids[3]]  # not "A monthly report."
        stems = [row[0] for row in admin.execute("SELECT stems FROM messages ORDER BY id")]
        assert stems == [" ".join(tokens) for tokens in fts5_texts(texts)]
        versions = admin.execute("SELECT version FROM hermes_schema_migrations ORDER BY 1")
        assert [row[0] for row in versions] == list(range(1, PG_SCHEMA_VERSION + 1))
        admin.close()


HASHES = ["8e3b1c2", "0e0a", "12e4ff9", "deadbeef", "1e5"]


@pytest.mark.parametrize(
    ("query", "finds"),
    [
        ("8e3b1c2", {"8e3b1c2"}),
        ('"commit 8e3b1c2"', {"8e3b1c2"}),
        ("8e3b*", {"8e3b1c2"}),
        ("0e0a", {"0e0a"}),
        ("12e4ff9", {"12e4ff9"}),
        ("1e5", {"1e5"}),
    ],
)
def test_an_id_that_reads_as_a_number_is_found_whole_on_both_backends(
    session_backend: str, query: str, finds: set[str]
) -> None:
    # PostgreSQL's parser reads 8e3b1c2 as the number 8e3 and the word b1c2, in the vector
    # and in the query alike, so the id is found as FTS5 finds its one token.
    with open_session_store(session_backend, semantic="off") as store:
        store.create_session("ids", started_at=1_700_000_000)
        ids = store.append_messages(
            "ids", [{"role": "user", "content": f"commit {word} is in"} for word in HASHES]
        )
        word_of = dict(zip(ids, HASHES, strict=True))
        hits = store.search_messages(query, limit=50, snippets=False)
    assert {word_of[hit["id"]] for hit in hits} == finds
