"""The provider's tools: schemas and what each call does.

Schemas suit strict function-calling backends: a plain ``object`` at the top
(no ``anyOf``/``oneOf``/``allOf``/``not``), every property typed and described,
``additionalProperties: false``. Optional arguments may arrive as JSON ``null``
(strict backends send every property) and are treated as absent.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from hermes_core.fencing import clean_text, sanitize_context
from hermes_memory_supermemory.errors import ToolArgumentError
from hermes_memory_supermemory.records import Metadata
from hermes_memory_supermemory.render import one_line, render_profile
from hermes_memory_supermemory.turns import explicit_document_id

if TYPE_CHECKING:
    from hermes_memory_supermemory.service import SupermemoryService

STORE = "supermemory_store"
SEARCH = "supermemory_search"
FORGET = "supermemory_forget"
PROFILE = "supermemory_profile"
CATEGORIES = ("preference", "decision", "fact", "other")
MAX_SEARCH_LIMIT = 20
DEFAULT_SEARCH_LIMIT = 5


def _schema(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict:
    return {
        "name": name,
        "description": description,
        "parameters": {
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": False,
        },
    }


TOOL_SCHEMAS: list[dict[str, Any]] = [
    _schema(
        STORE,
        "Save one durable fact about the user or the work to long-term Supermemory memory "
        "(shared across sessions). Use for facts worth remembering later; not for task progress.",
        {
            "content": {
                "type": "string",
                "description": "The fact, as one self-contained sentence.",
            },
            "category": {
                "type": "string",
                "enum": list(CATEGORIES),
                "description": "Kind of fact; default 'fact'.",
            },
        },
        ["content"],
    ),
    _schema(
        SEARCH,
        "Search long-term Supermemory memory for facts relevant to a question. "
        "Returns the best matches with their ids and a similarity percentage.",
        {
            "query": {"type": "string", "description": "What to look for, in natural language."},
            "limit": {
                "type": "integer",
                "description": f"Most results to return, 1-{MAX_SEARCH_LIMIT}; default "
                f"{DEFAULT_SEARCH_LIMIT}.",
            },
        },
        ["query"],
    ),
    _schema(
        FORGET,
        "Forget one memory in Supermemory: by its id (from supermemory_search), or the single "
        "best match of a query. Give id or query.",
        {
            "id": {"type": "string", "description": "Memory id from supermemory_search."},
            "query": {
                "type": "string",
                "description": "Forget the best match of this query when no id is given.",
            },
        },
        [],
    ),
    _schema(
        PROFILE,
        "Read the user's Supermemory profile: durable facts and recent context.",
        {},
        [],
    ),
]

TOOL_NAMES = frozenset(schema["name"] for schema in TOOL_SCHEMAS)


def _text(args: Mapping[str, Any], key: str, *, required: bool) -> str:
    value = args.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise ToolArgumentError(f"'{key}' is required: pass a non-empty string.")
        return ""
    if not isinstance(value, str):
        raise ToolArgumentError(f"'{key}' must be a string, got {type(value).__name__}.")
    return clean_text(value.strip())


def _limit(args: Mapping[str, Any]) -> int:
    value = args.get("limit")
    if value is None:
        return DEFAULT_SEARCH_LIMIT
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or (isinstance(value, float) and not math.isfinite(value))
        or value != int(value)
    ):
        raise ToolArgumentError(f"'limit' must be an integer from 1 to {MAX_SEARCH_LIMIT}.")
    return max(1, min(MAX_SEARCH_LIMIT, int(value)))


class Tools:
    """Runs the tool calls of one session against one namespace."""

    def __init__(
        self,
        service: SupermemoryService,
        namespace: str,
        *,
        writes_enabled: bool,
        session_id: Callable[[], str],
    ) -> None:
        self._service = service
        self._namespace = namespace
        self._writes_enabled = writes_enabled
        self._session_id = session_id

    def run(self, name: str, args: Mapping[str, Any]) -> dict[str, Any]:
        """Run tool *name*; raises ToolArgumentError or ServiceError on failure."""
        handlers: dict[str, Callable[[Mapping[str, Any]], dict[str, Any]]] = {
            STORE: self.store,
            SEARCH: self.search,
            FORGET: self.forget,
            PROFILE: self.profile,
        }
        if name not in handlers:
            raise ToolArgumentError(f"Unknown Supermemory tool '{name}'.")
        if not isinstance(args, Mapping):
            raise ToolArgumentError(
                f"Arguments of '{name}' must be a JSON object, got {type(args).__name__}."
            )
        return handlers[name](args)

    def _require_writes(self) -> None:
        if not self._writes_enabled:
            raise ToolArgumentError(
                "Supermemory is read-only in this agent context (only the primary agent writes)."
            )

    def store(self, args: Mapping[str, Any]) -> dict[str, Any]:
        self._require_writes()
        # Recalled context must never be stored again: strip <memory-context> fences.
        content = sanitize_context(_text(args, "content", required=True)).strip()
        if not content:
            return {
                "saved": False,
                "message": "Nothing saved: 'content' held only recalled <memory-context> "
                "text, which is never stored again. Pass the fact itself.",
            }
        category = _text(args, "category", required=False) or "fact"
        if category not in CATEGORIES:
            raise ToolArgumentError(f"'category' must be one of {', '.join(CATEGORIES)}.")
        metadata: Metadata = {
            "source": "hermes",
            "type": "explicit_fact",
            "category": category,
        }
        if self._session_id():
            metadata["session_id"] = self._session_id()
        ref = self._service.add_document(
            self._namespace, content, doc_id=explicit_document_id(content), metadata=metadata
        )
        return {"saved": True, "id": ref["id"], "status": ref["status"], "preview": content[:80]}

    def search(self, args: Mapping[str, Any]) -> dict[str, Any]:
        query = _text(args, "query", required=True)
        hits = self._service.search(
            self._namespace, query, limit=_limit(args), search_mode="memories"
        )
        results = [
            {
                "id": hit.id,
                "content": one_line(hit.text),
                "similarity": round(hit.similarity * 100),
                "updated_at": hit.updated_at,
            }
            for hit in hits
        ]
        return {"results": results, "count": len(results)}

    def forget(self, args: Mapping[str, Any]) -> dict[str, Any]:
        self._require_writes()
        memory_id = _text(args, "id", required=False)
        query = _text(args, "query", required=False)
        forgotten_text = ""
        if not memory_id:
            if not query:
                raise ToolArgumentError("Give 'id' (from supermemory_search) or 'query'.")
            hits = self._service.search(self._namespace, query, limit=1, search_mode="memories")
            if not hits:
                return {"forgotten": False, "message": f"No memory matches {query!r}."}
            memory_id, forgotten_text = hits[0].id, hits[0].text
        result = self._service.forget(self._namespace, [memory_id])
        answer: dict[str, Any] = {"forgotten": result["count"] > 0, "id": memory_id}
        if forgotten_text:
            answer["memory"] = forgotten_text
        if result["errors"]:
            answer["errors"] = result["errors"]
        return answer

    def profile(self, args: Mapping[str, Any]) -> dict[str, Any]:
        profile = self._service.profile(self._namespace)
        return {
            "profile": render_profile(profile),
            "static_count": len(profile.static),
            "dynamic_count": len(profile.dynamic),
        }
