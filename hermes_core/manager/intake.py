"""What the manager takes back from providers: size limits and cleaned text.

Text a provider hands back (prompt block, recall, tool result, pre-compress
notes) is cleaned of unpaired surrogates and cut at a limit, so one provider
cannot make every request of a session fail.
"""

from __future__ import annotations

import json
import logging

from hermes_core.fencing import clean_text

__all__ = [
    "MAX_PROMPT_BLOCK_CHARS",
    "MAX_RECALL_CHARS",
    "MAX_TOOL_RESULT_CHARS",
    "bounded_text",
    "tool_error",
]

logger = logging.getLogger(__name__)

MAX_PROMPT_BLOCK_CHARS = 200_000
"""Characters of one provider's ``system_prompt_block`` (or ``on_pre_compress`` notes) kept."""
MAX_RECALL_CHARS = 50_000
"""Characters of one provider's ``prefetch`` result kept per turn."""
MAX_TOOL_RESULT_CHARS = 100_000
"""Characters a tool result may have; a longer one is replaced by an error saying so."""


def bounded_text(provider: str, hook: str, text: str, limit: int) -> str:
    """*text* from a provider, cleaned of unpaired surrogates and cut at *limit* characters."""
    text = clean_text(text)
    if len(text) <= limit:
        return text
    logger.warning(
        "Memory provider '%s' %s returned %s characters; only the first %s are used",
        provider,
        hook,
        f"{len(text):,}",
        f"{limit:,}",
    )
    return f"{text[:limit]}\n[... {len(text) - limit:,} more characters cut]"


def tool_error(message: str) -> str:
    """A tool result saying *message* went wrong: ``{"error": message}``."""
    return json.dumps({"error": message}, ensure_ascii=False)
