"""Metadata for mirroring committed memory writes to external providers.

After a ``memory`` tool call succeeds, the host hands the result and the
arguments to ``MemoryManager.notify_memory_tool_write(result, args,
build_metadata=...)``, which calls ``on_memory_write`` of the external
provider once per committed operation. The previous text of a replaced or
removed entry comes from the result (``replaced_entry`` / ``removed_entry``,
or ``replaced_entries`` / ``removed_entries`` keyed by the 1-based operation
number of a batch), never from the arguments. This module builds the rest of
the metadata: who wrote, in which session, on which platform.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

WRITE_ORIGIN_ASSISTANT = "assistant_tool"
"""The model called the ``memory`` tool in an ordinary turn."""
WRITE_ORIGIN_BACKGROUND_REVIEW = "background_review"
"""An unattended review agent wrote memory."""
WRITE_ORIGIN_MEMORY_FLUSH = "memory_flush"
"""Memory was written while flushing before compression or exit."""
WRITE_ORIGIN_USER = "user_command"
"""A person changed memory directly (a command, not the model)."""


def build_mirror_metadata(
    *,
    write_origin: str = WRITE_ORIGIN_ASSISTANT,
    session_id: str = "",
    platform: str = "",
    tool_name: str = "memory",
    parent_session_id: str = "",
    execution_context: str = "",
    task_id: str = "",
    tool_call_id: str = "",
) -> dict[str, str]:
    """The ``metadata`` an external provider's ``on_memory_write`` receives.

    Empty values are left out, so providers never see blank keys.
    """
    values = {
        "write_origin": write_origin,
        "execution_context": execution_context,
        "session_id": session_id,
        "parent_session_id": parent_session_id,
        "platform": platform,
        "tool_name": tool_name,
        "task_id": task_id,
        "tool_call_id": tool_call_id,
    }
    return {key: value for key, value in values.items() if value}


def metadata_builder(**values: Any) -> Callable[[], dict[str, str]]:
    """A zero-argument callable for ``notify_memory_tool_write(build_metadata=...)``."""

    def build() -> dict[str, str]:
        return build_mirror_metadata(**values)

    return build
