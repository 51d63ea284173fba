"""Token estimates for context budgeting when the endpoint reports no usage.

The estimate is deliberately simple and model-agnostic: about four characters
per token, plus a small per-message envelope. It errs slightly high so that
compression triggers a little early rather than too late. Reported usage from
the endpoint (``prompt_tokens``) always wins over the estimate when present.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "CHARS_PER_TOKEN",
    "MESSAGE_OVERHEAD_TOKENS",
    "estimate_message_tokens",
    "estimate_messages_tokens",
    "estimate_text_tokens",
    "estimate_tools_tokens",
]

CHARS_PER_TOKEN = 4
"""Characters per token assumed by the estimate (English prose averages ~4)."""

MESSAGE_OVERHEAD_TOKENS = 4
"""Tokens every chat message costs beyond its text (role, separators)."""


def estimate_text_tokens(text: str | None) -> int:
    """Tokens in *text*: ``ceil(len / 4)``, 0 for empty text."""
    if not text:
        return 0
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # multimodal parts: count the text parts only
        parts = []
        for part in content:
            if isinstance(part, Mapping) and isinstance(part.get("text"), str):
                parts.append(part["text"])
        return "\n".join(parts)
    return json.dumps(content, ensure_ascii=False, default=str)


def estimate_message_tokens(message: Mapping[str, Any]) -> int:
    """Tokens of one OpenAI-style message, including its tool-call envelope."""
    tokens = MESSAGE_OVERHEAD_TOKENS + estimate_text_tokens(_content_text(message.get("content")))
    calls = message.get("tool_calls")
    if calls:
        tokens += estimate_text_tokens(json.dumps(calls, ensure_ascii=False, default=str))
    if message.get("tool_call_id"):
        tokens += estimate_text_tokens(str(message["tool_call_id"]))
    return tokens


def estimate_messages_tokens(messages: Iterable[Mapping[str, Any]]) -> int:
    """Tokens of a whole message list."""
    return sum(estimate_message_tokens(m) for m in messages)


def estimate_tools_tokens(tools: Iterable[Mapping[str, Any]] | None) -> int:
    """Tokens the tool schemas add to every request."""
    if not tools:
        return 0
    return estimate_text_tokens(json.dumps(list(tools), ensure_ascii=False, default=str))
