"""Encoded payloads read back as text: base64 and hex runs, Morse code and pig Latin.

An attack can hide its words in an encoding a model reads but n-grams do not
("decode this Morse: .-- .... .- -", a base64 run in an HTML comment,
"erewhay oesday ethay useryay ivelay"). :func:`decoded_readings` gives the
plain text of each such encoding found, for the detector to score beside the
text itself; a text without one gives nothing, so an ordinary entry costs three
regular-expression scans and a count.
"""

from __future__ import annotations

import base64
import binascii
import re

__all__ = ["MORSE_CODES", "decoded_readings"]

_BASE64 = re.compile(r"[A-Za-z0-9+/]{20,}={0,2}")
"""A run long enough to carry a sentence (15 bytes); shorter ones are ids and hashes."""
_HEX = re.compile(r"\b(?:[0-9a-fA-F]{2}){12,}\b")
"""Hex bytes (12 or more): a digest decodes to bytes that are not text and is skipped."""
_MORSE = re.compile(r"(?:[.\-]{1,7}[ /]+){3,}[.\-]{1,7}")
_PIG = re.compile(r"\b[a-z]+(?:yay|[bcdfghjklmnpqrstvwxz]{1,3}ay)\b")
_WORDS = re.compile(r"\b[a-z]{2,}\b")
# fmt: off
_ONSETS = frozenset((
    "th", "wh", "sh", "ch", "ph", "st", "sp", "sk", "sc", "tr", "pr", "br", "cr", "dr", "fr",
    "gr", "pl", "bl", "cl", "fl", "gl", "sl", "sm", "sn", "sw", "tw", "str", "spr", "scr", "thr",
    "shr", "spl",
))
# fmt: on
"""Consonant clusters that begin English words; pig Latin moves them to the end."""

# fmt: off
MORSE_CODES = (
    ".-", "-...", "-.-.", "-..", ".", "..-.", "--.", "....", "..", ".---", "-.-", ".-..", "--",
    "-.", "---", ".--.", "--.-", ".-.", "...", "-", "..-", "...-", ".--", "-..-", "-.--", "--..",
    "-----", ".----", "..---", "...--", "....-", ".....", "-....", "--...", "---..", "----.",
)
# fmt: on
"""International Morse code of ``a``–``z`` and ``0``–``9``, in that order."""
_MORSE_LETTERS = dict(zip(MORSE_CODES, "abcdefghijklmnopqrstuvwxyz0123456789", strict=True))


def _printable(text: str) -> bool:
    return bool(text) and sum(ch.isprintable() or ch in "\n\t" for ch in text) >= 0.95 * len(text)


def _base64(text: str) -> list[str]:
    found = []
    for run in _BASE64.findall(text):
        body = run.rstrip("=")
        if len(body) % 4 == 1:  # a run cut short: its last group is incomplete
            body = body[:-1]
        try:
            raw = base64.b64decode(body + "=" * (-len(body) % 4), validate=True)
            plain = raw.decode("utf-8", "ignore")
        except binascii.Error:
            continue
        if " " in plain and _printable(plain):
            found.append(plain)
    return found


def _hex(text: str) -> list[str]:
    found = []
    for run in _HEX.findall(text):
        plain = bytes.fromhex(run).decode("utf-8", "ignore")
        if " " in plain and _printable(plain):
            found.append(plain)
    return found


def _morse(text: str) -> list[str]:
    found = []
    for run in _MORSE.findall(text):
        words = []
        known = total = 0
        for word in re.split(r"\s*/\s*|\s{3,}", run.strip()):
            letters = []
            for code in word.split():
                total += 1
                letter = _MORSE_LETTERS.get(code)
                if letter:
                    known += 1
                    letters.append(letter)
            words.append("".join(letters))
        if total >= 4 and known >= 0.7 * total:
            found.append(" ".join(w for w in words if w))
    return found


def _unpig(word: str) -> str:
    if word.endswith("yay"):
        return word[:-3]
    stem = word[:-2]
    for size in (3, 2):
        if len(stem) > size and stem[-size:] in _ONSETS:
            return stem[-size:] + stem[:-size]
    return stem[-1] + stem[:-1]


def _pig_latin(text: str) -> list[str]:
    lowered = text.lower()
    if lowered.count("ay") < 3:  # each pig-Latin word ends in "ay"
        return []
    words = _WORDS.findall(lowered)
    pig = _PIG.findall(lowered)
    if len(pig) < 3 or len(pig) < 0.5 * len(words):
        return []
    return [_PIG.sub(lambda m: _unpig(m.group(0)), lowered)]


def decoded_readings(text: str) -> list[str]:
    """The plain text of every base64 or hex run, Morse passage and pig-Latin passage in
    *text*."""
    return [*_base64(text), *_hex(text), *_morse(text), *_pig_latin(text)]
