"""The tables of the PostgreSQL memory store (``memory.url``), created and migrated by
the store itself.

Migrations are numbered; ``memory_schema_migrations`` records the ones applied (a
table of its own, so memory can share a database with the session store, which
keeps ``hermes_schema_migrations``). A store applies the missing ones when it
opens, in one transaction under an advisory lock, so processes starting at once on
several machines migrate once. Every row carries its ``owner``: the user id, ``""``
for the single-user memory.
"""

from __future__ import annotations

from typing import Any

from hermes_core.pgmigrate import apply_migrations

__all__ = ["MEMORY_SCHEMA_VERSION", "MIGRATIONS", "migrate"]

_LOCK_KEY = 0x484D454D  # "HMEM": held while migrating

MIGRATIONS: dict[int, str] = {
    # 1: the two documents (IF NOT EXISTS: stores before versioning created it unrecorded).
    1: """
CREATE TABLE IF NOT EXISTS memory_documents (
    owner TEXT NOT NULL,
    target TEXT NOT NULL,
    body TEXT NOT NULL DEFAULT '',
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (owner, target)
)
""",
    # 2: writes held for the user's review (HELD.json of the file store).
    2: """
CREATE TABLE memory_held (
    owner TEXT NOT NULL,
    id TEXT NOT NULL,
    position BIGSERIAL,
    target TEXT NOT NULL,
    content TEXT NOT NULL,
    origin TEXT NOT NULL,
    score DOUBLE PRECISION NOT NULL,
    reason TEXT NOT NULL,
    held_at DOUBLE PRECISION NOT NULL,
    replaces TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (owner, id)
)
""",
    # 3: the archive tier and the curation log (archive.db of the file store).
    3: """
CREATE TABLE memory_changes (
    id BIGSERIAL PRIMARY KEY,
    owner TEXT NOT NULL,
    at DOUBLE PRECISION NOT NULL,
    kind TEXT NOT NULL,
    state TEXT NOT NULL,
    target TEXT NOT NULL,
    reason TEXT NOT NULL,
    before_text TEXT,
    after_text TEXT,
    before_digest TEXT NOT NULL,
    details TEXT NOT NULL DEFAULT '{}',
    undoes BIGINT,
    undone_by BIGINT
);
CREATE INDEX memory_changes_owner ON memory_changes (owner, id);
CREATE TABLE memory_archived (
    id BIGSERIAL PRIMARY KEY,
    owner TEXT NOT NULL,
    target TEXT NOT NULL,
    text TEXT NOT NULL,
    reason TEXT NOT NULL,
    category TEXT NOT NULL,
    related TEXT,
    change_id BIGINT NOT NULL REFERENCES memory_changes (id),
    archived_at DOUBLE PRECISION NOT NULL,
    recall_count INTEGER NOT NULL DEFAULT 0,
    words TEXT[] NOT NULL
);
CREATE INDEX memory_archived_owner ON memory_archived (owner, change_id);
CREATE INDEX memory_archived_words ON memory_archived USING GIN (words);
CREATE TABLE memory_superseded (
    owner TEXT NOT NULL,
    archived_id BIGINT NOT NULL REFERENCES memory_archived (id),
    change_id BIGINT NOT NULL REFERENCES memory_changes (id),
    related TEXT NOT NULL
);
CREATE INDEX memory_superseded_owner ON memory_superseded (owner);
CREATE TABLE memory_judgements (
    owner TEXT NOT NULL,
    target TEXT NOT NULL,
    first_digest TEXT NOT NULL,
    second_digest TEXT NOT NULL,
    verdict TEXT NOT NULL,
    at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (owner, target, first_digest, second_digest)
);
CREATE TABLE memory_usage (
    owner TEXT NOT NULL,
    target TEXT NOT NULL,
    digest TEXT NOT NULL,
    first_seen DOUBLE PRECISION NOT NULL,
    last_used DOUBLE PRECISION,
    uses INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (owner, target, digest)
)
""",
    # 4: a held batch keeps all its operations (JSON), applied together when accepted.
    4: """
ALTER TABLE memory_held ADD COLUMN operations TEXT NOT NULL DEFAULT '[]'
""",
}
"""version -> SQL bringing the schema from the version before to it."""

MEMORY_SCHEMA_VERSION = max(MIGRATIONS)
"""The newest schema this build knows."""


def migrate(conn: Any) -> int:
    """Apply every migration *conn*'s schema lacks, in one transaction; returns the version.

    Raises ``RuntimeError`` for a schema written by a newer build.
    """
    return apply_migrations(
        conn, MIGRATIONS, table="memory_schema_migrations", lock_key=_LOCK_KEY, what="memory schema"
    )
