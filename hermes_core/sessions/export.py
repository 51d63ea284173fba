"""Exporting sessions as the JSONL that ``sessions import`` reads back.

Each session is one conversation line (:mod:`~hermes_core.sessions.importer`)
holding every field of its row (``parent_session_id`` for lineage, times,
title, user, token counts) and its messages, parents before the sessions that
continue them, so ``import`` of the file into an empty store rebuilds the same
sessions, messages, compression chains and titles. A session whose line would
pass :data:`INLINE_MAX_BYTES` is written as a line with ``"messages": []``
followed by one line per message, each naming the session.

Reads go through :class:`~hermes_core.sessions.SessionStore`'s public methods;
for a snapshot of a file that agents keep writing, export a copy made with
:func:`~hermes_core.sessions.snapshot.copy_database` (what the CLI does).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import IO, Any

from hermes_core.sessions.arguments import MAX_ROWS
from hermes_core.sessions.store import SessionStore

__all__ = ["INLINE_MAX_BYTES", "ExportCounts", "export_sessions", "selected_sessions"]

INLINE_MAX_BYTES = 8 * 1024 * 1024
"""A session's line longer than this is split: the session, then a line per message
(the importer refuses lines over 64 MiB)."""

SESSION_FIELDS = (
    "title",
    "source",
    "model",
    "user_id",
    "parent_session_id",
    "started_at",
    "ended_at",
    "end_reason",
    "system_prompt",
    "model_config",
    "input_tokens",
    "output_tokens",
    "cwd",
    "git_repo_root",
)
"""Session columns written to each conversation line (those that are set)."""

MESSAGE_FIELDS = ("tool_calls", "tool_call_id", "finish_reason", "token_count", "timestamp")


@dataclass(frozen=True)
class ExportCounts:
    """What an export wrote."""

    sessions: int
    messages: int


def _activity(session: Mapping[str, Any]) -> float:
    """The latest time on record for *session* (start, last message, end)."""
    stamps = (session.get(key) for key in ("started_at", "last_activity_at", "ended_at"))
    return max((float(s) for s in stamps if isinstance(s, (int, float))), default=0.0)


def selected_sessions(
    store: SessionStore, *, since: float | None = None, user_id: str | None = None
) -> list[dict[str, Any]]:
    """The session rows to export, parents before the sessions that continue them.

    *since* keeps sessions active at or after it (epoch seconds); *user_id*
    those of one user. Each kept session brings its ancestors (what it was
    compressed from or started by), so its lineage holds in the file; a link to
    a session that is gone from the store is dropped.
    """
    rows: dict[str, dict[str, Any]] = {}
    for session_id in store.session_ids_starting_with("", limit=MAX_ROWS):
        row = store.get_session(session_id)
        if row is not None:
            rows[session_id] = row
    for row in rows.values():
        if row.get("parent_session_id") not in rows:
            row["parent_session_id"] = None

    def wanted(row: Mapping[str, Any]) -> bool:
        if user_id is not None and row.get("user_id") != user_id:
            return False
        return since is None or _activity(row) >= since

    chosen: set[str] = set()
    for session_id, row in rows.items():
        if not wanted(row):
            continue
        current: str | None = session_id
        while current is not None and current not in chosen:
            chosen.add(current)
            current = rows[current].get("parent_session_id")
    ordered: list[dict[str, Any]] = []
    placed: set[str] = set()
    by_start = sorted(chosen, key=lambda sid: (float(rows[sid].get("started_at") or 0), sid))
    for session_id in by_start:
        chain: list[str] = []
        current = session_id
        while current is not None and current not in placed and current not in chain:
            chain.append(current)
            current = rows[current].get("parent_session_id")
        if current is not None and current in chain:  # a loop of parent links: cut it
            rows[chain[-1]]["parent_session_id"] = None
        for member in reversed(chain):
            placed.add(member)
            ordered.append(rows[member])
    return ordered


def _message_record(message: Mapping[str, Any]) -> dict[str, Any]:
    """A stored message as the importer reads it."""
    record: dict[str, Any] = {"role": message["role"], "content": message.get("content")}
    tool_name, name = message.get("tool_name"), message.get("name")
    if message["role"] == "tool":
        name = tool_name or name
    elif tool_name is not None:
        record["tool_name"] = tool_name
    if name is not None:
        record["name"] = name
    for key in MESSAGE_FIELDS:
        if message.get(key) is not None:
            record[key] = message[key]
    return record


def _session_record(session: Mapping[str, Any]) -> dict[str, Any]:
    record: dict[str, Any] = {"session_id": session["id"]}
    for key in SESSION_FIELDS:
        value = session.get(key)
        if key == "model_config" and isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                value = None
            if not isinstance(value, dict):
                value = None
        if key in ("input_tokens", "output_tokens") and not value:
            value = None
        if value is not None:
            record[key] = value
    return record


def _lines(session: Mapping[str, Any], messages: list[dict[str, Any]]) -> Iterator[str]:
    record = _session_record(session)
    records = [_message_record(message) for message in messages]
    line = json.dumps({**record, "messages": records}, ensure_ascii=False)
    if len(line) <= INLINE_MAX_BYTES // 4 or len(line.encode("utf-8")) <= INLINE_MAX_BYTES:
        yield line
        return
    yield json.dumps({**record, "messages": []}, ensure_ascii=False)
    for message in records:
        yield json.dumps({**message, "session_id": session["id"]}, ensure_ascii=False)


def export_sessions(
    store: SessionStore,
    stream: IO[str],
    *,
    since: float | None = None,
    user_id: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> ExportCounts:
    """Write the selected sessions (:func:`selected_sessions`) to *stream* as JSONL.

    *progress* is called with (sessions written, sessions to write) after each one.
    """
    sessions = selected_sessions(store, since=since, user_id=user_id)
    written = 0
    for number, session in enumerate(sessions, start=1):
        messages = store.get_messages(session["id"])
        for line in _lines(session, messages):
            stream.write(line + "\n")
        written += len(messages)
        if progress is not None:
            progress(number, len(sessions))
    return ExportCounts(sessions=len(sessions), messages=written)
