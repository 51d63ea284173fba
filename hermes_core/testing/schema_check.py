"""Checks that tool schemas are well formed and safe for strict model backends.

Strict backends (OpenAI structured tools, Anthropic, Gemini) reject a whole
request when one tool's parameters are not a plain JSON-Schema object, so a
single bad schema from a memory provider would break every turn. Each problem
is reported as one sentence naming the tool, what is wrong, and how to fix it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from hermes_core.provider import TOOL_NAME_PATTERN

__all__ = ["TOOL_NAME_PATTERN", "tool_schema_problems"]


_FORBIDDEN_TOP_LEVEL = ("anyOf", "oneOf", "allOf", "enum", "not")
_JSON_TYPES = {"string", "number", "integer", "boolean", "array", "object", "null"}


def _unwrap(schema: Any) -> Any:
    if isinstance(schema, dict) and schema.get("type") == "function":
        return schema.get("function")
    return schema


def _property_problems(tool: str, name: str, prop: Any) -> list[str]:
    where = f"tool {tool!r} parameter {name!r}"
    if not isinstance(prop, dict):
        return [f'{where} is {type(prop).__name__}: use a schema such as {{"type": "string"}}.']
    problems = []
    declared = prop.get("type")
    types = declared if isinstance(declared, list) else [declared]
    has_combinator = any(key in prop for key in ("anyOf", "oneOf", "allOf", "$ref"))
    if declared is None and not has_combinator and "enum" not in prop:
        problems.append(f'{where} has no "type": add one, e.g. "type": "string".')
    elif declared is not None and not all(t in _JSON_TYPES for t in types):
        problems.append(
            f"{where} has type {declared!r}: use one of {', '.join(sorted(_JSON_TYPES))}."
        )
    if "array" in types and not isinstance(prop.get("items"), dict):
        problems.append(f'{where} is an array without "items": add e.g. "items": {{...}}.')
    return problems


def _parameters_problems(tool: str, params: Any) -> list[str]:
    if not isinstance(params, dict):
        return [
            f"tool {tool!r} has parameters of type {type(params).__name__}: "
            'use a JSON-Schema object, e.g. {"type": "object", "properties": {}}.'
        ]
    problems = []
    if params.get("type") != "object":
        problems.append(
            f'tool {tool!r} parameters have "type": {params.get("type")!r}: strict backends '
            'require "type": "object" at the top level.'
        )
    for key in _FORBIDDEN_TOP_LEVEL:
        if key in params:
            problems.append(
                f'tool {tool!r} parameters use top-level "{key}", which strict backends reject: '
                "move the alternatives into a property (or split the tool in two)."
            )
    properties = params.get("properties", {})
    if not isinstance(properties, dict):
        problems.append(f'tool {tool!r} "properties" must be an object mapping names to schemas.')
        properties = {}
    for name, prop in properties.items():
        problems.extend(_property_problems(tool, name, prop))
    required = params.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        problems.append(f'tool {tool!r} "required" must be a list of parameter names.')
    else:
        for name in required:
            if name not in properties:
                problems.append(
                    f'tool {tool!r} lists {name!r} in "required" but not in "properties": '
                    "declare it or drop it from required."
                )
    return problems


def _json_problem(tool: str, schema: Any) -> str | None:
    try:
        json.dumps(schema, allow_nan=False)
    except (TypeError, ValueError) as exc:
        return (
            f"tool {tool!r} schema is not JSON-serializable ({exc}): use only dicts, lists, "
            "strings, finite numbers, booleans and None."
        )
    return None


def tool_schema_problems(schemas: Any, *, reserved_names: Iterable[str] = ()) -> list[str]:
    """Every problem with a provider's ``get_tool_schemas()`` result; ``[]`` when all is well.

    *reserved_names* are tool names the provider may not claim (the builtin
    provider's and the host's own tools, for an external provider).
    """
    if not isinstance(schemas, (list, tuple)):  # Hermes iterates it; a dict gives no tools
        return [
            f"get_tool_schemas() returned {type(schemas).__name__}: return a list of "
            '{"name", "description", "parameters"} dicts ([] for no tools).'
        ]
    reserved = set(reserved_names)
    problems: list[str] = []
    seen: set[str] = set()
    for index, raw in enumerate(schemas):
        schema = _unwrap(raw)
        if not isinstance(schema, dict):
            problems.append(
                f"tool #{index} is {type(schema).__name__}: each tool must be a dict with "
                '"name", "description" and "parameters".'
            )
            continue
        name = schema.get("name")
        label = name if isinstance(name, str) and name else f"#{index}"
        if not isinstance(name, str) or not TOOL_NAME_PATTERN.match(name):
            problems.append(
                f"tool {label!r} has the name {name!r}: names must match "
                f"{TOOL_NAME_PATTERN.pattern} (letters, digits, _ and -, at most 64)."
            )
        elif name in seen:
            problems.append(f"tool {name!r} is declared twice: tool names must be unique.")
        elif name in reserved:
            problems.append(
                f"tool {name!r} is reserved for the builtin provider or the host agent: "
                "rename it (prefix it with your provider's name)."
            )
        if isinstance(name, str):
            seen.add(name)
        description = schema.get("description")
        if not isinstance(description, str) or not description.strip():
            problems.append(
                f'tool {label!r} has no "description": the model picks tools by their '
                "description, so say what the tool does and when to use it."
            )
        if "parameters" not in schema:
            problems.append(
                f'tool {label!r} has no "parameters": use '
                '{"type": "object", "properties": {}} for a tool without arguments.'
            )
        else:
            problems.extend(_parameters_problems(str(label), schema["parameters"]))
        json_problem = _json_problem(str(label), raw)
        if json_problem:
            problems.append(json_problem)
    return problems
