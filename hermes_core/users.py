"""User ids: the key that keeps one person's memory and sessions apart from another's.

A gateway serving many people passes a ``user_id`` to the runtime (and on to
every provider's ``initialize``). The builtin provider keeps that user's
``MEMORY.md`` / ``USER.md`` in a folder of their own and the session store
tags and filters rows by it. No user id means the single-user layout of
before, unchanged.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from hermes_core.errors import ConfigError

__all__ = ["MAX_USER_ID_CHARS", "user_folder_name", "user_id_of_folder", "valid_user_id"]

MAX_USER_ID_CHARS = 128
"""Longest user id accepted (characters)."""
_MAX_FOLDER_BYTES = 240
_KEPT = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_")


def valid_user_id(value: Any) -> str | None:
    """*value* as a user id, or ``None`` for none (``None``); anything else that is not a
    usable id raises a :class:`~hermes_core.errors.ConfigError` saying why.

    An id is text of 1 to :data:`MAX_USER_ID_CHARS` characters, without control
    characters and without leading or trailing whitespace. Any other character
    (``/``, ``..``, letters of any script) is allowed: stored as given in the
    session store, and escaped for a folder name (:func:`user_folder_name`).
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise ConfigError(
            f"user_id must be text (or a whole number), not {type(value).__name__}; pass the "
            "gateway's id of the person, e.g. 'telegram:12345'."
        )
    text = str(value)
    if not text.strip():
        raise ConfigError(
            "user_id is empty; pass the id of the person (or no user_id for one user)."
        )
    if text != text.strip():
        raise ConfigError(f"user_id {text[:40]!r} has leading or trailing whitespace; strip it.")
    if len(text) > MAX_USER_ID_CHARS:
        raise ConfigError(
            f"user_id is {len(text)} characters long, over the limit of {MAX_USER_ID_CHARS}; "
            "pass a shorter id (a hash of a long one, say)."
        )
    for char in text:
        if unicodedata.category(char) in ("Cc", "Cs", "Cf", "Zl", "Zp"):
            raise ConfigError(
                f"user_id {text[:40]!r} holds the control or invisible character "
                f"U+{ord(char):04X}; pass printable text."
            )
    if len(user_folder_name(text)) > _MAX_FOLDER_BYTES:
        raise ConfigError(
            f"user_id {text[:40]!r} is too long once escaped for a folder name; pass a shorter "
            "id (non-ASCII characters take up to 12 bytes each)."
        )
    return text


def user_folder_name(user_id: str) -> str:
    """A folder name for *user_id* that no other id shares, even on a case-insensitive disk.

    Lower-case ASCII letters, digits, ``-`` and ``_`` are kept; every other
    byte of the UTF-8 text (capitals, dots, slashes, other scripts) becomes
    ``%XX``. So ``../x`` is ``%2E%2E%2Fx`` and ``Alice`` is ``%41lice``.
    """
    return "".join(
        chr(byte) if chr(byte) in _KEPT else f"%{byte:02X}" for byte in user_id.encode("utf-8")
    )


def user_id_of_folder(name: str) -> str | None:
    """The user id whose folder is *name* (the inverse of :func:`user_folder_name`), or
    ``None`` when no usable id has that folder name."""
    data = bytearray()
    index = 0
    while index < len(name):
        char = name[index]
        if char == "%" and len(name) >= index + 3:
            try:
                data.append(int(name[index + 1 : index + 3], 16))
            except ValueError:
                return None
            index += 3
        elif char in _KEPT:
            data.append(ord(char))
            index += 1
        else:
            return None
    try:
        user = data.decode("utf-8")
        valid = valid_user_id(user)
    except (UnicodeDecodeError, ConfigError):
        return None
    return valid if valid is not None and user_folder_name(valid) == name else None
