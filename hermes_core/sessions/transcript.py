"""A stored conversation as text for a summariser, cut down around what matched.

:func:`format_conversation` renders messages as ``[USER]: …`` blocks (long
tool output keeps its head and tail). :func:`truncate_around_matches` keeps a
window of at most ``max_chars`` characters placed where the query matters
most, trying in order:

1. the whole query as a phrase;
2. places where the rarest query word has every other word within 200 characters;
3. every occurrence of any query word;

and placing a quarter of the window before the chosen spot and three quarters
after it (what follows a match is usually its answer), opened at a turn's start
when one is near. Words are stems matched at word starts; of several places,
the window covering the most distinct words, each weighted by its rarity, wins.
:func:`match_preview` is the short version used when no summary can be made
(with a second, shorter excerpt when query words occur only outside the first).
"""

from __future__ import annotations

import bisect
import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from hermes_core.sessions.cjk import contains_cjk
from hermes_core.sessions.query import parse_query
from hermes_core.sessions.question import is_stop_word, stem, stem_regex

__all__ = [
    "EARLIER_MARKER",
    "EXCERPT_GAP",
    "LATER_MARKER",
    "describe_tool_calls",
    "format_conversation",
    "match_preview",
    "query_needles",
    "truncate_around_matches",
]

EARLIER_MARKER = "...[earlier conversation truncated]...\n\n"
LATER_MARKER = "\n\n...[later conversation truncated]..."
TOOL_OUTPUT_KEEP = 250
CALL_ARGUMENTS_KEEP = 400
"""Characters of one tool call's arguments kept in a transcript (the start; the rest is cut)."""
ARGUMENTS_DECODE_LIMIT = 100_000
"""Longer tool-call JSON is shown as written, not decoded (a transcript needs only its start)."""
CO_OCCURRENCE_CHARS = 200
EXCERPT_GAP = "\n\n[…]\n\n"
"""Between the two excerpts of a :func:`match_preview`."""
TURN_SEPARATOR = "\n\n"
"""Between the turns of :func:`format_conversation`; windows open at a turn when one is near."""
MAX_CANDIDATE_WINDOWS = 20_000
"""Most places a window is tried at (the occurrences of the rarest query words first)."""


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            item.get("text", "") if isinstance(item, Mapping) else str(item) for item in content
        ]
        return "\n".join(part for part in parts if isinstance(part, str) and part)
    return json.dumps(content, ensure_ascii=False)


def _decoded(text: str) -> Any:
    """*text* as JSON when it is (and not too long or too deep to decode), else *text*."""
    if len(text) > ARGUMENTS_DECODE_LIMIT:
        return text
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return text


_LAYOUT_ESCAPE = re.compile(r"\\(.)")
"""A JSON escape pair; read left to right, so an escaped backslash is never split."""


def _arguments_text(arguments: Any) -> str:
    """A call's arguments on one line: JSON decoded (so ``\\u`` escapes read as text), cut."""
    value = _decoded(arguments) if isinstance(arguments, str) else arguments
    if value in (None, "", {}, []):
        return ""
    if isinstance(value, str):
        text = value[: CALL_ARGUMENTS_KEEP * 4]
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, default=str)
        except (ValueError, RecursionError):
            text = "(arguments nested too deeply to show)"
        # A value's line breaks and tabs as spaces: 'cd /srv\nhelm' would hide 'helm'.
        text = _LAYOUT_ESCAPE.sub(
            lambda m: " " if m.group(1) in "nrt" else m.group(0), text[: CALL_ARGUMENTS_KEEP * 4]
        )
    text = " ".join(text.split())
    if len(text) > CALL_ARGUMENTS_KEEP:
        text = text[:CALL_ARGUMENTS_KEEP] + "…"
    return text


