"""Turning conversation turns and memory entries into Supermemory documents.

Document ids are derived from content, so a write that is retried, replayed
from the backlog or re-sent at session end lands on the same document instead
of creating a duplicate.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from hermes_core.fencing import clean_text, sanitize_context
from hermes_core.provider import is_trivial_prompt
from hermes_core.runtime.summary import split_handoff

MIN_CAPTURE_CHARS = 20
"""Turns shorter than this (user and assistant text together) are not worth storing."""


@dataclass(frozen=True)
class Turn:
    """One user message and the assistant's final answer to it."""

    user: str
    assistant: str

    def cleaned(self) -> Turn:
        """The turn without recalled-memory fences (recall must never be re-ingested) and
        with unpaired surrogates replaced (they cannot be sent)."""
        return Turn(
            clean_text(sanitize_context(self.user)).strip(),
            clean_text(sanitize_context(self.assistant)).strip(),
        )

    def worth_capturing(self) -> bool:
        """False for trivial prompts (``ok``, ``/cmd``) and near-empty exchanges."""
        if is_trivial_prompt(self.user):
            return False
        return len(self.user) + len(self.assistant) >= MIN_CAPTURE_CHARS

    def document(self) -> str:
        """The document text sent to Supermemory."""
        return f"user: {self.user}\nassistant: {self.assistant}"


def _digest(*parts: str) -> str:
    hasher = hashlib.sha256()
    for part in parts:
        hasher.update(clean_text(part).encode("utf-8"))
        hasher.update(b"\x00")
    return hasher.hexdigest()[:24]


def turn_document_id(session_id: str, turn: Turn) -> str:
    """Stable id of a captured turn: the same turn in the same session maps to one document."""
    return f"hermes_turn_{_digest('turn', session_id, turn.user, turn.assistant)}"


def memory_document_id(target: str, content: str) -> str:
    """Stable id of a mirrored builtin memory entry, so a later ``remove`` can find it."""
    return f"hermes_mem_{_digest('memory', target, content.strip())}"


def explicit_document_id(content: str) -> str:
    """Stable id of a fact stored with the ``supermemory_store`` tool."""
    return f"hermes_fact_{_digest('fact', content.strip())}"


def _text_of(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI content parts
        parts: Iterable[Any] = content
        return "\n".join(
            str(p.get("text", "")) for p in parts if isinstance(p, dict) and p.get("type") == "text"
        )
    return ""


def _without_checkpoint(text: str) -> str:
    """*text* without a compaction checkpoint it starts with (what follows it is kept).

    A checkpoint (``[CONTEXT CHECKPOINT — REFERENCE ONLY] … --- END OF CHECKPOINT``)
    is a system-written summary of earlier turns, not something said in the
    conversation: storing it would save a summary as if the user or assistant said it.
    """
    if not text.lstrip().startswith("[CONTEXT "):
        return text
    handoff = split_handoff(text)
    return text if handoff is None else handoff[1]


def turns_from_messages(messages: Iterable[dict[str, Any]]) -> list[Turn]:
    """Pair each user message with the last assistant text before the next user message.

    Tool calls and tool results are skipped; a user message with no assistant
    answer yet is not a turn. Compaction checkpoints are skipped (text written
    after one, in the same message, is kept).
    """
    turns: list[Turn] = []
    user: str | None = None
    answer = ""
    for message in messages:
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        if role not in ("user", "assistant"):
            continue
        raw = _text_of(message)
        text = _without_checkpoint(raw)
        if text != raw and not text.strip():
            continue  # a checkpoint and nothing else
        if role == "user":
            if user is not None and answer:
                turns.append(Turn(user, answer))
            user, answer = text, ""
        elif user is not None and text.strip():
            answer = text
    if user is not None and answer:
        turns.append(Turn(user, answer))
    return turns
