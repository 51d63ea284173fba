"""``hermes-memory chat`` and ``hermes-memory demo`` as a user runs them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from hermes_core.cli import cli
from hermes_core.sessions import SessionStore
from hermes_core.testing.openai_fake import FakeOpenAIServer, FakeReply

CLI = [sys.executable, "-c", "from hermes_core.cli import main; main()"]
INTERRUPTIBLE = [
    sys.executable,
    "-c",
    "import signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "from hermes_core.cli import main; main()",
]
"""The CLI with Ctrl-C raising KeyboardInterrupt, as on a terminal, however these tests were
started (a shell's background job inherits SIGINT ignored, and Python then keeps it so)."""


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as fake:
        yield fake


def sessions(home: Path) -> list[dict[str, object]]:
    with SessionStore(home / "state.db", read_only=True) as store:
        return store.list_sessions(limit=10, collapse_lineage=False)


def test_chat_runs_turns_and_commands(hermes_home: Path, server: FakeOpenAIServer) -> None:
    result = CliRunner().invoke(
        cli,
        ["chat", "--base-url", server.base_url, "--model", "fake-model", "--cwd", str(hermes_home)],
        input="hello there\n/help\n/compress\n/new\nsecond session\n/exit\n",
    )
    assert result.exit_code == 0, result.output
    assert "echo: hello there" in result.output
    assert "echo: second session" in result.output
    assert "Commands: /new" in result.output
    rows = sessions(hermes_home)
    assert sorted(str(r["end_reason"]) for r in rows) == ["new_session", "user_exit"]


def test_chat_sends_a_message_that_starts_with_a_path_and_checks_command_arguments(
    hermes_home: Path, server: FakeOpenAIServer
) -> None:
    result = CliRunner().invoke(
        cli,
        ["chat", "--base-url", server.base_url, "--model", "fake-model", "--cwd", str(hermes_home)],
        input="/usr/bin/python is broken\n/new please\n/nope\n/exit\n",
    )
    assert result.exit_code == 0, result.output
    assert "echo: /usr/bin/python is broken" in result.output
    assert "/new takes no arguments" in result.output
    assert "Unknown command /nope" in result.output
    assert len(sessions(hermes_home)) == 1  # "/new please" started nothing


@pytest.mark.parametrize("stream", [(), ("--no-stream",)])
def test_chat_shows_escape_sequences_in_a_reply_instead_of_obeying_them(
    hermes_home: Path, server: FakeOpenAIServer, stream: tuple[str, ...]
) -> None:
    server.script(FakeReply(content="done\x1b]0;pwned\x07 \x1b[2Jcleared\rover"))
    result = CliRunner().invoke(
        cli,
        ["chat", "--base-url", server.base_url, "--model", "fake-model", *stream],
        input="hello\n/exit\n",
    )
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output and "\x07" not in result.output
    assert "done<U+001B>]0;pwned<U+0007> <U+001B>[2Jcleared<U+000D>over" in result.output


def test_chat_without_a_model_explains_what_to_set(hermes_home: Path) -> None:
    result = subprocess.run(
        [*CLI, "chat"], input="", capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 1
    assert "No model endpoint is configured" in result.stderr
    assert "hermes-memory demo" in result.stderr


def test_chat_survives_ctrl_c_during_an_answer(hermes_home: Path, server: FakeOpenAIServer) -> None:
    asked, answer = threading.Event(), threading.Event()
    replies = iter(["too late", "second reply"])

    def reply(body: object) -> str:
        text = next(replies)
        if text == "too late":  # held until the chat has shown the interruption
            asked.set()
            answer.wait()
        return text

    server.responder = reply
    process = subprocess.Popen(
        [
            *INTERRUPTIBLE,
            *("chat", "--base-url", server.base_url, "--model", "fake-model", "--no-stream"),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert process.stdin is not None and process.stderr is not None
        process.stdin.write("slow question\n")
        process.stdin.flush()
        assert asked.wait(60), "the chat never called the model"
        process.send_signal(signal.SIGINT)  # it waits for the answer, which cannot come yet
        lines = []
        for line in process.stderr:
            lines.append(line)
            if "[interrupted" in line:
                break
        assert "[interrupted" in "".join(lines), "".join(lines)
    finally:
        answer.set()
    out, err = process.communicate("next question\n/exit\n", timeout=60)
    assert process.returncode == 0, err
    assert "second reply" in out
    (row,) = sessions(hermes_home)
    assert row["end_reason"] == "user_exit"
    with SessionStore(hermes_home / "state.db", read_only=True) as store:
        messages = store.get_messages_as_conversation(str(row["id"]))
    assert [(m["role"], m["content"]) for m in messages] == [
        ("user", "slow question"),
        ("user", "next question"),
        ("assistant", "second reply"),
    ]


SLOW_END = """
import sys
import time
from agent.memory_provider import MemoryProvider


class SlowEnd(MemoryProvider):
    name = "slowend"

    def is_available(self):
        return True

    def initialize(self, session_id, **kwargs):
        pass

    def get_tool_schemas(self):
        return []

    def on_session_end(self, messages):
        print("slowend: ending", file=sys.stderr, flush=True)
        time.sleep(30)
"""


def test_ctrl_c_while_the_session_ends_still_ends_its_row(
    hermes_home: Path, server: FakeOpenAIServer
) -> None:
    plugin = hermes_home / "plugins" / "slowend"
    plugin.mkdir(parents=True)
    (plugin / "__init__.py").write_text(SLOW_END, encoding="utf-8")
    (hermes_home / "config.yaml").write_text("memory:\n  provider: slowend\n", "utf-8")
    process = subprocess.Popen(
        [
            *INTERRUPTIBLE,
            *("chat", "--base-url", server.base_url, "--model", "fake-model", "--no-stream"),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert process.stdin is not None and process.stderr is not None
    process.stdin.write("hello\n/exit\n")
    process.stdin.flush()
    lines = []
    for line in process.stderr:  # wait until the provider's on_session_end has started
        lines.append(line)
        if "slowend: ending" in line:
            break
    assert "slowend: ending" in "".join(lines), "".join(lines)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, "".join(lines) + err
    assert "ended the session without waiting for providers" in err
    (row,) = sessions(hermes_home)
    assert row["end_reason"] == "user_exit"


def test_demo_runs_end_to_end_offline(tmp_path: Path) -> None:
    home = tmp_path / "demo-home"
    result = subprocess.run(
        [*CLI, "demo", "--home", str(home)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "FAIL" not in result.stdout
    assert "checks passed" in result.stdout
    for layer in (
        "[L0]",
        "[L1]",
        "[L2]",
        "[compression]",
        "[tool] memory(",
        "[tool] session_search(",
    ):
        assert layer in result.stdout
    assert (home / "state.db").is_file()
    assert "Ada" in (home / "memories" / "USER.md").read_text(encoding="utf-8")


def test_demo_cleans_up_its_temporary_home(tmp_path: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    result = subprocess.run(
        [*CLI, "demo"], capture_output=True, text=True, timeout=120, check=False, env=env
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert list(tmp_path.iterdir()) == []


def test_demo_refuses_a_home_in_use_and_leaves_it_untouched(tmp_path: Path) -> None:
    home = tmp_path / "real-home"
    (home / "memories").mkdir(parents=True)
    config = "memory:\n  provider: honcho\nmodel:\n  base_url: https://api.example.com/v1\n"
    (home / "config.yaml").write_text(config, encoding="utf-8")
    (home / "memories" / "MEMORY.md").write_text("- my real fact\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["demo", "--home", str(home)])
    assert result.exit_code == 1
    assert f"--home {home} is not empty" in result.output
    assert "leave out --home" in result.output
    assert (home / "config.yaml").read_text(encoding="utf-8") == config
    assert (home / "memories" / "MEMORY.md").read_text(encoding="utf-8") == "- my real fact\n"
    assert sorted(p.name for p in home.iterdir()) == ["config.yaml", "memories"]
