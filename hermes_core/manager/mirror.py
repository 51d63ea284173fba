"""What the builtin ``memory`` tool committed, as writes to mirror to the external provider.

Only a result that parses to ``{"success": true, ...}`` and is not staged for
approval counts; each ``add``/``replace``/``remove`` operation (one, or each of
``operations``) becomes one :class:`MirroredWrite`. ``previous_content`` comes
only from the committed result, never from the arguments or the metadata.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["MirroredWrite", "committed_writes"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class MirroredWrite:
    """One committed memory write, in ``on_memory_write``'s terms."""

    action: str
    target: str
    content: str
    metadata: dict[str, Any]


def committed_writes(
    tool_result: Any,
    tool_args: Mapping[str, Any] | None,
    build_metadata: Callable[[], Mapping[str, Any]] | None = None,
) -> list[MirroredWrite]:
    """The writes a ``memory`` tool call committed (``[]`` when it committed none)."""
    result = tool_result
    if isinstance(result, str):
        try:
            result = json.loads(result)
        except (ValueError, RecursionError):
            return []
    if not isinstance(result, dict):
        return []
    if result.get("success") is not True or result.get("staged") is True:
        return []
    args = tool_args if isinstance(tool_args, Mapping) else {}
    target = args.get("target") or "memory"
    operations = args.get("operations")
    batch = isinstance(operations, list) and bool(operations)
    ops: list[Any] = list(operations) if batch else [args]  # type: ignore[arg-type]
    writes = []
    for index, op in enumerate(ops, 1):
        action = op.get("action") if isinstance(op, Mapping) else ""
        if action not in ("add", "replace", "remove"):
            continue
        try:
            metadata = dict(build_metadata() if build_metadata else {})
        except Exception as exc:
            logger.warning("build_metadata failed for a memory write mirror: %s", exc)
            metadata = {}
        metadata.pop("previous_content", None)  # only the store may say what it replaced
        if op.get("old_text"):
            metadata["old_text"] = op["old_text"]
        if action != "add":
            previous = _committed_entry(result, action, index if batch else None)
            if previous is not None:
                metadata["previous_content"] = previous
        content = str(op.get("content") or op.get("new_text") or "")
        writes.append(MirroredWrite(action, op.get("target") or target, content, metadata))
    return writes


def _committed_entry(result: Mapping[str, Any], action: str, index: int | None) -> Any:
    """The entry a committed replace/remove changed, as the store reported it."""
    if index is None:
        return result.get("replaced_entry" if action == "replace" else "removed_entry")
    entries = result.get("replaced_entries" if action == "replace" else "removed_entries")
    if not isinstance(entries, Mapping):
        return None
    return entries.get(index, entries.get(str(index)))
