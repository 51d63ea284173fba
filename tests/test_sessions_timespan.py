"""Relative time in questions: which phrases, which spans, what is left of the question."""

from __future__ import annotations

from datetime import datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hermes_core.sessions.timespan import (
    MAX_QUESTION_CHARS,
    NEAR_DAYS,
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
        ("mid-May trip", "2026-05-01 00:00", "2026-06-01 00:00", "mid-May", "trip"),
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
