"""Relative time in questions: which phrases, which spans, what is left of the question."""

from __future__ import annotations

from datetime import date, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hermes_core.sessions.timespan import (
    MAX_QUESTION_CHARS,
    NEAR_DAYS,
    NEAR_SPAN_DAYS,
    find_time_span,
    near_span,
)

# Monday 30 November 2026, 10:30 local time.
NOW = datetime(2026, 11, 30, 10, 30).astimezone()
LATE = "2026-11-30 10:35"  # spans that reach "now" end five minutes later


def _local(stamp: float) -> str:
    return datetime.fromtimestamp(stamp, NOW.tzinfo).strftime("%Y-%m-%d %H:%M")


@pytest.mark.parametrize(
    ("question", "since", "until", "phrase", "rest"),
    [
        (
            "what did we work on yesterday?",
            "2026-11-29 00:00",
            "2026-11-30 00:00",
            "yesterday",
            "what did we work on ?",
        ),
        (
            "Yesterday's standup notes",
            "2026-11-29 00:00",
            "2026-11-30 00:00",
            "Yesterday's",
            "standup notes",
        ),
        ("the dog last night", "2026-11-29 12:00", "2026-11-30 06:00", "last night", "the dog"),
        (
            "the day before yesterday",
            "2026-11-28 00:00",
            "2026-11-29 00:00",
            "the day before yesterday",
            "",
        ),
        ("what broke today", "2026-11-30 00:00", LATE, "today", "what broke"),
        ("deploy 3 days ago", "2026-11-26 00:00", "2026-11-29 00:00", "3 days ago", "deploy"),
        (
            "a couple of days ago we fixed redis",
            "2026-11-27 00:00",
            "2026-11-30 00:00",
            "a couple of days ago",
            "we fixed redis",
        ),
        ("an hour ago", "2026-11-30 08:30", LATE, "an hour ago", ""),
        ("two weeks ago", "2026-11-09 00:00", "2026-11-24 00:00", "two weeks ago", ""),
        ("in the past two weeks", "2026-11-16 10:30", LATE, "in the past two weeks", ""),
        ("errors in the last 48 hours", "2026-11-28 10:30", LATE, "in the last 48 hours", "errors"),
        ("last week's deploy", "2026-11-23 00:00", LATE, "last week's", "deploy"),
        ("budget this month", "2026-11-01 00:00", LATE, "this month", "budget"),
        ("what changed last month", "2026-10-01 00:00", LATE, "last month", "what changed"),
        ("last year", "2025-01-01 00:00", LATE, "last year", ""),
        (
            "the Friday standup last Friday",
            "2026-11-27 00:00",
            "2026-11-28 00:00",
            "last Friday",
            "the Friday standup",
        ),
        ("on Monday", "2026-11-23 00:00", "2026-11-24 00:00", "on Monday", ""),
        (
            "hike over the weekend",
            "2026-11-28 00:00",
            "2026-11-30 00:00",
            "over the weekend",
            "hike",
        ),
        ("changes since yesterday", "2026-11-29 00:00", LATE, "since yesterday", "changes"),
        ("昨天我们讨论了什么", "2026-11-29 00:00", "2026-11-30 06:00", "昨天", "我们讨论了什么"),
        ("上周的部署", "2026-11-23 00:00", LATE, "上周", "的部署"),
        ("最近7天 日志", "2026-11-23 10:30", LATE, "最近7天", "日志"),
        ("去年的预算", "2025-01-01 00:00", "2026-01-01 00:00", "去年", "的预算"),
        # calendar dates; without a year, the latest one up to today
        (
            "What did we do in May 2023?",
            "2023-05-01 00:00",
            "2023-06-01 00:00",
            "in May 2023",
            "What did we do ?",
        ),
        (
            "what happened on 8 May 2023",
            "2023-05-08 00:00",
            "2023-05-09 00:00",
            "on 8 May 2023",
            "what happened",
        ),
        (
            "On the 8th of May we met",
            "2026-05-08 00:00",
            "2026-05-09 00:00",
            "On the 8th of May",
            "we met",
        ),
        ("met on May 8th, 2023", "2023-05-08 00:00", "2023-05-09 00:00", "on May 8th, 2023", "met"),
        ("Sept. 3 outage", "2026-09-03 00:00", "2026-09-04 00:00", "Sept. 3", "outage"),
        ("2023-05-08 deploy", "2023-05-08 00:00", "2023-05-09 00:00", "2023-05-08", "deploy"),
        ("trip on 16.01.2024?", "2024-01-16 00:00", "2024-01-17 00:00", "16.01.2024", "trip on ?"),
        ("release 2023/10", "2023-10-01 00:00", "2023-11-01 00:00", "2023/10", "release"),
        ("budget in March", "2026-03-01 00:00", "2026-04-01 00:00", "in March", "budget"),
        ("in December", "2025-12-01 00:00", "2026-01-01 00:00", "in December", ""),
        ("in November", "2026-11-01 00:00", LATE, "in November", ""),
        ("last November", "2025-11-01 00:00", "2025-12-01 00:00", "last November", ""),
        ("mid-May trip", "2026-05-11 00:00", "2026-05-21 00:00", "mid-May", "trip"),
        ("In 2021 we", "2021-01-01 00:00", "2022-01-01 00:00", "In 2021", "we"),
        ("since March 2024", "2024-03-01 00:00", LATE, "since March 2024", ""),
        ("notes from 2020", "2020-01-01 00:00", LATE, "from 2020", "notes"),
        ("Feb 29 2024", "2024-02-29 00:00", "2024-03-01 00:00", "Feb 29 2024", ""),
        ("2023年5月8日的会议", "2023-05-08 00:00", "2023-05-09 00:00", "2023年5月8日", "的会议"),
        ("五月份的计划", "2026-05-01 00:00", "2026-06-01 00:00", "五月份", "的计划"),
        ("十二月", "2025-12-01 00:00", "2026-01-01 00:00", "十二月", ""),
        ("2023年的目标", "2023-01-01 00:00", "2024-01-01 00:00", "2023年", "的目标"),
    ],
)
def test_phrases_become_spans(
    question: str, since: str, until: str, phrase: str, rest: str
) -> None:
    span, left = find_time_span(question, NOW)
    assert span is not None
    assert (_local(span.since), _local(span.until), span.phrase, left) == (
        since,
        until,
        phrase,
        rest,
    )


