"""A model's answer: its text, the tool calls it asks for and the tokens it used.

What the model sends is checked as it is read: text that is not text, tool-call
arguments that are not one JSON object (or name a key twice), an answer past
:data:`MAX_ANSWER_CHARS`, each is an :class:`~hermes_core.errors.LLMError`
saying so. Every string is passed through :func:`~hermes_core.fencing.clean_text`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hermes_core.errors import LLMError
from hermes_core.fencing import clean_text

__all__ = ["MAX_ANSWER_CHARS", "TOOL_CALL_CHARS", "ChatResponse", "ToolCall", "Usage"]

MAX_ANSWER_CHARS = 1_000_000
"""Characters of text and tool arguments one answer may carry; no real answer comes close."""
TOOL_CALL_CHARS = 100
"""What each tool call counts towards :data:`MAX_ANSWER_CHARS` besides its name and
arguments, so an answer of endless empty tool calls is a runaway too."""


def printable(text: str) -> str:
    """*text* with control characters escaped, so a message cannot drive a terminal."""
    return "".join(
        ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text
    )


def clean_value(value: Any) -> Any:
    """*value* (decoded JSON) with every string passed through :func:`clean_text`."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, (list, tuple)):
        return [clean_value(item) for item in value]
    if isinstance(value, dict):
        return {clean_text(str(k)): clean_value(v) for k, v in value.items()}
    return value


def content_text(content: Any) -> str:
    """A message's ``content``: a string, the text of a list of content parts, or none.

    Anything else (a number, an object) is not an answer: :class:`LLMError`.
    """
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list):
        return "".join(
            part["text"]
            for part in content
            if isinstance(part, Mapping) and isinstance(part.get("text"), str)
        )
    raise LLMError(
        f"Model sent content that is not text ({type(content).__name__}: {content!r:.100}); "
        "the server is not OpenAI-compatible at that URL, or is misbehaving."
    )


def too_long() -> LLMError:
    return LLMError(
        f"The model's answer passed {MAX_ANSWER_CHARS:,} characters without ending, so "
        "it was stopped (a runaway generation). Retry, or ask for a shorter answer."
    )


def arguments_text(value: Any) -> str:
    """A tool call's ``arguments`` as JSON text.

    Most servers send a string; some send the object itself (and some stream it so),
    which is written back as JSON, not as Python's ``repr`` no JSON reader takes.
    """
    if value is None or isinstance(value, str):
        return clean_text(value or "")
    try:
        return clean_text(json.dumps(value, ensure_ascii=False))
    except (TypeError, ValueError, RecursionError):
        return clean_text(str(value))


class _DuplicateKeyError(ValueError):
    """A JSON object names one key twice (``json`` would silently keep the last value)."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook`` refusing an object that names a key twice."""
    value: dict[str, Any] = {}
    for key, item in pairs:
        if key in value:
            raise _DuplicateKeyError(key)
        value[key] = item
    return value


@dataclass(frozen=True)
class ToolCall:
    """One tool call requested by the model; ``arguments`` is the raw JSON text."""

    id: str
    name: str
    arguments: str

    def parsed_arguments(self) -> dict[str, Any]:
        """The arguments as a dict; raises :class:`LLMError` when they are not a JSON object."""
        text = self.arguments.strip() or "{}"
        try:
            value = clean_value(json.loads(text, object_pairs_hook=_unique_keys))
        except _DuplicateKeyError as exc:
            # The stored call shows both values and the tool would get the last:
            # ask again rather than guess which one the model meant.
            raise LLMError(
                f"Model sent arguments for tool {self.name!r} that name the key "
                f"{printable(clean_text(exc.key))[:80]!r} twice; send each key once."
            ) from exc
        except json.JSONDecodeError as exc:
            raise LLMError(
                f"Model sent malformed arguments for tool {self.name!r}: {exc.msg} "
                f"in {self.arguments[:200]!r}"
            ) from exc
        except ValueError as exc:  # e.g. an integer of more digits than Python reads
            raise LLMError(
                f"Model sent arguments for tool {self.name!r} that cannot be read "
                f"({printable(str(exc))[:120]}) in {self.arguments[:200]!r}"
            ) from exc
        except RecursionError as exc:
            raise LLMError(
                f"Model sent arguments for tool {self.name!r} nested too deeply to read."
            ) from exc
        if not isinstance(value, dict):
            raise LLMError(
                f"Model sent arguments for tool {self.name!r} that are not a JSON object: "
                f"{self.arguments[:200]!r}"
            )
        return value

    def to_message(self) -> dict[str, Any]:
        """The OpenAI wire form used inside an assistant message."""
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


@dataclass(frozen=True)
class Usage:
    """Token counts reported by the endpoint."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cached_tokens: int = 0


@dataclass
class ChatResponse:
    """A complete assistant reply."""

    content: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage | None = None
    finish_reason: str | None = None
    model: str = ""

    def to_message(self) -> dict[str, Any]:
        """The reply as an OpenAI-style assistant message for the transcript."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [call.to_message() for call in self.tool_calls]
        return message


def usage_from(data: Any) -> Usage | None:
    if not isinstance(data, Mapping):
        return None
    details = data.get("prompt_tokens_details")
    cached = details.get("cached_tokens", 0) if isinstance(details, Mapping) else 0

    def as_int(value: Any) -> int:
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    return Usage(
        prompt_tokens=as_int(data.get("prompt_tokens")),
        completion_tokens=as_int(data.get("completion_tokens")),
        total_tokens=as_int(data.get("total_tokens")),
        cached_tokens=as_int(cached),
    )
