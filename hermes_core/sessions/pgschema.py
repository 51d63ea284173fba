"""The PostgreSQL layout of the session store: tables, indexes and versioned migrations.

The tables mirror ``state.db``'s (``sessions``, ``messages``, ``state_meta``) so
rows copy across unchanged. Full-text search uses one stored ``tsvector`` per
message, made from what the store puts in ``search_text`` (content, speaker or
tool name, tool-call names and arguments) and derives from it (schema 4):

* ``stems``, weight A: the word index's own tokens, SQLite FTS5's ``porter``
  tokenizer asked in Python (:func:`~hermes_core.sessions.porter.index_stems`),
  read with ``simple``. So both backends stem alike: *painfully* is ``painfulli``
  and *monthly* ``monthli`` (PostgreSQL's ``english``, Snowball, says ``pain``
  and ``month``), stop words are words, ``file.txt`` is ``file txt``;
* the CJK unigrams and bigrams of ``cjk_grams`` (:func:`~hermes_core.sessions.cjk.cjk_grams`),
  so a Chinese, Japanese or Korean term of any length is an indexed lookup;
* ``simple`` with the CJK runs as spaces, so a word glued to CJK text
  (``以及Agent通信``) is a word of its own (migration 3).

``words`` is a message's length in those tokens, as FTS5 counts it for BM25; a
trigger sets both on every write (:data:`_VECTOR_TRIGGER`, schemas 4 and 7).
Schemas 1-3 had ``english`` stems and the words as written twice more instead.
Schema 5 adds ``message_vectors`` for semantic recall (:mod:`~hermes_core.sessions.pgsemantic`).

``messages_trgm`` (migration 6) is a trigram index of ``search_text`` (``pg_trgm``, from
PostgreSQL's contrib): a substring search (``ILIKE``, a question's word no message holds)
looks it up instead of reading every message. Where the extension cannot be created the
migration warns and goes on without it (``sessions repair`` adds it later). In a store holding
messages the index is built after the migration, concurrently, so writers do not wait
(:mod:`~hermes_core.sessions.pgtrigram`); it only speeds those searches up, which find the
same rows without it.

Migrations are numbered; ``hermes_schema_migrations`` records the ones applied.
The store applies the missing ones at start under an advisory lock, so several
processes starting at once never apply one twice. A migration is SQL, or a
function of the connection when Python must compute what it writes. Migration 4
rewrites no rows inside the migrating transaction (where the table stays locked
until the commit): it queues the stored messages, which the opening store then
stems in committed batches (:mod:`~hermes_core.sessions.pgbackfill`). Since then a
trigger keeps the vector (migration 7 puts it in a store the build before migrated
to 4), so a vector of new parts can be written again the same way.
"""

from __future__ import annotations

from typing import Any

from hermes_core.pgmigrate import Migration, apply_migrations
from hermes_core.sessions.cjk import CJK_CLASS
from hermes_core.sessions.pgbackfill import queue_backfill
from hermes_core.sessions.pgtrigram import queue_trigram_index

__all__ = ["MIGRATIONS", "PG_SCHEMA_VERSION", "migrate"]

_LOCK_KEY = 0x4845524D  # "HERM": the advisory lock taken while migrating


def _stems(conn: Any) -> None:
    """Migration 4: the stemmed part from the ``stems`` column (the word index's Porter stems),
    and the vector and each message's length read from it.

    Short, so that writers wait for moments, not for the whole store: the column is added
    (no rewrite), the vector and the word count become columns the trigger keeps
    (:data:`_VECTOR_TRIGGER`; dropping a generated column's expression rewrites nothing),
    and the messages stored so far are queued for stemming, which the next writable opening
    does in committed batches (:mod:`~hermes_core.sessions.pgbackfill`). Until its turn a
    row keeps its vector, found by its Snowball stems as a row an older build wrote.
    """
    conn.execute(
        "ALTER TABLE messages ADD COLUMN stems TEXT, "
        "ALTER COLUMN tsv DROP EXPRESSION, ALTER COLUMN words DROP EXPRESSION"
    )
    conn.execute(_VECTOR_TRIGGER)
    queue_backfill(conn)


