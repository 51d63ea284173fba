"""Progress of a long command on stderr: a counter or bar with its rate and time left.

Shown only when stderr is a terminal (a pipe, a log file or a cron mail gets
nothing) and the command was not given ``--quiet``. Redrawn at most
:data:`REDRAW_SECONDS` apart, on one line; a step that reports nothing while it
runs (one long transaction) is shown ticking, with the time it has taken.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import IO, Any, TypeVar

import click

__all__ = ["Progress", "quiet_option"]

F = TypeVar("F", bound=Callable[..., Any])

REDRAW_SECONDS = 0.1
TICK_SECONDS = 0.5
"""How often a ticking line is redrawn while nothing is reported."""
BAR_WIDTH = 24


def quiet_option(fn: F) -> F:
    """The ``--quiet`` / ``-q`` flag of a long command (no progress on stderr)."""
    return click.option(
        "--quiet", "-q", is_flag=True, help="Show no progress (it shows only on a terminal)."
    )(fn)


def _duration(seconds: float) -> str:
    seconds = int(seconds + 0.5)
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


def _amount(value: float, unit: str) -> str:
    if unit == "B":
        if value < 1024:
            return f"{value:,.0f} B"
        for prefix in ("KiB", "MiB", "GiB"):
            value /= 1024
            if value < 1024 or prefix == "GiB":
                break
        return f"{value:,.1f} {prefix}"
    return f"{value:,.0f}"  # a count: no unit of its own


class Progress:
    """How far a long operation has come, drawn on stderr when it is a terminal.

    Use as a context manager; call :meth:`update` with the amount done so far
    (and the total, once known) or :meth:`advance` with what was just done.
    Without a total it is a counter with a rate; with one, a bar with the
    share done and the time left.
    """

    def __init__(
        self,
        label: str,
        total: float | None = None,
        *,
        unit: str = "",
        quiet: bool = False,
        stream: IO[str] | None = None,
        ticking: bool = False,
    ) -> None:
        self.label = label
        self.total = total
        self.unit = unit
        self.done = 0.0
        self._stream = stream if stream is not None else sys.stderr
        self.shown = not quiet and _is_terminal(self._stream)
        self._started = time.monotonic()
        self._drawn_at = 0.0
        self._width = 0
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._ticker: threading.Thread | None = None
        if ticking and self.shown:
            self._ticker = threading.Thread(target=self._tick, name="progress", daemon=True)

    def __enter__(self) -> Progress:
        self._draw(force=True)
        if self._ticker is not None:
            self._ticker.start()
        return self

    def _tick(self) -> None:
        while not self._stopped.wait(TICK_SECONDS):
            self._draw(force=True)

    def step(self, label: str) -> None:
        """Show that the work has moved on to *label*."""
        self.label = label
        self._draw(force=True)

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def update(self, done: float, total: float | None = None) -> None:
        """Record that *done* of the work is done (of *total*, when given)."""
        self.done = done
        if total is not None:
            self.total = total
        self._draw()

    def advance(self, amount: float = 1) -> None:
        """Record that *amount* more is done."""
        self.update(self.done + amount)

    def close(self) -> None:
        """Draw the last state and end the line."""
        self._stopped.set()
        if self._ticker is not None and self._ticker.is_alive():
            self._ticker.join()
        if self.shown:
            self._draw(force=True)
            with self._lock:
                self._stream.write("\n")
                self._stream.flush()
                self.shown = False

    def line(self) -> str:
        """The progress line as it is drawn now."""
        elapsed = max(time.monotonic() - self._started, 1e-9)
        rate = self.done / elapsed
        parts = [self.label]
        unit = f" {self.unit}" if self.unit and self.unit != "B" else ""
        if self.total:
            share = min(self.done / self.total, 1.0)
            filled = int(share * BAR_WIDTH)
            bar = "#" * filled + "-" * (BAR_WIDTH - filled)
            parts.append(
                f"[{bar}] {share:4.0%} {_amount(self.done, self.unit)}/"
                f"{_amount(self.total, self.unit)}{unit}"
            )
        elif self.done:
            parts.append(f"{_amount(self.done, self.unit)}{unit}")
        if self.done and elapsed >= 0.5:
            parts.append(f"{_amount(rate, self.unit)}{unit}/s")
            if self.total and self.done < self.total:
                parts.append(f"ETA {_duration((self.total - self.done) / rate)}")
        parts.append(_duration(elapsed))
        return "  ".join(parts)

    def _draw(self, force: bool = False) -> None:
        if not self.shown:
            return
        now = time.monotonic()
        if not force and now - self._drawn_at < REDRAW_SECONDS:
            return
        with self._lock:
            if not self.shown:
                return
            self._drawn_at = now
            text = self.line()
            padding = " " * max(self._width - len(text), 0)
            self._width = len(text)
            self._stream.write(f"\r{text}{padding}")
            self._stream.flush()


def _is_terminal(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or unusual stream: no terminal
        return False
