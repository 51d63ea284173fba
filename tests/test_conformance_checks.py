"""The building blocks of the conformance suite: schema checks, network guard, capabilities,
the pytest plugin's footprint, and the report."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hermes_core.testing.arguments import example_arguments
from hermes_core.testing.capabilities import Capability, parse_capabilities
from hermes_core.testing.netguard import NetworkAttempt, block_network
from hermes_core.testing.report import ConformanceReport, TestResult
from hermes_core.testing.schema_check import TOOL_NAME_PATTERN, tool_schema_problems


def _tool(name: str = "notes_search", **parameters: Any) -> dict[str, Any]:
    params = parameters or {
        "type": "object",
        "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
        "required": ["query"],
    }
    return {"name": name, "description": "Search the notes.", "parameters": params}


def test_a_well_formed_tool_list_has_no_problems() -> None:
    wrapped = {"type": "function", "function": _tool("notes_add")}
    assert tool_schema_problems([_tool(), wrapped]) == []
    assert tool_schema_problems([]) == []
    assert tool_schema_problems((_tool(),)) == []  # Hermes iterates whatever it gets


@pytest.mark.parametrize(
    ("schemas", "expected"),
    [
        ("not a list", "returned str"),
        ({"notes_search": _tool()}, "returned dict"),
        ([_tool("has space")], "names must match"),
        ([_tool("x" * 65)], "names must match"),
        ([_tool(), _tool()], "declared twice"),
        ([{"name": "t", "parameters": {"type": "object"}}], 'no "description"'),
        ([{"name": "t", "description": "d"}], 'no "parameters"'),
        ([_tool(type="array")], '"type": "object"'),
        ([_tool(type="object", oneOf=[{}])], 'top-level "oneOf"'),
        ([_tool(type="object", enum=["a"])], 'top-level "enum"'),
        ([_tool(type="object", allOf=[{}])], 'top-level "allOf"'),
        ([_tool(type="object", properties={"a": {"type": "str"}})], "use one of"),
        ([_tool(type="object", properties={"a": {}})], 'has no "type"'),
        ([_tool(type="object", properties={"a": {"type": "array"}})], 'without "items"'),
        ([_tool(type="object", properties={}, required=["q"])], 'not in "properties"'),
        (
            [_tool(type="object", properties={"n": {"type": "number", "default": float("nan")}})],
            "not JSON-serializable",
        ),
        (
            [_tool(type="object", properties={"s": {"type": "string", "default": {1, 2}}})],
            "not JSON-serializable",
        ),
    ],
)
def test_each_schema_problem_is_named_with_a_fix(schemas: Any, expected: str) -> None:
    problems = tool_schema_problems(schemas)
    assert any(expected in problem for problem in problems), problems


def test_reserved_names_are_refused_for_external_providers() -> None:
    problems = tool_schema_problems([_tool("memory")], reserved_names={"memory"})
    assert problems == [
        "tool 'memory' is reserved for the builtin provider or the host agent: rename it "
        "(prefix it with your provider's name)."
    ]


@given(st.text(min_size=1, max_size=80))
def test_tool_names_are_judged_by_the_portable_pattern(name: str) -> None:
    problems = tool_schema_problems([_tool(name)])
    assert bool(TOOL_NAME_PATTERN.match(name)) == (not problems)


def test_example_arguments_fill_required_parameters_with_their_types() -> None:
    params = {
        "type": "object",
        "properties": {
            "q": {"type": "string"},
            "n": {"type": "integer", "minimum": 3},
            "mode": {"type": "string", "enum": ["fast", "slow"]},
            "tags": {"type": "array", "items": {"type": "string"}},
            "optional": {"type": "boolean"},
        },
        "required": ["q", "n", "mode", "tags"],
    }
    assert example_arguments(params) == {
        "q": "conformance probe",
        "n": 3,
        "mode": "fast",
        "tags": [],
    }


def _listening_socket() -> socket.socket:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    return server


def test_block_network_refuses_and_records_this_threads_connections() -> None:
    with _listening_socket() as server:
        address = server.getsockname()
        with block_network() as attempts, socket.socket() as client:
            with pytest.raises(NetworkAttempt):
                client.connect(address)
            with pytest.raises(NetworkAttempt):
                socket.getaddrinfo("example.org", 443)
        assert attempts == [f"connect to {address!r}", "DNS lookup of 'example.org'"]
        with socket.create_connection(address, timeout=1):  # restored afterwards
            pass


def test_block_network_leaves_other_threads_alone() -> None:
    with _listening_socket() as server:
        address = server.getsockname()
        outcome: list[str] = []

        def connect() -> None:
            with socket.create_connection(address, timeout=2):
                outcome.append("connected")

        with block_network() as attempts:
            worker = threading.Thread(target=connect)
            worker.start()
            worker.join(10)
        assert outcome == ["connected"] and attempts == []


def test_capabilities_parse_names_and_refuse_unknown_ones() -> None:
    assert parse_capabilities(["multi-user", "CJK"]) == {Capability.MULTI_USER, Capability.CJK}
    with pytest.raises(ValueError, match="unknown capability 'telepathy'; valid capabilities"):
        parse_capabilities(["telepathy"])


def test_capabilities_no_recall_can_keep_together_are_refused() -> None:
    with pytest.raises(ValueError, match="cross_session and session_scoped contradict"):
        parse_capabilities(["recall", "cross_session", "session_scoped"])
    assert Capability.SESSION_SCOPED in parse_capabilities(["recall", "session_scoped"])


def test_a_capability_string_is_read_as_names_not_letters() -> None:
    expected = {Capability.TOOLS, Capability.SYNC}
    assert parse_capabilities("tools, sync") == expected
    assert parse_capabilities(["tools,sync"]) == expected
    assert parse_capabilities("tools") == {Capability.TOOLS}
    with pytest.raises(ValueError, match=r"must be a collection of names .* not bool"):
        parse_capabilities(True)  # type: ignore[arg-type]


def test_the_pytest_plugin_imports_nothing_but_itself() -> None:
    code = (
        "import sys, hermes_core.testing.plugin; "
        "print(sorted(m for m in sys.modules if m.startswith('hermes_core')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    # hermes_core.lazy is the standard-library-only helper behind the lazy package exports.
    assert out.stdout.strip() == str(
        ["hermes_core", "hermes_core.lazy", "hermes_core.testing", "hermes_core.testing.plugin"]
    )


def test_the_plugin_does_not_disturb_an_unrelated_project(tmp_path: Path) -> None:
    (tmp_path / "test_other.py").write_text(
        "import pytest\n\n"
        "@pytest.fixture\n"
        "def hermes_home():\n"
        "    return 'their own fixture'\n\n"
        "def test_theirs(hermes_home):\n"
        "    assert hermes_home == 'their own fixture'\n",
        encoding="utf-8",
    )
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 passed" in run.stdout
    assert not (tmp_path / "conformance-report.json").exists()


def test_the_report_renders_each_outcome_with_its_reason() -> None:
    report = ConformanceReport(
        results=[
            TestResult("test_a", "test_a", "passed"),
            TestResult("test_b", "test_b[2char]", "skipped", "capability not declared: cjk"),
            TestResult("test_c", "test_c", "skipped", "capability not declared: cjk"),
            TestResult("test_d", "test_d", "failed", "it broke\nFix: mend it", "Checks d."),
            TestResult("test_e", "test_e", "xfailed", "known gap"),
        ]
    )
    text = report.render()
    assert "PASS  a" in text
    assert "SKIP  b [2char], c\n        because capability not declared: cjk" in text
    assert "FAIL  d - Checks d.\n        it broke\n        Fix: mend it" in text
    assert "XFAIL e: known gap" in text
    assert text.endswith("Result: 1 passed, 2 skipped, 1 xfailed, 1 failed")
    assert not report.ok


def test_a_collection_error_is_reported_not_lost(tmp_path: Path) -> None:
    from hermes_core.testing.runner import run_pytest

    (tmp_path / "test_broken.py").write_text("import no_such_module_here\n", encoding="utf-8")
    run = run_pytest([tmp_path / "test_broken.py"], cwd=tmp_path)
    assert run.report is not None, run.output
    assert run.report.exitstatus == 2 and not run.report.ok
    [error] = run.report.failed
    assert (error.outcome, error.when) == ("error", "collect")
    assert "No module named 'no_such_module_here'" in error.message


def test_a_stopped_run_is_never_ok() -> None:
    report = ConformanceReport(results=[TestResult("test_a", "test_a", "passed")], exitstatus=None)
    assert not report.ok
    assert ConformanceReport(results=[TestResult("test_a", "test_a", "passed")]).ok


def test_a_factory_that_hands_out_one_shared_instance_is_refused() -> None:
    from plugin_kit import StandInBuiltin

    from hermes_core.testing.pool import ProviderPool

    instance = StandInBuiltin()
    first, second = ProviderPool(lambda: instance, {}), ProviderPool(StandInBuiltin, {})
    assert first.new() is instance
    assert second.new() is not second.new()  # a class makes a new one each time
    with pytest.raises(TypeError, match=r"it had returned before.*inside register"):
        ProviderPool(lambda: instance, {}).new()  # a later test's pool: the same object
