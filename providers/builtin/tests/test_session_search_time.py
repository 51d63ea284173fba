"""session_search with a time in the question: the span narrows, an empty span falls back."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hermes_memory_builtin.session_search import SessionSearchTool

from hermes_core.sessions import SessionStore
from hermes_core.sessions.timespan import find_time_span


def _at(days_back: int, hour: int) -> float:
    """Local *hour* o'clock, *days_back* calendar days ago."""
    midnight = datetime.now().astimezone().replace(hour=0, minute=0, second=0, microsecond=0)
    return (midnight - timedelta(days=days_back) + timedelta(hours=hour)).timestamp()


@pytest.fixture
def tool(hermes_home: Path) -> SessionSearchTool:
    with SessionStore(hermes_home / "state.db") as store:
        for sid, days_back, text in (
            ("old_redis", 40, "The redis cache evicted keys; we raised maxmemory."),
            ("yesterday_redis", 1, "Redis latency spiked; we moved it to a bigger node."),
            ("yesterday_dns", 1, "The DNS record for the API pointed at the old load balancer."),
            ("week_terraform", 9, "Terraform state lock was stuck; we force-unlocked it."),
        ):
            stamp = _at(days_back, 12)
            store.create_session(sid, source="cli", started_at=stamp)
            store.append_message(sid, "user", text, timestamp=stamp)
            store.append_message(sid, "assistant", "Noted.", timestamp=stamp + 60)
    return SessionSearchTool(hermes_home)


def call(tool: SessionSearchTool, query: str) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(tool({"query": query, "limit": 5}))
    return result


def test_a_time_without_a_topic_lists_that_span(tool: SessionSearchTool) -> None:
    for question in ("What did we work on yesterday?", "昨天我们讨论了什么"):
        answer = call(tool, question)
        assert answer["mode"] == "recent"
        assert {r["session_id"] for r in answer["results"]} == {"yesterday_redis", "yesterday_dns"}
        assert answer["time_range"]["phrase"] in ("yesterday", "昨天")


def test_a_time_with_a_topic_searches_only_that_span(tool: SessionSearchTool) -> None:
    answer = call(tool, "what was the redis problem yesterday?")
    assert [r["session_id"] for r in answer["results"]] == ["yesterday_redis"]
    assert answer["time_range"]["phrase"] == "yesterday"
    everything = call(tool, "what was the redis problem?")
    assert {r["session_id"] for r in everything["results"]} == {"yesterday_redis", "old_redis"}


def test_an_empty_span_falls_back_to_all_history(tool: SessionSearchTool) -> None:
    answer = call(tool, "the terraform lock this morning")
    assert [r["session_id"] for r in answer["results"]] == ["week_terraform"]
    assert "from any time" in answer["message"]
    assert "time_range" not in answer
    listed = call(tool, "what did we do the day before yesterday?")
    assert listed["mode"] == "recent" and "showing the most recent" in listed["message"]
    assert listed["count"] == 4


def test_the_span_reaches_the_conversations_of_last_week(tool: SessionSearchTool) -> None:
    answer = call(tool, "terraform in the past two weeks")
    assert [r["session_id"] for r in answer["results"]] == ["week_terraform"]
    assert call(tool, "terraform in the last 3 days")["message"].endswith("from any time.")


def test_a_calendar_date_narrows_a_dated_history(hermes_home: Path) -> None:
    """A benchmark-style history from 2023: dates in the question pick its conversations."""
    with SessionStore(hermes_home / "state.db") as store:
        for sid, day, text in (
            ("may_knee", datetime(2023, 5, 27, 19, 10), "My knee swelled up after the long run."),
            ("june_knee", datetime(2023, 6, 19, 10, 2), "The physio said my knee is fine now."),
            ("june_bikes", datetime(2023, 6, 20, 9, 0), "I got promoted at the bike shop."),
        ):
            stamp = day.astimezone().timestamp()
            store.create_session(sid, source="cli", started_at=stamp)
            store.append_message(sid, "user", text, timestamp=stamp, name="Ben")
    tool = SessionSearchTool(hermes_home)
    answer = call(tool, "What happened to Ben's knee in May 2023?")
    assert [r["session_id"] for r in answer["results"]] == ["may_knee"]
    assert answer["time_range"]["phrase"] == "in May 2023"
    listed = call(tool, "What did we talk about on 20 June 2023?")
    assert [r["session_id"] for r in listed["results"]] == ["june_bikes"]
    # a month without a year is its latest one in the history, which ends in June 2023
    yearless = call(tool, "Ben's knee in May")
    assert [r["session_id"] for r in yearless["results"]] == ["may_knee"]
    assert yearless["time_range"]["phrase"] == "in May"
    assert yearless["time_range"]["from"].startswith("2023-05-01")
    # a span that holds no match still falls back to all history
    fallback = call(tool, "the promotion at the bike shop in May")
    assert fallback["results"][0]["session_id"] == "june_bikes"
    assert fallback["message"].endswith("from any time.")
    # a day the history's last year does not have is not a date there
    leap = call(tool, "Ben's knee on 29 February")
    assert {r["session_id"] for r in leap["results"][:2]} == {"may_knee", "june_knee"}


