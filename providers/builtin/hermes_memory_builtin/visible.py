"""Memory text as the memory commands print it: nothing hidden from the person reading."""

from __future__ import annotations

from hermes_core.cli.terminal import shown
from hermes_memory_builtin.orthography import needed_positions

__all__ = ["visible"]


def visible(text: str) -> str:
    """*text* safe to print on a terminal, with nothing hidden from the person reading it.

    A file edited outside the tool can hold terminal escape sequences (which
    could conceal or redraw lines) and invisible characters; both are shown
    as code points (``<U+001B>``) instead of being sent raw; a zero-width
    character the script around it needs (a Persian non-joiner) stays as it is.
    """
    from hermes_memory_builtin.threats import INVISIBLE_CHARS

    text = shown(text)
    if INVISIBLE_CHARS.isdisjoint(text):
        return text
    hidden = [index for index, char in enumerate(text) if char in INVISIBLE_CHARS]
    needed = needed_positions(text, hidden)
    return "".join(
        f"<U+{ord(char):04X}>" if char in INVISIBLE_CHARS and index not in needed else char
        for index, char in enumerate(text)
    )
