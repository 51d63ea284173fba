"""SQL both session-store backends run, written once with ``?`` placeholders.

The SQLite store runs these as written; the PostgreSQL store runs :func:`for_postgres`
of them (``?`` becomes ``%s``). Only statements that mean the same in both dialects
live here, so a change to one backend's behaviour cannot leave the other behind.
"""

from __future__ import annotations

__all__ = ["SESSION_TITLE_HOLDER", "UPSERT_SESSION", "for_postgres"]

UPSERT_SESSION = """
INSERT INTO sessions(id, source, user_id, model, model_config, system_prompt,
                     parent_session_id, started_at, cwd, git_repo_root)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT(id) DO UPDATE SET
    cwd = COALESCE(sessions.cwd, excluded.cwd),
    git_repo_root = COALESCE(sessions.git_repo_root, excluded.git_repo_root),
    source = CASE WHEN sessions.source = 'unknown' THEN excluded.source
                  ELSE sessions.source END,
    user_id = COALESCE(sessions.user_id, excluded.user_id),
    model = COALESCE(sessions.model, excluded.model),
    model_config = COALESCE(sessions.model_config, excluded.model_config),
    system_prompt = COALESCE(sessions.system_prompt, excluded.system_prompt),
    parent_session_id = COALESCE(sessions.parent_session_id, excluded.parent_session_id)
"""
"""Create a session, or fill the empty fields of the one with that id (first writer wins):
``(id, source, user_id, model, model_config, system_prompt, parent_session_id, started_at,
cwd, git_repo_root)``."""

SESSION_TITLE_HOLDER = (
    "SELECT o.id FROM sessions AS o JOIN sessions AS s ON s.id = ? "
    "WHERE o.title = ? AND o.id <> s.id "
    "AND COALESCE(o.user_id, '') = COALESCE(s.user_id, '')"
)
"""Another session of the same user holding a title: ``(session_id, title)``. Titles are
unique per user; another user's titles are neither seen nor blocking."""


def for_postgres(sql: str) -> str:
    """*sql* with psycopg's placeholders (``%s``; a literal ``%`` doubled)."""
    return sql.replace("%", "%%").replace("?", "%s")
