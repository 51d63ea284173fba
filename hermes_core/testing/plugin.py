"""The ``hermes_memory`` pytest plugin (entry point ``pytest11``), loaded by every pytest run.

It must cost nothing in projects that do not use it: importing it pulls in no
hermes-core module, it adds no autouse fixture, and everything it does is
opt-in.

* ``hermes_home`` fixture: a temporary ``HERMES_HOME`` (exported to the
  environment) for tests that ask for it; a ``conftest.py`` fixture of the same
  name takes precedence.
* ``--hermes-conformance-report PATH``: write a JSON report of the run (each
  test's outcome, skip reason or failure message), which
  ``hermes-memory conformance`` renders for people.
"""

from __future__ import annotations

import json
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

REPORT_OPTION = "--hermes-conformance-report"
_RESULTS = pytest.StashKey[list[dict[str, Any]]]()


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
    if config.getoption("hermes_conformance_report", None):
        config.stash[_RESULTS] = []


@pytest.fixture
def hermes_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh, empty HERMES_HOME for the test, also set in the environment."""
    home = tmp_path_factory.mktemp("hermes_home")
    monkeypatch.setenv("HERMES_HOME", str(home))
    return home


def _message(call: pytest.CallInfo[Any]) -> str:
    if call.excinfo is None:
        return ""
    value = call.excinfo.value
    text = str(value).strip()
    if isinstance(value, AssertionError):
        # pytest's assertion rewriting appends "assert <expr>" lines after our message.
        text = text.split("\nassert ")[0].strip()
    return text or call.excinfo.typename


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]) -> Generator[Any]:
    # old-style wrapper on purpose: this module loads in every pytest run (pytest >= 7).
    outcome = yield
    results = item.config.stash.get(_RESULTS, None)
    if results is None:
        return
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
        entry = {"outcome": "xpassed" if hasattr(report, "wasxfail") else "passed", "message": ""}
    if entry is not None:
        function = getattr(item, "function", None)
        doc = (getattr(function, "__doc__", None) or "").strip()
        entry.update(
            nodeid=item.nodeid,
            name=getattr(function, "__name__", item.name),
            test=item.name,
            when=report.when,
            purpose=doc.splitlines()[0] if doc else "",
        )
        results.append(entry)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    results = session.config.stash.get(_RESULTS, None)
    path = session.config.getoption("hermes_conformance_report", None)
    if results is None or not path:
        return
    payload = {"exitstatus": int(exitstatus), "results": results}
    Path(path).write_text(json.dumps(payload, indent=2, ensure_ascii=False), encoding="utf-8")
