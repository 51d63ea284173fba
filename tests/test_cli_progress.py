"""Progress of long commands: on a terminal only, with rate and time left; --quiet silences it."""

from __future__ import annotations

import io
import subprocess
import sys
import time
from pathlib import Path

import pytest
from history_kit import history
from terminal_kit import run_on_a_terminal

from hermes_core.cli.progress import Progress

CLI = [sys.executable, "-c", "from hermes_core.cli import main; main()"]


class Terminal(io.StringIO):
    """A text stream that says it is a terminal, as a tty's stderr does."""

    def isatty(self) -> bool:
        return True


def test_a_bar_with_share_rate_and_time_left() -> None:
    stream = Terminal()
    with Progress("Embedding", 200, unit="messages", stream=stream) as progress:
        time.sleep(0.6)
        progress.update(50)
        line = progress.line()
    assert "Embedding" in line and "25%" in line and "50/200 messages" in line
    assert "messages/s" in line and "ETA " in line
    assert stream.getvalue().startswith("\rEmbedding") and stream.getvalue().endswith("\n")


def test_a_counter_without_total_and_bytes() -> None:
    stream = Terminal()
    with Progress("Backing up", unit="B", stream=stream) as progress:
        progress.update(3 * 1024 * 1024)
        assert "3.0 MiB" in progress.line() and "%" not in progress.line()


def test_nothing_when_not_a_terminal_or_quiet() -> None:
    for stream, quiet in ((io.StringIO(), False), (Terminal(), True)):
        with Progress("Working", 10, stream=stream, quiet=quiet, ticking=True) as progress:
            progress.update(5)
        assert stream.getvalue() == ""


def test_ticking_redraws_while_nothing_is_reported() -> None:
    stream = Terminal()
    with Progress("Rebuilding", stream=stream, ticking=True):
        # Until the ticker has drawn the clock past a second (a loaded machine delays it).
        deadline = time.monotonic() + 120
        while not (stream.getvalue().count("\r") >= 3 and "0:01" in stream.getvalue()):
            assert time.monotonic() < deadline, stream.getvalue()
            time.sleep(0.05)


def redrawn(output: str) -> bool:
    """True when *output* redraws a line (a carriage return the terminal did not add)."""
    return "\r" in output.replace("\r\n", "\n")


@pytest.mark.parametrize("command", ["export", "recover"])
def test_commands_draw_progress_on_a_terminal_only(tmp_path: Path, command: str) -> None:
    db = tmp_path / "state.db"
    history(db)
    out = ["--out", str(tmp_path / "r.db")] if command == "recover" else [str(tmp_path / "x")]
    args = [*CLI, "sessions", command, "--db", str(db)]
    code, _, err = run_on_a_terminal([*args, *out])
    assert code == 0, err
    assert redrawn(err) and ("Exporting sessions" in err or "Salvaging messages" in err)
    (tmp_path / "x").unlink(missing_ok=True)
    (tmp_path / "r.db").unlink(missing_ok=True)
    code, _, err = run_on_a_terminal([*args, *out, "--quiet"])
    assert code == 0 and not redrawn(err)
    (tmp_path / "x").unlink(missing_ok=True)
    (tmp_path / "r.db").unlink(missing_ok=True)
    piped = subprocess.run([*args, *out], capture_output=True, text=True, timeout=60, check=False)
    assert piped.returncode == 0 and "\r" not in piped.stderr


def test_backup_and_import_progress_on_a_terminal(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    history(home / "state.db")
    code, out, err = run_on_a_terminal(
        [*CLI, "backup", str(tmp_path / "b.tar.gz"), "--home", str(home)]
    )
    assert code == 0 and "\rBacking up" in err and "Backed up" in out, err
    code, _, err = run_on_a_terminal(
        [*CLI, "sessions", "export", "--db", str(home / "state.db"), str(tmp_path / "e.jsonl")]
    )
    assert code == 0, err
    code, out, err = run_on_a_terminal(
        [*CLI, "sessions", "import", str(tmp_path / "e.jsonl"), "--db", str(tmp_path / "n.db")]
    )
    assert code == 0 and "\rReading" in err and "Writing 8 messages" in err, err
