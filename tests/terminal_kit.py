"""A command run with its stderr on a pseudo-terminal, as a user's shell runs it: for the
tests of progress drawn only on a terminal."""

from __future__ import annotations

import os
import pty
import subprocess


def run_on_a_terminal(
    args: list[str], timeout: float = 300, typed: str = ""
) -> tuple[int, str, str]:
    """Run *args* with stderr on a pseudo-terminal and *typed* on stdin: its exit code,
    stdout and stderr."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=follower, text=True
    )
    os.close(follower)
    assert process.stdin is not None
    process.stdin.write(typed)
    process.stdin.close()
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # EIO: the other end is closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    stdout = process.stdout.read() if process.stdout else ""
    return process.wait(timeout=timeout), stdout, b"".join(chunks).decode("utf-8", "replace")
