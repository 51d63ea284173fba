"""``hermes-memory setup``: a provider configured from its schema, secrets apart, nothing half
written. The provider is a real folder plugin under ``$HERMES_HOME/plugins``."""

from __future__ import annotations

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
from hermes_core.config import load_config_raw
from hermes_core.hermes_compat.dotenv import restore_environ
from hermes_core.secrets import read_dotenv

NOTES = """
from hermes_core.config import cfg_get, load_config, set_config_value, update_config
from hermes_core.errors import ConfigError
from hermes_core.provider import MemoryProvider
from hermes_core.secrets import get_secret

SCHEMA = [
    {"key": "mode", "description": "cloud or disk", "choices": ["cloud", "disk"],
     "default": "cloud"},
    {"key": "token", "description": "Notes API token", "secret": True, "required": True,
     "env_var": "NOTES_TOKEN", "url": "https://notes.example/tokens", "when": {"mode": "cloud"}},
    {"key": "folder", "description": "Where notes live", "default": "notes",
     "when": {"mode": "disk"}},
    {"key": "top_k", "description": "Notes recalled per turn", "type": "integer",
     "default": 5, "minimum": 1, "maximum": 20},
    {"key": "timeout", "description": "Seconds per call", "type": "number", "default": 2.5},
    {"key": "rerank", "description": "Rerank results", "type": "boolean", "default": False},
]


class NotesProvider(MemoryProvider):
    @property
    def name(self):
        return "notes"

    def _settings(self):
        return cfg_get(load_config(), "notes", {}) or {}

    def is_available(self):
        return self._settings().get("mode") == "disk" or bool(get_secret("NOTES_TOKEN"))

    def unavailable_reason(self):
        return "" if self.is_available() else "no NOTES_TOKEN: hermes-memory setup notes"

    def initialize(self, session_id, **kwargs):
        pass

    def get_tool_schemas(self):
        return []

    def get_config_schema(self):
        return SCHEMA

    def save_config(self, values, hermes_home):
        if "token" in values:
            raise AssertionError("a secret reached save_config")
        if str(values.get("folder", "")).startswith("/forbidden"):
            raise ConfigError("notes.folder may not be under /forbidden.")

        def change(config):
            for key, value in values.items():
                set_config_value(config, f"notes.{key}", value)

        update_config(change, hermes_home)
"""

RUN_CLI = "import sys; from hermes_core.cli import main; sys.exit(main(sys.argv[1:]))"
CONFIG = "# my settings, hand-written\nmodel:\n  base_url: http://127.0.0.1:9/v1  # local box\n"
DOTENV = "# keys\nOTHER_KEY=keep-me\n"


@pytest.fixture
def home(hermes_home: Path) -> Iterator[Path]:
    folder = hermes_home / "plugins" / "notes"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text(NOTES, encoding="utf-8")
    (hermes_home / "config.yaml").write_text(CONFIG, encoding="utf-8")
    (hermes_home / ".env").write_text(DOTENV, encoding="utf-8")
    yield hermes_home
    restore_environ()  # what loading the folder plugin put into os.environ from .env


def setup(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["setup", *args])
    return result.exit_code, result.output


def unchanged(home: Path) -> bool:
    return (home / "config.yaml").read_text() == CONFIG and (home / ".env").read_text() == DOTENV


def test_non_interactive_setup_saves_settings_and_secret_apart_and_activates(home: Path) -> None:
    code, output = setup(
        "notes", "--non-interactive", "--set", "token=tok-123", "--set", "top_k=7", "--activate"
    )
    assert code == 0, output
    assert "notes is available" in output
    config = load_config_raw(home)
    assert config["notes"] == {"top_k": 7}
    assert config["memory"] == {"provider": "notes"}
    text = (home / "config.yaml").read_text()
    assert text.startswith(CONFIG)  # the comments and the model section as written
    assert "tok-123" not in text
    assert read_dotenv(home) == {"OTHER_KEY": "keep-me", "NOTES_TOKEN": "tok-123"}
    assert (home / ".env").read_text().startswith(DOTENV)  # updated in place
    assert oct((home / ".env").stat().st_mode & 0o777) == "0o600"
    doctor = CliRunner().invoke(cli, ["doctor"])
    assert doctor.exit_code == 0, doctor.output
    assert "memory.provider 'notes' is available" in doctor.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--set", "tokn=x"], "notes has no setting 'tokn' (did you mean token"),
        (["--set", "top_k=many"], "top_k: 'many' must be a whole number"),
        (["--set", "top_k=99"], "top_k: '99' must be at most 20"),
        (["--set", "mode=paper"], "mode: 'paper' must be one of cloud, disk"),
        (["--set", "rerank=maybe"], "rerank: 'maybe' must be true or false"),
        (["--set", "timeout=nan"], "timeout: 'nan' must be a finite number"),
        (["--set", "token=a\x07b"], "token: the value given must be one line"),
        (["--set", "novalue"], "--set 'novalue' is not KEY=VALUE"),
        ([], "notes needs token: --set token=… (or set NOTES_TOKEN)"),
        (["--set", "mode=disk", "--set", "folder=/forbidden/x"], "notes.folder may not be"),
    ],
)
def test_bad_input_is_refused_naming_it_and_nothing_is_written(
    home: Path, args: list[str], message: str
) -> None:
    code, output = setup("notes", "--non-interactive", "--activate", *args)
    assert code == 1
    assert message in output
    assert unchanged(home)


