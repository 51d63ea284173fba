"""``hermes_cli.input_decode``: ``input()`` for setup prompts, with shifted keys decoded.

A terminal in xterm's modifyOtherKeys mode or Kitty's keyboard protocol sends a
shifted key as an escape sequence (``ESC[27;2;84~`` or ``ESC[84;2u`` for
``T``), which the builtin ``input()`` returns as is. Hermes Agent switches
those modes on; plugins' setup prompts read through :func:`safe_input`, which
turns shift-only sequences back into the typed characters and leaves every
other byte alone.
"""

import re
from typing import NoReturn

from hermes_core.hermes_compat.finder import missing_attribute

__hermes_compat__ = True

__all__ = ["decode_modified_key_sequences", "safe_input"]

# The modifier parameter is 1 + a bit mask, so plain Shift is 2 in both
# protocols; Kitty's alternate report mode adds the event type (repeat 3,
# release 4). Under modifyOtherKeys 3 means Alt, so only 2 is decoded there.
_MODIFY_OTHER_KEYS = re.compile(r"\x1b\[27;(\d{1,7});(\d{1,7})~")
_KITTY_CSI_U = re.compile(r"\x1b\[(\d{1,7})(?:;(\d{1,7}))?u")
_SHIFT = frozenset({2})
_KITTY_SHIFT = frozenset({2, 3, 4})
_PRIVATE_USE_KEYS = range(0xE000, 0xF8FF + 1)  # Kitty's functional keys (Enter, arrows, ...)
_SURROGATES = range(0xD800, 0xDFFF + 1)


def _typed(sequence: str, modifier: str | None, codepoint: str, shifts: frozenset[int]) -> str:
    if modifier is None or int(modifier) not in shifts:
        return sequence
    value = int(codepoint)
    if value < 32 or value == 127 or value in _SURROGATES or value in _PRIVATE_USE_KEYS:
        return sequence
    try:
        return chr(value)
    except (ValueError, OverflowError):
        return sequence


def decode_modified_key_sequences(text: str) -> str:
    """*text* with each shift-only extended-key sequence replaced by its character."""
    if "\x1b[" not in text:
        return text
    text = _MODIFY_OTHER_KEYS.sub(lambda m: _typed(m[0], m[1], m[2], _SHIFT), text)
    return _KITTY_CSI_U.sub(lambda m: _typed(m[0], m[2], m[1], _KITTY_SHIFT), text)


def safe_input(prompt: str = "") -> str:
    """``input(prompt)`` with :func:`decode_modified_key_sequences` applied to the answer."""
    return decode_modified_key_sequences(input(prompt))


def __getattr__(name: str) -> NoReturn:
    raise missing_attribute(__name__, name, __all__)
