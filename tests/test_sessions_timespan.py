"""Relative time in questions: which phrases, which spans, what is left of the question."""

from __future__ import annotations

from datetime import datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hermes_core.sessions.timespan import MAX_QUESTION_CHARS, find_time_span

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
    ],
)
def test_other_text_names_no_time(question: str) -> None:
    assert find_time_span(question, NOW) == (None, question)


def test_long_text_is_not_a_question() -> None:
    text = " " * MAX_QUESTION_CHARS + "yesterday"
    assert find_time_span(text, NOW) == (None, text)
    assert find_time_span(text[-1000:], NOW)[0] is not None


def test_the_first_phrase_wins() -> None:
    span, rest = find_time_span("昨天 and last week", NOW)
    assert span is not None and span.phrase == "昨天" and rest == "and last week"


def test_month_arithmetic_crosses_the_year() -> None:
    january = datetime(2027, 1, 15, 9, 0).astimezone()
    span, _ = find_time_span("last month", january)
    assert span is not None and _local(span.since) == "2026-12-01 00:00"


@given(
    st.text(
        alphabet=st.sampled_from(list("ab 3 ago days week last yesterday 昨天上周'’s\n?")),
        max_size=80,
    )
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
