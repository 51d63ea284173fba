"""The ``hermes_memory`` pytest plugin (entry point ``pytest11``), loaded by every pytest run.

It must cost nothing in projects that do not use it: importing it pulls in no
hermes-memory-core module, it adds no autouse fixture, and everything it does is
opt-in.

* ``hermes_home`` fixture: a temporary ``HERMES_HOME`` (exported to the
  environment) for tests that ask for it; a ``conftest.py`` fixture of the same
  name takes precedence.
* a collection warning for a :class:`~hermes_core.testing.ProviderConformance`
  subclass whose name pytest does not collect (``ConformanceNotes`` rather than
  ``TestNotes``): otherwise the suite would silently not run.
* ``--hermes-conformance-report PATH``: write a JSON report of the run (each
  test's outcome, skip reason or failure message, and collection errors),
  which ``hermes-memory conformance`` renders for people. The file is replaced
  as each test starts and ends and names the test still ``running``, so a run
  stopped by its time limit still says which test hung and what came before.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

REPORT_OPTION = "--hermes-conformance-report"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("hermes-memory")
    group.addoption(
        REPORT_OPTION,
        dest="hermes_conformance_report",
        default=None,
        metavar="PATH",
        help="write a JSON report of test outcomes (used by `hermes-memory conformance`)",
    )


def pytest_configure(config: pytest.Config) -> None:
    path = config.getoption("hermes_conformance_report", None)
    if path:
        config.pluginmanager.register(_Recorder(Path(path)), "hermes-conformance-recorder")


def pytest_pycollect_makeitem(collector: pytest.Collector, name: str, obj: object) -> None:
    """Warn about a conformance class pytest will pass over; never collects anything itself."""
    suite = sys.modules.get("hermes_core.testing.suite")  # unimported: nothing can subclass it
    if suite is None or not isinstance(obj, type) or obj is suite.ProviderConformance:
        return None
    if (
        issubclass(obj, suite.ProviderConformance)
        and isinstance(collector, pytest.Module)
        and obj.__module__ == collector.obj.__name__
        and getattr(obj, "__test__", True)
        and not collector.istestclass(obj, name)
    ):
        collector.warn(
            pytest.PytestCollectionWarning(
                f"{name} subclasses ProviderConformance but pytest does not collect it: its "
                "name does not match python_classes (by default names starting with 'Test'). "
                f"Rename it Test{name} so the conformance suite runs."
            )
        )
    return None


@pytest.fixture
def hermes_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh, empty HERMES_HOME for the test, also set in the environment."""
    home = tmp_path_factory.mktemp("hermes_home")
    monkeypatch.setenv("HERMES_HOME", str(home))
    return home


_SUITE_DIR = str(Path(__file__).resolve().parent)
_HARNESS = (_SUITE_DIR, f"{os.sep}_pytest{os.sep}", f"{os.sep}pluggy{os.sep}", "threading.py")

_RAISED_FIX = (
    "Fix: a provider must not raise into the host: catch backend failures, log them and "
    'return what the contract says ("", None, or a JSON {"error": ...} from a tool). If the '
    "error comes from your own test setup (a fixture or helper), fix that instead."
)
_EXIT_FIX = (
    "Fix: never raise SystemExit or KeyboardInterrupt, nor call sys.exit(), in a provider: "
    "they end the host's whole process. Raise an ordinary exception and handle it."
)

_EXIT_TEST_FIX = "Fix: do not call pytest.exit() in the provider or its tests."


def _origin(error: BaseException) -> str:
    """``prefetch() at /path/provider.py:42``: the innermost frame outside pytest and the suite."""
    import traceback

    frames = [
        frame
        for frame in traceback.extract_tb(error.__traceback__)
        if not any(part in frame.filename for part in _HARNESS)
    ]
    if not frames:
        return ""
    frame = frames[-1]
    return f"{frame.name}() at {frame.filename}:{frame.lineno}"


