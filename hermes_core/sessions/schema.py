"""The on-disk layout of ``state.db``: tables, full-text indexes, triggers, migrations.

Table and column names follow the core subset of Hermes Agent's schema
(``sessions``, ``messages``, ``state_meta``, ``schema_version``) so the same
code reads either kind of file. In ``messages`` the small columns come first:
SQLite reads a column behind a long text by walking its overflow pages, and
search loads ``session_id``, ``role``, ``timestamp`` and ``tool_name`` of every hit.
``name`` (not in Hermes Agent's schema) keeps who spoke a user or assistant
message in a group chat or a two-person transcript; a tool result's name is its
``tool_name``.

Three FTS5 indexes are kept in step with ``messages`` by triggers, all over the
message text, the name (the tool's, else the speaker's) and the tool-call names +
arguments:

* ``messages_fts`` — ``porter unicode61`` words (stemmed, so *deployed* finds
  *deploy*), every row;
* ``messages_fts_trigram`` — every 3-character substring (glued words such as
  ``Agent通信``), every row except tool output, which is bulky there and already
  in the other two (the same choice as Hermes Agent's newer layout);
* ``messages_cjk_grams`` — CJK unigrams, bigrams and (since version 7) trigrams
  of the rows that contain CJK, so any CJK term, even of one character, is an
  indexed lookup, and a longer one the phrase of its trigrams.

The first two are external-content tables over views, so the text is stored
once (in ``messages``); the views and the triggers share one SQL expression per
column, which FTS5 requires for deletes to stay exact. Tool-call arguments are
indexed as their keys and values when they hold an escape (``\\n``, ``\\"``,
``\\uXXXX``), else as written. The gram index cannot be
computed in SQL, so its trigger only queues the row in ``messages_cjk_pending``
and the store tokenises queued rows inside the same write transaction; any
other writer (the ``sqlite3`` shell, an older build) leaves rows queued and the
next write or search catches up.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

__all__ = [
    "GRAM_TRIGRAMS_VERSION",
    "MARKER_KEY",
    "SCHEMA_VERSION",
    "TEXT_COLUMNS",
    "apply_schema",
    "has_cjk_sql",
    "indexed_name_sql",
    "queue_cjk_rows",
    "queue_gram_rows",
    "reindex_escaped_arguments",
    "replace_index_triggers",
    "schema_sql",
]

SCHEMA_VERSION = 7
"""Layout version of a hermes-memory ``state.db`` (also stored in ``schema_version``)."""

GRAM_TRIGRAMS_VERSION = 7
"""The version from which the gram index holds CJK trigrams besides unigrams and bigrams."""

MARKER_KEY = "hermes_memory.schema"
"""``state_meta`` key that marks a file created by hermes-memory (value: the version)."""

CORE_SQL = """
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS state_meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    user_id TEXT,
    model TEXT,
    model_config TEXT,
    system_prompt TEXT,
    parent_session_id TEXT REFERENCES sessions(id),
    started_at REAL NOT NULL,
    ended_at REAL,
    end_reason TEXT,
    message_count INTEGER DEFAULT 0,
    tool_call_count INTEGER DEFAULT 0,
    input_tokens INTEGER DEFAULT 0,
    output_tokens INTEGER DEFAULT 0,
    title TEXT,
    last_activity_at REAL,
    cwd TEXT,
    git_repo_root TEXT
);
CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL,
    timestamp REAL NOT NULL,
    tool_name TEXT,
    name TEXT,
    tool_call_id TEXT,
    token_count INTEGER,
    finish_reason TEXT,
    content TEXT,
    content_parts TEXT,
    tool_calls TEXT
);
"""

# Created after missing columns are added, so an older file gets them first.
INDEX_SQL = """
CREATE INDEX IF NOT EXISTS idx_sessions_source ON sessions(source);
CREATE INDEX IF NOT EXISTS idx_sessions_parent ON sessions(parent_session_id);
CREATE INDEX IF NOT EXISTS idx_sessions_started ON sessions(started_at DESC);
CREATE UNIQUE INDEX IF NOT EXISTS idx_sessions_user_title_unique
    ON sessions(COALESCE(user_id, ''), title) WHERE title IS NOT NULL;
