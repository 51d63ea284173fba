"""Bulk import, shared by both backends: whole sessions checked and encoded before any write.

:func:`prepare_import` refuses a bad session (an id, a title, a message) before the
store opens its transaction, so an import is all or nothing on either backend.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from hermes_core.errors import SessionStoreError, SessionTitleError
from hermes_core.sessions.records import encode_messages, sane_timestamp, valid_session_id
from hermes_core.sessions.scope import UserScope
from hermes_core.sessions.titles import sanitize_title

__all__ = [
    "IMPORT_SESSION_COLUMNS",
    "ImportBatch",
    "missing_parent_error",
    "prepare_import",
    "session_exists_error",
    "title_taken_error",
]

IMPORT_SESSION_COLUMNS = (
    "id, source, user_id, model, parent_session_id, started_at, ended_at, end_reason, "
    "message_count, tool_call_count, last_activity_at, system_prompt, model_config, "
    "input_tokens, output_tokens, cwd, git_repo_root"
)
"""The ``sessions`` columns of :attr:`ImportBatch.session_rows`, in order."""


@dataclass(frozen=True)
class ImportBatch:
    """Rows ready to insert: sessions (:data:`IMPORT_SESSION_COLUMNS`), messages (the
    ``encode_messages`` layout), titles to set, and the session ids."""

    session_rows: list[tuple[Any, ...]]
    message_rows: list[tuple[Any, ...]]
    titles: list[tuple[str, str]]
    ids: list[str]


def prepare_import(sessions: Iterable[Mapping[str, Any]], scope: UserScope) -> ImportBatch:
    """Check and encode *sessions* (see ``SessionStore.import_sessions``) for *scope*."""
    session_rows: list[tuple[Any, ...]] = []
    message_rows: list[tuple[Any, ...]] = []
    titles: list[tuple[str, str]] = []
    for session in sessions:
        raw_id = session.get("id")
        if isinstance(raw_id, int) and not isinstance(raw_id, bool):
            raw_id = str(raw_id)
        session_id = valid_session_id(raw_id, "An imported session's id")
        rows, calls = encode_messages(session_id, session.get("messages") or [])
        started = sane_timestamp(session.get("started_at"), rows[0][7] if rows else time.time())
        last = rows[-1][7] if rows else started
        owner = scope.owner_for(session.get("user_id"), f"imported session {session_id!r}")
        session_rows.append(
            (
                session_id,
                session.get("source") or "import",
                owner,
                session.get("model"),
                session.get("parent_session_id"),
                started,
                session.get("ended_at"),
                session.get("end_reason"),
                len(rows),
                calls,
                last,
                session.get("system_prompt"),
                json.dumps(dict(config)) if (config := session.get("model_config")) else None,
                session.get("input_tokens") or 0,
                session.get("output_tokens") or 0,
                session.get("cwd"),
                session.get("git_repo_root"),
            )
        )
        message_rows.extend(rows)
        try:
            title = sanitize_title(session.get("title"))
        except SessionTitleError as exc:
            raise SessionTitleError(f"Session {session_id!r}: {exc} Nothing was imported.") from exc
        if title:
            titles.append((title, session_id))

    ids = [row[0] for row in session_rows]
    owners = {row[0]: row[2] for row in session_rows}
    # Titles are unique per user (two users may each have a "Plans").
    keys = [((owners[session_id], title), title) for title, session_id in titles]
    for values, what in ([((i,), i) for i in ids], "id"), (keys, "title"):
        seen: set[tuple[Any, ...]] = set()
        for key, value in values:
            if key in seen:
                raise SessionStoreError(
                    f"Two imported sessions have the {what} {value!r}; nothing was "
                    f"imported. Give each session its own {what}."
                )
            seen.add(key)
    return ImportBatch(session_rows, message_rows, titles, ids)


def session_exists_error(session_id: str, where: object) -> SessionStoreError:
    """The refusal of an import holding a session id the store *where* has already."""
    return SessionStoreError(
        f"Session {session_id!r} already exists in {where}; nothing was imported. "
        "Give the imported session another id (`sessions import --session-id` for a "
        'file of one conversation, or its "session_id" in the file).'
    )


def title_taken_error(title: str, owner: str, where: object) -> SessionStoreError:
    """The refusal of an import whose *title* session *owner* of *where* already has."""
    return SessionStoreError(
        f"The title {title!r} is already used by session {owner!r} in "
        f"{where}; nothing was imported. Give the imported session another "
        "title (`sessions import --title` for a file of one conversation, or its "
        '"title" in the file).'
    )


def missing_parent_error(parent: str, where: object) -> SessionStoreError:
    """The refusal of an import whose *parent* is neither imported with it nor in *where*."""
    return SessionStoreError(
        f"Session {parent!r}, the parent of an imported session, is neither "
        f"imported with it nor in {where}; nothing was imported. Import "
        "its parent first, or export the whole conversation."
    )
