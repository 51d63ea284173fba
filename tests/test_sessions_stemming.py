"""The stemmer for text read outside the index agrees with the word index's ``porter`` tokenizer.

The expected tokens are read back from a table built like the store's word index.
"""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hermes_core.sessions.question import porter_stem, stem
from hermes_core.sessions.schema import WORD_TOKENIZER

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
