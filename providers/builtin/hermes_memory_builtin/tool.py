"""The ``memory`` tool: its JSON schema and the dispatcher behind it.

The dispatcher checks the arguments a model sends (strict backends send
``null`` for every unused field), routes them to :class:`MemoryStore` and
returns the store's result as JSON. Failures always carry ``success: false``
and an ``error`` saying what to do next; the files are unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from hermes_core.errors import MemoryStoreError
from hermes_memory_builtin.entries import total_chars
from hermes_memory_builtin.snapshot import format_counts
from hermes_memory_builtin.store import ACTIONS, MemoryStore, Result, bounded_entries, echo_value
from hermes_memory_builtin.targets import TARGET_NAMES, TARGETS

TOOL_NAME = "memory"

_DESCRIPTION = (
    "Save durable facts to your persistent memory. Memory survives across sessions and is "
    "shown to you at the start of every session, so keep entries short and dense.\n"
    "HOW: make every change of one moment in ONE call with 'operations' (a list of "
    "{action, content, old_text}); the batch is atomic and the size limit is checked on the "
    "final result, so a single call can free space and add. Use the bare action/content/"
    "old_text fields only for a lone change. 'replace' and 'remove' find the entry by "
    "old_text, a short part of it that is unique; 'replace' rewrites the WHOLE entry. A "
    "successful answer means the write is saved: do not repeat it.\n"
    "WHAT: facts that stay true in every session: who the user is and how they like to work "
    "(target 'user'), stable facts about the environment, conventions and lessons learned "
    "(target 'memory').\n"
    "WHEN FULL: an add is refused and the current entries are returned; reissue it as one "
    "batch that removes or shortens entries and adds the new one.\n"
    "SKIP: trivia, things easy to rediscover, raw dumps, task progress, logs of finished "
    "work and TODO state (past conversations are searchable with session_search). Changes "
    "show in the system prompt from the next session on; there is no read action."
)


def memory_schema(targets: Sequence[str] = TARGET_NAMES) -> dict[str, Any]:
    """The ``memory`` tool schema, offering only *targets* (the enabled ones).

    The parameters avoid top-level ``anyOf``/``oneOf``/``allOf``/``enum``/``not``
    and require only ``target``, which strict tool-calling backends accept.
    """
    allowed = [name for name in TARGET_NAMES if name in targets]
    if not allowed:
        raise ValueError("memory_schema needs at least one enabled target.")
    target_help = "; ".join(f"'{name}' = {TARGETS[name].purpose}" for name in allowed)
    return {
        "name": TOOL_NAME,
        "description": _DESCRIPTION,
        "parameters": {
            "type": "object",
            "properties": {
                "action": {
                    "type": "string",
                    "enum": list(ACTIONS),
                    "description": "A single change. Omit it when using 'operations'.",
                },
                "target": {
                    "type": "string",
                    "enum": allowed,
                    "description": f"Which memory file: {target_help}.",
                },
                "content": {
                    "type": "string",
                    "description": "The entry text for 'add', or the whole new entry for "
                    "'replace'.",
                },
                "old_text": {
                    "type": "string",
                    "description": "For 'replace' and 'remove': a short unique part of the "
                    "entry to change.",
                },
                "new_text": {
                    "type": "string",
                    "description": "Alias of 'content' (content wins when both are set).",
                },
                "operations": {
                    "type": "array",
                    "description": "Several changes applied together, all or nothing.",
                    "items": {
                        "type": "object",
                        "properties": {
                            "action": {"type": "string", "enum": list(ACTIONS)},
                            "content": {"type": "string"},
                            "new_text": {"type": "string"},
                            "old_text": {"type": "string"},
                        },
                        "required": ["action"],
                    },
                },
            },
            "required": ["target"],
        },
    }


MEMORY_SCHEMA: dict[str, Any] = memory_schema()
"""The schema with both targets; use :func:`memory_schema` to narrow it."""

_NO_READ_ACTION = {"read", "list", "view", "show", "get", "search", "recall"}


def _failure(error: str, **extra: Any) -> Result:
    return {"success": False, "error": error, **extra}


def _is_blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _change(fields: Mapping[str, Any]) -> tuple[Any, Any, Any]:
    """``(action, content, old_text)`` of a call or an operation, blanks as ``None``."""
    content = fields.get("content")
    if _is_blank(content):
        content = fields.get("new_text")
    action, old_text = fields.get("action"), fields.get("old_text")
    return tuple(  # type: ignore[return-value]
        None if _is_blank(value) else value.strip() if isinstance(value, str) else value
        for value in (action, content, old_text)
    )


def _batch_conflict(args: Mapping[str, Any], target: Any, operations: Any) -> Result | None:
    """Why a call with *operations* cannot run as given, or ``None``.

    A batch would silently drop a lone change sent beside it (``action`` with
    ``content`` or ``old_text``) unless the batch holds that change too, and an
    operation naming another ``target`` would be written to the call's file;
    both are refused, nothing written.
    """
    lone = _change(args)
    if not isinstance(operations, list):
        return None  # apply_batch says what operations must be
    if lone[0] is not None and (lone[1] is not None or lone[2] is not None):
        batched = [_change(op) for op in operations if isinstance(op, Mapping)]
        if lone not in batched:
            given = [
                name for name, value in zip(("content", "old_text"), lone[1:], strict=True) if value
            ]
            return _failure(
                f"Give either 'operations' or one change (action with {' and '.join(given)}), "
                "not both: the lone change is not in the batch and would not be applied. Put "
                "it in 'operations' as one more item and call again; nothing was saved."
            )
    for number, op in enumerate(operations, 1):
        named = op.get("target") if isinstance(op, Mapping) else None
        if _is_blank(named) or named == target:
            continue
        return _failure(
            f"Operation {number} names target {echo_value(named)}, but a batch writes only to "
            f"the call's target {echo_value(target)}. Send the operations for each target in "
            "a call of their own (set 'target' on the call); nothing was saved."
        )
    return None


class MemoryTool:
    """Runs ``memory`` tool calls against a :class:`MemoryStore`.

    ``store=None`` stands for memory that is switched off or not initialised;
    every call then answers that memory is not available.
    """

    def __init__(self, store: MemoryStore | None) -> None:
        self.store = store

    def __call__(self, args: Mapping[str, Any] | None) -> str:
        """Run one call and return its JSON result."""
        return json.dumps(self.run(args), ensure_ascii=False)

    def run(self, args: Mapping[str, Any] | None) -> Result:
        """Run one call and return its result as a dict."""
        store = self.store
        if store is None:
            return _failure(
                "Memory is not available: it is disabled in config or not initialised here."
            )
        if args is None:
            args = {}
        if not isinstance(args, Mapping):
            return _failure(f"memory arguments must be an object, got {type(args).__name__}.")
        try:
            return self._dispatch(store, args)
        except MemoryStoreError as exc:  # I/O trouble outside the store's own checks
            return _failure(str(exc))

    def _dispatch(self, store: MemoryStore, args: Mapping[str, Any]) -> Result:
        action = args.get("action")
        operations = args.get("operations")
        content = args.get("content")
        if _is_blank(content):
            content = args.get("new_text")
        target = args.get("target")
        if target is None:
            target = "memory"
        problem = store.target_error(target)
        if problem is not None:
            return problem

        if operations is not None and operations != []:
            problem = _batch_conflict(args, target, operations)
            if problem is not None:
                return problem
            return store.apply_batch(target, operations)
        if action is None or action == "":
            if operations == []:
                return _failure("operations list is empty: give at least one operation.")
            return _failure(
                "Missing required parameter: set 'action' (add, replace or remove) for one "
                "change, or 'operations' (a list of changes) for several."
            )
        if action not in ACTIONS:
            hint = ""
            if isinstance(action, str) and action.lower() in _NO_READ_ACTION:
                hint = (
                    " There is no read action: memory as of the session start is in your "
                    "system prompt, and every successful write reports the new usage."
                )
            return _failure(
                f"Unknown action {echo_value(action)}. Use add, replace or remove.{hint}"
            )

        if action == "add":
            if _is_blank(content):
                return _failure("Content is required for the 'add' action.")
            return store.add(target, content)
        old_text = args.get("old_text")
        if _is_blank(old_text):
            return self._needs_old_text(store, target, action)
        if action == "replace":
            if _is_blank(content):
                return _failure(
                    "content is required for the 'replace' action: give the whole new entry."
                )
            return store.replace(target, old_text, content)
        return store.remove(target, old_text)

    @staticmethod
    def _needs_old_text(store: MemoryStore, target: str, action: str) -> Result:
        """A recoverable error that shows the entries old_text can point at."""
        entries = store.refresh(target)
        return _failure(
            f"'{action}' needs old_text: a short unique part of the entry to {action}. None "
            f"was given. Call {action} again with old_text set to part of one of the "
            "current_entries below.",
            target=target,
            current_entries=bounded_entries(entries),
            usage=format_counts(total_chars(entries), store.char_limit(target)),
        )
