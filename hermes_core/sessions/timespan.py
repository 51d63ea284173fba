"""Time in a question ("yesterday", "last week", "in May 2023", "上周") as a time span.

``session_search`` questions often say *when* rather than *what*: "what did we
work on yesterday?". :func:`find_time_span` finds the first such phrase,
turns it into an interval of epoch seconds in local time, and returns the
question without it. Relative phrases and calendar dates ("on 8 May 2023",
"2023-05-08", "in March", "early May", "the last week of March 2024", "the
weekend of 12 May", "2023年5月") are both read, and so are holidays with one
fixed or rule-based date ("Christmas Eve", "on Halloween", "Thanksgiving 2023");
a date without a year is its latest occurrence up to today, or up to the end of
the stored history when that is earlier. Spans are deliberately generous ("last
week" runs from the start of last week until now), because a caller falls
back to searching all of history when a span holds nothing.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import NamedTuple

__all__ = [
    "MAX_QUESTION_CHARS",
    "NEAR_DAYS",
    "NEAR_SPAN_DAYS",
    "TimeSpan",
    "find_time_span",
    "find_time_span_in_history",
    "near_span",
]

MAX_QUESTION_CHARS = 2_000
"""Longer text is not read for a time phrase."""
NEAR_DAYS = 2
"""The days before and after a short span that are near it (:func:`near_span`)."""
NEAR_SPAN_DAYS = 7
"""A span this long or shorter has days near it; a longer one (a month) does not."""
DAY_SECONDS = 86_400


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
_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sept", "sep"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
# Capitalised only: "may", "march" and "august" are also everyday words.
_MONTH = "(?:" + "|".join(n.capitalize() for n in sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?:[1-9]|[12]\d|3[01])(?i:st|nd|rd|th)?"
_YEAR = r"(?:19[7-9]\d|2\d{3})"
_ORDINAL_WEEKS = {"first": 0, "second": 1, "third": 2, "fourth": 3, "last": -1}
_PART_DAYS = {"early": (1, 11), "mid": (11, 21), "late": (21, 32)}
"""The days (first, one past the last) of a month's early, mid and late thirds."""
_IN = r"(?i:(?:in|during|over)\s+)?"
_WEEK_OF = (
    rf"(?P<week>{_IN}(?i:the\s+)?(?P<week_n>(?i:first|second|third|fourth|last))\s+(?i:week)"
    rf"\s+(?i:of)\s+(?:(?P<week_m>{_MONTH})(?:,?\s+(?P<week_my>{_YEAR}))?|(?P<week_y>{_YEAR})))"
)
_WEEKEND_OF = (
    rf"(?P<weekend>{_IN}(?i:the\s+)?(?i:weekend)\s+(?i:of)\s+(?i:the\s+)?"
    rf"(?:(?P<wk_d>{_DAY})(?i:\s+of)?\s+(?P<wk_m>{_MONTH})|(?P<wk_m2>{_MONTH})\s+(?P<wk_d2>{_DAY})(?!\d))"
    rf"(?:,?\s+(?P<wk_y>{_YEAR}))?)"
)
_APOSTROPHE = "['\u2019]"
_NAMED_DAY = (
    rf"(?i:christmas|xmas)\s+(?i:eve|day)|(?i:new\s+year(?:{_APOSTROPHE}?s)?\s+(?:eve|day))"
    rf"|(?i:(?:st\.?\s+)?valentine{_APOSTROPHE}?s\s+day)|(?i:thanksgiving\s+day)"
)
"""A holiday named as a day ("Christmas Eve"): a date wherever it stands."""
_BARE_HOLIDAY = (
    rf"(?i:christmas|xmas)|New\s+Year(?:{_APOSTROPHE}s)?|(?i:(?:st\.?\s+)?valentine{_APOSTROPHE}?s)"
    rf"|(?i:hallowe{_APOSTROPHE}?en|thanksgiving)"
)
"""A holiday's bare name: a date only after a word of time ("on", "over", "celebrate") or
beside a year; "a Christmas tree" names no day."""
_HOLIDAY_CONTEXT = (
    r"(?i:on|at|over|for|during|around|before|after|since|until|till|from|through|last"
    r"|this\s+past|celebrat(?:e|ed|es|ing))"
)
_HOLIDAY = (
    rf"(?P<holiday>(?:(?P<hol_ctx>{_HOLIDAY_CONTEXT})\s+(?:(?i:the|our|their|my|your|his|her)\s+)?)?"
    rf"(?:(?P<hol_y1>{_YEAR})\s+)?(?P<hol_name>{_NAMED_DAY}|{_BARE_HOLIDAY})"
    rf"(?:,?\s+(?i:of\s+)?(?P<hol_y2>{_YEAR}))?)"
)
_DATES = re.compile(
    r"(?<![\w'/-])(?:"
    + "|".join(
        (
            _WEEK_OF,
            _WEEKEND_OF,
            _HOLIDAY,
            rf"(?P<iso>(?P<iso_y>{_YEAR})[-/](?P<iso_m>0?[1-9]|1[0-2])(?:[-/](?P<iso_d>[0-3]?\d))?)",
            rf"(?P<dotted>(?<!\.)(?P<dot_d>0[1-9]|[12]\d|3[01])\.(?P<dot_m>0[1-9]|1[0-2])\.(?P<dot_y>{_YEAR})(?!\.\d))",
            rf"(?P<dmy>(?i:on\s+)?(?i:the\s+)?(?P<dmy_d>{_DAY})(?i:\s+of)?\s+(?P<dmy_m>{_MONTH})"
            rf"(?:,?\s+(?P<dmy_y>{_YEAR}))?)",
            rf"(?P<mdy>(?i:on\s+)?(?P<mdy_m>{_MONTH})\s+(?P<mdy_d>{_DAY})(?!\d)(?:,?\s+(?P<mdy_y>{_YEAR}))?)",
            rf"(?P<my>(?i:(?:in|during)\s+)?(?:(?P<my_part>(?i:early|late|mid))[\s-]+)?(?P<my_m>{_MONTH}),?\s+(?P<my_y>{_YEAR}))",
            rf"(?P<month>(?P<month_ctx>(?i:in|during|last|early|late|mid|since|from))[\s-]+"
            rf"(?P<month_m>{_MONTH})(?!,?\s+{_YEAR}))",
            rf"(?P<year>(?P<year_ctx>(?i:in|during|since|from|throughout))\s+(?P<year_y>{_YEAR}))",
        )
    )
    + r")(?![\w'])",
)
_CHINESE_NUMBERS = {"一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_ZH_MONTH = r"(?:1[0-2]|0?[1-9]|十[一二]?|[一二三四五六七八九])"
_CHINESE_DATES = re.compile(
    rf"(?:(?P<zh_y>{_YEAR})年)?(?P<zh_m>{_ZH_MONTH})月(?:份)?(?:(?P<zh_d>[0-3]?\d)[日号])?"
    rf"|(?P<zh_year>{_YEAR})年(?!\d)"
)
_SINCE = re.compile(r"(?<![\w'])(?:since|from)\s+$", re.IGNORECASE)
_SINCE_INSIDE = re.compile(r"(?:since|from)\s", re.IGNORECASE)

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


def _number(text: str) -> int:
    """An Arabic or Chinese (一 … 十二) number."""
    if text.isdigit():
        return int(text)
    if text.startswith("十"):
        return 10 + _CHINESE_NUMBERS.get(text[1:], 0)
    return _CHINESE_NUMBERS[text]


def _month_start(now: datetime, year: int, month: int) -> datetime:
    return _day(now, 0).replace(year=year, month=month, day=1)


def _month_span(now: datetime, year: int, month: int) -> tuple[datetime, datetime]:
    start = _month_start(now, year, month)
    return start, _month_start(now, year + month // 12, month % 12 + 1)


def _year_span(now: datetime, year: int) -> tuple[datetime, datetime]:
    return _month_start(now, year, 1), _month_start(now, year + 1, 1)


def _latest_year(now: datetime, month: int, day: int = 1, before_this_month: bool = False) -> int:
    """The year of the latest *month*/*day* that is not after today (or this month)."""
    if month < now.month or (month == now.month and day <= now.day and not before_this_month):
        return now.year
    return now.year - 1


def _date_span(
    now: datetime, year: str | None, month: int, day: str | None
) -> tuple[datetime, datetime]:
    """A day (when *day* is given) or a month; without *year*, its latest occurrence."""
    if day is None:
        return _month_span(now, int(year) if year else _latest_year(now, month), month)
    number = int(day.lower().rstrip("stndrh"))
    start = _day(now, 0).replace(
        year=int(year) if year else _latest_year(now, month, number), month=month, day=number
    )
    return start, start + timedelta(days=1)


def _calendar_span(match: re.Match[str], now: datetime) -> tuple[datetime, datetime]:
    """The span of a calendar date; ValueError for a day the month does not have."""
    groups = match.groupdict()

    def month(key: str) -> int:
        return _MONTHS[groups[key].rstrip(".").lower()]

    if groups["iso"]:
        return _date_span(now, groups["iso_y"], int(groups["iso_m"]), groups["iso_d"])
    if groups["dotted"]:  # 16.01.2024: day first, as dotted dates are written
        return _date_span(now, groups["dot_y"], int(groups["dot_m"]), groups["dot_d"])
    if groups["dmy"]:
        return _date_span(now, groups["dmy_y"], month("dmy_m"), groups["dmy_d"])
    if groups["mdy"]:
        return _date_span(now, groups["mdy_y"], month("mdy_m"), groups["mdy_d"])
    if groups["my"]:
        if groups["my_part"]:
            return _part_span(now, int(groups["my_y"]), month("my_m"), groups["my_part"])
        return _month_span(now, int(groups["my_y"]), month("my_m"))
    if groups["month"]:
        number = month("month_m")
        context = groups["month_ctx"].lower()
        if context in _PART_DAYS:  # "early May": its latest third that has begun
            year = _latest_year(now, number, _PART_DAYS[context][0])
            return _part_span(now, year, number, context)
        last = context == "last"
        return _month_span(now, _latest_year(now, number, before_this_month=last), number)
    if groups["week"]:
        return _week_span(match, now)
    if groups["weekend"]:
        first = bool(groups["wk_d"])  # "12 May" rather than "May 12"
        named, _ = _date_span(
            now,
            groups["wk_y"],
            month("wk_m" if first else "wk_m2"),
            groups["wk_d" if first else "wk_d2"],
        )
        return _weekend_around(named)
    if groups["holiday"]:
        return _holiday_span(match, now)
    return _year_span(now, int(groups["year_y"]))


def _part_span(now: datetime, year: int, month: int, part: str) -> tuple[datetime, datetime]:
    """The early (1st-10th), mid (11th-20th) or late (21st-end) third of a month."""
    first, after = _PART_DAYS[part.lower()]
    start, end = _month_span(now, year, month)
    return start.replace(day=first), min(end, start + timedelta(days=after - 1))


def _week_span(match: re.Match[str], now: datetime) -> tuple[datetime, datetime]:
    """The seven days of *the first (… fourth, last) week of March 2024* (or *of 2024*): the
    1st to the 7th and so on, or the month's (year's) last seven; a month without a year is
    its latest such week that has begun."""
    ordinal = _ORDINAL_WEEKS[match.group("week_n").lower()]
    if match.group("week_y"):
        year = int(match.group("week_y"))
        start, end = _month_start(now, year, 1), _month_start(now, year + 1, 1)
    else:
        number = _MONTHS[match.group("week_m").rstrip(".").lower()]
        if match.group("week_my"):
            year = int(match.group("week_my"))
        else:
            first_day = 1 + 7 * ordinal if ordinal >= 0 else 22  # the last week starts by the 25th
            year = _latest_year(now, number, first_day)
        start, end = _month_span(now, year, number)
    if ordinal < 0:
        return end - timedelta(days=7), end
    return start + timedelta(days=7 * ordinal), start + timedelta(days=7 * ordinal + 7)


def _weekend_around(start: datetime) -> tuple[datetime, datetime]:
    """The span of *the weekend of 12 May* (*start* is that day): the Saturday and Sunday
    nearest it, with the days between (a Monday or Tuesday looks back, a Wednesday to
    Friday forward)."""
    weekday = start.weekday()
    if weekday >= 5:  # Saturday or Sunday: that weekend
        saturday = start - timedelta(days=weekday - 5)
        return saturday, saturday + timedelta(days=2)
    if weekday <= 1:
        return start - timedelta(days=weekday + 2), start + timedelta(days=1)
    return start, start + timedelta(days=7 - weekday)


def _thanksgiving(year: int) -> tuple[int, int]:
    """The (month, day) of US Thanksgiving in *year*: November's fourth Thursday."""
    first = datetime(year, 11, 1).weekday()
    return 11, 1 + (3 - first) % 7 + 21


def _holiday_date(name: str, year: int) -> tuple[int, int]:
    """The (month, day) of the holiday *name* (normalised: lower case, no apostrophes)."""
    if name.startswith(("christmas", "xmas")):
        return 12, 24 if name.endswith("eve") else 25
    if name.startswith("new"):
        return (12, 31) if name.endswith("eve") else (1, 1)
    if "valentine" in name:
        return 2, 14
    if name.startswith("hallowe"):
        return 10, 31
    return _thanksgiving(year)


def _holiday_span(match: re.Match[str], now: datetime) -> tuple[datetime, datetime]:
    """The day of a holiday; ValueError for a bare name with no word of time nor year
    beside it ("the Christmas tree")."""
    raw = match.group("hol_name")
    name = " ".join(re.sub(r"['\u2019]", "", raw.lower()).split())
    year_text = match.group("hol_y1") or match.group("hol_y2")
    if not (match.group("hol_ctx") or year_text or re.fullmatch(_NAMED_DAY, raw)):
        raise ValueError(f"{raw!r} names no day here")
    if year_text:
        year = int(year_text)
    else:  # the latest one that has begun by *now*
        year = now.year
        if _holiday_date(name, year) > (now.month, now.day):
            year -= 1
    month, day = _holiday_date(name, year)
    start = _day(now, 0).replace(year=year, month=month, day=day)
    if name.endswith("eve"):  # an evening and its night, as "last night" runs until 6:00
        return start, start + timedelta(days=1, hours=6)
    return start, start + timedelta(days=1)


def _chinese_calendar_span(match: re.Match[str], now: datetime) -> tuple[datetime, datetime]:
    if match.group("zh_year"):
        return _year_span(now, int(match.group("zh_year")))
    month = _number(match.group("zh_m"))
    if not 1 <= month <= 12:
        raise ValueError(f"no month {month}")
    return _date_span(now, match.group("zh_y"), month, match.group("zh_d"))


def find_time_span(
    text: str, now: datetime | None = None, history_end: datetime | None = None
) -> tuple[TimeSpan | None, str]:
    """The first time phrase of *text* (relative or a date) as a span, and *text* without it.

    *now* (default: the current local time) anchors the phrase. A date without
    a year is its latest occurrence up to *history_end* (when the stored
    conversations end) if that is earlier than *now*: asked in 2026 of an
    archive that ends in 2023, "in May" is May 2023. Returns ``(None, text)``
    when *text* names no time, or is longer than :data:`MAX_QUESTION_CHARS` (a
    pasted log, not a question).
    """
    if len(text) > MAX_QUESTION_CHARS:
        return None, text
    now = now or datetime.now().astimezone()
    dated = now if history_end is None else min(now, history_end.astimezone())
    found: list[tuple[re.Match[str], tuple[datetime, datetime]]] = []
    english = _ENGLISH.search(text)
    if english is not None:
        found.append((english, _english_span(english, now)))
    chinese = _CHINESE.search(text)
    if chinese is not None:
        found.append((chinese, _chinese_span(chinese, now)))
    ahead: list[re.Match[str]] = []
    for pattern, span in ((_DATES, _calendar_span), (_CHINESE_DATES, _chinese_calendar_span)):
        for date in pattern.finditer(text):
            try:
                since, until = span(date, dated)
            except ValueError:  # 31 February: not a date, look further
                continue
            if since <= now:
                found.append((date, (since, until)))
                break
            ahead.append(date)  # "plans in 2030" names a topic, not when we talked
    # Nor is "the last week of 2030" last week.
    found = [
        item
        for item in found
        if not any(item[0].start() < date.end() and date.start() < item[0].end() for date in ahead)
    ]
    if not found:
        return None, text
    first = min(found, key=lambda item: item[0].start())
    # Of phrases overlapping the first, the longest: "the last week of March" over "last week".
    overlapping = [item for item in found if item[0].start() < first[0].end()]
    match, (since, until) = max(overlapping, key=lambda item: item[0].end() - item[0].start())
    start = match.start()
    since_word = _SINCE.search(text, 0, start)
    if since_word is not None:  # "since yesterday": from then until now
        start, until = since_word.start(), now
    elif _SINCE_INSIDE.match(match.group(0)):  # "since March", "from 2020"
        until = now
    if until >= now:  # include what is written while the question is answered
        until = now + timedelta(minutes=5)
    rest = " ".join((text[:start] + " " + text[match.end() :]).split())
    return TimeSpan(since.timestamp(), until.timestamp(), text[start : match.end()]), rest


def find_time_span_in_history(
    text: str, history_end: float | None, now: datetime | None = None
) -> tuple[TimeSpan | None, str, bool]:
    """:func:`find_time_span` read against a history that may end in the past.

    *history_end* is when the stored conversations end (epoch seconds, ``None``
    when unknown). When the span read against the present starts after it (an
    imported benchmark whose sessions are dated 2023, asked in 2026), a date
    without a year is its latest occurrence in the history, and a relative
    phrase ("this year", "last month", "yesterday") is read as if asked just
    after the last conversation: the question was asked of that history.
    Returns ``(span, text without the phrase, whether it was read against the
    history's end)``.
    """
    span, rest = find_time_span(text, now=now)
    if span is None or history_end is None or history_end >= span.since:
        return span, rest, False
    try:
        ended = datetime.fromtimestamp(history_end).astimezone()
        dated, dated_rest = find_time_span(text, now=now, history_end=ended)
        if dated is not None and dated.since <= history_end:
            return dated, dated_rest, True
        anchored, anchored_rest = find_time_span(text, now=min(now or ended, ended))
    except (ValueError, OverflowError, OSError):  # a history dated where no calendar goes
        return span, rest, False
    if anchored is not None and anchored.since <= history_end:
        return anchored, anchored_rest, True
    return span, rest, False


def near_span(span: tuple[float, float]) -> tuple[float, float] | None:
    """The days around a short *span* (epoch seconds): :data:`NEAR_DAYS` before it to as
    many after it, for a span of at most :data:`NEAR_SPAN_DAYS`; ``None`` for a longer one.

    People talk about a day in the days around it: the plan before it ("Where is Paola
    going on 16.01.2024?" was told on the 14th), the story after it ("Where was Elise on
    31 Dec 2023?" in the conversation of 1 January, "the game went great yesterday"). On
    REALTALK's dev half, conversations near the span ranking after those within it and
    before the rest, with dotted dates read, won session R@5 0.878 → 0.892 (5 questions,
    none lost; one day around: 0.886; without dotted dates two days won 3 questions, three
    days 2); RealMem's and MemDaily's dev halves are unchanged. A month's span ("in
    January") is wide enough by itself.
    """
    if span[1] - span[0] > NEAR_SPAN_DAYS * DAY_SECONDS:
        return None
    return span[0] - NEAR_DAYS * DAY_SECONDS, span[1] + NEAR_DAYS * DAY_SECONDS
