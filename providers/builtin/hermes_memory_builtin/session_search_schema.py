"""The ``session_search`` tool schema, kept apart so listing tools imports nothing heavy.

:mod:`hermes_memory_builtin.session_search` (the tool itself) re-exports these
names; this module needs only the standard library.
"""

from __future__ import annotations

from typing import Any

DEFAULT_LIMIT = 3
MAX_LIMIT = 5

SESSION_SEARCH_SCHEMA: dict[str, Any] = {
    "name": "session_search",
    "description": (
        "Search your long-term memory of past conversations with this user (every earlier "
        "session, across CLI and messaging platforms). Use it whenever the user refers to "
        "something from before — 'we did this before', 'remember when', 'last time', "
        "'what did we decide about X', 'how did we fix Y' — or when earlier work would help. "
        "With no query it lists recent conversations (cheap). With a query it finds the "
        "matching conversations and returns a summary of each focused on your query. "
        "Queries may be plain questions or keywords; OR widens (docker OR podman), "
        '"quotes" match a phrase, NOT excludes, deploy* matches a prefix; Chinese, Japanese '
        "and Korean text of any length works. A time in the query ('yesterday', 'last week', "
        "'3 days ago') searches that time first; a query that only names a time ('what did "
        "we do yesterday?') lists that time's conversations. The current conversation is "
        "never returned."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "description": "What to look for: a question or keywords. Omit to list "
                "recent conversations.",
            },
            "role_filter": {
                "type": "string",
                "description": "Comma-separated roles to search (user, assistant, system, "
                "tool), e.g. 'user' or 'user,assistant'. Default: all.",
            },
            "limit": {
                "type": "integer",
                "default": DEFAULT_LIMIT,
                "minimum": 1,
                "maximum": MAX_LIMIT,
                "description": "How many conversations to return (default 3, max 5).",
            },
        },
        "required": [],
    },
}
