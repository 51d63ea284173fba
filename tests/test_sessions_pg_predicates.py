"""PostgreSQL's word, phrase and prefix predicates read the ``stems`` column instead of
testing each candidate's whole vector for weights and positions (GIN keeps neither):
they must match exactly the rows the vector's weighted ``tsquery`` matches, for any text
and term, and rows without stems (an older build's) keep being tested on the vector.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_core.sessions.pgsearch import _lexeme, _stemmed
from hermes_core.sessions.porter import text_stems
from hermes_core.sessions.postgres import PostgresSessionStore

VOCABULARY = [
    "deploy",
    "deployed",
    "deployments",
    "garden",
    "gardening",
    "summer",
    "holiday",
    "holidays",
    "wedding",
    "wed",
    "budget",
    "painfully",
    "monthly",
    "file.txt",
    "ana@example.org",
    "e-mail",
    "Agent通信",
    "修改youer服务端",
    "北京烤鸭",
    "naïve",
    "Café",
    "2036",
    "x2",
    "the",
    "a",
    "It's",
    "见file.txt了",
    "summer-holiday",
]
TEXT = st.lists(st.sampled_from(VOCABULARY), min_size=0, max_size=12).map(" ".join)
TERM = st.tuples(
    st.lists(st.sampled_from([*VOCABULARY[:16], "gard", "holi", "dep"]), min_size=1, max_size=3),
    st.booleans(),
)


def _weighted(stems: tuple[str, ...], prefix: bool, written: str | None) -> str:
    """The vector's weighted query for the same term (what the store asked before)."""
    last = ":*A" if prefix else ":A"
    query = " <-> ".join([*(_lexeme(s) + ":A" for s in stems[:-1]), _lexeme(stems[-1]) + last])
    return f"{query} | {_lexeme(written)}:D" if written is not None else query


@pytest.fixture
def conn(postgres_schemas: Any) -> Iterator[Any]:
    import psycopg

    with postgres_schemas.lease() as url:
        PostgresSessionStore(url).close()
        with psycopg.connect(url, autocommit=True) as opened:
            yield opened


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(TEXT, min_size=1, max_size=8), st.lists(TERM, min_size=1, max_size=6))
def test_stem_predicates_match_what_the_weighted_vector_matches(
    conn: Any, texts: list[str], terms: list[tuple[list[str], bool]]
) -> None:
    conn.execute("DELETE FROM messages")
    conn.execute("DELETE FROM sessions")
    with PostgresSessionStore(conn.info.dsn) as store:
        store.create_session("s", source="cli")
        store.append_messages("s", [{"role": "user", "content": text} for text in texts])
    # An older build's rows: no stems, the vector's stemmed part from Snowball.
    conn.execute("UPDATE messages SET stems = NULL WHERE id % 3 = 0")
    for words, prefix in terms:
        stems = text_stems(" ".join(words))
        if not stems:
            continue
        written = words[0] if len(words) == 1 and not prefix else None
        sql, params = _stemmed(stems, prefix, written)
        found = conn.execute(f"SELECT id FROM messages AS m WHERE {sql} ORDER BY id", params)
        expected = conn.execute(
            "SELECT id FROM messages AS m WHERE m.tsv @@ to_tsquery('simple', %s) ORDER BY id",
            (_weighted(stems, prefix, written),),
        )
        assert found.fetchall() == expected.fetchall(), (words, prefix)
