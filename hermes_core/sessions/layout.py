"""What a ``state.db`` file actually contains: ours, or one written by Hermes Agent.

Readers never assume the current layout. Hermes Agent wrote three generations
of full-text tables (external content over ``messages``; inline copies of a
concatenated column; external content over views) and added columns over
time. :func:`inspect_layout` reports which tables, columns and usable FTS
indexes a file has, so search and reads adapt to it without writing anything,
and what makes a file unreadable as sessions (:attr:`Layout.problems`): a column
every generation has but the file lacks, or a schema version that is not a number.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass, field
from functools import cached_property

from hermes_core.sessions.cjk import LONGEST_GRAM
from hermes_core.sessions.schema import GRAM_TRIGRAMS_VERSION, MARKER_KEY

__all__ = ["REQUIRED_COLUMNS", "FtsIndex", "Layout", "inspect_layout"]

WORD_INDEX = "messages_fts"
TRIGRAM_INDEX = "messages_fts_trigram"
GRAM_INDEX = "messages_cjk_grams"
_KNOWN_TOKENIZERS = {"unicode61", "porter", "ascii", "trigram"}

REQUIRED_COLUMNS = {
    "sessions": (
        "id",
        "source",
        "started_at",
        "ended_at",
        "end_reason",
        "parent_session_id",
        "model_config",
    ),
    "messages": ("id", "session_id", "role", "content", "tool_name", "timestamp"),
}
"""Columns readers select unconditionally; every Hermes Agent and hermes-memory layout has them."""


@dataclass(frozen=True)
class FtsIndex:
    """One usable FTS5 table."""

    name: str
    columns: tuple[str, ...]
    tokenizer: str


@dataclass(frozen=True)
class Layout:
    """The parts of a ``state.db`` that readers depend on."""

    ours: bool
    version: int
    message_columns: frozenset[str]
    session_columns: frozenset[str]
    indexes: dict[str, FtsIndex] = field(default_factory=dict)
    has_pending_grams: bool = False
    problems: tuple[str, ...] = ()
    """Why the file cannot be read as sessions (``()`` when it can)."""
    compiled: dict[object, object] = field(default_factory=dict, compare=False, repr=False)
    """Search SQL already compiled for this layout (a cache of
    :func:`~hermes_core.sessions.routing.compile_query`, not part of the file's description)."""

    @property
    def word(self) -> FtsIndex | None:
        """The word index (``messages_fts``), if usable."""
        return self.indexes.get(WORD_INDEX)

    @property
    def trigram(self) -> FtsIndex | None:
        """The trigram index, if usable."""
        return self.indexes.get(TRIGRAM_INDEX)

    @property
    def grams(self) -> FtsIndex | None:
        """The CJK gram index (hermes-memory files only)."""
        return self.indexes.get(GRAM_INDEX)

    @property
    def longest_gram(self) -> int:
        """The longest gram the gram index holds: 3 since version 7, 2 before."""
        return LONGEST_GRAM if self.version >= GRAM_TRIGRAMS_VERSION else 2

    @cached_property
    def every_row_visible(self) -> bool:
        """True when the file has no columns marking messages rewound or hidden."""
        return self.visible_rows_sql() == "1"

    def visible_rows_sql(self, alias: str = "m") -> str:
        """A WHERE fragment hiding rows Hermes marks rewound or hidden ('1' if none)."""
        parts = []
        if {"active", "compacted"} <= self.message_columns:
            parts.append(f"({alias}.active = 1 OR {alias}.compacted = 1)")
        if "display_kind" in self.message_columns:
            parts.append(f"COALESCE({alias}.display_kind, '') <> 'hidden'")
        return " AND ".join(parts) or "1"


_ARG_RE = re.compile(r"""\s*((?:'[^']*'|"[^"]*"|[^,'"])+)\s*(?:,|$)""")


def _fts_arguments(sql: str) -> list[str]:
    start = sql.find("(")
    end = sql.rfind(")")
    if start < 0 or end <= start:
        return []
    return [m.group(1).strip() for m in _ARG_RE.finditer(sql[start + 1 : end])]


def _parse_fts(name: str, sql: str) -> FtsIndex | None:
    if "fts5" not in sql.lower():
        return None
    columns: list[str] = []
    tokenizer = "unicode61"
    for arg in _fts_arguments(sql):
        key, sep, value = arg.partition("=")
        if not sep:
            columns.append(arg.split()[0].strip("\"'`[]"))
            continue
        if key.strip().lower() == "tokenize":
            tokenizer = value.strip().strip("'\"").strip()
    if not columns or tokenizer.split()[0].lower() not in _KNOWN_TOKENIZERS:
        return None
    return FtsIndex(name=name, columns=tuple(columns), tokenizer=tokenizer.lower())


def _probe(conn: sqlite3.Connection, index: FtsIndex) -> bool:
    try:
        conn.execute(
            f"SELECT rowid FROM {index.name} WHERE {index.name} MATCH ? LIMIT 1", ('"zzzz"',)
        ).fetchall()
    except sqlite3.Error:
        return False
    return True


def inspect_layout(conn: sqlite3.Connection) -> Layout:
    """Describe the file behind *conn* (reads only ``sqlite_master`` and a few rows)."""
    objects = {
        row[0]: (row[1], row[2] or "")
        for row in conn.execute("SELECT name, type, sql FROM sqlite_master")
    }

    def columns(table: str) -> frozenset[str]:
        if table not in objects:
            return frozenset()
        return frozenset(row[1] for row in conn.execute(f"PRAGMA table_info({table})"))

    problems = [
        f"table {table} has no column {', '.join(missing)}"
        for table, needed in REQUIRED_COLUMNS.items()
        if table in objects and (missing := [name for name in needed if name not in columns(table)])
    ]
    ours = False
    version = 0
    if "state_meta" in objects and {"key", "value"} <= columns("state_meta"):
        row = conn.execute("SELECT value FROM state_meta WHERE key = ?", (MARKER_KEY,)).fetchone()
        ours = row is not None
    if "schema_version" in objects and "version" in columns("schema_version"):
        value = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()[0]
        parsed = _version(value)
        if parsed is None:
            problems.append(f"schema_version holds {value!r:.40}, not a version number")
        version = parsed or 0
    indexes: dict[str, FtsIndex] = {}
    for name in (WORD_INDEX, TRIGRAM_INDEX, GRAM_INDEX):
        if name == GRAM_INDEX and not ours:
            continue  # Hermes' own CJK table needs a loadable tokenizer we do not have
        kind, sql = objects.get(name, ("", ""))
        if kind != "table":
            continue
        index = _parse_fts(name, sql)
        if index is not None and _probe(conn, index):
            indexes[name] = index
    return Layout(
        ours=ours,
        version=version,
        message_columns=columns("messages"),
        session_columns=columns("sessions"),
        indexes=indexes,
        has_pending_grams="messages_cjk_pending" in objects,
        problems=tuple(problems),
    )


def _version(value: object) -> int | None:
    """A stored schema version as a whole number (``0`` for none); ``None`` if it is not one."""
    if value is None:
        return 0
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        return int(value)  # '5', as a hand edit may store it
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value if isinstance(value, int) and value >= 0 else None