def describe_tool_calls(tool_calls: Any) -> str:
    """Tool calls (a list, or its JSON text) as ``name(arguments), name``; "" for none.

    Names come from ``function.name`` or ``name`` (``?`` when missing); each
    call's arguments are decoded and kept to :data:`CALL_ARGUMENTS_KEEP`
    characters, so a transcript shows the command that was run, not only the tool.
    """
    if isinstance(tool_calls, str):
        tool_calls = _decoded(tool_calls)
    calls = []
    for call in tool_calls if isinstance(tool_calls, list) else []:
        name = arguments = None
        if isinstance(call, Mapping):
            function = call.get("function")
            if isinstance(function, Mapping):
                name, arguments = function.get("name"), function.get("arguments")
            name = name or call.get("name")
            arguments = arguments if arguments is not None else call.get("arguments")
        args = _arguments_text(arguments)
        label = str(name) if name else "?"
        calls.append(f"{label}({args})" if args else label)
    return ", ".join(calls)


def format_conversation(messages: Sequence[Mapping[str, Any]]) -> str:
    """Messages as ``[ROLE]: text`` blocks separated by blank lines.

    A user or assistant message with a speaker's ``name`` reads ``[USER:Ana]: …``.
    Tool results read ``[TOOL:name]: …`` and keep only their first and last 250
    characters when longer than 500; an assistant message that called tools
    lists them with their arguments after its text, in the order the model wrote
    them (``[ASSISTANT]: [Called: terminal({"command": "make test"}), b]``).
    """
    blocks = []
    for message in messages:
        role = str(message.get("role") or "unknown")
        content = _text(message.get("content"))
        if role == "tool":
            name = message.get("name") or message.get("tool_name")
            if len(content) > 2 * TOOL_OUTPUT_KEEP:
                content = (
                    content[:TOOL_OUTPUT_KEEP]
                    + "\n...[truncated]...\n"
                    + content[-TOOL_OUTPUT_KEEP:]
                )
            label = f"[TOOL:{name}]" if name else "[TOOL]"
            blocks.append(f"{label}: {content}")
            continue
        if role == "assistant" and message.get("tool_calls"):
            if content.strip():
                blocks.append(f"[ASSISTANT]: {content}")
            blocks.append(f"[ASSISTANT]: [Called: {describe_tool_calls(message['tool_calls'])}]")
            continue
        speaker = message.get("name")
        label = (
            f"{role.upper()}:{speaker}" if isinstance(speaker, str) and speaker else role.upper()
        )
        blocks.append(f"[{label}]: {content}")
    return TURN_SEPARATOR.join(blocks)


def query_needles(query: str) -> tuple[str, list[str]]:
    """(phrase, words) to look for in a transcript: lower-case, stop words removed."""
    parsed = parse_query(query)
    words: list[str] = []
    for term in parsed.terms:
        if is_stop_word(term):
            continue
        word = stem(term.text)
        if word and word not in words:
            words.append(word)
    if not words:
        words = [term.text.lower() for term in parsed.terms]
    phrase = " ".join(term.text.lower() for term in parsed.terms)
    return phrase, words


def _occurrences(text: str, needle: str) -> list[int]:
    """Where *needle* starts a word of *text* (anywhere, for a needle that starts with CJK).

    Needles are stems, so ``run`` finds ``running``; ``ana`` does not find ``banana``.
    """
    if not needle:
        return []
    word_start = re.match(r"\w", needle) is not None and not contains_cjk(needle[0])
    boundary = r"(?<!\w)" if word_start else ""
    return [m.start() for m in re.finditer(boundary + stem_regex(needle), text)]


def _spots(lowered: str, query: str) -> dict[str, list[int]]:
    """Needle → positions in *lowered*, by the first of the three strategies that finds any."""
    phrase, words = query_needles(query)
    positions = _occurrences(lowered, phrase) if phrase else []
    if positions:
        return {phrase: positions}
    found = {word: _occurrences(lowered, word) for word in words}
    present = {word: spots for word, spots in found.items() if spots}
    if len(words) > 1 and len(present) == len(words):
        rarest = min(present, key=lambda word: len(present[word]))
        others = [present[word] for word in present if word != rarest]
        together = [spot for spot in present[rarest] if all(_near(s, spot) for s in others)]
        if together:
            return {rarest: together}
    return present