def test_every_problem_is_named_at_once(home: Path) -> None:
    code, output = setup("notes", "--set", "top_k=0", "--set", "colour=red", "--set", "token=t")
    assert code == 1
    assert "top_k: '0' must be at least 1" in output and "no setting 'colour'" in output
    assert unchanged(home)


def test_a_secret_already_set_satisfies_a_required_field(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NOTES_TOKEN", "from-the-environment")
    code, output = setup("notes", "--non-interactive", "--set", "rerank=yes")
    assert code == 0, output
    assert load_config_raw(home)["notes"] == {"rerank": True}
    assert "NOTES_TOKEN" not in read_dotenv(home)
    assert "To use it: hermes-memory setup notes --activate" in output


def test_fields_follow_when(home: Path) -> None:
    # in disk mode the token is not asked for, nor required
    code, output = setup("notes", "--set", "mode=disk", "--set", "folder=/srv/notes")
    assert code == 0, output
    assert load_config_raw(home)["notes"] == {"mode": "disk", "folder": "/srv/notes"}


def test_a_setting_given_outside_its_when_is_saved_not_dropped(home: Path) -> None:
    code, output = setup("notes", "--set", "token=t", "--set", "folder=/srv/notes")
    assert code == 0, output
    assert load_config_raw(home)["notes"] == {"folder": "/srv/notes"}


def test_an_unavailable_provider_is_reported_with_what_to_do(home: Path) -> None:
    code, output = setup("notes", "--non-interactive", "--set", "mode=cloud", "--set", "token=")
    assert code == 1
    assert "notes is not available yet: no NOTES_TOKEN" in output
    assert "then run hermes-memory doctor" in output


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("note", "no provider is called 'note': did you mean 'notes'?"),
        ("mem0", "the provider 'mem0' is not installed: pip install hermes-memory-mem0"),
    ],
)
def test_an_unknown_provider_gets_a_suggestion(home: Path, name: str, message: str) -> None:
    pytest.importorskip("hermes_core")
    if name == "mem0" and _installed("hermes_memory_mem0"):
        pytest.skip("mem0 is installed here")
    code, output = setup(name, "--set", "x=1")
    assert code == 1
    assert message in output
    assert unchanged(home)


def _installed(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def test_help_settings_lists_the_schema(home: Path) -> None:
    code, output = setup("notes", "--help-settings")
    assert code == 0
    assert "token  (text; secret, kept in .env as NOTES_TOKEN; required; when mode=cloud)" in output
    assert "top_k  (integer; default 5)" in output
    assert unchanged(home)


def test_the_provider_defaults_to_memory_provider(home: Path) -> None:
    (home / "config.yaml").write_text(CONFIG + "memory:\n  provider: notes\n")
    code, output = setup("--set", "token=t")
    assert code == 0, output
    assert read_dotenv(home)["NOTES_TOKEN"] == "t"


def _answer_prompts(home: Path, answers: list[tuple[str, str]]) -> str:
    """Run ``hermes-memory setup notes`` in a pseudo-terminal, typing each answer after its
    prompt appears; returns everything the terminal showed."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: a terminal session of its own
        os.environ["HERMES_HOME"] = str(home)
        os.execv(sys.executable, [sys.executable, "-c", RUN_CLI, "setup", "notes"])
    shown = b""
    deadline = time.monotonic() + 60
    pending = list(answers)
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(fd, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                shown += chunk
            if pending and pending[0][0].encode() in shown.rsplit(b"\n", 1)[-1]:
                os.write(fd, pending.pop(0)[1].encode() + b"\r")
    finally:
        _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, shown.decode(errors="replace")
    return shown.decode(errors="replace")


def test_a_terminal_asks_each_field_with_its_description_and_default(home: Path) -> None:
    shown = _answer_prompts(
        home,
        [
            ("mode [cloud]", ""),  # keep the default
            ("token (input is hidden)", "secret-typed"),
            ("top_k [5]", "many"),  # refused, asked again
            ("top_k [5]", "9"),
            ("timeout [2.5]", ""),
            ("rerank [false]", ""),
        ],
    )
    assert "Notes API token" in shown and "get one at https://notes.example/tokens" in shown
    assert "must be a whole number" in shown
    assert "secret-typed" not in shown  # hidden input is not echoed
    assert load_config_raw(home)["notes"] == {"top_k": 9}  # only what changed
    assert read_dotenv(home)["NOTES_TOKEN"] == "secret-typed"
    assert (home / "config.yaml").read_text().startswith(CONFIG)


def test_setup_is_listed_in_help() -> None:
    result = subprocess.run(
        [sys.executable, "-c", RUN_CLI, "--help"], capture_output=True, text=True
    )
    assert "setup" in result.stdout
