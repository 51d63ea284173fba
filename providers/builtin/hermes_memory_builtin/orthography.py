"""Invisible characters that the spelling of a script, or of an emoji, needs.

Three zero-width characters are part of how some languages are written:

- U+200C ZERO WIDTH NON-JOINER and U+200D ZERO WIDTH JOINER choose letter
  forms in the Arabic script (Persian ``می‌خواهم``), Syriac and the Brahmic
  scripts (Devanagari, Bengali, Malayalam chillus ``ന്‍`` …); U+200D also joins
  emoji into one picture (👨‍👩‍👧, 👩🏽‍💻, 🏳️‍🌈);
- U+200B ZERO WIDTH SPACE is the word separator of scripts written without
  spaces (Khmer, Thai, Lao, Myanmar, Tibetan).

Such a character is *needed* when the character before it is a letter, mark or
digit of a script listed for it in :data:`_SCRIPTS` (in the Brahmic scripts, where a
joiner shapes a conjunct, next to a virama) and the character after it
is one of the same script, or ends the word (a space, a punctuation mark, the
end of the text). For emoji both neighbours must be pictographs (an emoji
modifier or VS16 may come before the joiner). Anything else, in particular a
Latin, Cyrillic or Greek letter on either side or another invisible character
next to it, is not needed and stays suspicious. Spelling puts a joiner at a
word's seams, not after every letter: a text whose letter joiners outnumber its
words by more than one is stuffed (:func:`needed_positions`), and
none of its letter joiners counts as needed.

CJK is deliberately not listed: Chinese and Japanese are written without
spaces, but line breaking between ideographs and kana needs no marker, and a
zero width space is not typed there (none in the 820 Mandarin, Cantonese, Wu and
Japanese Tatoeba dev sentences).

Two sequences of otherwise invisible characters are needed as well:

- an *emoji tag sequence* for a subdivision flag (UTS #51, ED-14a/ED-14c):
  U+1F3F4 WAVING BLACK FLAG, the tag letters and digits of a subdivision id
  (a region of two letters or three digits, then one to four letters or digits:
  ``gbeng`` for England, ``gbsct``, ``gbwls``) and U+E007F CANCEL TAG; any other
  tag character (a tag outside such a sequence, a space, capital or punctuation
  tag, a missing cancel tag) is the "ASCII smuggling" of hidden text;
- an *ideographic variation sequence* (UTS #37): one supplementary variation
  selector (U+E0100–U+E01EF) right after a CJK unified ideograph chooses a
  registered glyph (``葛`` U+E0100, a family name's form). A selector after anything
  else, or a second one, can only carry a hidden byte. As with joiners, when a
  text's sequences outnumber its words by more than one, none of them is needed.
"""

from __future__ import annotations

import bisect
import re
import unicodedata

__all__ = ["needed_by_script", "needed_positions"]

_ZWSP, _ZWNJ, _ZWJ = "\u200b", "\u200c", "\u200d"
_VS16 = "\ufe0f"
_JOINERS = frozenset({_ZWNJ, _ZWJ})
_TAG_LETTER = "[\U000e0061-\U000e007a]"
_TAG_DIGIT = "[\U000e0030-\U000e0039]"
_SUBDIVISION_FLAG = re.compile(
    f"\U0001f3f4(?:{_TAG_LETTER}{{2}}|{_TAG_DIGIT}{{3}})"
    f"(?:{_TAG_LETTER}|{_TAG_DIGIT}){{1,4}}\U000e007f"
)
"""A well-formed subdivision flag: black flag, subdivision id in tag characters, cancel tag."""
_IDEOGRAPHIC_SELECTORS = range(0xE0100, 0xE01F0)
_SPACE = frozenset({_ZWSP})
_EMOJI = "emoji"

