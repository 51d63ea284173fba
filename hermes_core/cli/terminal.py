"""Text from files, databases and models made safe to print on a terminal."""

from __future__ import annotations

import re

__all__ = ["shown", "typed"]

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""C0 and C1 control characters except tab and newline: a terminal would obey them."""


def shown(text: str) -> str:
    """*text* with its control characters shown as code points (``<U+001B>``), not obeyed.

    Stored messages, hand-edited files and model replies can hold escape
    sequences or a lone carriage return that would restyle, retitle or
    overwrite the terminal, or hide a line from the person reading it. Tab and
    newline are kept, and ``\\r\\n`` is read as a newline.
    """
    return _CONTROL.sub(lambda match: f"<U+{ord(match.group()):04X}>", text.replace("\r\n", "\n"))


_ESCAPE_SEQUENCE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"  # CSI: arrow keys, F-keys, bracketed paste
    r"|(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # OSC, to BEL or ST
    r"|\x1bO."  # SS3: arrow and function keys in application mode
    r"|\x1b[ -/]*[0-~]?"  # any other escape, with what it introduces
)
"""Escape sequences a terminal sends for keys it does not turn into text."""


def typed(text: str) -> str:
    """*text* typed at a terminal without its escape sequences and control characters.

    A key that line editing does not handle (an arrow key without readline,
    say) arrives as an escape sequence such as ``\x1b[A``; none of it is text
    the person meant. Whole sequences go, then every other C0 and C1 control
    character except tab and newline.
    """
    return _CONTROL.sub("", _ESCAPE_SEQUENCE.sub("", text.replace("\r\n", "\n")))
