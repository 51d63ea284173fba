"""Tool calls the conformance suite makes up from a provider's tool schemas."""

from __future__ import annotations

from typing import Any

from hermes_core.provider import MemoryProvider


def example_value(schema: Any) -> Any:
    """A plausible value for a JSON-Schema property (for generated tool calls)."""
    if not isinstance(schema, dict):
        return "conformance probe"
    if schema.get("enum"):
        return schema["enum"][0]
    for combinator in ("anyOf", "oneOf"):
        options = schema.get(combinator)
        if isinstance(options, list) and options:
            return example_value(options[0])
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind == "integer":
        low = schema.get("minimum", 1)
        return int(low) if isinstance(low, int | float) else 1
    if kind == "number":
        low = schema.get("minimum", 1.0)
        return float(low) if isinstance(low, int | float) else 1.0
    if kind == "boolean":
        return True
    if kind == "array":
        return []
    if kind == "object":
        return {}
    return "conformance probe"


def example_arguments(parameters: Any) -> dict[str, Any]:
    """Arguments that fill every required parameter with a value of the right type."""
    if not isinstance(parameters, dict):
        return {}
    properties = parameters.get("properties") or {}
    required = parameters.get("required") or []
    return {name: example_value(properties.get(name)) for name in required}


def wrong_type_value(schema: Any) -> Any:
    kind = schema.get("type") if isinstance(schema, dict) else None
    return {"unexpected": ["structure"]} if kind == "string" else "not-the-declared-type"


def plain_schemas(provider: MemoryProvider) -> list[dict[str, Any]]:
    plain = []
    for raw in provider.get_tool_schemas():
        schema = (
            raw.get("function") if isinstance(raw, dict) and raw.get("type") == "function" else raw
        )
        if isinstance(schema, dict) and isinstance(schema.get("name"), str):
            plain.append(schema)
    return plain
