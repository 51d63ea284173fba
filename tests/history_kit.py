"""A history with every kind of session, and a full dump of a store to compare two by.

Both take a state.db path or a PostgreSQL URL (a ``session_backend`` value).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hermes_core.sessions.backends import open_session_store

DERIVED = {"last_activity_at"}
"""Columns an import computes again (the time of the last message, or the start)."""


def dump(path: Path | str) -> dict[str, Any]:
    """Every session (all columns but derived ones), its messages (without ids) and lineage."""
    with open_session_store(path, read_only=True) as store:
        ids = store.session_ids_starting_with("", limit=1_000_000)
        sessions = {}
        for session_id in ids:
            row = store.get_session(session_id)
            assert row is not None
            messages = [
                {k: v for k, v in m.items() if k not in ("id", "session_id")}
                for m in store.get_messages(session_id)
            ]
            sessions[session_id] = {
                "row": {k: v for k, v in row.items() if k not in DERIVED},
                "messages": messages,
                "lineage": store.get_lineage(session_id),
            }
        return sessions


def history(path: Path | str) -> None:
    """A compression chain, a subagent, users, titles, tool calls, content parts, an empty one."""
    with open_session_store(path) as store:
        store.create_session(
            "s1",
            source="cli",
            title="Deploy plan",
            user_id="alice",
            model="m1",
            system_prompt="You are helpful.",
            cwd="/srv/app",
            git_repo_root="/srv/app",
        )
        store.append_message("s1", "user", "How do I deploy?", token_count=5)
        store.append_message(
            "s1",
            "assistant",
            None,
            tool_calls=[
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path": "/srv/x"}'},
                }
            ],
            finish_reason="tool_calls",
        )
        store.append_message("s1", "tool", "contents", tool_call_id="c1", tool_name="read_file")
        store.update_token_counts("s1", 120, 30)
        store.end_session("s1", "compression")
        store.create_session(
            "s2", source="cli", parent_session_id="s1", title="Deploy plan #2", user_id="alice"
        )
        store.append_message(
            "s2",
            "user",
            [
                {"type": "text", "text": "see the image"},
                {"type": "image_url", "image_url": {"url": "data:,x"}},
            ],
        )
        store.append_message("s2", "assistant", "Line one\nline two\u2028 tab\t end ✓")
        store.create_session(
            "sub",
            source="tool",
            parent_session_id="s2",
            user_id="alice",
            model_config={"_delegate_from": "s2", "temperature": 0.2},
        )
        store.append_message("sub", "user", "subtask")
        store.create_session("bob1", source="telegram", user_id="bob", title="Bob's")
        store.append_message("bob1", "user", "hi", name="Bob")
        store.append_message("bob1", "assistant", "hello Bob")
        store.end_session("bob1", "user_exit")
        store.create_session("empty", source="cli")
