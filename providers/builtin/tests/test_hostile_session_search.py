"""Hostile ``session_search`` calls and settings: a JSON answer that keeps its results.

The query comes from a model (a pasted log is a query too) and the settings
from a hand-edited ``config.yaml``; neither may cost the answer or quietly
widen what is searched.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from hermes_memory_builtin.session_search import MAX_ECHOED_QUERY_CHARS, SessionSearchTool
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_core.manager import MemoryManager
from hermes_core.plugins import load_builtin_provider
from hermes_core.sessions import SessionStore


@pytest.fixture
def home(hermes_home: Path) -> Path:
    with SessionStore(hermes_home / "state.db") as store:
        store.create_session("talk", source="cli", started_at=1000.0)
        store.append_message("talk", "user", "the nginx upstream returned 502 again")
        store.create_session("noise", source="tool", started_at=2000.0)
        store.append_message("noise", "user", "nginx tool output that is never searched")
    return hermes_home


@pytest.mark.parametrize("setting", [5, 0, 1.5, True, {"tool": True}])
def test_a_hidden_sources_setting_of_the_wrong_kind_keeps_the_default_hidden(
    home: Path, setting: Any, caplog: pytest.LogCaptureFixture
) -> None:
    # Before, a number or a mapping hid nothing: tool output was searched and returned.
    tool = SessionSearchTool(home, {"session_search": {"hidden_sources": setting}})
    with caplog.at_level(logging.WARNING):
        found = json.loads(tool({"query": "nginx", "limit": 5}))
        listed = json.loads(tool({"limit": 5}))
    assert [hit["session_id"] for hit in found["results"]] == ["talk"]
    assert [row["session_id"] for row in listed["results"]] == ["talk"]
    warnings = [r.getMessage() for r in caplog.records if "hidden_sources" in r.getMessage()]
    assert len(warnings) == 1 and "using the default ['tool']" in warnings[0]
    tool.close()


@pytest.mark.parametrize(
    ("setting", "found"),
    [(None, {"talk", "noise"}), ([], {"talk", "noise"}), ("tool", {"talk"}), (["cli"], {"noise"})],
)
def test_hidden_sources_written_as_documented_still_work(
    home: Path, setting: Any, found: set[str]
) -> None:
    tool = SessionSearchTool(home, {"session_search": {"hidden_sources": setting}})
    answer = json.loads(tool({"query": "nginx", "limit": 5}))
    assert {hit["session_id"] for hit in answer["results"]} == found
    tool.close()


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    filler=st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=20),
    repeat=st.integers(min_value=5_000, max_value=120_000),
)
def test_a_query_as_long_as_a_pasted_log_keeps_its_results(
    home: Path, filler: str, repeat: int
) -> None:
    # Before, the answer repeated the whole query; past 100,000 characters the manager
    # dropped it for an error whose visible start read "success": true.
    manager = MemoryManager()
    manager.add_provider(load_builtin_provider())
    manager.initialize_all("s1", hermes_home=str(home))
    query = ("nginx 502 " + filler * repeat)[:120_000]
    text = manager.handle_tool_call("session_search", {"query": query})
    answer = json.loads(text)
    assert answer.get("success") is True, text[:300]
    if "query" in answer:  # a query that names a time lists that time's conversations
        assert len(answer["query"]) <= MAX_ECHOED_QUERY_CHARS + 40
        assert answer["query"][:9] == query[:9]  # the query stripped (and a time phrase cut)
    manager.shutdown_all()