CREATE INDEX IF NOT EXISTS idx_sessions_user ON sessions(user_id, started_at DESC)
    WHERE user_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS idx_messages_session_id ON messages(session_id, id);
CREATE INDEX IF NOT EXISTS idx_messages_speaker ON messages(session_id, name)
    WHERE name IS NOT NULL;
"""

# Tool-call names and arguments as plain text: 'read_file {"path": "/etc/x"}'.
# Anything that is not a JSON array of objects is indexed as it is.
_TOOL_CALLS_TEXT_V3 = (
    "CASE WHEN json_valid({r}.tool_calls) THEN"
    " CASE WHEN json_type({r}.tool_calls) = 'array' THEN"
    " (SELECT group_concat("
    "COALESCE(json_extract(j.value, '$.function.name'), json_extract(j.value, '$.name'), '')"
    " || ' ' || COALESCE(json_extract(j.value, '$.function.arguments'),"
    " json_extract(j.value, '$.arguments'), ''), ' ')"
    " FROM json_each({r}.tool_calls) AS j WHERE j.type = 'object')"
    " ELSE {r}.tool_calls END"
    " ELSE {r}.tool_calls END"
)

# Since version 4, arguments holding an escape (a line break written as \n, a
# quote, non-ASCII written as \uXXXX) are indexed decoded, as their keys and
# values: 'write_file path /srv/a.py content import os'. Before, the words after
# each escape were glued to its letter ('nimport') and escaped CJK was never
# seen. Arguments without any escape are indexed as written, as in version 3,
# so upgrading re-indexes only the rows that had one. Arguments holding a
# surrogate (an emoji written as \ud83d\ude00) or NUL escape stay as written too.
_ARGUMENT_WORDS = (
    "(SELECT group_concat(CASE WHEN typeof(t.key) = 'text' THEN t.key || ' ' ELSE '' END"
    " || COALESCE(t.atom, ''), ' ') FROM json_tree(c.args) AS t"
    " WHERE typeof(t.key) = 'text' OR t.atom IS NOT NULL)"
)
# SQLite decodes a lone surrogate (\ud800) to bytes that are not UTF-8 and
# stops a value at \u0000: such arguments stay as written.
_UNSAFE_ESCAPES = "(c.args GLOB '*\\u[dD][89abcdefABCDEF]*' OR instr(c.args, '\\u0000') > 0)"
_TOOL_CALLS_TEXT = (
    "CASE WHEN json_valid({r}.tool_calls) THEN"
    " CASE WHEN json_type({r}.tool_calls) = 'array' THEN"
    " (SELECT group_concat(c.name || ' ' || CASE WHEN instr(c.args, '\\') > 0"
    f" AND json_valid(c.args) AND NOT {_UNSAFE_ESCAPES}"
    f" THEN COALESCE({_ARGUMENT_WORDS}, '') ELSE c.args END, ' ')"
    " FROM (SELECT"
    " COALESCE(json_extract(j.value, '$.function.name'), json_extract(j.value, '$.name'), '')"
    " AS name, COALESCE(json_extract(j.value, '$.function.arguments'),"
    " json_extract(j.value, '$.arguments'), '') AS args"
    " FROM json_each({r}.tool_calls) AS j WHERE j.type = 'object') AS c)"
    " ELSE {r}.tool_calls END"
    " ELSE {r}.tool_calls END"
)


def indexed_name_sql(row: str) -> str:
    """The name every index holds for message *row*: the tool's, else the speaker's.

    Rows written before version 3 have no speaker, so this is their
    ``tool_name``, exactly what was indexed then.
    """
    return f"COALESCE({row}.tool_name, {row}.name)"


# Characters that make a row worth tokenising for the CJK gram index.
_DETECT_CLASS = "[\u3041-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002a6df]"


def _columns(row: str) -> str:
    return f"{row}.content, {indexed_name_sql(row)}, " + _TOOL_CALLS_TEXT.format(r=row)


def _fts_sql(table: str, tokenizer: str, rows: str = "") -> str:
    """An external-content FTS5 table over a view of *rows*, with its three triggers.

    *rows* is a condition on the message (``{r}`` = its alias) limiting which
    rows the index holds; the view and every trigger apply the same condition.
    """
    view = f"{table}_src"
    cols = "content, tool_name, tool_calls"
    keep = rows or "1"
    return f"""