_VECTOR_TRIGGER = f"""
CREATE OR REPLACE FUNCTION hermes_message_vector() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    NEW.words := CASE WHEN NEW.stems IS NULL
        THEN regexp_count(COALESCE(NEW.search_text, ''), '\\w+')
        ELSE COALESCE(array_length(string_to_array(NULLIF(NEW.stems, ''), ' '), 1), 0) END;
    NEW.tsv := setweight(CASE WHEN NEW.stems IS NULL
            THEN to_tsvector('english', COALESCE(NEW.search_text, ''))
            ELSE to_tsvector('simple', NEW.stems) END, 'A')
        || to_tsvector('simple', COALESCE(NEW.cjk_grams, ''))
        || to_tsvector('simple',
            regexp_replace(COALESCE(NEW.search_text, ''), '[{CJK_CLASS}]+', ' ', 'g'));
    RETURN NEW;
END
$fn$;
CREATE OR REPLACE TRIGGER messages_vector BEFORE INSERT OR UPDATE ON messages
    FOR EACH ROW EXECUTE FUNCTION hermes_message_vector();
"""
"""A message's length in the word index's tokens (as FTS5 counts them for BM25) and its
vector, set on every insert and update: the stems (weight A, what words and phrases match),
the CJK grams, and the words as written with the CJK runs as spaces (a word glued to CJK
text). A row without stems (an older build's) has Snowball's stems and ``\\w+`` words.
A trigger, not generated columns, so that changing what the vector holds never rewrites the
table under an exclusive lock: the rows are written again in batches instead."""


def _vector_trigger(conn: Any) -> None:
    """Migration 7: the trigger of :data:`_VECTOR_TRIGGER` in a store the build before it
    migrated to schema 4 (generated columns then); a no-op for one this build did."""
    conn.execute(
        "ALTER TABLE messages ALTER COLUMN tsv DROP EXPRESSION IF EXISTS, "
        "ALTER COLUMN words DROP EXPRESSION IF EXISTS"
    )
    conn.execute(_VECTOR_TRIGGER)