def _near(sorted_spots: list[int], spot: int) -> bool:
    i = bisect.bisect_left(sorted_spots, spot - CO_OCCURRENCE_CHARS + 1)
    return i < len(sorted_spots) and sorted_spots[i] < spot + CO_OCCURRENCE_CHARS


def _turn_starts(text: str) -> list[int]:
    """Where each turn of *text* starts: after every (possibly overlapping) separator."""
    return [m.start() + len(TURN_SEPARATOR) for m in re.finditer(r"(?=\n\n)", text)]


def _turn_start_in(turns: list[int], low: int, high: int) -> int:
    """The last turn start in ``[low, high]``, or -1; the text's start when *low* reaches it."""
    if low <= 0:
        return 0
    i = bisect.bisect_right(turns, high) - 1
    return turns[i] if i >= 0 and turns[i] >= low else -1


def _window_start(text_len: int, turns: list[int], spot: int, size: int) -> int:
    """A quarter of *size* before *spot*, moved to a turn's start when one is near.

    Back to the start of the turn the quarter begins in when that is within
    another quarter (the whole turn before the match, often its question);
    otherwise forward to the start of the match's own turn when that lies in
    the quarter, so a window does not open in the middle of a sentence.
    """
    start = max(0, spot - size // 4)
    before = _turn_start_in(turns, start - size // 4, start)
    start = before if before >= 0 else max(start, _turn_start_in(turns, start, spot))
    if start > text_len - size:  # the end of the text: the window slides back to a turn
        start = max(0, text_len - size)
        i = bisect.bisect_left(turns, start + len(TURN_SEPARATOR))
        j = bisect.bisect_left(turns, start)
        at_turn = j < len(turns) and turns[j] == start
        if start and i < len(turns) and turns[i] <= spot and not at_turn:
            start = turns[i]
    return start


def _any_within(sorted_positions: list[int], low: int, high: int) -> bool:
    """True when one of *sorted_positions* lies in ``[low, high)``."""
    return bisect.bisect_left(sorted_positions, high) > bisect.bisect_left(sorted_positions, low)


def _best_window(text: str, spots: dict[str, list[int]], size: int) -> int:
    """Start of the *size*-character window of *text* covering the most of the needles.

    A needle counts once per window, weighted by its rarity in the text, so a
    window with the one mention of ``pottery`` beats one with ten mentions of a
    speaker's name. Of equal windows, the one opened at the rarest needle wins,
    then the earliest, so the match is near the start and what follows it
    (usually its answer) is kept.

    Windows are tried at the occurrences of the rarest needles, at most
    :data:`MAX_CANDIDATE_WINDOWS` of them, and one sweep over them in order of
    their start keeps a count of each needle's occurrences inside, so a long
    transcript searched with a long query stays fast.
    """
    total = sum(len(positions) for positions in spots.values())
    weights = {needle: math.log(1 + total / len(positions)) for needle, positions in spots.items()}
    order = list(spots)
    tried: list[tuple[int, int]] = []  # (spot, needle index), rarest needles first
    for index in sorted(range(len(order)), key=lambda i: len(spots[order[i]])):
        room = MAX_CANDIDATE_WINDOWS - len(tried)
        if tried and len(spots[order[index]]) > room:
            break
        tried.extend((spot, index) for spot in spots[order[index]][:room])
    turns = _turn_starts(text)
    candidates = sorted(
        (_window_start(len(text), turns, spot, size), -spot, index) for spot, index in tried
    )
    occurrences = sorted(
        (spot, index) for index, needle in enumerate(order) for spot in spots[needle]
    )
    inside = [0] * len(order)
    mask = 0  # bit i: needle i occurs in the current window
    covered_by_mask: dict[int, float] = {}
    entered = left = 0
    best_start, best_score = 0, (-1.0, -1.0, 0)
    for start, negative_spot, index in candidates:
        while entered < len(occurrences) and occurrences[entered][0] < start + size:
            needle = occurrences[entered][1]
            inside[needle] += 1
            mask |= 1 << needle
            entered += 1
        while left < entered and occurrences[left][0] < start:
            needle = occurrences[left][1]
            inside[needle] -= 1
            if not inside[needle]:
                mask &= ~(1 << needle)
            left += 1
        if mask not in covered_by_mask:
            covered_by_mask[mask] = sum(
                weights[needle] for i, needle in enumerate(order) if mask >> i & 1
            )
        score = (round(covered_by_mask[mask], 9), round(weights[order[index]], 9), negative_spot)
        if score > best_score:
            best_start, best_score = start, score
    return best_start


def truncate_around_matches(full_text: str, query: str, max_chars: int = 100_000) -> str:
    """*full_text* cut to about *max_chars* around the query's best matches."""
    if len(full_text) <= max_chars:
        return full_text
    spots = _spots(full_text.lower(), query)
    if not spots:
        return full_text[:max_chars] + LATER_MARKER
    start = _best_window(full_text, spots, max_chars)
    end = min(len(full_text), start + max_chars)
    return (
        (EARLIER_MARKER if start > 0 else "")
        + full_text[start:end]
        + (LATER_MARKER if end < len(full_text) else "")
    )


ANCHOR_CHARS = 200
"""Characters of the matched message looked for in the transcript to place a preview."""


def match_preview(text: str, query: str, chars: int = 600, anchor: str | None = None) -> str:
    """About *chars* characters of *text* around its best match (or its start).

    When query words occur only outside that excerpt, a second one of up to
    half as many characters is added around them. *anchor* is the text of the
    message the search ranked first in this conversation: when it is not whole
    in the first excerpt (its first :data:`ANCHOR_CHARS` characters found in
    *text*), the second excerpt is placed at that message instead, from its
    turn's start, since the ranking weighs more than where the words cluster
    (the answering turn often shares few of them). Excerpts keep the text's
    order, :data:`EXCERPT_GAP` stands between them and ``…`` marks a cut at
    either end.
    """
    if len(text) <= chars:
        return text
    spots = _spots(text.lower(), query)
    start = _best_window(text, spots, chars) if spots else 0
    pieces = [(start, min(len(text), start + chars))]
    needle = anchor.strip()[:ANCHOR_CHARS] if isinstance(anchor, str) else ""
    at = text.find(needle) if needle else -1
    if at >= 0 and not (start <= at and at + len(needle) <= pieces[0][1]):
        low = at
        turns = _turn_starts(text)
        i = bisect.bisect_right(turns, at) - 1
        if i >= 0 and at - turns[i] < chars // 4:  # from the label "[USER]: " on
            low = turns[i]
        high = min(len(text), low + chars // 2)
    else:
        missed = {
            needle: positions
            for needle, positions in spots.items()
            if not _any_within(positions, start, start + chars)
        }
        low = _best_window(text, missed, chars // 2) if missed else 0
        high = min(len(text), low + chars // 2) if missed else 0
    if low < pieces[0][1] and high > pieces[0][0]:  # overlapping: keep what is outside
        low, high = (pieces[0][1], high) if low >= pieces[0][0] else (low, pieces[0][0])
    if high > low:
        pieces.append((low, high))
    pieces.sort()
    if len(pieces) == 2 and pieces[0][1] == pieces[1][0]:
        pieces = [(pieces[0][0], pieces[1][1])]
    return (
        ("…" if pieces[0][0] > 0 else "")
        + EXCERPT_GAP.join(text[low:high] for low, high in pieces)
        + ("…" if pieces[-1][1] < len(text) else "")
    )