@pytest.mark.parametrize(
    "question",
    [
        "what did we decide last time?",
        "the last weekday build",
        "todays_report.csv",
        "yesterdays",
        "a few",
        "deploy the weekly report",
        "days ago",
        "",
        "what may cause this in may",  # lower-case month names are everyday words
        "march forward",
        "error code 2023",
        "v2023-05-08",
        "February 30",
        "this December",
        "plans in 2030",
        "the 2099-01-01 deadline",
        "version 1.2.2024",  # a dotted date writes its day and month in two digits
        "build 10.10.2024.5",  # a fourth part: a version, not a date
        "01.13.2024",  # day first: no thirteenth month
    ],
)
def test_other_text_names_no_time(question: str) -> None:
    assert find_time_span(question, NOW) == (None, question)


def test_a_day_has_days_near_it_and_a_month_does_not() -> None:
    day, _ = find_time_span("on 5 Jan 2024", NOW)
    assert day is not None
    around = near_span((day.since, day.until))
    assert around is not None
    assert (_local(around[0]), _local(around[1])) == ("2024-01-03 00:00", "2024-01-08 00:00")
    assert NEAR_DAYS == 2
    month, _ = find_time_span("in January 2024", NOW)
    assert month is not None and near_span((month.since, month.until)) is None


def test_long_text_is_not_a_question() -> None:
    text = " " * MAX_QUESTION_CHARS + "yesterday"
    assert find_time_span(text, NOW) == (None, text)
    assert find_time_span(text[-1000:], NOW)[0] is not None