MIGRATIONS: dict[int, Migration] = {
    1: """
CREATE TABLE IF NOT EXISTS state_meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    user_id TEXT,
    model TEXT,
    model_config TEXT,
    system_prompt TEXT,
    parent_session_id TEXT REFERENCES sessions(id),
    started_at DOUBLE PRECISION NOT NULL,
    ended_at DOUBLE PRECISION,
    end_reason TEXT,
    message_count INTEGER DEFAULT 0,
    tool_call_count INTEGER DEFAULT 0,
    input_tokens BIGINT DEFAULT 0,
    output_tokens BIGINT DEFAULT 0,
    title TEXT,
    last_activity_at DOUBLE PRECISION,
    cwd TEXT,
    git_repo_root TEXT
);
CREATE INDEX IF NOT EXISTS sessions_source ON sessions(source);
CREATE INDEX IF NOT EXISTS sessions_parent ON sessions(parent_session_id);
CREATE INDEX IF NOT EXISTS sessions_started ON sessions(started_at DESC);
CREATE INDEX IF NOT EXISTS sessions_user ON sessions(user_id, started_at DESC)
    WHERE user_id IS NOT NULL;
CREATE UNIQUE INDEX IF NOT EXISTS sessions_user_title
    ON sessions((COALESCE(user_id, '')), title) WHERE title IS NOT NULL;
CREATE TABLE IF NOT EXISTS messages (
    id BIGSERIAL PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL,
    timestamp DOUBLE PRECISION NOT NULL,
    tool_name TEXT,
    name TEXT,
    tool_call_id TEXT,
    token_count INTEGER,
    finish_reason TEXT,
    content TEXT,
    content_parts TEXT,
    tool_calls TEXT,
    client_token TEXT,
    search_text TEXT,
    cjk_grams TEXT,
    tsv TSVECTOR GENERATED ALWAYS AS (
        setweight(to_tsvector('english', COALESCE(search_text, '')), 'A')
        || to_tsvector('simple', COALESCE(search_text, ''))
        || to_tsvector('simple',
            regexp_replace(COALESCE(search_text, ''), '[-._/\\:@#+=&~%]+', ' ', 'g'))
        || to_tsvector('simple', COALESCE(cjk_grams, ''))
    ) STORED
);
CREATE INDEX IF NOT EXISTS messages_session ON messages(session_id, id);
CREATE UNIQUE INDEX IF NOT EXISTS messages_client_token
    ON messages(session_id, client_token) WHERE client_token IS NOT NULL;
CREATE INDEX IF NOT EXISTS messages_tsv ON messages USING GIN (tsv);
""",
    # Search ranking (pgsearch.py): each message's length in words, as FTS5 counts tokens for
    # BM25, stored once instead of counted per search; the sessions where someone speaks
    # by name (pgrerank.py), as SQLite's partial index of speaker names.
    2: r"""
ALTER TABLE messages ADD COLUMN IF NOT EXISTS words INTEGER
    GENERATED ALWAYS AS (regexp_count(COALESCE(search_text, ''), '\w+')) STORED;
CREATE INDEX IF NOT EXISTS messages_named ON messages(session_id) WHERE name IS NOT NULL;
""",
    # The words glued to CJK text (以及Agent通信, 修改youer服务端) as words of their own: the
    # CJK runs read as spaces in a fifth part of the vector.
    3: f"""
ALTER TABLE messages DROP COLUMN tsv;
ALTER TABLE messages ADD COLUMN tsv TSVECTOR GENERATED ALWAYS AS (
    setweight(to_tsvector('english', COALESCE(search_text, '')), 'A')
    || to_tsvector('simple', COALESCE(search_text, ''))
    || to_tsvector('simple',
        regexp_replace(COALESCE(search_text, ''), '[-._/\\:@#+=&~%]+', ' ', 'g'))
    || to_tsvector('simple', COALESCE(cjk_grams, ''))
    || to_tsvector('simple', regexp_replace(COALESCE(search_text, ''), '[{CJK_CLASS}]+', ' ', 'g'))
) STORED;
CREATE INDEX messages_tsv ON messages USING GIN (tsv);
ANALYZE messages;
""",
    4: _stems,
    # Semantic recall without an extension (pgsemantic.py): each piece's vector as float16
    # bytes, per encoder; a message's deletion removes them. seq orders the rows as their
    # writes commit (each write locks its encoder's row first), so a process reads only the
    # rows added since it last read.
    5: """
CREATE TABLE message_vector_encoders (
    id SMALLSERIAL PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    dims INTEGER NOT NULL,
    nonce TEXT NOT NULL,
    low BIGINT,
    high BIGINT
);
CREATE TABLE message_vectors (
    seq BIGSERIAL NOT NULL,
    message_id BIGINT NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    checksum INTEGER NOT NULL,
    encoder SMALLINT NOT NULL REFERENCES message_vector_encoders(id) ON DELETE CASCADE,
    piece SMALLINT NOT NULL,
    vector BYTEA NOT NULL,
    PRIMARY KEY (message_id, encoder, piece)
);
CREATE INDEX message_vectors_seq ON message_vectors(encoder, seq);
CREATE INDEX message_vectors_first ON message_vectors(encoder) WHERE piece = 0;
""",
    6: queue_trigram_index,
    7: _vector_trigger,
}
"""version -> SQL (or a function of the connection) bringing the schema from the version
before to it."""

PG_SCHEMA_VERSION = max(MIGRATIONS)
"""The newest schema this build knows."""


def migrate(conn: Any) -> int:
    """Apply every migration *conn*'s schema lacks, in one transaction; returns the version.

    Raises ``RuntimeError`` for a schema written by a newer build.
    """
    return apply_migrations(
        conn, MIGRATIONS, table="hermes_schema_migrations", lock_key=_LOCK_KEY, what="schema"
    )
