"""The two memory targets: ``memory`` (``MEMORY.md``) and ``user`` (``USER.md``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Target:
    """A memory file: its tool name, file name and system-prompt header."""

    name: str
    filename: str
    header: str
    purpose: str


MEMORY = Target(
    "memory",
    "MEMORY.md",
    "MEMORY (your personal notes)",
    "the agent's notes: environment facts, conventions, tool quirks, lessons",
)
USER = Target(
    "user",
    "USER.md",
    "USER PROFILE (who the user is)",
    "the user profile: name, role, preferences, communication style",
)

TARGETS: dict[str, Target] = {MEMORY.name: MEMORY, USER.name: USER}
"""Targets by tool name, in the order their blocks appear in the system prompt."""

TARGET_NAMES = tuple(TARGETS)
