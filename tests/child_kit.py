"""A child Python process a test runs beside itself, waited for by its own signals.

A loaded machine can take long to start a child; waiting with a short deadline
then fails a test that would pass. :class:`Child` waits while the child lives
(bounded by :data:`HANG_LIMIT`, a guard against a hang, far beyond any start
time) and fails at once when it died, with its exit status and stderr.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType

HANG_LIMIT = 900.0
"""Seconds a live child may take to signal or to exit before it counts as hung."""


class Child:
    """``python -c CODE ARGS...`` with its stderr kept in *stderr* for failure messages."""

    def __init__(self, code: str, *args: str | Path, stderr: Path) -> None:
        self.stderr = stderr
        with stderr.open("wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-c", code, *map(str, args)],
                env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
                stderr=log,
            )

    def _said(self) -> str:
        return self.stderr.read_text(encoding="utf-8", errors="replace")[-4000:]

    def wait_for(self, signal: Path) -> None:
        """Return once the child has created *signal*; fail at once if it exits first."""
        began = time.monotonic()
        while not signal.exists():
            status = self.process.poll()
            if status is not None and not signal.exists():
                raise AssertionError(
                    f"the child exited with status {status} before creating {signal.name}:\n"
                    f"{self._said()}"
                )
            if time.monotonic() - began > HANG_LIMIT:
                raise AssertionError(
                    f"the child is alive but did not create {signal.name} within "
                    f"{HANG_LIMIT:g}s (hung?):\n{self._said()}"
                )
            time.sleep(0.05)

    def finish(self) -> None:
        """Wait for the child to exit and fail unless it exited with status 0."""
        try:
            status = self.process.wait(HANG_LIMIT)
        except subprocess.TimeoutExpired:
            raise AssertionError(
                f"the child did not exit within {HANG_LIMIT:g}s:\n{self._said()}"
            ) from None
        assert status == 0, f"the child exited with status {status}:\n{self._said()}"

    def __enter__(self) -> Child:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Never leave the child behind when the test failed before :meth:`finish`."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
