"""A conformance run's results: read from the plugin's JSON report, rendered for people."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["ConformanceReport", "TestResult"]

_FAILING = ("failed", "error")


@dataclass(frozen=True)
class TestResult:
    """One test of the run: its outcome and the message that explains it."""

    __test__ = False  # not a pytest test class

    name: str
    test: str
    outcome: str
    message: str = ""
    purpose: str = ""
    when: str = "call"
    nodeid: str = ""

    @property
    def title(self) -> str:
        """``test_cjk_round_trip[2char]`` → ``cjk round trip [2char]``."""
        base, _, params = self.test.partition("[")
        words = base.removeprefix("test_").replace("_", " ")
        return f"{words} [{params}" if params else words


@dataclass
class ConformanceReport:
    """All results of one run, in the order pytest reported them."""

    results: list[TestResult] = field(default_factory=list)
    exitstatus: int | None = 0
    """pytest's exit status; ``None`` when the run was stopped before it finished."""
    running: TestResult | None = None
    """The test that had started but not finished when the run was stopped."""

    @classmethod
    def from_json(cls, path: str | Path) -> ConformanceReport:
        """Read the file written by ``--hermes-conformance-report``.

        ``exitstatus`` is ``None`` and ``running`` names a test when the run was
        stopped before pytest finished.
        """
        data: dict[str, Any] = json.loads(Path(path).read_text(encoding="utf-8"))
        results = [_result(r) for r in data.get("results", [])]
        status = data.get("exitstatus")
        running = data.get("running")
        return cls(
            results=results,
            exitstatus=None if status is None else int(status),
            running=_result(running) if isinstance(running, dict) else None,
        )

    def find(self, name: str, cls: str = "") -> TestResult:
        """The result of test *name* (``test_x`` or ``test_x[param]``), in class *cls* if given."""
        for result in self.results:
            if result.test == name and (not cls or f"::{cls}::" in result.nodeid):
                return result
        raise KeyError(f"no result for {cls + '::' if cls else ''}{name}")

    def by_outcome(self, *outcomes: str) -> list[TestResult]:
        """Results whose outcome is one of *outcomes*."""
        return [r for r in self.results if r.outcome in outcomes]

    @property
    def failed(self) -> list[TestResult]:
        """Failures and errors (a fixture that broke counts as an error)."""
        return self.by_outcome(*_FAILING)

    @property
    def ok(self) -> bool:
        """True when pytest finished with success, nothing failed and at least one test ran.

        A run pytest ended early (interrupted, exit status 2) is never ok, even when
        every test that ran before passed.
        """
        return (
            self.exitstatus == 0
            and not self.failed
            and bool(self.by_outcome("passed", "xfailed", "xpassed"))
        )

    def counts(self) -> dict[str, int]:
        """How many results had each outcome."""
        counts: dict[str, int] = {}
        for result in self.results:
            counts[result.outcome] = counts.get(result.outcome, 0) + 1
        return counts

    def summary(self) -> str:
        """``17 passed, 5 skipped, 1 failed``."""
        order = ("passed", "skipped", "xfailed", "xpassed", "failed", "error")
        counts = self.counts()
        parts = [f"{counts[o]} {o}" for o in order if counts.get(o)]
        return ", ".join(parts) or "no tests ran"

    def render(self, *, verbose: bool = False) -> str:
        """Readable text: what passed, what was skipped and why, what failed and what to fix."""
        lines: list[str] = []
        passed = self.by_outcome("passed", "xpassed")
        if passed:
            lines.append(f"Passed ({len(passed)}):")
            lines.extend(f"  PASS  {r.title}" for r in passed)
        skipped = self.by_outcome("skipped")
        if skipped:
            lines.append(f"\nSkipped ({len(skipped)}):")
            for reason, group in _group_by_message(skipped):
                lines.append(f"  SKIP  {', '.join(r.title for r in group)}")
                lines.append(f"        because {reason}")
        xfailed = self.by_outcome("xfailed")
        if xfailed:
            lines.append(f"\nExpected failures ({len(xfailed)}):")
            for r in xfailed:
                lines.append(f"  XFAIL {r.title}: {r.message}")
        if self.failed:
            lines.append(f"\nFailed ({len(self.failed)}):")
            for r in self.failed:
                label = "FAIL " if r.outcome == "failed" else "ERROR"
                lines.append(f"  {label} {r.title}" + (f" - {r.purpose}" if r.purpose else ""))
                lines.extend(f"        {line}" for line in _trim(r.message, verbose).splitlines())
        lines.append(f"\nResult: {self.summary()}")
        return "\n".join(lines).lstrip("\n")


def _result(data: dict[str, Any]) -> TestResult:
    return TestResult(
        name=str(data.get("name", "")),
        test=str(data.get("test", data.get("name", ""))),
        outcome=str(data.get("outcome", "")),
        message=str(data.get("message") or ""),
        purpose=str(data.get("purpose") or ""),
        when=str(data.get("when") or "call"),
        nodeid=str(data.get("nodeid") or ""),
    )


def _group_by_message(results: list[TestResult]) -> list[tuple[str, list[TestResult]]]:
    groups: dict[str, list[TestResult]] = {}
    for result in results:
        groups.setdefault(result.message, []).append(result)
    return list(groups.items())


def _trim(message: str, verbose: bool) -> str:
    if verbose:
        return message
    lines = message.strip().splitlines()
    return "\n".join(lines[:12] + (["..."] if len(lines) > 12 else []))
