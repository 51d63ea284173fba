"""PostgreSQL's bulk path and trigram index: an import writes what appends write, all or
nothing, and is analyzed; substring searches find the same messages with or without
``pg_trgm`` (migration 6), and a database that cannot have it still works.

Every case runs on the real server (a schema or database of its own, dropped afterwards).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import CliRunner

from hermes_core.cli import cli
from hermes_core.errors import SessionStoreError
from hermes_core.sessions.pgmaintenance import rebuild_search
from hermes_core.sessions.pgtrigram import TRIGRAM_INDEX
from hermes_core.sessions.postgres import IMPORT_CHUNK, PostgresSessionStore
from hermes_core.testing.postgres import POSTGRES_URL, admin_connection, temporary_schema

TEXTS = [
    "Deployed it painfully, monthly",
    "我们昨天去吃了北京烤鸭 with Agent通信",
    "file.txt and e-mail ana@example.org",
    "the FlexGym membership 🔥",
    "naïve café résumé",
    "",
]
COLUMNS = "content, search_text, cjk_grams, stems, words, tsv::text"


def _messages(count: int, salt: str) -> list[dict[str, Any]]:
    return [
        {"role": "user" if n % 2 == 0 else "assistant", "content": f"{TEXTS[n % 6]} {salt}{n}"}
        for n in range(count)
    ]


def _rows(url: str, session_ids: list[str]) -> list[tuple[Any, ...]]:
    import psycopg

    with psycopg.connect(url) as conn:
        return [
            tuple(row)
            for row in conn.execute(
                f"SELECT {COLUMNS} FROM messages WHERE session_id = ANY(%s) ORDER BY id",
                (session_ids,),
            )
        ]


@pytest.fixture
def pg_url(postgres_schemas: Any) -> Iterator[str]:
    with postgres_schemas.lease() as url:
        yield url


def test_an_import_of_many_chunks_writes_what_appends_write(pg_url: str) -> None:
    count = 2 * IMPORT_CHUNK + 37
    messages = _messages(count, "w")
    with PostgresSessionStore(pg_url) as store:
        sessions = [
            {"id": f"imp{s}", "messages": messages[s * 700 : (s + 1) * 700]}
            for s in range(count // 700 + 1)
        ]
        assert store.import_sessions(sessions) == count
        store.create_session("app", source="cli")
        store.append_messages("app", messages)
        imported = _rows(pg_url, [session["id"] for session in sessions])
        assert imported == _rows(pg_url, ["app"])
        assert len(imported) == count
        hits = store.search_messages("w2036", limit=5)
        assert sorted(hit["session_id"] for hit in hits) == ["app", "imp2"]


def test_an_import_the_database_refuses_late_stores_nothing(pg_url: str) -> None:
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:
        # The last chunk holds a row the server refuses (the schema is replaced afterwards).
        conn.execute("ALTER TABLE messages ADD CONSTRAINT no_boom CHECK (content <> 'boom')")
    messages = [*_messages(2 * IMPORT_CHUNK + 5, "x"), {"role": "user", "content": "boom"}]
    with PostgresSessionStore(pg_url) as store:
        with pytest.raises(SessionStoreError):
            store.import_sessions(
                [{"id": "a", "messages": messages[:10]}, {"id": "b", "messages": messages[10:]}]
            )
        assert store.session_count() == 0
        assert store.message_count() == 0
        assert store.search_messages("x7") == []
        assert store.import_sessions([{"id": "a", "messages": messages[:10]}]) == 10


def _known_rows(url: str) -> float:
    import psycopg

    with psycopg.connect(url) as conn:
        return float(
            conn.execute(
                "SELECT reltuples FROM pg_class WHERE oid = 'messages'::regclass"
            ).fetchone()[0]
        )


def test_a_large_import_is_analyzed_and_a_small_one_is_not() -> None:
    with temporary_schema() as url, PostgresSessionStore(url) as store:
        store.import_sessions([{"id": "big", "messages": _messages(300, "a")}])
        assert _known_rows(url) == 300
        store.import_sessions([{"id": "small", "messages": _messages(5, "b")}])
        assert _known_rows(url) == 300  # 5 < 50 + 10 % of 300: left to autovacuum
        store.import_sessions([{"id": "more", "messages": _messages(100, "c")}])
        assert _known_rows(url) == 405


QUESTION = "Did I renew my gym membership?"
"""*gym* is in no message as a word (FlexGym): the question looks it up as a substring."""


def _substring_hits(store: PostgresSessionStore) -> list[tuple[str, int]]:
    return [(hit["session_id"], hit["id"]) for hit in store.search_messages(QUESTION, limit=5)]


def _fill(store: PostgresSessionStore) -> None:
    gym = {"id": "gym", "messages": [{"role": "user", "content": "Renewed the FlexGym pass"}]}
    store.import_sessions([{"id": "chat", "messages": _messages(60, "z")}, gym])


def test_substring_search_finds_the_same_with_and_without_the_trigram_index(pg_url: str) -> None:
    import psycopg

    with PostgresSessionStore(pg_url) as store:
        _fill(store)
        with psycopg.connect(pg_url) as conn:
            assert conn.execute("SELECT to_regclass(%s)", (TRIGRAM_INDEX,)).fetchone()[0]
        indexed = _substring_hits(store)
        assert "gym" in [session for session, _ in indexed]
        assert store.search_messages("🔥", limit=3)
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute(f"DROP INDEX {TRIGRAM_INDEX}")
        assert _substring_hits(store) == indexed


@pytest.fixture
def database_without_trigrams() -> Iterator[tuple[str, Any]]:
    """A new database and a role that may create tables in it but not extensions."""
    admin = admin_connection()
    name = "hm_test_" + uuid.uuid4().hex[:10]
    admin.execute(f"CREATE ROLE {name} LOGIN")
    admin.execute(f"CREATE DATABASE {name}")
    base = POSTGRES_URL.rsplit("/", 1)[0]
    try:
        with admin.__class__.connect(f"{base}/{name}", autocommit=True) as owner:
            owner.execute(f"GRANT ALL ON SCHEMA public TO {name}")
        user_url = base.replace("://postgres@", f"://{name}@", 1) + f"/{name}"
        yield user_url, f"{base}/{name}"
    finally:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        admin.execute(f"DROP ROLE IF EXISTS {name}")
        admin.close()


def test_a_database_without_pg_trgm_warns_searches_and_gets_the_index_on_repair(
    database_without_trigrams: tuple[str, Any],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import psycopg

    user_url, admin_url = database_without_trigrams
    if "://postgres@" not in POSTGRES_URL:
        pytest.skip("needs the test server's trust-authenticated postgres user")
    with caplog.at_level(logging.WARNING), PostgresSessionStore(user_url) as store:
        assert "sessions repair" in caplog.text and "pg_trgm" in caplog.text
        _fill(store)
        monkeypatch.setenv("HERMES_SESSIONS_URL", user_url)
        doctor = CliRunner().invoke(cli, ["doctor"])
        assert "no trigram index messages_trgm" in doctor.output
        assert "CREATE EXTENSION pg_trgm" in doctor.output
        with psycopg.connect(admin_url, autocommit=True) as admin:
            admin.execute("CREATE EXTENSION pg_trgm")
        rebuild_search(store)
        with psycopg.connect(user_url) as conn:
            assert conn.execute("SELECT to_regclass(%s)", (TRIGRAM_INDEX,)).fetchone()[0]
        assert "trigram" not in CliRunner().invoke(cli, ["doctor"]).output
