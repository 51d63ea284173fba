"""The mem0 tools the model can call: schemas and argument checking.

Schemas stay within the JSON-Schema subset strict backends accept: an object
with typed, described properties, ``required`` naming only real properties,
``additionalProperties: false``, and no ``default``/``minimum``/``maximum``
keywords (ranges are stated in descriptions and enforced here). Optional
arguments may arrive as JSON ``null`` from strict backends; that means "absent".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hermes_core.fencing import clean_text
from hermes_memory_mem0.errors import Mem0ClientError

__all__ = [
    "ADD",
    "DELETE",
    "SEARCH",
    "TOOL_NAMES",
    "TOOL_SCHEMAS",
    "UPDATE",
    "optional_bool",
    "optional_int",
    "required_text",
]

SEARCH = "mem0_search"
ADD = "mem0_add"
UPDATE = "mem0_update"
DELETE = "mem0_delete"

TOOL_SCHEMAS: list[dict[str, Any]] = [
    {
        "name": SEARCH,
        "description": (
            "Search long-term memory (Mem0) for facts about the user and past conversations. "
            "Call it before answering anything that may depend on earlier context; for "
            "multi-part questions run several differently worded searches. Returns JSON "
            '{"results": [{"id", "memory", "score"}], "count"}.'
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What to look for, in plain words."},
                "top_k": {
                    "type": "integer",
                    "description": "How many memories to return, 1 to 50 (default 10).",
                },
                "rerank": {
                    "type": "boolean",
                    "description": "Rerank results for precision (platform mode only).",
                },
            },
            "required": ["query"],
            "additionalProperties": False,
        },
    },
    {
        "name": ADD,
        "description": (
            "Store one durable fact in long-term memory (Mem0), verbatim. Use it for stable "
            "facts and preferences worth recalling in future sessions, not for chit-chat."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "content": {
                    "type": "string",
                    "description": "The fact to remember, as one self-contained sentence.",
                },
            },
            "required": ["content"],
            "additionalProperties": False,
        },
    },
    {
        "name": UPDATE,
        "description": "Replace the text of a memory found with mem0_search (by its id).",
        "parameters": {
            "type": "object",
            "properties": {
                "memory_id": {"type": "string", "description": "The id from mem0_search."},
                "text": {"type": "string", "description": "The corrected memory text."},
            },
            "required": ["memory_id", "text"],
            "additionalProperties": False,
        },
    },
    {
        "name": DELETE,
        "description": "Delete a memory found with mem0_search (by its id) that is wrong or stale.",
        "parameters": {
            "type": "object",
            "properties": {
                "memory_id": {"type": "string", "description": "The id from mem0_search."},
            },
            "required": ["memory_id"],
            "additionalProperties": False,
        },
    },
]
"""OpenAI function-calling schemas, ``{"name", "description", "parameters"}`` each."""

TOOL_NAMES = frozenset(schema["name"] for schema in TOOL_SCHEMAS)


def required_text(tool: str, args: Mapping[str, Any], key: str) -> str:
    """A non-empty string argument, or a :class:`Mem0ClientError` naming it."""
    value = args.get(key)
    if isinstance(value, int | float) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        raise Mem0ClientError(f"{tool} needs a non-empty string '{key}'.")
    return clean_text(value.strip())


def optional_int(
    tool: str, args: Mapping[str, Any], key: str, default: int, low: int, high: int
) -> int:
    """An integer argument within ``low..high`` (null or absent: *default*)."""
    value = args.get(key)
    if value is None or value == "":
        return default
    try:
        if isinstance(value, bool):
            raise ValueError
        number = float(value)
        if number != int(number):
            raise ValueError
    except (TypeError, ValueError, OverflowError):
        raise Mem0ClientError(f"{tool}: '{key}' must be an integer, got {value!r}.") from None
    return max(low, min(high, int(number)))


def optional_bool(tool: str, args: Mapping[str, Any], key: str, default: bool) -> bool:
    """A boolean argument (null or absent: *default*; "true"/"false" strings accepted)."""
    value = args.get(key)
    if value is None or value == "":
        return default
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no"):
        return False
    raise Mem0ClientError(f"{tool}: '{key}' must be true or false, got {value!r}.")