def test_a_date_without_a_year_is_read_in_the_years_of_the_history() -> None:
    now = datetime(2026, 11, 30, 12, 0).astimezone()
    ended = datetime(2023, 8, 2, 16, 30).astimezone()
    for phrase, month in (("in May", 5), ("on 8 May", 5), ("in December", 12), ("3月", 3)):
        today, _ = find_time_span(f"what happened {phrase}", now=now)
        then, rest = find_time_span(f"what happened {phrase}", now=now, history_end=ended)
        assert today is not None and then is not None, phrase
        assert datetime.fromtimestamp(then.since).month == month
        assert datetime.fromtimestamp(then.since).year == (2022 if month == 12 else 2023)
        assert datetime.fromtimestamp(today.since).year == (2025 if month == 12 else 2026)
        assert rest == "what happened"
    # relative phrases and dates with a year are read against the present as before
    for phrase in ("last week", "yesterday", "in May 2021"):
        assert find_time_span(phrase, now=now, history_end=ended) == find_time_span(phrase, now=now)


@pytest.mark.parametrize("started_at", ["'last tuesday'", "1e20", "-1e20"])
def test_a_session_dated_with_nonsense_does_not_stop_a_dated_question(
    hermes_home: Path, started_at: str
) -> None:
    path = hermes_home / "state.db"
    with SessionStore(path) as store:
        stamp = datetime(2023, 5, 27, 19, 10).astimezone().timestamp()
        store.create_session("may_knee", source="cli", started_at=stamp)
        store.append_message("may_knee", "user", "My knee swelled up.", timestamp=stamp)
    conn = sqlite3.connect(path)  # another program's row, dated with something no clock says
    conn.execute(
        "INSERT INTO sessions(id, source, started_at, last_activity_at) "
        f"VALUES ('odd', 'cli', {started_at}, {started_at})"
    )
    conn.commit()
    conn.close()
    answer = call(SessionSearchTool(hermes_home), "my knee in May")
    assert answer["success"] is True
    assert [r["session_id"] for r in answer["results"]] == ["may_knee"]


def test_a_relative_phrase_over_a_past_archive_is_read_against_its_end(
    hermes_home: Path,
) -> None:
    """An imported benchmark dated 2022-2023: "this year" is 2023, not the year asked in."""
    with SessionStore(hermes_home / "state.db") as store:
        for sid, day, text in (
            ("race_2022", datetime(2022, 9, 4, 9, 0), "I ran the city half marathon."),
            ("race_2023", datetime(2023, 4, 16, 14, 15), "I ran the Riverside 10k this morning."),
            ("bake_2023", datetime(2023, 6, 1, 10, 0), "I baked sourdough all weekend."),
        ):
            stamp = day.astimezone().timestamp()
            store.create_session(sid, source="cli", started_at=stamp)
            store.append_message(sid, "user", text, timestamp=stamp, name="Priya")
    tool = SessionSearchTool(hermes_home)
    answer = call(tool, "Which races did Priya run this year?")
    found = [r["session_id"] for r in answer["results"]]
    assert found[0] == "race_2023" and "race_2022" not in found
    assert answer["time_range"]["phrase"] == "this year"
    assert answer["time_range"]["from"].startswith("2023-01-01")
    assert "read_against" in answer["time_range"]
    assert "message" not in answer  # not the "from any time" fallback
    listed = call(tool, "What did we talk about last month?")
    assert listed["mode"] == "recent"
    assert [r["session_id"] for r in listed["results"]] == ["bake_2023"]  # since 1 May 2023
