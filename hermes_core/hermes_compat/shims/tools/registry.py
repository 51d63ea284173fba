"""``tools.registry``: the JSON result helpers tool handlers return."""

from __future__ import annotations

import json
from typing import Any

__hermes_compat__ = True

__all__ = ["tool_error", "tool_result"]


def tool_error(message: object, **extra: Any) -> str:
    """A tool result reporting failure: JSON ``{"error": message, **extra}``."""
    return json.dumps({"error": str(message), **extra}, ensure_ascii=False, default=str)


def tool_result(data: Any = None, **fields: Any) -> str:
    """A successful tool result as JSON: *data* merged with *fields*.

    A mapping is merged key by key; any other value goes under ``"result"`` when
    *fields* are given and is serialised as it is otherwise.
    """
    if data is None or isinstance(data, dict):
        return json.dumps({**(data or {}), **fields}, ensure_ascii=False, default=str)
    if fields:
        return json.dumps({"result": data, **fields}, ensure_ascii=False, default=str)
    return json.dumps(data, ensure_ascii=False, default=str)
