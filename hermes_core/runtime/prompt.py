"""L0: the system prompt, assembled once per session.

The prompt is built from, in order: the agent's identity (``$HERMES_HOME/SOUL.md``
or a default), guidance for the memory tools that are loaded, the host's own
system message, the providers' blocks (the builtin provider's frozen
``MEMORY.md``/``USER.md`` snapshot, then the external provider's block),
context files from the working directory (``AGENTS.md`` …), the date the
conversation started and a hint for the platform. Parts are stripped and
joined by a blank line.

The runtime caches the result for the whole session, so every model call of a
session starts with the same bytes and a provider's prefix cache keeps serving
them; it is rebuilt only when a session is compressed or a new one starts.
The date line carries the day, not the time, for the same reason.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from hermes_core.fencing import clean_text, sanitize_context

__all__ = [
    "CONTEXT_FILE_NAMES",
    "DEFAULT_IDENTITY",
    "MAX_CONTEXT_FILE_CHARS",
    "PLATFORM_HINTS",
    "PromptParts",
    "context_files_block",
    "date_line",
    "load_identity",
    "platform_hint",
    "tool_guidance",
]

logger = logging.getLogger(__name__)

DEFAULT_IDENTITY = (
    "You are a capable, candid assistant with a layered memory. You remember durable "
    "facts about the user and the environment across conversations, you can search "
    "earlier conversations when the user refers to them, and you say plainly when you "
    "do not know something."
)

SOUL_FILENAME = "SOUL.md"

CONTEXT_FILE_NAMES: tuple[str, ...] = ("AGENTS.md", "CLAUDE.md", ".cursorrules")
"""Project files whose text is added to the prompt when found in the working directory."""

MAX_CONTEXT_FILE_CHARS = 20_000
"""Per-file cap; longer files keep their head and tail around an omission marker."""

MEMORY_GUIDANCE = (
    "Use the memory tool to save durable facts worth knowing in a later conversation: "
    "the user's name, role and preferences (target 'user'), and facts about the "
    "environment, conventions and lessons learned (target 'memory'). Do not save task "
    "progress or anything a later conversation will not need. Saved entries take "
    "effect in the system prompt of the next session; the tool result shows the "
    "current entries right away."
)
SESSION_SEARCH_GUIDANCE = (
    "When the user refers to an earlier conversation or something you may have done "
    "before, call session_search before saying you do not remember."
)

PLATFORM_HINTS: dict[str, str] = {
    "cli": "You are running in a terminal. Plain text with light Markdown reads well; "
    "keep lines short.",
    "api": "You are answering through an API; the caller renders Markdown.",
    "telegram": "You are chatting on Telegram. Keep messages short; Markdown is limited.",
    "discord": "You are chatting on Discord. Keep messages under 2000 characters.",
    "slack": "You are chatting on Slack. Use Slack-flavoured Markdown sparingly.",
    "demo": "You are running in the hermes-memory offline demo.",
}


def load_identity(hermes_home: Path) -> str:
    """The identity text: ``SOUL.md`` in *hermes_home* when present and non-empty."""
    path = Path(hermes_home) / SOUL_FILENAME
    try:
        if not path.is_file():  # absent, or a folder or named pipe that would block a read
            return DEFAULT_IDENTITY
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        logger.warning("Ignoring %s (%s); using the default identity.", path, exc)
        return DEFAULT_IDENTITY
    text = sanitize_context(text).strip()
    return _clip(text, MAX_CONTEXT_FILE_CHARS) if text else DEFAULT_IDENTITY


def tool_guidance(tool_names: Iterable[str]) -> str:
    """Guidance for the memory tools that are actually loaded (none → ``""``)."""
    names = set(tool_names)
    parts = []
    if "memory" in names:
        parts.append(MEMORY_GUIDANCE)
    if "session_search" in names:
        parts.append(SESSION_SEARCH_GUIDANCE)
    return " ".join(parts)


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    head = int(limit * 0.7)
    tail = limit - head
    omitted = len(text) - limit
    return f"{text[:head]}\n[… {omitted} characters omitted …]\n{text[-tail:]}"


def context_files_block(
    working_dir: Path | None,
    names: Sequence[str] = CONTEXT_FILE_NAMES,
    *,
    max_chars: int = MAX_CONTEXT_FILE_CHARS,
) -> str:
    """The context files found in *working_dir*, each under its own heading."""
    if working_dir is None:
        return ""
    sections = []
    for name in names:
        path = Path(working_dir) / name
        try:
            if not path.is_file():
                continue
            text = path.read_text(encoding="utf-8-sig", errors="replace")
        except OSError:
            continue
        text = sanitize_context(text).strip()
        if text:
            sections.append(f"## {name}\n\n{_clip(text, max_chars)}")
    if not sections:
        return ""
    return "# Project context\n\n" + "\n\n".join(sections)


def date_line(started: datetime) -> str:
    """``Conversation started: Tuesday, May 14, 2024`` (the day only, for byte stability)."""
    return f"Conversation started: {started:%A, %B} {started.day}, {started:%Y}"


def platform_hint(platform: str) -> str:
    """A line about where the conversation takes place."""
    hint = PLATFORM_HINTS.get(platform)
    return hint if hint is not None else f"Platform: {platform}."


@dataclass(frozen=True)
class PromptParts:
    """Everything that goes into a system prompt, in order."""

    identity: str = DEFAULT_IDENTITY
    guidance: str = ""
    system_message: str = ""
    provider_blocks: str = ""
    context_files: str = ""
    started: datetime = field(default_factory=datetime.now)
    platform: str = "cli"

    def render(self) -> str:
        """The prompt text: non-empty parts, stripped, joined by a blank line."""
        parts = (
            self.identity,
            self.guidance,
            self.system_message,
            self.provider_blocks,
            self.context_files,
            date_line(self.started),
            platform_hint(self.platform),
        )
        # clean_text: one unpaired surrogate (a host's system message, say) would make
        # every request of the session fail to encode.
        return clean_text("\n\n".join(p.strip() for p in parts if p and p.strip()))
