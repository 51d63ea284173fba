"""``hermes-memory setup mem0``: the config it writes is one doctor accepts, comments kept."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from hermes_core.cli import cli
from hermes_core.config import load_config_raw
from hermes_core.secrets import read_dotenv

CONFIG = "# Hand-written: keep this line.\nmemory:\n  memory_char_limit: 2200  # mine\n"


def test_setup_non_interactive_activates_mem0_and_doctor_accepts_it(hermes_home: Path) -> None:
    (hermes_home / "config.yaml").write_text(CONFIG, encoding="utf-8")
    result = CliRunner().invoke(
        cli,
        [
            "setup", "mem0", "--non-interactive", "--set", "api_key=m0-abc123",
            "--set", "agent_id=helper", "--activate",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "mem0 is available" in result.output
    text = (hermes_home / "config.yaml").read_text(encoding="utf-8")
    assert text.startswith("# Hand-written: keep this line.\n")
    assert "memory_char_limit: 2200  # mine" in text
    assert "m0-abc123" not in text
    config = load_config_raw(hermes_home)
    assert config["memory"] == {"memory_char_limit": 2200, "provider": "mem0"}
    assert config["mem0"] == {"agent_id": "helper"}
    assert read_dotenv(hermes_home) == {"MEM0_API_KEY": "m0-abc123"}
    doctor = CliRunner().invoke(cli, ["doctor"])
    assert doctor.exit_code == 0, doctor.output
    assert "memory.provider 'mem0' is available" in doctor.output


def test_setup_refuses_mem0s_bad_values_writing_nothing(hermes_home: Path) -> None:
    (hermes_home / "config.yaml").write_text(CONFIG, encoding="utf-8")
    for args, message in [
        (["--set", "mode=cloudy"], "mode: 'cloudy' must be one of platform, local"),
        (["--set", "host=not a url", "--set", "api_key=k"], "mem0.host"),
        (["--activate"], "mem0 needs api_key: --set api_key=… (or set MEM0_API_KEY)"),
    ]:
        result = CliRunner().invoke(cli, ["setup", "mem0", "--non-interactive", *args])
        assert result.exit_code == 1, result.output
        assert message in result.output
        assert (hermes_home / "config.yaml").read_text(encoding="utf-8") == CONFIG
        assert not (hermes_home / ".env").exists()