CREATE VIEW IF NOT EXISTS {view} AS
    SELECT m.id AS id, m.content AS content, {indexed_name_sql("m")} AS tool_name,
           {_TOOL_CALLS_TEXT.format(r="m")} AS tool_calls
    FROM messages AS m WHERE {keep.format(r="m")};
CREATE VIRTUAL TABLE IF NOT EXISTS {table} USING fts5(
    {cols}, content='{view}', content_rowid='id', tokenize='{tokenizer}');
CREATE TRIGGER IF NOT EXISTS {table}_insert AFTER INSERT ON messages
WHEN {keep.format(r="new")} BEGIN
    INSERT INTO {table}(rowid, {cols}) VALUES (new.id, {_columns("new")});
END;
CREATE TRIGGER IF NOT EXISTS {table}_delete AFTER DELETE ON messages
WHEN {keep.format(r="old")} BEGIN
    INSERT INTO {table}({table}, rowid, {cols}) VALUES ('delete', old.id, {_columns("old")});
END;
CREATE TRIGGER IF NOT EXISTS {table}_update
AFTER UPDATE OF content, tool_name, name, tool_calls, role ON messages BEGIN
    INSERT INTO {table}({table}, rowid, {cols})
        SELECT 'delete', old.id, {_columns("old")} WHERE {keep.format(r="old")};
    INSERT INTO {table}(rowid, {cols})
        SELECT new.id, {_columns("new")} WHERE {keep.format(r="new")};
END;
"""


WORD_TOKENIZER = "porter unicode61 remove_diacritics 2"
"""The word index's tokenizer (porter-stemmed words); :mod:`~hermes_core.sessions.question`
stems text read outside the index with the same one."""

# The external-content indexes: (table, tokenizer, which rows it holds).
_INDEXES = (
    ("messages_fts", WORD_TOKENIZER, ""),
    ("messages_fts_trigram", "trigram", "{r}.role <> 'tool'"),
)


def _cjk_sql() -> str:
    has_new = has_cjk_sql("new")
    return f"""
CREATE VIRTUAL TABLE IF NOT EXISTS messages_cjk_grams USING fts5(grams, tokenize='unicode61');
CREATE TABLE IF NOT EXISTS messages_cjk_pending (id INTEGER PRIMARY KEY);
CREATE TRIGGER IF NOT EXISTS messages_cjk_grams_insert AFTER INSERT ON messages
WHEN {has_new} BEGIN
    INSERT OR IGNORE INTO messages_cjk_pending(id) VALUES (new.id);
END;
CREATE TRIGGER IF NOT EXISTS messages_cjk_grams_delete AFTER DELETE ON messages BEGIN
    DELETE FROM messages_cjk_grams WHERE rowid = old.id;
    DELETE FROM messages_cjk_pending WHERE id = old.id;
END;
CREATE TRIGGER IF NOT EXISTS messages_cjk_grams_update
AFTER UPDATE OF content, tool_name, name, tool_calls ON messages BEGIN
    DELETE FROM messages_cjk_grams WHERE rowid = old.id;
    INSERT OR IGNORE INTO messages_cjk_pending(id) SELECT new.id WHERE {has_new};
