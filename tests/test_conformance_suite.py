"""The conformance suite itself: a correct provider passes, each broken one fails with a fix.

The suite runs in a pytest subprocess (as ``hermes-memory conformance`` runs it)
over ``tests/conformance_cases/cases_suite.py``; each broken sample provider
breaks one promise of the contract.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from hermes_core.testing.report import ConformanceReport
from hermes_core.testing.runner import run_pytest

CASES = Path(__file__).parent / "conformance_cases" / "cases_suite.py"
SELECTION = " or ".join(
    [
        "TestDictProvider",
        "(LegacyWrite and (background_hooks or mirrored or optional_hooks))",
        "(Blocking and prefetch_returns)",
        "(Malformed and strict_backend)",
        "(Leaky and users_are_isolated)",
        "(Echoing and fenced)",
        "(NetworkCheck and no_network)",
        "(RaisingTool and bad_arguments)",
        "(DictToolResult and valid_arguments)",
        "(ArrayToolResult and (valid_arguments or bad_arguments))",
        "(RaisingAvailability and is_available)",
        "(HangingSync and (remembered_fact or fenced or mirrored or switches))",
        "(ThreadBoundSqlite and overlap)",
        "(UnlockedFile and overlap)",
        "(Overrides and (not_overridden or users_are_isolated))",
    ]
)


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> ConformanceReport:
    run = run_pytest([CASES], cwd=tmp_path_factory.mktemp("cases"), args=["-k", SELECTION])
    assert run.report is not None, run.output
    return run.report


def _failure(report: ConformanceReport, test: str, cls: str) -> str:
    result = report.find(test, cls)
    assert result.outcome == "failed", (result, "expected the suite to catch the broken provider")
    assert "Fix:" in result.message, result.message
    return result.message


def test_a_correct_provider_passes_every_applicable_test(report: ConformanceReport) -> None:
    results = [r for r in report.results if "::TestDictProvider::" in r.nodeid]
    assert not [r for r in results if r.outcome in ("failed", "error")], [
        (r.test, r.message) for r in results if r.outcome in ("failed", "error")
    ]
    passed = {r.test for r in results if r.outcome == "passed"}
    assert {
        "test_users_are_isolated",
        "test_fenced_recall_is_not_reingested",
        "test_stateful_against_reference_model",
        "test_builtin_memory_writes_are_mirrored",
        "test_memory_persists_across_instances",
    } <= passed
    skipped = {r.test: r.message for r in results if r.outcome == "skipped"}
    assert "capability not declared: cjk" in skipped["test_cjk_round_trip[2char]"]


def test_a_provider_with_hermes_first_memory_write_signature_is_called_as_it_accepts(
    report: ConformanceReport,
) -> None:
    hooks = report.find("test_background_hooks_do_not_block", "TestLegacyWriteProvider")
    assert hooks.outcome == "passed", hooks
    # on_pre_compress returning None ("nothing to keep"), as both managers read it
    optional = report.find("test_optional_hooks_honour_return_types", "TestLegacyWriteProvider")
    assert optional.outcome == "passed", optional
    # it cannot honour 'replace' or 'remove' without metadata, and the mirror test says so
    message = _failure(report, "test_builtin_memory_writes_are_mirrored", "TestLegacyWriteProvider")
    assert "TypeError" not in message and "a mirrored 'replace'" in message


def test_a_blocking_prefetch_fails_with_the_budget_named(report: ConformanceReport) -> None:
    message = _failure(
        report, "test_prefetch_returns_within_budget", "TestBlockingPrefetchProvider"
    )
    assert "did not return within 0.5s" in message
    assert "serve results that queue_prefetch fetched in the background" in message


def test_a_malformed_tool_schema_fails_naming_each_problem(report: ConformanceReport) -> None:
    message = _failure(
        report, "test_tool_schemas_are_strict_backend_safe", "TestMalformedSchemaProvider"
    )
    assert "'dict search!'" in message and "names must match" in message
    assert 'top-level "anyOf"' in message
    assert '"type": "object"' in message
    assert 'no "description"' in message


def test_leaking_users_fails_user_isolation(report: ConformanceReport) -> None:
    message = _failure(report, "test_users_are_isolated", "TestLeakyUsersProvider")
    assert "user A's recall returned user B's memory" in message
    assert "scope every read and write by the user_id" in message


def test_storing_fenced_context_fails(report: ConformanceReport) -> None:
    message = _failure(report, "test_fenced_recall_is_not_reingested", "TestEchoingProvider")
    assert "sanitize_context" in message


def test_a_network_check_in_is_available_fails(report: ConformanceReport) -> None:
    message = _failure(
        report, "test_is_available_makes_no_network_call", "TestNetworkCheckProvider"
    )
    assert "used the network" in message and "127.0.0.1" in message


def test_raising_on_bad_tool_arguments_fails(report: ConformanceReport) -> None:
    message = _failure(
        report, "test_tool_calls_with_bad_arguments_return_json_errors", "TestRaisingToolProvider"
    )
    assert "raised KeyError" in message and "json.dumps" in message


def test_a_tool_returning_a_dict_fails_asking_for_a_json_string(
    report: ConformanceReport,
) -> None:
    message = _failure(
        report, "test_tool_calls_with_valid_arguments_return_json", "TestDictToolResultProvider"
    )
    assert "returned dict" in message and "return a JSON string" in message


def test_a_tool_answering_a_json_array_passes(report: ConformanceReport) -> None:
    outcomes = {
        test: report.find(test, "TestArrayToolResultProvider").outcome
        for test in (
            "test_tool_calls_with_valid_arguments_return_json",
            "test_tool_calls_with_bad_arguments_return_json_errors",
        )
    }
    assert set(outcomes.values()) == {"passed"}, outcomes


def test_raising_in_is_available_fails_asking_for_false(report: ConformanceReport) -> None:
    for test in ("test_is_available_makes_no_network_call", "test_is_available_in_the_test_setup"):
        message = _failure(report, test, "TestRaisingAvailabilityProvider")
        assert "raised RuntimeError('NOTES_URL is not set')" in message
        assert "return False from is_available()" in message


def test_a_hanging_sync_turn_fails_each_round_trip_instead_of_hanging(
    report: ConformanceReport,
) -> None:
    for test in (
        "test_remembered_fact_is_recalled",
        "test_fenced_recall_is_not_reingested",
        "test_memory_survives_session_switches",
    ):
        message = _failure(report, test, "TestHangingSyncProvider")
        assert "sync_turn() did not return within 0.5s (settle_timeout)" in message
    # a hook other than sync_turn is not blamed: the mirror test never syncs a turn
    mirrored = report.find("test_builtin_memory_writes_are_mirrored", "TestHangingSyncProvider")
    assert mirrored.outcome == "passed", mirrored


@pytest.mark.parametrize(
    ("cls", "expected"),
    [
        ("TestThreadBoundSqliteProvider", "sync_turn() raised ProgrammingError"),
        ("TestUnlockedFileProvider", "prefetch() raised JSONDecodeError"),
    ],
)
def test_a_store_that_is_not_thread_safe_fails(
    report: ConformanceReport, cls: str, expected: str
) -> None:
    message = _failure(report, "test_background_writes_overlap_foreground_reads", cls)
    assert "with prefetch() running on another thread" in message
    assert expected in message and "guard shared state with a lock" in message


def test_overriding_a_standard_test_without_xfail_fails_the_guard(
    report: ConformanceReport,
) -> None:
    message = _failure(
        report, "test_standard_tests_are_not_overridden", "TestOverridesWithoutReason"
    )
    assert "TestOverridesWithoutReason.test_users_are_isolated" in message


def test_an_override_marked_xfail_with_a_reason_is_allowed(report: ConformanceReport) -> None:
    guard = report.find("test_standard_tests_are_not_overridden", "TestOverridesWithReason")
    assert guard.outcome == "passed", guard
    overridden = report.find("test_users_are_isolated", "TestOverridesWithReason")
    assert overridden.outcome == "xfailed"
    assert "users share one pool" in overridden.message


def test_overriding_the_guard_itself_is_refused() -> None:
    from hermes_core.testing import ProviderConformance

    with pytest.raises(TypeError, match="overrides test_standard_tests_are_not_overridden"):
        type(
            "TestSneaky",
            (ProviderConformance,),
            {"test_standard_tests_are_not_overridden": lambda self: None},
        )


def test_a_conformance_class_pytest_would_skip_is_named_in_a_warning(tmp_path: Path) -> None:
    module = tmp_path / "test_notes_provider.py"
    module.write_text(
        "from hermes_core.testing import ProviderConformance\n\n\n"
        "class NotesConformance(ProviderConformance):\n    pass\n\n\n"
        "class Disabled(ProviderConformance):\n    __test__ = False\n\n\n"
        "def test_something():\n    pass\n",
        encoding="utf-8",
    )
    run = subprocess.run(
        [sys.executable, "-m", "pytest", str(module), "-p", "no:cacheprovider", "-W", "default"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout
    assert "NotesConformance subclasses ProviderConformance but pytest does not collect" in (
        run.stdout
    )
    assert "Rename it TestNotesConformance" in run.stdout
    assert "Disabled subclasses" not in run.stdout  # __test__ = False is deliberate


SESSION_SCOPED_CASE = '''
import sys

sys.path.insert(0, {cases_dir!r})

import pytest
from dict_provider import DictProvider

from hermes_core.testing import ProviderConformance


class SessionScopedProvider(DictProvider):
    """Notes kept per session (persisted across instances): recalled only in their session."""

    conformance_capabilities = frozenset(
        {{"prefetch", "sync", "recall", "session_scoped", "persistence", "session_end_extraction"}}
    )

    def sync_turn(self, user_content, assistant_content, *, session_id="", messages=None):
        self._add(f"[{{session_id or self.session}}] {{user_content}}")

    def on_session_end(self, messages):
        for message in messages:
            if message.get("role") == "user":
                self._add(f"[{{self.session}}] {{message.get('content') or ''}}")

    def on_session_switch(self, new_session_id, **kwargs):
        self.session = new_session_id

    def prefetch(self, query, *, session_id=""):
        mine = f"[{{session_id or self.session}}] "
        return "\\n".join(t for t in self._search(query) if t.startswith(mine))


class TestSessionScoped(ProviderConformance):
    @pytest.fixture
    def create_provider(self):
        return SessionScopedProvider
'''


def test_a_session_scoped_provider_is_checked_in_the_session_that_stored(tmp_path: Path) -> None:
    """Session-end extraction and persistence are recalled where the memory lives: the
    session resumed, unless the provider declares ``cross_session``."""
    module = tmp_path / "test_session_scoped.py"
    module.write_text(SESSION_SCOPED_CASE.format(cases_dir=str(CASES.parent)), encoding="utf-8")
    run = run_pytest([module], cwd=tmp_path)
    assert run.report is not None, run.output
    for test in (
        "test_session_end_extracts_unsynced_turns",
        "test_memory_persists_across_instances",
        "test_session_memory_is_isolated_on_reset",
        "test_writes_follow_the_switched_session",
        "test_stateful_against_reference_model",
    ):
        result = run.report.find(test, "TestSessionScoped")
        assert result.outcome == "passed", (test, result.message)


TOP_FIVE_CASE = '''
import sys

sys.path.insert(0, {cases_dir!r})

import pytest
from dict_provider import DictProvider

from hermes_core.testing import ProviderConformance


class FirstFiveProvider(DictProvider):
    """Recalls the first five notes sharing any word with the query, unranked."""

    def prefetch(self, query, *, session_id=""):
        return "\\n".join(f"- {{text}}" for text in self._search(query)[:5])


class TestFirstFive(ProviderConformance):
    @pytest.fixture
    def create_provider(self):
        return FirstFiveProvider
'''


def test_a_recall_crowded_out_by_other_facts_is_told_to_rank(tmp_path: Path) -> None:
    """Eight similar facts and an unranked top five: the failure names ranking, not locking."""
    module = tmp_path / "test_first_five.py"
    module.write_text(TOP_FIVE_CASE.format(cases_dir=str(CASES.parent)), encoding="utf-8")
    run = run_pytest([module], cwd=tmp_path, args=["-k", "overlap"])
    assert run.report is not None, run.output
    result = run.report.find("test_background_writes_overlap_foreground_reads", "TestFirstFive")
    assert result.outcome == "failed", result
    assert "rank results by relevance to the query" in result.message, result.message
    assert "guard the store with a lock" not in result.message, result.message
