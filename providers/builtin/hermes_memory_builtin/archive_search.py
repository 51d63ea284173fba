"""Reading the archive tier: the per-turn recall, and the ``memory_search`` tool.

Recall (:func:`recall_text`) runs in the builtin provider's ``prefetch``: it
returns the archived entries that match the turn's words (current values
only: no superseded entries, no working state, nothing the injection scan
flags: a file edited by hand may have carried it in), as plain text. The runtime
fences it in a ``<memory-context>`` block on the API copy of the user
message only, so the transcript and the frozen system prompt stay as they
were. The same query also counts a *use* of each prompt-tier entry it
matches, which the curator's staleness rule reads.

``memory_search`` is a read-only tool the model may call to look further
into the archive (it is offered when ``memory.overflow`` is ``archive`` or
the curator is on).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from hermes_memory_builtin.archive_rows import AnyArchive
from hermes_memory_builtin.archive_tier import RECALL_LIMIT, ArchivedEntry
from hermes_memory_builtin.similarity import content_words
from hermes_memory_builtin.snapshot import tagged
from hermes_memory_builtin.targets import TARGETS
from hermes_memory_builtin.threats import scan_for_threats

TOOL_NAME = "memory_search"
MIN_SHARED_WORDS = 2
"""Content words a query must share with a prompt-tier entry to count as using it."""
MAX_RESULTS = 20

SCHEMA: dict[str, Any] = {
    "name": TOOL_NAME,
    "description": (
        "Search the memory archive: facts that were moved out of MEMORY.md / USER.md "
        "(merged, superseded by a newer value, or archived to keep memory small). Relevant "
        "archived facts are also recalled automatically each turn. Read-only."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "Words to look for."},
            "include_superseded": {
                "type": "boolean",
                "description": "Also return old values that a newer entry replaced.",
            },
            "limit": {"type": "integer", "description": f"At most this many (1-{MAX_RESULTS})."},
        },
        "required": ["query"],
    },
}


def recall_text(archive: AnyArchive, query: str, *, limit: int = RECALL_LIMIT) -> str:
    """The archived entries relevant to *query* as recall text ("" when none)."""
    if not archive.exists():
        return ""
    found = [
        entry
        for entry in archive.search(query, limit=limit, current_only=True)
        if not scan_for_threats(entry.text, scope="strict")
    ]
    if not found:
        return ""
    archive.record_recall([entry.id for entry in found])
    # As in the snapshot, an entry's later lines stay behind the continuation mark.
    lines = [tagged("- ", entry.text) for entry in found]
    return "Archived memory (moved out of the system prompt; recalled for this turn):\n" + (
        "\n".join(lines)
    )


def record_prompt_use(
    archive: AnyArchive, query: str, entries: Mapping[str, Sequence[str]]
) -> None:
    """Count a use of each prompt-tier entry (by target) sharing words with *query*."""
    words = set(content_words(query))
    if len(words) < MIN_SHARED_WORDS:
        return
    for target, texts in entries.items():
        used = [t for t in texts if len(words & set(content_words(t))) >= MIN_SHARED_WORDS]
        archive.record_use(target, used)


def _shown(entry: ArchivedEntry) -> dict[str, Any]:
    return {
        "text": entry.text,
        "file": TARGETS[entry.target].filename if entry.target in TARGETS else entry.target,
        "reason": entry.reason,
        "category": entry.category,
        "superseded": entry.superseded,
    }


def run_search_tool(archive: AnyArchive, args: Mapping[str, Any] | None) -> str:
    """Answer one ``memory_search`` call with JSON."""
    args = args or {}
    query = args.get("query")
    if not isinstance(query, str) or not query.strip():
        return json.dumps({"success": False, "error": "query is required: words to look for."})
    limit = args.get("limit")
    if limit is None:
        limit = RECALL_LIMIT
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_RESULTS:
        return json.dumps(
            {"success": False, "error": f"limit must be a whole number from 1 to {MAX_RESULTS}."}
        )
    if not archive.exists():
        return json.dumps({"success": True, "results": [], "note": "The archive is empty."})
    found = archive.search(
        query, limit=limit, current_only=not bool(args.get("include_superseded"))
    )
    archive.record_recall([entry.id for entry in found])
    return json.dumps(
        {"success": True, "results": [_shown(entry) for entry in found]}, ensure_ascii=False
    )