END;
"""


def schema_sql() -> str:
    """The complete DDL of the current layout (every statement ``IF NOT EXISTS``)."""
    return CORE_SQL + INDEX_SQL + "".join(_fts_sql(*index) for index in _INDEXES) + _cjk_sql()


TEXT_COLUMNS = ("content", "tool_name", "name", "tool_calls")
"""The ``messages`` columns the indexes read (``name`` is absent before version 3)."""


def has_cjk_sql(row: str, columns: tuple[str, ...] = TEXT_COLUMNS, escaped: bool = True) -> str:
    """An SQL condition: message *row* (a table name or alias) may hold CJK text.

    The ASCII test (character count equals byte count) skips the costlier
    ``GLOB`` for the usual English row. Tool calls holding a ``\\u`` escape
    qualify too unless not *escaped* (version 3 did not decode them); the
    tokeniser decodes them and keeps only what is CJK.
    """
    tests = [
        f"CASE WHEN length({row}.{column}) = length(CAST({row}.{column} AS BLOB)) THEN 0"
        f" ELSE {row}.{column} GLOB '*{_DETECT_CLASS}*' END"
        for column in columns
    ]
    if escaped and "tool_calls" in columns:  # arguments may spell CJK as \uXXXX escapes
        tests.append(f"instr({row}.tool_calls, '\\u') > 0")
    return " OR ".join(tests)


def queue_cjk_rows(conn: sqlite3.Connection) -> None:
    """Queue every row holding CJK text for the gram index (schema version 2 did this once)."""
    has = has_cjk_sql("messages")
    conn.execute(
        f"INSERT OR IGNORE INTO messages_cjk_pending(id) SELECT id FROM messages WHERE {has}"
    )


def replace_index_triggers(conn: sqlite3.Connection) -> None:
    """Recreate the index views and triggers (version 3 indexes the speaker's name too).

    The indexes themselves stay: for every row already indexed the new
    expressions give the text that was indexed, so deletes remain exact.
    """
    for table in ("messages_fts", "messages_fts_trigram"):
        for event in ("insert", "delete", "update"):
            conn.execute(f"DROP TRIGGER IF EXISTS {table}_{event}")
        conn.execute(f"DROP VIEW IF EXISTS {table}_src")
    for event in ("insert", "update"):
        conn.execute(f"DROP TRIGGER IF EXISTS messages_cjk_grams_{event}")
    for statement in _statements(schema_sql()):
        conn.execute(statement)


def reindex_escaped_arguments(conn: sqlite3.Connection) -> None:
    """Re-index the tool calls whose arguments hold an escape (version 4 decodes them).

    Each such row is deleted from the word and trigram indexes with exactly the
    text version 3 indexed, and added back with the decoded text; rows whose
    text is the same either way (no escape) are left alone. Rows whose escapes
    may hide CJK are queued for the gram index.
    """
    old = _TOOL_CALLS_TEXT_V3.format(r="m")
    new = _TOOL_CALLS_TEXT.format(r="m")
    name = indexed_name_sql("m")
    changed = (
        f"m.tool_calls IS NOT NULL AND instr(m.tool_calls, '\\') > 0 AND ({old}) IS NOT ({new})"
    )
    for table, _tokenizer, rows in _INDEXES:
        keep = (rows or "1").format(r="m")
        conn.execute(
            f"INSERT INTO {table}({table}, rowid, content, tool_name, tool_calls) "
            f"SELECT 'delete', m.id, m.content, {name}, {old} FROM messages AS m "
            f"WHERE {changed} AND {keep}"
        )
        conn.execute(
            f"INSERT INTO {table}(rowid, content, tool_name, tool_calls) "
            f"SELECT m.id, m.content, {name}, {new} FROM messages AS m WHERE {changed} AND {keep}"
        )
    conn.execute(
        "INSERT OR IGNORE INTO messages_cjk_pending(id) "
        "SELECT id FROM messages WHERE instr(tool_calls, '\\u') > 0"
    )
    replace_index_triggers(conn)


def titles_unique_per_user(conn: sqlite3.Connection) -> None:
    """Version 6: titles are unique per user (one user's title never blocks another's)."""
    conn.execute("DROP INDEX IF EXISTS idx_sessions_title_unique")


def queue_gram_rows(conn: sqlite3.Connection) -> None:
    """Version 7: queue every row of the gram index to be tokenised again, with trigrams.

    Only the queue is written here (one statement, whatever the size of the store); the
    store re-tokenises the queue afterwards in batches, each its own transaction, so an
    interrupted upgrade resumes where it stopped, and rows still queued are found by a
    ``LIKE`` over the queue meanwhile (as for rows another program wrote).
    """
    conn.execute(
        "INSERT OR IGNORE INTO messages_cjk_pending(id) SELECT rowid FROM messages_cjk_grams"
    )


# version -> migration run once when a file is brought up to that version.
# New tables and columns need no entry: apply_schema() creates what is missing.
_MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {
    2: queue_cjk_rows,
    3: replace_index_triggers,
    4: reindex_escaped_arguments,
    6: titles_unique_per_user,
    7: queue_gram_rows,
}


def _expected_columns() -> dict[str, list[tuple[str, str, int, str | None]]]:
    scratch = sqlite3.connect(":memory:")
    try:
        scratch.executescript(CORE_SQL)
        tables = [
            row[0]
            for row in scratch.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        ]
        return {
            table: [
                (row[1], row[2], row[3], row[4])
                for row in scratch.execute(f"PRAGMA table_info({table})")
            ]
            for table in tables
        }
    finally:
        scratch.close()


def _add_missing_columns(conn: sqlite3.Connection) -> None:
    for table, columns in _expected_columns().items():
        live = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
        for name, decl, notnull, default in columns:
            if name in live:
                continue
            clause = f"ALTER TABLE {table} ADD COLUMN {name} {decl}"
            if default is not None:
                clause += f" DEFAULT {default}"
            if notnull and default is not None:
                clause += " NOT NULL"
            conn.execute(clause)


def stored_version(conn: sqlite3.Connection) -> int:
    """The version recorded in *conn*'s file (0 for a new, empty file)."""
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
    ).fetchone()
    if row is None:
        return 0
    version = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()[0]
    return int(version or 0)


