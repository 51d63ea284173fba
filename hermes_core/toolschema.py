"""Tool schemas as the manager accepts them from providers, and the names it keeps for itself.

A provider's ``get_tool_schemas()`` may use the OpenAI
``{"type": "function", "function": {...}}`` form or the plain one. The
manager keeps the plain form of each schema a model request can carry and
drops, with a warning, one that would make a strict backend reject every
request. The conformance suite's stricter checks are in
:mod:`hermes_core.testing.schema_check`.
"""

from __future__ import annotations

import json
from typing import Any

from hermes_core.fencing import clean_text
from hermes_core.provider import TOOL_NAME_PATTERN

__all__ = ["RESERVED_TOOL_NAMES", "normalize_tool_schema", "schema_problem"]

RESERVED_TOOL_NAMES: frozenset[str] = frozenset(
    {
        # the builtin provider's own tools
        "memory",
        "session_search",
        # the host agent's core tools (Hermes Agent's core tool set)
        "clarify",
        "cronjob",
        "delegate_task",
        "execute_code",
        "image_generate",
        "mixture_of_agents",
        "patch",
        "process",
        "read_file",
        "search_files",
        "send_message",
        "skill_manage",
        "skill_view",
        "skills_list",
        "terminal",
        "text_to_speech",
        "todo",
        "vision_analyze",
        "web_extract",
        "web_search",
        "write_file",
    }
)
"""Tool names an external provider may not claim.

They belong to the builtin provider (``memory``, ``session_search``) or to the
host agent itself; an external provider that declares one is registered
without that tool and a warning names it. The builtin provider may own them.
"""


def schema_problem(schema: Any) -> tuple[dict[str, Any] | None, str]:
    """The plain form of *schema* and ``""``, or ``None`` and what makes it unusable."""
    if not isinstance(schema, dict):
        return None, f"a tool schema of type {type(schema).__name__} (not a dict)"
    inner = schema.get("function") if schema.get("type") == "function" else schema
    if not isinstance(inner, dict):
        return None, "a tool schema whose 'function' is not a dict"
    name = inner.get("name")
    if not isinstance(name, str) or not name.strip():
        return None, "a tool schema without a name"
    if not TOOL_NAME_PATTERN.match(name):
        return None, (
            f"tool {name!r}, but tool names must match {TOOL_NAME_PATTERN.pattern} "
            "(letters, digits, _ and -, at most 64)"
        )
    if "parameters" in inner and not isinstance(inner["parameters"], dict):
        return None, (
            f"tool {name!r} with parameters of type {type(inner['parameters']).__name__}; "
            'use a JSON-Schema object such as {"type": "object", "properties": {}}'
        )
    if "description" in inner and not isinstance(inner["description"], str):
        return None, (
            f"tool {name!r} with a description of type {type(inner['description']).__name__}; "
            "use a string"
        )
    try:
        # A copy that survives the request encoder: strict JSON, no unpaired surrogates.
        encoded = json.dumps(inner, ensure_ascii=False, allow_nan=False)
        plain: dict[str, Any] = json.loads(clean_text(encoded))
    except (TypeError, ValueError, RecursionError) as exc:
        return None, (
            f"tool {name!r} whose schema is not JSON ({exc}); use only dicts, lists, "
            "strings, finite numbers, booleans and None"
        )
    return plain, ""


def normalize_tool_schema(schema: Any) -> dict[str, Any] | None:
    """Return the plain ``{"name", "description", "parameters"}`` form of a tool schema.

    Unwraps the OpenAI ``{"type": "function", "function": {...}}`` form and
    returns a JSON copy with unpaired surrogates replaced. Returns ``None`` for
    a schema a strict model backend would reject the whole request for (and so
    every turn): not a dict, a name that is missing or does not match
    ``^[a-zA-Z0-9_-]{1,64}$``, ``parameters`` that are not a dict, a description
    that is not a string, or content that is not JSON (a set, NaN).
    """
    return schema_problem(schema)[0]
