"""Split long message text into chunks Honcho accepts.

Chunks break at the last paragraph, sentence or word boundary that fits, and
every chunk after the first starts with ``[continued] `` so a reader of one
chunk knows it is not the start of the message.
"""

from __future__ import annotations

__all__ = ["CONTINUED", "chunk_text"]

CONTINUED = "[continued] "
_BOUNDARIES = ("\n\n", "\n", ". ", "! ", "? ", " ")


def _cut(text: str, limit: int) -> int:
    """Where to cut *text* so the first piece is at most *limit* characters."""
    window = text[:limit]
    for boundary in _BOUNDARIES:
        index = window.rfind(boundary)
        if index > limit // 4:
            return index + len(boundary)
    return limit


def chunk_text(text: str, limit: int) -> list[str]:
    """Split *text* into pieces of at most *limit* characters (prefix included).

    Empty or whitespace-only text gives no chunks.
    """
    if limit <= len(CONTINUED):
        raise ValueError(f"limit must exceed {len(CONTINUED)} characters")
    rest = text.strip()
    chunks: list[str] = []
    while rest:
        room = limit - (len(CONTINUED) if chunks else 0)
        if len(rest) <= room:
            piece, rest = rest, ""
        else:
            cut = _cut(rest, room)
            piece, rest = rest[:cut].rstrip(), rest[cut:].lstrip()
        if piece:
            chunks.append(CONTINUED + piece if chunks else piece)
    return chunks