def apply_schema(conn: sqlite3.Connection) -> int:
    """Create or upgrade the layout inside the caller's write transaction.

    Idempotent: creates missing tables, indexes, views and triggers, adds
    columns missing from older files, runs each data migration newer than the
    stored version once, and records :data:`SCHEMA_VERSION`. Returns the version
    the file had before.
    """
    before = stored_version(conn)
    for statement in _statements(CORE_SQL):
        conn.execute(statement)
    _add_missing_columns(conn)
    for statement in _statements(schema_sql()):
        conn.execute(statement)
    for version in sorted(_MIGRATIONS):
        if before < version <= SCHEMA_VERSION and before > 0:
            _MIGRATIONS[version](conn)
    if before != SCHEMA_VERSION:
        conn.execute("DELETE FROM schema_version")
        conn.execute("INSERT INTO schema_version(version) VALUES (?)", (SCHEMA_VERSION,))
    conn.execute(
        "INSERT INTO state_meta(key, value) VALUES (?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value WHERE value <> excluded.value",
        (MARKER_KEY, str(SCHEMA_VERSION)),
    )
    return before


def _statements(script: str) -> list[str]:
    """Split a DDL script into complete statements (triggers contain semicolons)."""
    statements: list[str] = []
    pending = ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            if pending.strip():
                statements.append(pending.strip())
            pending = ""
    if pending.strip():
        statements.append(pending.strip())
    return statements