def _raised(error: BaseException) -> str:
    """``RuntimeError: boom`` and, when known, the line of the provider that raised it."""
    text = str(error).strip()
    raised = f"{type(error).__name__}: {text}" if text else type(error).__name__
    origin = _origin(error)
    return f"{raised}\n(raised in {origin})" if origin else raised


def explain_error(error: BaseException) -> str:
    """A failure message for *error*: the suite's own text, or what was raised where and a fix."""
    if isinstance(error, AssertionError):
        # pytest's assertion rewriting appends "assert <expr>" lines after our message.
        text = str(error).strip().split("\nassert ")[0].strip()
        if "Fix:" in text:
            return text
        origin = _origin(error)
        return (text or "AssertionError") + (f"\n(raised in {origin})" if origin else "")
    if "\nFix:" in str(error):  # the suite's own error about the test setup
        return str(error).strip()
    fix = _EXIT_FIX if isinstance(error, SystemExit | KeyboardInterrupt) else _RAISED_FIX
    return f"{_raised(error)}\n{fix}"


def _message(call: pytest.CallInfo[Any]) -> str:
    if call.excinfo is None:
        return ""
    return explain_error(call.excinfo.value)


def _describe(item: pytest.Item) -> dict[str, str]:
    function = getattr(item, "function", None)
    doc = (getattr(function, "__doc__", None) or "").strip()
    return {
        "nodeid": item.nodeid,
        "name": getattr(function, "__name__", item.name),
        "test": item.name,
        "purpose": doc.splitlines()[0] if doc else "",
    }


class _Recorder:
    """Collects the outcomes of one run and keeps the report file up to date."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.results: list[dict[str, Any]] = []
        self.running: dict[str, str] | None = None

    def write(self, exitstatus: int | None) -> None:
        """Replace the report file atomically: a reader never sees half of it."""
        payload = {"exitstatus": exitstatus, "running": self.running, "results": self.results}
        partial = self.path.with_name(f".{self.path.name}.partial")
        partial.write_text(json.dumps(payload, indent=2, ensure_ascii=False), encoding="utf-8")
        os.replace(partial, self.path)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.results.append(
                {
                    "outcome": "error",
                    "message": str(report.longrepr).strip(),
                    "nodeid": report.nodeid,
                    "name": report.nodeid,
                    "test": report.nodeid,
                    "when": "collect",
                    "purpose": "",
                }
            )

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[Any]:
        self.running = _describe(item)
        self.write(None)
        outcome = yield
        excinfo = getattr(outcome, "excinfo", None)
        if excinfo is not None:  # KeyboardInterrupt or pytest.exit(): the session ends here
            error = excinfo[1]
            self.results.append(
                {
                    **_describe(item),
                    "outcome": "error",
                    "when": "call",
                    "message": f"{_raised(error)}\n{type(error).__name__} stopped the whole "
                    "pytest run during this test, so the tests after it did not run.\n"
                    + (_EXIT_FIX if isinstance(error, KeyboardInterrupt) else _EXIT_TEST_FIX),
                }
            )
        self.running = None
        self.write(None)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[Any]
    ) -> Generator[Any]:
        # old-style wrapper on purpose: this module loads in every pytest run (pytest >= 7).
        outcome = yield
        report: pytest.TestReport = outcome.get_result()  # type: ignore[attr-defined]
        entry: dict[str, Any] | None = None
        if report.skipped and hasattr(report, "wasxfail"):
            entry = {"outcome": "xfailed", "message": report.wasxfail}
        elif report.skipped:
            longrepr = report.longrepr
            reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
            entry = {"outcome": "skipped", "message": reason.removeprefix("Skipped: ")}
        elif report.failed:
            entry = {
                "outcome": "failed" if report.when == "call" else "error",
                "message": _message(call),
            }
        elif report.when == "call":
            entry = {
                "outcome": "xpassed" if hasattr(report, "wasxfail") else "passed",
                "message": "",
            }
        if entry is not None:
            entry.update(_describe(item), when=report.when)
            self.results.append(entry)

    def pytest_sessionfinish(self, exitstatus: int) -> None:
        self.write(int(exitstatus))