def test_the_first_phrase_wins() -> None:
    span, rest = find_time_span("昨天 and last week", NOW)
    assert span is not None and span.phrase == "昨天" and rest == "and last week"


def test_an_impossible_date_gives_way_to_a_real_one() -> None:
    span, rest = find_time_span("on the 31st of February 2023 or 2023-02-28", NOW)
    assert span is not None and span.phrase == "2023-02-28"
    assert rest == "on the 31st of February 2023 or"


def test_month_arithmetic_crosses_the_year() -> None:
    january = datetime(2027, 1, 15, 9, 0).astimezone()
    span, _ = find_time_span("last month", january)
    assert span is not None and _local(span.since) == "2026-12-01 00:00"


@given(
    st.lists(
        st.sampled_from(
            [
                *"ab 3 ago days week last yesterday 昨天上周'’s\n?-/年月日十五",
                "May",
                "Sept.",
                "2023",
                " in ",
                " of ",
                "since ",
                "12",
                "31",
            ]
        ),
        max_size=40,
    ).map("".join)
)
def test_any_text_gives_a_forward_span_and_keeps_the_rest(text: str) -> None:
    span, rest = find_time_span(text, NOW)
    if span is None:
        assert rest == text
        return
    assert span.since < span.until
    assert span.phrase
    cuts = [
        " ".join((text[:at] + " " + text[at + len(span.phrase) :]).split())
        for at in range(len(text))
        if text.startswith(span.phrase, at)
    ]
    assert rest in cuts


# Weeks of a month or year, parts of a month, weekends of a day, and holidays.
@pytest.mark.parametrize(
    ("question", "since", "until", "phrase"),
    [
        ("the first week of March 2024", "2024-03-01 00:00", "2024-03-08 00:00", None),
        ("in the last week of March 2024", "2024-03-25 00:00", "2024-04-01 00:00", None),
        ("the second week of Feb", "2026-02-08 00:00", "2026-02-15 00:00", None),
        ("the last week of February 2024", "2024-02-23 00:00", "2024-03-01 00:00", None),
        (
            "Which place did Elise visit in the first week of 2024?",
            "2024-01-01 00:00",
            "2024-01-08 00:00",
            "in the first week of 2024",
        ),
        ("the last week of 2023", "2023-12-25 00:00", "2024-01-01 00:00", None),
        ("the last week of December", "2025-12-25 00:00", "2026-01-01 00:00", None),
        ("early May", "2026-05-01 00:00", "2026-05-11 00:00", None),
        ("late May", "2026-05-21 00:00", "2026-06-01 00:00", None),
        ("in early March 2024", "2024-03-01 00:00", "2024-03-11 00:00", None),
        ("late February 2024", "2024-02-21 00:00", "2024-03-01 00:00", None),
        ("late November", "2026-11-21 00:00", LATE, None),
        ("late December", "2025-12-21 00:00", "2026-01-01 00:00", None),  # not begun this year
        ("the weekend of 12 May 2024", "2024-05-11 00:00", "2024-05-13 00:00", None),  # a Sunday
        ("over the weekend of May 11, 2024", "2024-05-11 00:00", "2024-05-13 00:00", None),
        ("the weekend of the 10th of May 2024", "2024-05-10 00:00", "2024-05-13 00:00", None),
        ("the weekend of 13 May 2024", "2024-05-11 00:00", "2024-05-14 00:00", None),  # Monday
        ("New Year's Eve 2023", "2023-12-31 00:00", "2024-01-01 06:00", None),
        (
            "what did we do on New Year's Day?",
            "2026-01-01 00:00",
            "2026-01-02 00:00",
            "on New Year's Day",
        ),
        ("Christmas 2023", "2023-12-25 00:00", "2023-12-26 00:00", None),
        ("on Christmas Eve", "2025-12-24 00:00", "2025-12-25 06:00", None),
        ("over Christmas", "2025-12-25 00:00", "2025-12-26 00:00", None),
        ("Christmas Day, 2021", "2021-12-25 00:00", "2021-12-26 00:00", None),
        ("Valentine's Day", "2026-02-14 00:00", "2026-02-15 00:00", None),
        ("for Valentine\u2019s", "2026-02-14 00:00", "2026-02-15 00:00", None),
        ("on Halloween", "2026-10-31 00:00", "2026-11-01 00:00", None),
        ("Halloween 2022", "2022-10-31 00:00", "2022-11-01 00:00", None),
        ("Thanksgiving 2023", "2023-11-23 00:00", "2023-11-24 00:00", None),
        ("at Thanksgiving", "2026-11-26 00:00", "2026-11-27 00:00", None),
        ("the 2024 New Year's party", "2024-01-01 00:00", "2024-01-02 00:00", "2024 New Year's"),
        (
            "where did we celebrate the New Year?",
            "2026-01-01 00:00",
            "2026-01-02 00:00",
            "celebrate the New Year",
        ),
    ],
)
def test_weeks_parts_weekends_and_holidays_become_spans(
    question: str, since: str, until: str, phrase: str | None
) -> None:
    span, _ = find_time_span(question, NOW)
    assert span is not None
    assert (_local(span.since), _local(span.until), span.phrase) == (
        since,
        until,
        phrase or question,
    )