# (first, last code point, script, the zero-width characters its spelling needs), sorted.
_SCRIPTS: tuple[tuple[int, int, str, frozenset[str]], ...] = (
    (0x0600, 0x06FF, "arabic", _JOINERS),
    (0x0700, 0x074F, "syriac", _JOINERS),
    (0x0750, 0x077F, "arabic", _JOINERS),
    (0x0860, 0x086F, "syriac", _JOINERS),
    (0x0870, 0x08FF, "arabic", _JOINERS),
    (0x0900, 0x097F, "devanagari", _JOINERS),
    (0x0980, 0x09FF, "bengali", _JOINERS),
    (0x0A00, 0x0A7F, "gurmukhi", _JOINERS),
    (0x0A80, 0x0AFF, "gujarati", _JOINERS),
    (0x0B00, 0x0B7F, "oriya", _JOINERS),
    (0x0B80, 0x0BFF, "tamil", _JOINERS),
    (0x0C00, 0x0C7F, "telugu", _JOINERS),
    (0x0C80, 0x0CFF, "kannada", _JOINERS),
    (0x0D00, 0x0D7F, "malayalam", _JOINERS),
    (0x0D80, 0x0DFF, "sinhala", _JOINERS),
    (0x0E00, 0x0E7F, "thai", _SPACE),
    (0x0E80, 0x0EFF, "lao", _SPACE),
    (0x0F00, 0x0FFF, "tibetan", _SPACE),
    (0x1000, 0x109F, "myanmar", _SPACE | _JOINERS),
    (0x1780, 0x17FF, "khmer", _SPACE | _JOINERS),
    (0x19E0, 0x19FF, "khmer", _SPACE | _JOINERS),
    (0x2190, 0x2BFF, _EMOJI, frozenset({_ZWJ})),
    (0xA8E0, 0xA8FF, "devanagari", _JOINERS),
    (0xA9E0, 0xA9FF, "myanmar", _SPACE | _JOINERS),
    (0xAA60, 0xAA7F, "myanmar", _SPACE | _JOINERS),
    (0xFB50, 0xFDFF, "arabic", _JOINERS),
    (0xFE70, 0xFEFE, "arabic", _JOINERS),
    (0x1F000, 0x1FAFF, _EMOJI, frozenset({_ZWJ})),
)
_STARTS = [first for first, *_ in _SCRIPTS]
_BRAHMIC = frozenset(
    {"devanagari", "bengali", "gurmukhi", "gujarati", "oriya", "tamil", "telugu", "kannada"}
    | {"malayalam", "sinhala"}
)
"""Scripts where a (non-)joiner shapes a conjunct, so it follows a virama (``क्‍ष``, the
Malayalam chillu ``ന്‍``) or, in Bengali's ``র‍্য``, precedes one."""
_VIRAMA = 9
"""The canonical combining class of the viramas."""
# Categories that make a character part of a word: letters, marks and digits, and
# for emoji, pictographs (So) and skin-tone modifiers (Sk).
_WORD = frozenset("LMN")
_PICTURE = frozenset({"So", "Sk"})


def _script(char: str) -> tuple[str, frozenset[str]] | None:
    """The script of *char* and what it needs, when *char* is part of a word in one."""
    code = ord(char)
    index = bisect.bisect_right(_STARTS, code) - 1
    if index < 0 or code > _SCRIPTS[index][1]:
        return None
    _, _, script, needs = _SCRIPTS[index]
    category = unicodedata.category(char)
    wanted = category in _PICTURE if script == _EMOJI else category[0] in _WORD
    return (script, needs) if wanted else None


def _beside_virama(text: str, before: int) -> bool:
    """True when the joiner after *before* follows a virama or precedes one (the Bengali
    *ra* of ``র‍্যাব``, joined before its virama)."""
    after = before + 2
    return unicodedata.combining(text[before]) == _VIRAMA or (
        after < len(text) and unicodedata.combining(text[after]) == _VIRAMA
    )


def _ends_word(text: str, index: int) -> bool:
    """True when *text* ends at *index* or has a space or punctuation mark there."""
    return index >= len(text) or unicodedata.category(text[index])[0] in "ZP"


def needed_by_script(text: str, index: int) -> bool:
    """True when the zero-width character at *index* of *text* belongs to its spelling."""
    char = text[index]
    before = index - 1
    presented = before > 0 and text[before] == _VS16
    if presented:
        before -= 1
    left = _script(text[before]) if before >= 0 else None
    if left is None or char not in left[1] or (presented and left[0] != _EMOJI):
        return False
    if left[0] in _BRAHMIC and char in _JOINERS and not _beside_virama(text, before):
        return False
    right = _script(text[index + 1]) if index + 1 < len(text) else None
    if right is not None:
        return right[0] == left[0]
    return left[0] != _EMOJI and _ends_word(text, index + 1)


def _joins_letters(text: str, index: int) -> bool:
    """True when the needed character at *index* is a (non-)joiner between letters, not
    between emoji."""
    if text[index] not in _JOINERS or index + 1 >= len(text):
        return text[index] in _JOINERS
    right = _script(text[index + 1])
    return right is None or right[0] != _EMOJI


def _flag_positions(text: str) -> set[int]:
    """Positions of the tag characters of the well-formed subdivision flags in *text*."""
    return {
        index
        for match in _SUBDIVISION_FLAG.finditer(text)
        for index in range(match.start() + 1, match.end())
    }


def _is_variation_sequence(text: str, index: int) -> bool:
    """True when the supplementary variation selector at *index* follows a CJK unified
    ideograph directly (an ideographic variation sequence, UTS #37)."""
    return (
        index > 0
        and ord(text[index]) in _IDEOGRAPHIC_SELECTORS
        and unicodedata.name(text[index - 1], "").startswith("CJK UNIFIED IDEOGRAPH-")
    )


def needed_positions(text: str, positions: list[int]) -> set[int]:
    """The *positions* of invisible characters in *text* that its spelling needs: each
    :func:`needed_by_script`, the tag characters of a well-formed subdivision flag and the
    selector of an ideographic variation sequence; but no letter joiner (and no variation
    selector) at all when they outnumber the words by more than one (``كتاب‌خانه‌ها`` has
    two in one word; a joiner after every letter or two is stuffing that hides what the
    letters say)."""
    needed = {index for index in positions if needed_by_script(text, index)}
    words = len(text.split())
    joiners = {index for index in needed if _joins_letters(text, index)}
    if len(joiners) > words + 1:
        needed -= joiners
    variants = {index for index in positions if _is_variation_sequence(text, index)}
    if len(variants) <= words + 1:
        needed |= variants
    if "\U000e007f" in text:
        needed |= _flag_positions(text).intersection(positions)
    return needed
