"""Text from files, databases and models made safe to print on a terminal."""

from __future__ import annotations

import re

__all__ = ["shown"]

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