def test_a_week_a_weekend_and_a_holiday_have_days_near_them() -> None:
    for phrase in ("the first week of March 2024", "the weekend of 12 May 2024", "on Halloween"):
        span, _ = find_time_span(phrase, NOW)
        assert span is not None and span.until - span.since <= NEAR_SPAN_DAYS * 86_400
        assert near_span((span.since, span.until)) is not None
    early, _ = find_time_span("early May 2024", NOW)
    assert early is not None and near_span((early.since, early.until)) is None


def test_a_holiday_not_begun_this_year_is_last_years() -> None:
    december = datetime(2026, 12, 24, 20, 0).astimezone()
    span, _ = find_time_span("on Christmas", december)
    assert span is not None and _local(span.since) == "2025-12-25 00:00"
    span, _ = find_time_span("on Christmas Eve", december)
    assert span is not None and _local(span.since) == "2026-12-24 00:00"


@pytest.mark.parametrize(
    "question",
    [
        "where is the Christmas tree",
        "Christmas tree lights",
        "a Halloween costume",
        "Thanksgiving recipes",
        "my Valentine card",
        "may I ask something",
        "March on, they said",
        "the first week of training",
        "an early bird",
        "late fees",
        "the weekend of fun",
        "in the new year we plan",  # lower case: the coming year, not New Year's Day
        "Christmas 2030",  # a year to come: a topic, not when we talked
        "the first week of 2030",
        "the last week of 2030",  # not "last week" either
    ],
)
def test_words_that_are_not_dates_name_no_time(question: str) -> None:
    assert find_time_span(question, NOW) == (None, question)


def test_last_week_of_something_else_is_still_last_week() -> None:
    span, rest = find_time_span("the last week of the project", NOW)
    assert span is not None and span.phrase == "the last week" and rest == "of the project"


# Days of years ended by NOW: a span reaching past now ends five minutes after it.
_DAYS = st.dates(min_value=date(1990, 1, 1), max_value=date(2025, 12, 31))
_MONTH_NAMES = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]


def _contains(span_since: float, span_until: float, day: datetime) -> bool:
    start = day.astimezone()
    return span_since <= start.timestamp() and (start + timedelta(days=1)).timestamp() <= (
        span_until + 6 * 3600
    )


def _midnight(day: date) -> datetime:
    return datetime(day.year, day.month, day.day)


@given(_DAYS, st.booleans())
def test_any_weekend_of_a_day_holds_that_day(day: date, month_first: bool) -> None:
    named = _midnight(day)
    month = _MONTH_NAMES[named.month - 1]
    when = f"{month} {named.day}" if month_first else f"{named.day} {month}"
    span, _ = find_time_span(f"the weekend of {when} {named.year}", NOW)
    assert span is not None and span.since < span.until
    assert span.until - span.since <= NEAR_SPAN_DAYS * 86_400
    assert span.since <= named.astimezone().timestamp()
    assert (named + timedelta(days=1)).astimezone().timestamp() <= span.until
    covered = [
        datetime.fromtimestamp(span.since + hours * 3600, NOW.tzinfo).weekday()
        for hours in range(0, int((span.until - span.since) / 3600), 12)
    ]
    assert 5 in covered and 6 in covered  # a Saturday and a Sunday


