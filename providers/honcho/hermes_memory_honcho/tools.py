"""The Honcho tools: their schemas, their argument checks and what they return.

Schemas suit strict function-calling backends: every parameter object is
``{"type": "object", "properties": …, "additionalProperties": false}`` with a
type on every property, no top-level ``anyOf``/``oneOf``/``allOf``/``enum``, no
defaults. Optional arguments may arrive as JSON ``null``; they count as absent.

Every tool works on the current user's peer only, so one user's model can
never read or change another user's memory.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hermes_core.errors import ProviderError
from hermes_core.fencing import clean_text, sanitize_context
from hermes_memory_honcho.identity import is_honcho_id
from hermes_memory_honcho.settings import REASONING_LEVELS

if TYPE_CHECKING:
    from hermes_memory_honcho.client import HonchoClient

__all__ = ["TOOL_NAMES", "TOOL_SCHEMAS", "HonchoTools", "ToolInputError"]

MAX_SEARCH_TOKENS = 2000
DEFAULT_SEARCH_TOKENS = 800
SNIPPET_CHARS = 300
RECENT_MESSAGES = 5
RECENT_MESSAGE_CHARS = 200


def _schema(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict:
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
    }
    if required:
        parameters["required"] = required
    return {"name": name, "description": description, "parameters": parameters}


TOOL_SCHEMAS: list[dict[str, Any]] = [
    _schema(
        "honcho_profile",
        "Read the user's profile card from Honcho: short durable facts about who the user "
        "is. Pass `card` to replace the whole card with a corrected list of facts.",
        {
            "card": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Complete new list of profile facts; omit to read the card.",
            }
        },
        [],
    ),
    _schema(
        "honcho_search",
        "Search what the user said in earlier sessions (full text and semantic, no "
        "reasoning). Returns matching excerpts labelled with their session.",
        {
            "query": {"type": "string", "description": "What to look for."},
            "max_tokens": {
                "type": "integer",
                "description": f"Answer budget in tokens ({DEFAULT_SEARCH_TOKENS} if omitted, "
                f"at most {MAX_SEARCH_TOKENS}).",
            },
        },
        ["query"],
    ),
    _schema(
        "honcho_context",
        "Get Honcho's view of this conversation: session summary, what Honcho knows "
        "about the user (focused on `query` if given), the profile card and recent messages.",
        {"query": {"type": "string", "description": "Optional topic to focus the view on."}},
        [],
    ),
    _schema(
        "honcho_reasoning",
        "Ask Honcho a question about the user in natural language; Honcho reasons over "
        "everything it has learned across sessions. Slower than honcho_search.",
        {
            "query": {"type": "string", "description": "The question about the user."},
            "reasoning_level": {
                "type": "string",
                "enum": list(REASONING_LEVELS),
                "description": "How hard Honcho should think (low if omitted).",
            },
        },
        ["query"],
    ),
    _schema(
        "honcho_conclude",
        "Record a durable conclusion about the user (pass `conclusion`), or delete one "
        "by id (pass `delete_id`, e.g. to remove personal data). Pass exactly one.",
        {
            "conclusion": {"type": "string", "description": "A fact about the user to keep."},
            "delete_id": {"type": "string", "description": "Id of a conclusion to delete."},
        },
        [],
    ),
]
TOOL_NAMES = frozenset(schema["name"] for schema in TOOL_SCHEMAS)


class ToolInputError(ProviderError):
    """A tool was called with arguments it cannot use."""


def _optional(args: Mapping[str, Any], key: str, kind: type, label: str) -> Any:
    value = args.get(key)
    if value is None:
        return None
    if kind is int and isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise ToolInputError(f"'{key}' must be {label}, got {type(value).__name__}.")
    return value


def _text(args: Mapping[str, Any], key: str, *, required: bool) -> str | None:
    value = _optional(args, key, str, "a string")
    if value is not None and value.strip():
        return clean_text(value.strip())
    if required:
        raise ToolInputError(f"'{key}' is required and must be a non-empty string.")
    return None


def _stored_text(text: str) -> str:
    """*text* as it may be stored: recalled ``<memory-context>`` blocks and notes removed."""
    return clean_text(sanitize_context(text)).strip()


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


@dataclass
class HonchoTools:
    """Runs the tools for one user in one session."""

    client: HonchoClient
    user_peer: str
    ai_peer: str
    session_id: Callable[[], str]
    writes_enabled: bool

    def run(self, name: str, args: Mapping[str, Any]) -> dict[str, Any]:
        """Run tool *name*; raises ToolInputError for bad arguments."""
        handler = {
            "honcho_profile": self._profile,
            "honcho_search": self._search,
            "honcho_context": self._context,
            "honcho_reasoning": self._reasoning,
            "honcho_conclude": self._conclude,
        }.get(name)
        if handler is None:
            raise ToolInputError(f"Unknown Honcho tool '{name}'.")
        return handler(args)

    def _require_writes(self) -> None:
        if not self.writes_enabled:
            raise ToolInputError(
                "Honcho is read-only in this agent context (only the primary agent writes)."
            )

    def _profile(self, args: Mapping[str, Any]) -> dict[str, Any]:
        card = _optional(args, "card", list, "a list of strings")
        if card is not None:
            if not all(isinstance(fact, str) for fact in card):
                raise ToolInputError("'card' must be a list of strings.")
            facts = [_stored_text(fact) for fact in card]
            self._require_writes()
            kept = [fact for fact in facts if fact]
            skipped = sum(1 for fact in card if fact.strip()) - len(kept)
            stored = self.client.set_card(self.user_peer, kept)
            result: dict[str, Any] = {
                "result": f"Peer card updated ({len(stored)} facts).",
                "card": stored,
            }
            if skipped:
                result["skipped"] = (
                    f"{skipped} fact(s) held only recalled <memory-context> text and were "
                    "not stored."
                )
            return result
        facts = self.client.get_card(self.user_peer)
        if not facts:
            return {
                "result": "No profile facts available yet.",
                "hint": "Honcho builds the card from conversations in the background; "
                "it fills in after a few turns, or set it with `card`.",
            }
        return {"result": facts}

    def _search(self, args: Mapping[str, Any]) -> dict[str, Any]:
        query = _text(args, "query", required=True)
        assert query is not None
        tokens = _optional(args, "max_tokens", int, "an integer")
        budget = min(max(tokens or DEFAULT_SEARCH_TOKENS, 1), MAX_SEARCH_TOKENS) * 4
        limit = min(max(budget // SNIPPET_CHARS, 3), 20)
        lines: list[str] = []
        used = 0
        for message in self.client.search(self.user_peer, query, limit=limit):
            snippet = _clip(message.content, SNIPPET_CHARS)
            line = f"[{message.peer_id} · {message.session_id}] {snippet}"
            if used + len(line) > budget:
                break
            lines.append(line)
            used += len(line) + 1
        return {"result": "\n".join(lines) if lines else "No relevant context found."}

    def _context(self, args: Mapping[str, Any]) -> dict[str, Any]:
        query = _text(args, "query", required=False)
        context = self.client.session_context(
            self.session_id(),
            user_peer=self.user_peer,
            ai_peer=self.ai_peer,
            tokens=DEFAULT_SEARCH_TOKENS * 2,
            with_user=True,
            search_query=query,
        )
        sections = []
        if context.summary is not None and context.summary.content.strip():
            sections.append("## Summary\n" + context.summary.content.strip())
        if context.peer_representation:
            sections.append("## Representation\n" + context.peer_representation.strip())
        if context.peer_card:
            sections.append("## Card\n" + "\n".join(f"- {fact}" for fact in context.peer_card))
        recent = context.messages[-RECENT_MESSAGES:]
        if recent:
            sections.append(
                "## Recent messages\n"
                + "\n".join(
                    f"{m.peer_id}: {_clip(m.content, RECENT_MESSAGE_CHARS)}" for m in recent
                )
            )
        return {"result": "\n\n".join(sections) if sections else "No context available yet."}

    def _reasoning(self, args: Mapping[str, Any]) -> dict[str, Any]:
        query = _text(args, "query", required=True)
        assert query is not None
        level = _text(args, "reasoning_level", required=False) or "low"
        if level not in REASONING_LEVELS:
            raise ToolInputError(
                f"'reasoning_level' must be one of {', '.join(REASONING_LEVELS)}, got {level!r}."
            )
        answer = self.client.chat(self.user_peer, query, reasoning_level=level)
        return {"result": answer or "No result from Honcho."}

    def _conclude(self, args: Mapping[str, Any]) -> dict[str, Any]:
        conclusion = _text(args, "conclusion", required=False)
        delete_id = _text(args, "delete_id", required=False)
        if (conclusion is None) == (delete_id is None):
            raise ToolInputError("Pass exactly one of 'conclusion' or 'delete_id'.")
        self._require_writes()
        if delete_id is not None:
            if not is_honcho_id(delete_id):
                raise ToolInputError(
                    f"'delete_id' must be a conclusion id as honcho_conclude returned it "
                    f"(1-100 letters, digits, '_' or '-'), got {delete_id[:120]!r}. "
                    "Nothing was deleted."
                )
            self.client.delete_conclusion(self.ai_peer, self.user_peer, delete_id)
            return {"result": f"Conclusion {delete_id} deleted."}
        assert conclusion is not None
        conclusion = _stored_text(conclusion)
        if not conclusion:
            return {
                "result": "Nothing saved: the conclusion held only recalled <memory-context> "
                "text, which is never stored again. Pass the fact itself.",
                "saved": False,
            }
        created = self.client.create_conclusion(
            self.ai_peer, self.user_peer, conclusion, session_id=self.session_id()
        )
        return {"result": f"Conclusion saved: {conclusion}", "id": created.id}
