"""Configuration: config.yaml, environment, .env, the wizard schema and availability."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
import yaml
from hermes_memory_honcho import HonchoMemoryProvider
from hermes_memory_honcho.settings import config_schema, load_settings, save_settings
from honcho_test_support import write_config

from hermes_core.errors import ConfigError


def test_defaults_without_any_configuration(hermes_home: Path) -> None:
    settings = load_settings(hermes_home, environ={})
    assert settings.workspace == "hermes"
    assert settings.user_peer == "user"
    assert settings.ai_peer == "hermes"
    assert settings.recall_mode == "hybrid"
    assert settings.api_base_url == "https://api.honcho.dev"
    assert not settings.configured


def test_config_yaml_wins_over_environment(hermes_home: Path) -> None:
    write_config(hermes_home, workspace="from-file", timeout=3)
    env = {"HONCHO_WORKSPACE_ID": "from-env", "HONCHO_AI_PEER": "bot", "HONCHO_TIMEOUT": "9"}
    settings = load_settings(hermes_home, environ=env)
    assert settings.workspace == "from-file"
    assert settings.ai_peer == "bot"
    assert settings.timeout == 3.0


def test_api_key_from_environment_then_dotenv(hermes_home: Path) -> None:
    (hermes_home / ".env").write_text("# secrets\nexport HONCHO_API_KEY='from-dotenv'\n")
    assert load_settings(hermes_home, environ={}).api_key == "from-dotenv"
    env = {"HONCHO_API_KEY": "from-env"}
    assert load_settings(hermes_home, environ=env).api_key == "from-env"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://127.0.0.1:8000/", "http://127.0.0.1:8000"),
        ("http://honcho.internal/v3", "http://honcho.internal"),
        ("https://h.example/v3/", "https://h.example"),
    ],
)
def test_base_url_loses_trailing_slash_and_v3(hermes_home: Path, url: str, expected: str) -> None:
    settings = load_settings(hermes_home, environ={"HONCHO_BASE_URL": url})
    assert settings.api_base_url == expected
    assert settings.configured


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"timeout": "soon"}, r"honcho\.timeout in config\.yaml must be a finite number"),
        ({"timeout": 0}, r"between 0\.001 and 600"),
        ({"recall_mode": "magic"}, r"one of hybrid, context, tools"),
        ({"workspace": "my workspace"}, r"letters, digits"),
        ({"dialectic": "maybe"}, r"true or false"),
        ({"max_retries": 1.5}, r"whole number"),
        ({"colour": "blue"}, r"Unknown Honcho setting\(s\) honcho\.colour"),
        ({"api_key": "sk-123"}, r"must not be stored in config\.yaml"),
    ],
)
def test_bad_values_name_the_key(hermes_home: Path, settings: dict, message: str) -> None:
    write_config(hermes_home, **settings)
    with pytest.raises(ConfigError, match=message):
        load_settings(hermes_home, environ={})


def test_bad_environment_value_names_the_variable(hermes_home: Path) -> None:
    with pytest.raises(ConfigError, match="environment variable HONCHO_TIMEOUT"):
        load_settings(hermes_home, environ={"HONCHO_TIMEOUT": "-1"})


def test_availability_is_offline_and_explains_what_is_missing(
    hermes_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    provider = HonchoMemoryProvider()
    assert not provider.is_available()
    assert "HONCHO_API_KEY" in provider.unavailable_reason()
    assert "honcho.base_url" in provider.unavailable_reason()

    monkeypatch.setenv("HONCHO_API_KEY", "k")
    assert provider.is_available()
    assert provider.unavailable_reason() == ""

    write_config(hermes_home, timeout="soon")
    assert not provider.is_available()
    assert provider.unavailable_reason().startswith("Honcho configuration is invalid:")
    assert "honcho.timeout" in provider.unavailable_reason()


def test_unreachable_server_still_counts_as_available(
    hermes_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """is_available() never connects: a dead URL is a runtime problem, not a config one."""
    write_config(hermes_home, base_url="http://127.0.0.1:9")
    assert HonchoMemoryProvider().is_available()


def test_schema_describes_every_setting() -> None:
    schema = HonchoMemoryProvider().get_config_schema()
    by_key = {field["key"]: field for field in schema}
    assert by_key["api_key"]["secret"] is True
    assert by_key["api_key"]["env_var"] == "HONCHO_API_KEY"
    assert by_key["recall_mode"]["choices"] == ["hybrid", "context", "tools"]
    assert by_key["timeout"]["type"] == "number"
    assert all(isinstance(field["description"], str) and field["description"] for field in schema)
    assert all(field["type"] in {"text", "integer", "number", "boolean"} for field in schema)


def test_save_config_writes_settings_and_keeps_secrets_out_of_yaml(hermes_home: Path) -> None:
    (hermes_home / "config.yaml").write_text(yaml.safe_dump({"memory": {"provider": "honcho"}}))
    (hermes_home / ".env").write_text("OTHER=1\nHONCHO_API_KEY=old\n")
    HonchoMemoryProvider().save_config(
        {"api_key": "new-secret", "workspace": "team", "timeout": "7.5", "dialectic": "no"},
        str(hermes_home),
    )
    config = yaml.safe_load((hermes_home / "config.yaml").read_text())
    assert config == {
        "memory": {"provider": "honcho"},
        "honcho": {"workspace": "team", "timeout": 7.5, "dialectic": False},
    }
    assert (hermes_home / ".env").read_text() == "OTHER=1\nHONCHO_API_KEY=new-secret\n"
    assert stat.S_IMODE(os.stat(hermes_home / ".env").st_mode) == 0o600
    settings = load_settings(hermes_home, environ={})
    assert (settings.api_key, settings.workspace, settings.timeout) == ("new-secret", "team", 7.5)


def test_save_config_blank_value_restores_the_default(hermes_home: Path) -> None:
    write_config(hermes_home, workspace="team")
    HonchoMemoryProvider().save_config({"workspace": ""}, str(hermes_home))
    assert load_settings(hermes_home, environ={}).workspace == "hermes"


def test_save_config_refuses_bad_input_and_writes_nothing(hermes_home: Path) -> None:
    write_config(hermes_home, workspace="team")
    before = (hermes_home / "config.yaml").read_text()
    provider = HonchoMemoryProvider()
    with pytest.raises(ConfigError, match="Unknown Honcho setting"):
        provider.save_config({"workspace": "x", "colour": "blue"}, str(hermes_home))
    with pytest.raises(ConfigError, match=r"honcho\.timeout must be a finite number"):
        provider.save_config({"api_key": "k", "timeout": "soon"}, str(hermes_home))
    assert (hermes_home / "config.yaml").read_text() == before
    assert not (hermes_home / ".env").exists()


@pytest.mark.parametrize(
    ("settings", "key"),
    [
        ({"timeout": float("nan")}, "timeout"),
        ({"timeout": float("inf")}, "timeout"),
        ({"timeout": 1e308}, "timeout"),
        ({"timeout": ".nan"}, "timeout"),
        ({"shutdown_timeout": float("inf")}, "shutdown_timeout"),
        ({"max_retries": float("inf")}, "max_retries"),
        ({"max_retries": float("nan")}, "max_retries"),
        ({"max_pending_messages": 1e300}, "max_pending_messages"),
        ({"context_tokens": float("-inf")}, "context_tokens"),
        ({"breaker_cooldown": 1e9}, "breaker_cooldown"),
        ({"base_url": "abc"}, "base_url"),
        ({"base_url": "ftp://x"}, "base_url"),
        ({"base_url": "http://"}, "base_url"),
        ({"base_url": "http://host:port/"}, "base_url"),
    ],
)
def test_non_finite_huge_numbers_and_non_http_urls_are_refused_naming_the_key(
    hermes_home: Path, settings: dict, key: str
) -> None:
    write_config(hermes_home, **settings)
    with pytest.raises(ConfigError, match=rf"honcho\.{key} in config\.yaml must be"):
        load_settings(hermes_home, environ={})


def test_bad_settings_make_the_provider_unavailable_with_the_key_named(
    hermes_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HONCHO_API_KEY", "k")
    for bad in ({"timeout": float("nan")}, {"base_url": "abc"}, {"shutdown_timeout": 1e308}):
        write_config(hermes_home, **bad)
        provider = HonchoMemoryProvider()
        assert not provider.is_available()  # a ConfigError is reported, nothing raises
        key = next(iter(bad))
        assert f"honcho.{key}" in provider.unavailable_reason()


def test_non_finite_environment_values_are_refused(hermes_home: Path) -> None:
    for value in ("nan", "inf", "1e308"):
        with pytest.raises(ConfigError, match="environment variable HONCHO_TIMEOUT"):
            load_settings(hermes_home, environ={"HONCHO_TIMEOUT": value})
    with pytest.raises(ConfigError, match="HONCHO_BASE_URL"):
        load_settings(hermes_home, environ={"HONCHO_BASE_URL": "localhost:8000"})


def test_save_settings_refuses_non_finite_numbers_and_bad_urls(hermes_home: Path) -> None:
    for values in ({"timeout": float("inf")}, {"base_url": "ftp://x"}, {"max_retries": "nan"}):
        with pytest.raises(ConfigError):
            save_settings(values, hermes_home)
    assert not (hermes_home / "config.yaml").exists()


def test_schema_gives_every_number_a_maximum() -> None:
    for entry in config_schema():
        if entry["type"] in ("integer", "number"):
            assert entry["maximum"] >= entry["default"] >= entry["minimum"]


@pytest.mark.parametrize(
    ("key", "problem"),
    [
        ("test-key\nX-Injected: 1", "a line break"),
        ("test-key\rmore", "a line break"),
        ("\u201ctest-key\u201d", "non-ASCII"),  # pasted with typographic quotes
        ("test key", "a space"),
        ("test-key\x7f", "a control character"),
    ],
)
def test_an_api_key_no_http_header_can_carry_is_refused_without_quoting_it(
    hermes_home: Path, monkeypatch: pytest.MonkeyPatch, key: str, problem: str
) -> None:
    # Before: the key was accepted, and every call failed with an httpx message that
    # quoted it ("Illegal header value b'Bearer test-key\nX-…'"), into the tool result
    # the model reads, the transcript and the log.
    monkeypatch.setenv("HONCHO_API_KEY", key)
    with pytest.raises(ConfigError) as caught:
        load_settings(hermes_home)
    message = str(caught.value)
    assert "HONCHO_API_KEY" in message and problem in message
    assert "test-key" not in message and "test key" not in message
    provider = HonchoMemoryProvider()
    assert not provider.is_available()
    assert "HONCHO_API_KEY" in provider.unavailable_reason()
    assert "test-key" not in provider.unavailable_reason()


def test_a_bad_api_key_in_dotenv_is_named_by_its_file(hermes_home: Path) -> None:
    (hermes_home / ".env").write_text('HONCHO_API_KEY="ab\\ncd"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"HONCHO_API_KEY in .*\.env\) contains a line break"):
        load_settings(hermes_home, environ={})


def test_settings_keys_of_mixed_types_are_named_not_a_crash(hermes_home: Path) -> None:
    # Before: sorting the unknown keys raised TypeError ('<' between str and int).
    (hermes_home / "config.yaml").write_text(
        "honcho:\n  1: x\n  null: y\n  frobnicate: z\n", encoding="utf-8"
    )
    with pytest.raises(ConfigError, match=r"honcho\.1, honcho\.None, honcho\.frobnicate"):
        load_settings(hermes_home, environ={})