@given(_DAYS, st.sampled_from(["first", "second", "third", "fourth", "last"]), st.booleans())
def test_any_week_of_a_month_or_year_is_seven_days_within_it(
    day: date, ordinal: str, of_year: bool
) -> None:
    named = _midnight(day)
    place = str(named.year) if of_year else f"{_MONTH_NAMES[named.month - 1]} {named.year}"
    span, _ = find_time_span(f"the {ordinal} week of {place}", NOW)
    assert span is not None
    start = datetime.fromtimestamp(span.since, NOW.tzinfo)
    end = datetime.fromtimestamp(span.until, NOW.tzinfo)
    assert (end.date() - start.date()).days == 7
    assert start.year == named.year and (of_year or start.month == named.month)
    last = end - timedelta(days=1)
    assert last.year == named.year and (of_year or last.month == named.month)
    if ordinal == "first":
        assert start.day == 1 and (of_year or start.month == named.month)
    if ordinal == "last":
        assert end.day == 1  # the day after the month's (or year's) last


_PARTS = {"early": (1, 10), "mid": (11, 20), "late": (21, 31)}


@given(
    _DAYS, st.sampled_from(sorted(_PARTS)), st.sampled_from(["", "in ", "during "]), st.booleans()
)
def test_any_part_of_a_month_holds_its_days_only(
    day: date, part: str, before: str, hyphen: bool
) -> None:
    month = _MONTH_NAMES[day.month - 1]
    span, _ = find_time_span(f"{before}{part}{'-' if hyphen else ' '}{month} {day.year}", NOW)
    assert span is not None and span.since < span.until
    first, last = _PARTS[part]
    start = datetime.fromtimestamp(span.since, NOW.tzinfo)
    assert (start.year, start.month, start.day) == (day.year, day.month, first)
    assert _contains(span.since, span.until, _midnight(day)) == (first <= day.day <= last)


@given(
    st.integers(min_value=1990, max_value=2025),
    st.sampled_from(
        [
            ("Christmas", 12, 25),
            ("Christmas Eve", 12, 24),
            ("New Year's Eve", 12, 31),
            ("New Year's Day", 1, 1),
            ("Valentine's Day", 2, 14),
            ("Halloween", 10, 31),
            ("Thanksgiving", 11, 0),
        ]
    ),
    st.booleans(),
)
def test_any_holiday_of_a_year_is_its_day(
    year: int, holiday: tuple[str, int, int], on: bool
) -> None:
    name, month, day = holiday
    span, _ = find_time_span(f"{'on ' if on else ''}{name} {year}", NOW)
    assert span is not None and span.since < span.until
    start = datetime.fromtimestamp(span.since, NOW.tzinfo)
    if day == 0:  # the fourth Thursday of November
        assert start.month == 11 and start.weekday() == 3 and 22 <= start.day <= 28
        day = start.day
    assert _contains(span.since, span.until, datetime(year, month, day))


@given(
    st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2030, 12, 31)),
    st.sampled_from(
        [
            "on Christmas",
            "on Halloween",
            "at Thanksgiving",
            "New Year's Eve",
            "Valentine's Day",
            "the first week of June",
            "late March",
            "the weekend of 3 July",
        ]
    ),
)
def test_a_phrase_without_a_year_is_its_latest_occurrence(now: datetime, phrase: str) -> None:
    asked = now.astimezone()
    span, _ = find_time_span(phrase, asked)
    assert span is not None and span.since < span.until
    assert span.since <= asked.timestamp()
    assert span.since > (asked - timedelta(days=366 + 7)).timestamp()
