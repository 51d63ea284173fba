"""Relative time in a question ("yesterday", "last week", "3 days ago", "上周") as a time span.

``session_search`` questions often say *when* rather than *what*: "what did we
work on yesterday?". :func:`find_time_span` finds the first such phrase,
turns it into an interval of epoch seconds in local time, and returns the
question without it. Spans are deliberately generous ("last week" runs from
the start of last week until now), because a caller falls back to searching
all of history when a span holds nothing.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import NamedTuple

__all__ = ["MAX_QUESTION_CHARS", "TimeSpan", "find_time_span"]

MAX_QUESTION_CHARS = 2_000
"""Longer text is not read for a time phrase."""


class TimeSpan(NamedTuple):
    """``since <= timestamp < until`` (epoch seconds) and the phrase that said so."""

    since: float
    until: float
    phrase: str


_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "couple": 2,
    "few": 3,
    "several": 3,
}
_UNIT_DAYS = {"hour": 1 / 24, "day": 1, "week": 7, "month": 30, "year": 365}
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")

_NUMBER_WORDS = "|".join(sorted(_NUMBERS, key=len, reverse=True))


def _count_unit(name: str) -> str:
    """A count ("3", "two", "a couple of") and a unit, in groups ``<name>_n``/``<name>_unit``."""
    count = rf"(?P<{name}_n>\d{{1,3}}|(?:a\s+)?(?:couple(?:\s+of)?|few|several)|{_NUMBER_WORDS})"
    return rf"{count}\s+(?P<{name}_unit>hour|day|week|month|year)s?"


_PART_OF_DAY = r"(?:\s+(?:morning|afternoon|evening|night))?"
_ENGLISH = re.compile(
    r"(?<![\w'])(?:"
    + "|".join(
        (
            rf"(?P<before_yesterday>(?:the\s+)?day\s+before\s+yesterday{_PART_OF_DAY})",
            rf"(?P<yesterday>yesterday{_PART_OF_DAY})",
            r"(?P<last_night>last\s+night)",
            r"(?P<today>(?:earlier\s+)?today|tonight|this\s+(?:morning|afternoon|evening))",
            r"(?P<within>(?:in\s+|over\s+|during\s+)?(?:the\s+)?(?:last|past)\s+"
            + _count_unit("within")
            + ")",
            rf"(?P<ago>{_count_unit('ago')}\s+ago)",
            r"(?P<previous>(?:in\s+|during\s+|over\s+)?(?:the\s+)?(?:last|past|previous)\s+"
            r"(?P<prev_unit>week|month|year))",
            r"(?P<this>(?:earlier\s+)?this\s+(?P<this_unit>week|month|year))",
            rf"(?P<weekday>(?:last|on|this\s+past)\s+(?P<day>{'|'.join(_WEEKDAYS)}))",
            r"(?P<weekend>(?:last|this\s+past|over\s+the)\s+weekend)",
        )
    )
    + r")(?:['\u2019]s)?(?![\w'])",
    re.IGNORECASE,
)
_SINCE = re.compile(r"(?<![\w'])(?:since|from)\s+$", re.IGNORECASE)

_CHINESE = re.compile(
    r"(?P<zh_today>今天|今日|今早|今晚)|(?P<zh_yesterday>昨天|昨日|昨晚)|(?P<zh_before>前天)"
    r"|(?P<zh_last_week>上周|上星期|上个星期|上礼拜)|(?P<zh_this_week>这周|本周|这个星期|这星期)"
    r"|(?P<zh_last_month>上个月|上月)|(?P<zh_this_month>这个月|本月)"
    r"|(?P<zh_this_year>今年)|(?P<zh_last_year>去年)|(?:最近|过去)(?P<zh_days>\d{1,3})天"
)


def _day(now: datetime, back: int) -> datetime:
    """Midnight starting the day *back* days before *now*'s."""
    return now.replace(hour=0, minute=0, second=0, microsecond=0) - timedelta(days=back)


