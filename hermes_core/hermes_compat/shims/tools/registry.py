"""``tools.registry``: the JSON helpers tool handlers return, as Hermes Agent defines them.

Hermes' global tool ``registry`` is not served: hermes-memory routes a memory
provider's tools through ``get_tool_schemas``/``handle_tool_call`` (and the
tools a plugin registers with ``ctx.register_tool``); importing ``registry``
fails with a message saying so.
"""

import json
from typing import Any, NoReturn

from hermes_core.hermes_compat.finder import missing_attribute

__hermes_compat__ = True

__all__ = ["tool_error", "tool_result"]


def tool_error(message: object, **extra: Any) -> str:
    """A failed tool result: JSON ``{"error": str(message), **extra}``."""
    return json.dumps({"error": str(message), **extra}, ensure_ascii=False)


def tool_result(data: Any = None, **kwargs: Any) -> str:
    """A tool result as JSON: *data* when given, else the keyword arguments as an object."""
    return json.dumps(data if data is not None else kwargs, ensure_ascii=False)


def __getattr__(name: str) -> NoReturn:
    raise missing_attribute(__name__, name, __all__)
