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

import codecs
import logging
import os
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

_HEAD_SHARE = 0.7  # of a clipped file's characters, the share taken from its head
_READ_WHOLE_BYTES = 1 << 20  # larger files: only the head and tail the clip keeps are read

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
        text = _read_clipped(path, MAX_CONTEXT_FILE_CHARS, errors="strict")
    except (OSError, UnicodeDecodeError) as exc:
        logger.warning("Ignoring %s (%s); using the default identity.", path, exc)
        return DEFAULT_IDENTITY
    return text or DEFAULT_IDENTITY


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
    head = int(limit * _HEAD_SHARE)
    return _clipped(text[:head], len(text) - limit, text[len(text) - (limit - head) :])


def _clipped(head: str, omitted: int, tail: str) -> str:
    return f"{head}\n[… {omitted} characters omitted …]\n{tail}"


def _read_clipped(path: Path, limit: int, *, errors: str) -> str:
    """The UTF-8 text of *path*, fences removed, stripped and clipped to *limit* characters.

    A file of up to :data:`_READ_WHOLE_BYTES` (or four bytes a character of
    *limit*) is read whole. Of a larger one only the bytes the clip can keep are
    read, its head and its tail, so a multi-gigabyte file costs no more than a
    small one; the omitted count then estimates the unread middle's characters
    from its size (exact for ASCII).
    *errors* is the decoding error handler (``"strict"`` raises
    :class:`UnicodeDecodeError`).
    """
    with path.open("rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size <= max(_READ_WHOLE_BYTES, 4 * limit):
            text = handle.read().decode("utf-8-sig", errors)
            return _clip(sanitize_context(text).strip(), limit)
        head_chars = int(limit * _HEAD_SHARE)
        tail_chars = limit - head_chars
        head_raw = handle.read(4 * head_chars)  # UTF-8 takes at most 4 bytes a character
        handle.seek(size - 4 * tail_chars)
        tail_raw = handle.read(4 * tail_chars)
    # Not final: a character the window cuts in two is left out, not an error.
    head_text = codecs.getincrementaldecoder("utf-8-sig")(errors).decode(head_raw)
    skip = 0  # the continuation bytes of a character that began before the tail window
    while skip < 3 and skip < len(tail_raw) and tail_raw[skip] & 0xC0 == 0x80:
        skip += 1
    tail_text = tail_raw[skip:].decode("utf-8", errors)
    head = sanitize_context(head_text).lstrip()
    tail = sanitize_context(tail_text).rstrip()
    kept_head, kept_tail = head[:head_chars], tail[len(tail) - tail_chars :]
    if not (kept_head or kept_tail):
        return ""
    # The unread middle in characters, at the windows' characters per byte.
    read_chars = len(head_text) + len(tail_text)
    read_bytes = len((head_text + tail_text).encode("utf-8"))
    unread = round((size - len(head_raw) - len(tail_raw)) * read_chars / read_bytes)
    omitted = unread + len(head) - len(kept_head) + len(tail) - len(kept_tail)
    return _clipped(kept_head, omitted, kept_tail)


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
            text = _read_clipped(path, max_chars, errors="replace")
        except OSError:
            continue
        if text:
            sections.append(f"## {name}\n\n{text}")
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
