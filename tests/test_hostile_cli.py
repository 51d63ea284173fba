"""The command line under misuse: broken config, odd HERMES_HOME, bad option values.

Every failure must exit non-zero with one clear ``Error:`` message that names
what was wrong and what to do, and never a Python traceback.
"""

from __future__ import annotations

import io
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_core.cli import main

CLI = [sys.executable, "-c", "from hermes_core.cli import main; main()"]


def run(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    *args: str,
    stdin: str = "",
) -> tuple[int, str, str]:
    """``hermes-memory ARGS`` in this process: (exit code, stdout, stderr)."""
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    capsys.readouterr()
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def write_config(home: Path, text: str) -> None:
    (home / "config.yaml").write_text(text, encoding="utf-8")


# -- config.yaml --------------------------------------------------------------------------


def test_invalid_yaml_is_one_line_naming_file_line_and_column(
    hermes_home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_config(hermes_home, "model:\n  base_url: http://x/v1\nmemory: [unclosed\n")
    for command in (["memory", "show"], ["chat"], ["doctor"]):
        code, out, err = run(capsys, monkeypatch, *command)
        assert code == 1, command
        message = next(line for line in (err + out).splitlines() if "config.yaml" in line)
        assert f"{hermes_home / 'config.yaml'}, line 4" in message or "line 3" in message
        assert "<unicode string>" not in err + out


def test_a_list_at_the_top_level_is_refused(
    hermes_home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_config(hermes_home, "- a\n- b\n")
    code, _, err = run(capsys, monkeypatch, "memory", "show")
    assert code == 1 and "must hold a mapping" in err


BILLION_LAUGHS = "".join(
    f"{name}: &{name} [{', '.join([f'*{prev}'] * 9) if prev else ', '.join(['lol'] * 9)}]\n"
    for prev, name in zip(["", *"abcdefgh"], "abcdefghi", strict=True)
)


@pytest.mark.parametrize(
    ("config", "named"),
    [
        (BILLION_LAUGHS + "memory:\n  provider: *i\n", "expands to more than"),
        ("memory: &m\n  nested: *m\n", "expands to more than"),
        ("x: " + "[" * 1_000 + "]" * 1_000 + "\n", "nested too deeply"),
    ],
    ids=["alias_bomb", "self_reference", "too_deep"],
)
def test_a_config_that_would_expand_without_end_is_refused(
    hermes_home: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    config: str,
    named: str,
) -> None:
    write_config(hermes_home, config)
    code, out, _ = run(capsys, monkeypatch, "doctor")
    assert code == 1 and any(
        line.startswith("[FAIL]") and named in line for line in out.splitlines()
    )
    code, _, err = run(capsys, monkeypatch, "memory", "show")
    assert code == 1 and named in err


@pytest.mark.parametrize(
    ("config", "named"),
    [
        ("memory:\n  memory_char_limit: abc\n", "memory.memory_char_limit"),
        ("memory:\n  memory_char_limit: -5\n", "memory.memory_char_limit"),
        ("memory:\n  user_char_limit: 99999999999999999999\n", "memory.user_char_limit"),
        ("memory:\n  memory_enabled: 'maybe'\n", "memory.memory_enabled"),
        ("memory: 5\n", "memory must be a mapping"),
        ("memory:\n  provider: 42\n", "memory.provider"),
        ("memory:\n  prefetch_timeout: -2\n", "memory.prefetch_timeout"),
        ("model:\n  timeout: -1\n", "model.timeout"),
        ("model:\n  timeout: soon\n", "model.timeout"),
        ("model: [1, 2]\n", "model must be a mapping"),
        ("model:\n  base_url: 42\n  model: m\n", "model.base_url"),
        ("model:\n  base_url: localhost:8000\n  model: m\n", "http://"),
        ("model:\n  base_url: http://h/v1\n  model: [a]\n", "model.model"),
        ("model:\n  api_key_env: [X]\n", "model.api_key_env"),
        ("model:\n  base_url: http://h/v1\n  model: m\n  api_key: 'a b'\n", "API key"),
        ("session_search: 5\n", "session_search must be a mapping"),
        ("model:\n  context_window: 10\n", "model.context_window"),
        ("compression:\n  threshold: 5\n", "compression.threshold"),
        ("compression: 7\n", "compression must be a mapping"),
        ("runtime:\n  max_tool_iterations: 0\n", "runtime.max_tool_iterations"),
    ],
)
def test_doctor_names_every_unusable_setting(
    hermes_home: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    config: str,
    named: str,
) -> None:
    write_config(hermes_home, config)
    code, out, _ = run(capsys, monkeypatch, "doctor")
    assert code == 1
    failure = next(line for line in out.splitlines() if line.startswith("[FAIL]") and named in line)
    assert "fix:" in out.split(failure, 1)[1].splitlines()[1]


def test_a_bad_model_timeout_stops_chat_with_a_clear_error(
    hermes_home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_config(
        hermes_home, "model:\n  base_url: http://127.0.0.1:9/v1\n  model: m\n  timeout: -1\n"
    )
    code, _, err = run(capsys, monkeypatch, "chat")
    assert code == 1
    assert "model.timeout" in err and "positive" in err


def test_a_section_that_is_not_a_mapping_stops_chat(
    hermes_home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_config(
        hermes_home, "model:\n  base_url: http://127.0.0.1:9/v1\n  model: m\ncompression: 7\n"
    )
    code, _, err = run(capsys, monkeypatch, "chat")
    assert code == 1 and "compression must be a mapping" in err


def test_config_yaml_that_is_a_directory(
    hermes_home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (hermes_home / "config.yaml").mkdir()
    code, _, err = run(capsys, monkeypatch, "memory", "show")
    assert code == 1 and "config.yaml" in err and "directory" in err


# -- HERMES_HOME ----------------------------------------------------------------------------


def test_config_yaml_that_is_a_pipe_is_refused_not_read_forever(
    hermes_home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    os.mkfifo(hermes_home / "config.yaml")  # nothing ever writes to it: a read would block
    code, out, _ = run(capsys, monkeypatch, "doctor")
    assert code == 1 and "not a regular file" in out


def test_hermes_home_pointing_at_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    a_file = tmp_path / "home-file"
    a_file.write_text("x")
    monkeypatch.setenv("HERMES_HOME", str(a_file))
    for command in (["memory", "show"], ["memory", "add", "fact"]):
        code, _, err = run(capsys, monkeypatch, *command)
        assert code == 1
        assert f"HERMES_HOME {a_file} is not a directory" in err
    assert a_file.read_text() == "x"


def test_hermes_home_that_is_a_symlink_to_nowhere_is_named(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    home_link_to_nowhere: Path,
) -> None:
    # Before: "Cannot create the memory folder …/memories (File exists)" for a dangling link,
    # and an error about config.yaml for a loop; neither said the home itself leads nowhere.
    home = home_link_to_nowhere
    for command in (["memory", "show"], ["memory", "add", "fact"]):
        code, _, err = run(capsys, monkeypatch, *command)
        assert code == 1
        assert f"HERMES_HOME {home} is a symbolic link that leads nowhere" in err, err
    assert not (tmp_path / "missing").exists()


def test_hermes_home_with_spaces_and_unicode_works(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "my home ünïcødé 日本"
    monkeypatch.setenv("HERMES_HOME", str(home))
    assert run(capsys, monkeypatch, "memory", "add", "Prefers tea")[0] == 0
    code, out, _ = run(capsys, monkeypatch, "memory", "show", "--json")
    assert code == 0 and json.loads(out)["memory"]["entries"][0]["text"] == "Prefers tea"


def test_doctor_fix_hints_can_be_pasted_into_a_shell(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "not yet" / "my home"
    monkeypatch.setenv("HERMES_HOME", str(home))
    code, out, _ = run(capsys, monkeypatch, "doctor")
    assert code == 1
    assert f"mkdir -p {shlex.quote(str(home))}" in out


def _unprivileged(tmp_path: Path) -> list[str]:
    """A command prefix that runs without the power to bypass file permissions."""
    if os.name != "posix":
        pytest.skip("POSIX permissions")
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv")
    caps = "-dac_override,-dac_read_search,-fowner"
    prefix = [setpriv, f"--bounding-set={caps}", f"--inh-caps={caps}"]
    probe = tmp_path / "probe"
    probe.write_text("x")
    probe.chmod(0)
    if subprocess.run([*prefix, "cat", str(probe)], capture_output=True).returncode == 0:
        pytest.skip("cannot drop the privilege to bypass permissions here")
    return prefix


def test_a_read_only_home_fails_cleanly_everywhere(tmp_path: Path) -> None:
    prefix = _unprivileged(tmp_path)
    home = tmp_path / "readonly"
    (home / "memories").mkdir(parents=True)
    (home / "memories" / "MEMORY.md").write_text("kept", encoding="utf-8")
    (home / "memories").chmod(0o555)
    home.chmod(0o555)
    env = {**os.environ, "HERMES_HOME": str(home)}
    try:
        for command in (["memory", "add", "fact"], ["demo", "--home", str(home)]):
            done = subprocess.run(
                [*prefix, *CLI, *command], capture_output=True, text=True, env=env, timeout=120
            )
            assert done.returncode == 1, (command, done.stderr)
            assert "Traceback" not in done.stderr
            assert "Error:" in done.stderr and str(home) in done.stderr
    finally:
        home.chmod(0o755)
        (home / "memories").chmod(0o755)
    assert (home / "memories" / "MEMORY.md").read_text(encoding="utf-8") == "kept"


# -- options ---------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["-1", "0", "nan"])
def test_conformance_refuses_a_timeout_that_is_not_positive(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    code, _, err = run(capsys, monkeypatch, "conformance", "builtin", "--timeout", value)
    assert code == 2 and "--timeout" in err


@pytest.mark.parametrize(
    "command", [["list"], ["list", "--json"], ["search", "deploy"], ["show", "abc"]]
)
def test_sessions_commands_say_a_hermes_home_link_leads_nowhere(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    home_link_to_nowhere: Path,
    command: list[str],
) -> None:
    # Before: "No sessions yet (…/state.db does not exist)" (or `[]`), as for a new home.
    home = home_link_to_nowhere
    code, out, err = run(capsys, monkeypatch, "sessions", *command)
    assert code == 1, out
    assert f"HERMES_HOME {home} is a symbolic link that leads nowhere" in err, err
    assert "No sessions yet" not in out and "No session database" not in err
    assert not (tmp_path / "missing").exists()
