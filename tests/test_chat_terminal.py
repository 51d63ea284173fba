"""``hermes-memory chat`` for a person at a terminal: line editing, history, clean input."""

from __future__ import annotations

import contextlib
import os
import pty
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from hermes_core.cli import cli
from hermes_core.sessions import SessionStore
from hermes_core.testing.openai_fake import FakeOpenAIServer

CLI = [sys.executable, "-c", "from hermes_core.cli import main; main()"]


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as fake:
        yield fake


def user_messages(server: FakeOpenAIServer) -> list[str]:
    return [
        str(request.messages[-1]["content"])
        for request in server.chat_requests
        if request.messages and request.messages[-1]["role"] == "user"
    ]


def stored_user_messages(home: Path) -> list[str]:
    with SessionStore(home / "state.db", read_only=True) as store:
        (row,) = store.list_sessions(limit=5, collapse_lineage=False)
        return [m["content"] for m in store.get_messages(row["id"]) if m["role"] == "user"]


def test_escape_sequences_and_control_characters_never_reach_the_model_or_the_store(
    hermes_home: Path, server: FakeOpenAIServer
) -> None:
    typed = "deploy\x1b[A the\x07 app\x1b[D\x1bOB\x9b1;5C now\x7f\r\n\x1b[B\x1b[B\n/exit\n"
    result = CliRunner().invoke(
        cli, ["chat", "--base-url", server.base_url, "--model", "fake-model"], input=typed
    )
    assert result.exit_code == 0, result.output
    assert user_messages(server) == ["deploy the app now"]
    assert stored_user_messages(hermes_home) == ["deploy the app now"]
    assert "only control characters or escape sequences: not sent" in result.output


def test_the_banner_names_home_model_and_providers(
    hermes_home: Path, server: FakeOpenAIServer
) -> None:
    result = CliRunner().invoke(
        cli, ["chat", "--base-url", server.base_url, "--model", "fake-model"], input="/exit\n"
    )
    assert result.exit_code == 0, result.output
    assert f"home:      {hermes_home}" in result.output
    assert f"model:     fake-model at {server.base_url}" in result.output
    assert "providers: builtin" in result.output


class Terminal:
    """The chat running on a pseudo-terminal, typed at and read like a person would."""

    def __init__(self, args: list[str]) -> None:
        self.leader, follower = pty.openpty()
        self.process = subprocess.Popen(
            args, stdin=follower, stdout=follower, stderr=follower, close_fds=True
        )
        os.close(follower)
        self.screen = b""
        self.mark = 0  # where the output since the last keys typed starts

    def wait_for(self, text: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while text.encode() not in self.screen[self.mark :]:
            assert time.monotonic() < deadline, f"{text!r} never appeared in {self.screen!r}"
            self.read()

    def read(self) -> None:
        ready, _, _ = select.select([self.leader], [], [], 0.2)
        if ready:
            with contextlib.suppress(OSError):  # OSError: the chat has exited
                self.screen += os.read(self.leader, 4096)

    def type(self, keys: str) -> None:
        self.mark = len(self.screen)
        os.write(self.leader, keys.encode())

    def close(self) -> int:
        try:
            code = self.process.wait(timeout=30)
        finally:
            os.close(self.leader)
        return code


def test_line_editing_and_history_on_a_terminal(
    hermes_home: Path, server: FakeOpenAIServer
) -> None:
    args = [*CLI, "chat", "--base-url", server.base_url, "--model", "fake-model", "--no-stream"]
    chat = Terminal(args)
    chat.wait_for("you> ")
    chat.type("first line\r")
    chat.wait_for("echo: first line")
    chat.type("abc\x1b[D\x1b[DX\r")  # two steps left, then X typed in place: aXbc
    chat.wait_for("echo: aXbc")
    chat.type("\x1b[A\x1b[A\r")  # up twice: the first line again
    chat.wait_for("echo: first line", timeout=30)
    chat.type("/exit\r")
    assert chat.close() == 0, chat.screen
    assert user_messages(server) == ["first line", "aXbc", "first line"]
    history = hermes_home / "chat_history"
    assert "first line" in history.read_text() and "aXbc" in history.read_text()
    assert oct(history.stat().st_mode & 0o777) == "0o600"
    # A new chat recalls the last one's lines.
    chat = Terminal(args)
    chat.wait_for("you> ")
    chat.type("\x1b[A\x1b[A\r")  # /exit is the newest line, then first line
    chat.wait_for("echo: first line")
    chat.type("/exit\r")
    assert chat.close() == 0
    assert user_messages(server)[-1] == "first line"
