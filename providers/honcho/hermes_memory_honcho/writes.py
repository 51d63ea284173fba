"""The writes the provider queues for Honcho while the turn moves on."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MAX_MESSAGES_PER_CALL", "ConclusionWrite", "OutgoingMessage"]

MAX_MESSAGES_PER_CALL = 100
"""Honcho accepts at most this many messages in one ``add_messages`` call."""


@dataclass(frozen=True)
class OutgoingMessage:
    """One message waiting to be written to a Honcho session."""

    session_id: str
    peer_id: str
    content: str


@dataclass(frozen=True)
class ConclusionWrite:
    """A mirrored builtin write: add *content* and/or drop conclusions equal to *previous*."""

    session_id: str
    content: str = ""
    previous: str = ""