def _start_of(now: datetime, unit: str, back: int = 0) -> datetime:
    """The start of the week (Monday), month or year *back* units before *now*'s."""
    if unit == "week":
        return _day(now, now.weekday() + 7 * back)
    if unit == "month":
        month = now.month - 1 - back
        return _day(now, 0).replace(year=now.year + month // 12, month=month % 12 + 1, day=1)
    return _day(now, 0).replace(year=now.year - back, month=1, day=1)


def _count(text: str) -> int:
    words = text.lower().split()
    if words[0].isdigit():
        return int(words[0])
    return next(_NUMBERS[w] for w in reversed(words) if w in _NUMBERS)


def _english_span(match: re.Match[str], now: datetime) -> tuple[datetime, datetime]:
    groups = match.groupdict()
    if groups["before_yesterday"]:
        return _day(now, 2), _day(now, 1)
    if groups["yesterday"]:
        return _day(now, 1), _day(now, 0)
    if groups["last_night"]:
        return _day(now, 1) + timedelta(hours=12), _day(now, 0) + timedelta(hours=6)
    if groups["today"]:
        return _day(now, 0), now
    if groups["within"]:
        days = _UNIT_DAYS[groups["within_unit"].lower()]
        return now - timedelta(days=_count(groups["within_n"]) * days), now
    if groups["ago"]:
        days = _UNIT_DAYS[groups["ago_unit"].lower()]
        count = _count(groups["ago_n"])
        if days >= 1:  # "3 days ago": that day, give or take one unit
            return _day(now - timedelta(days=(count + 1) * days), 0), _day(
                now - timedelta(days=(count - 1) * days), 0
            ) + timedelta(days=1)
        return now - timedelta(days=(count + 1) * days), now - timedelta(days=(count - 1) * days)
    if groups["previous"]:
        return _start_of(now, groups["prev_unit"].lower(), 1), now
    if groups["this"]:
        return _start_of(now, groups["this_unit"].lower()), now
    if groups["weekday"]:
        back = (now.weekday() - _WEEKDAYS.index(groups["day"].lower())) % 7 or 7
        return _day(now, back), _day(now, back - 1)
    if groups["weekend"]:
        monday = _start_of(now, "week")
        return monday - timedelta(days=2), monday
    raise AssertionError(f"unhandled time phrase {match.group(0)!r}")  # pragma: no cover


def _chinese_span(match: re.Match[str], now: datetime) -> tuple[datetime, datetime]:
    kind = match.lastgroup
    spans = {
        "zh_today": lambda: (_day(now, 0), now),
        "zh_yesterday": lambda: (_day(now, 1), _day(now, 0) + timedelta(hours=6)),
        "zh_before": lambda: (_day(now, 2), _day(now, 1)),
        "zh_last_week": lambda: (_start_of(now, "week", 1), now),
        "zh_this_week": lambda: (_start_of(now, "week"), now),
        "zh_last_month": lambda: (_start_of(now, "month", 1), now),
        "zh_this_month": lambda: (_start_of(now, "month"), now),
        "zh_this_year": lambda: (_start_of(now, "year"), now),
        "zh_last_year": lambda: (_start_of(now, "year", 1), _start_of(now, "year")),
        "zh_days": lambda: (now - timedelta(days=int(match.group("zh_days"))), now),
    }
    return spans[str(kind)]()


def find_time_span(text: str, now: datetime | None = None) -> tuple[TimeSpan | None, str]:
    """The first relative-time phrase of *text* as a span, and *text* without it.

    *now* (default: the current local time) anchors the phrase. Returns
    ``(None, text)`` when *text* names no time, or is longer than
    :data:`MAX_QUESTION_CHARS` (a pasted log, not a question).
    """
    if len(text) > MAX_QUESTION_CHARS:
        return None, text
    now = now or datetime.now().astimezone()
    found: list[tuple[re.Match[str], tuple[datetime, datetime]]] = []
    english = _ENGLISH.search(text)
    if english is not None:
        found.append((english, _english_span(english, now)))
    chinese = _CHINESE.search(text)
    if chinese is not None:
        found.append((chinese, _chinese_span(chinese, now)))
    if not found:
        return None, text
    match, (since, until) = min(found, key=lambda item: item[0].start())
    start = match.start()
    since_word = _SINCE.search(text, 0, start)
    if since_word is not None:  # "since yesterday": from then until now
        start, until = since_word.start(), now
    if until >= now:  # include what is written while the question is answered
        until = now + timedelta(minutes=5)
    rest = " ".join((text[:start] + " " + text[match.end() :]).split())
    return TimeSpan(since.timestamp(), until.timestamp(), text[start : match.end()]), rest
