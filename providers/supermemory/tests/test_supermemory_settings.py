"""Configuration: config.yaml, environment, .env, the setup schema and save_config."""

from __future__ import annotations

import stat

import pytest
import yaml
from hermes_memory_supermemory import SupermemoryProvider
from hermes_memory_supermemory.settings import (
    DEFAULT_BASE_URL,
    load_settings,
    sanitize_namespace_part,
)
from hypothesis import given
from hypothesis import strategies as st

from hermes_core.errors import ConfigError


def test_defaults_without_any_configuration(hermes_home) -> None:
    settings = load_settings(hermes_home, {})
    assert settings.api_key == ""
    assert settings.base_url == DEFAULT_BASE_URL
    assert settings.namespace == "hermes"
    assert (settings.api_timeout, settings.max_retries, settings.search_mode) == (5.0, 2, "hybrid")


def test_environment_overrides_config(hermes_home, write_config) -> None:
    write_config({"base_url": "http://config.example", "namespace": "from_config"})
    env = {
        "SUPERMEMORY_API_KEY": "sm_env",
        "SUPERMEMORY_BASE_URL": "http://env.example/",
        "SUPERMEMORY_NAMESPACE": "from_env",
    }
    settings = load_settings(hermes_home, env)
    assert settings.api_key == "sm_env"
    assert settings.base_url == "http://env.example"
    assert settings.namespace == "from_env"


def test_legacy_container_tag_names_the_namespace(hermes_home, write_config) -> None:
    write_config({"container_tag": "old_style"})
    assert load_settings(hermes_home, {}).namespace == "old_style"
    assert (
        load_settings(hermes_home, {"SUPERMEMORY_CONTAINER_TAG": "env_tag"}).namespace == "env_tag"
    )


def test_api_key_from_named_variable_and_dotenv(hermes_home, write_config) -> None:
    write_config({"api_key_env": "MY_SM_KEY"})
    assert load_settings(hermes_home, {"MY_SM_KEY": "sm_named"}).api_key == "sm_named"
    (hermes_home / ".env").write_text('# secrets\nexport MY_SM_KEY="sm_dotenv"\n')
    assert load_settings(hermes_home, {}).api_key == "sm_dotenv"


@pytest.mark.parametrize(
    ("section", "named"),
    [
        ({"api_timeout": 0}, "api_timeout"),
        ({"api_timeout": "fast"}, "api_timeout"),
        ({"max_retries": 1.5}, "max_retries"),
        ({"max_recall_results": 50}, "max_recall_results"),
        ({"auto_recall": "maybe"}, "auto_recall"),
        ({"search_mode": "documents"}, "search_mode"),
        ({"namespace": "has space"}, "namespace"),
        ({"base_url": "ftp://x"}, "base_url"),
        ({"supporting_context": "x" * 1501}, "supporting_context"),
        ({"colour": "blue"}, "supermemory.colour"),
    ],
)
def test_invalid_values_name_the_key(hermes_home, write_config, section, named) -> None:
    write_config(section)
    with pytest.raises(ConfigError, match=named):
        load_settings(hermes_home, {"SUPERMEMORY_API_KEY": "k"})


def test_unavailable_reasons_say_what_to_do(hermes_home, write_config, monkeypatch) -> None:
    provider = SupermemoryProvider()
    assert not provider.is_available()
    assert "SUPERMEMORY_API_KEY" in provider.unavailable_reason()
    monkeypatch.setenv("SUPERMEMORY_API_KEY", "sm_key")
    assert provider.is_available()
    assert provider.unavailable_reason() == ""
    write_config({"max_retries": 9})
    assert not provider.is_available()
    assert provider.unavailable_reason().startswith("Invalid Supermemory configuration")
    assert "max_retries" in provider.unavailable_reason()


def test_is_available_makes_no_network_call(hermes_home, monkeypatch, fake) -> None:
    monkeypatch.setenv("SUPERMEMORY_API_KEY", fake.api_key)
    monkeypatch.setenv("SUPERMEMORY_BASE_URL", fake.url)
    assert SupermemoryProvider().is_available()
    assert fake.requests == []


def test_config_schema_lists_the_secret_and_every_setting() -> None:
    schema = SupermemoryProvider().get_config_schema()
    by_key = {field["key"]: field for field in schema}
    assert by_key["api_key"]["secret"] is True
    assert by_key["api_key"]["env_var"] == "SUPERMEMORY_API_KEY"
    assert {"base_url", "namespace", "search_mode", "api_timeout", "breaker_threshold"} <= set(
        by_key
    )
    assert all(not field["secret"] for key, field in by_key.items() if key != "api_key")
    assert by_key["search_mode"]["choices"] == ["hybrid", "memories", "chunks"]


def test_save_config_writes_settings_and_keeps_the_secret_out_of_yaml(hermes_home) -> None:
    (hermes_home / "config.yaml").write_text(
        yaml.safe_dump({"memory": {"provider": "supermemory"}})
    )
    (hermes_home / ".env").write_text("OTHER=1\nSUPERMEMORY_API_KEY=old\n")
    SupermemoryProvider().save_config(
        {"api_key": "sm_new", "namespace": "team_{identity}", "api_timeout": "7.5"},
        str(hermes_home),
    )
    config = yaml.safe_load((hermes_home / "config.yaml").read_text())
    assert config["memory"] == {"provider": "supermemory"}
    assert config["supermemory"] == {"namespace": "team_{identity}", "api_timeout": 7.5}
    env_text = (hermes_home / ".env").read_text()
    assert env_text == "OTHER=1\nSUPERMEMORY_API_KEY=sm_new\n"
    assert stat.S_IMODE((hermes_home / ".env").stat().st_mode) == 0o600
    assert load_settings(hermes_home, {}).api_key == "sm_new"


def test_save_config_with_a_bad_value_writes_nothing(hermes_home) -> None:
    with pytest.raises(ConfigError, match="search_mode"):
        SupermemoryProvider().save_config(
            {"api_key": "sm_x", "search_mode": "everything"}, str(hermes_home)
        )
    assert not (hermes_home / "config.yaml").exists()
    assert not (hermes_home / ".env").exists()


def test_user_namespace_uses_placeholder_or_suffix(hermes_home, write_config) -> None:
    settings = load_settings(hermes_home, {})
    assert settings.resolve_namespace() == "hermes"
    assert settings.resolve_namespace(user_id="bob") == "hermes-bob"
    write_config({"namespace": "u_{user}_of_{identity}"})
    settings = load_settings(hermes_home, {})
    assert settings.resolve_namespace(identity="coder", user_id="bob") == "u_bob_of_coder"
    assert settings.resolve_namespace() == "u_shared_of_default"


@given(st.text(min_size=1, max_size=80), st.text(min_size=1, max_size=80))
def test_distinct_users_never_share_a_namespace(first: str, second: str) -> None:
    a, b = sanitize_namespace_part(first), sanitize_namespace_part(second)
    assert all(ch.isascii() and (ch.isalnum() or ch == "_") for ch in a)
    assert len(a) <= 48
    if first != second:
        assert a != b


@pytest.mark.parametrize(
    ("key", "problem"),
    [
        ("sm-key\nX-Injected: 1", "a line break"),
        ("\u201csm-key\u201d", "non-ASCII"),  # pasted with typographic quotes
        ("sm key", "a space"),
        ("sm-key\x1b[2J", "a control character"),
    ],
)
def test_an_api_key_no_http_header_can_carry_is_refused_without_quoting_it(
    hermes_home, configured, monkeypatch, key: str, problem: str
) -> None:
    # Before: the key was accepted and every call failed as "Connection error." or
    # "'ascii' codec can't encode…", marked retryable, so nothing said the key was bad.
    monkeypatch.setenv("SUPERMEMORY_API_KEY", key)
    with pytest.raises(ConfigError) as caught:
        load_settings(hermes_home)
    message = str(caught.value)
    assert "SUPERMEMORY_API_KEY" in message and problem in message
    assert "sm-key" not in message and "sm key" not in message
    provider = SupermemoryProvider()
    assert not provider.is_available()
    reason = provider.unavailable_reason()
    assert "SUPERMEMORY_API_KEY" in reason and "sm-key" not in reason


def test_a_bad_api_key_in_config_or_dotenv_is_named_by_where_it_is(
    hermes_home, write_config
) -> None:
    write_config({"api_key": "a b"})
    with pytest.raises(ConfigError, match=r"supermemory\.api_key in config\.yaml.* a space"):
        load_settings(hermes_home, {})
    write_config({})
    (hermes_home / ".env").write_text('SUPERMEMORY_API_KEY="ab\\ncd"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"SUPERMEMORY_API_KEY in .*\.env.* a line break"):
        load_settings(hermes_home, {})


def test_save_config_refuses_an_api_key_no_header_can_carry(hermes_home) -> None:
    provider = SupermemoryProvider()
    with pytest.raises(ConfigError, match="non-ASCII"):
        provider.save_config({"api_key": "\u201csm-key\u201d"}, str(hermes_home))
    assert not (hermes_home / ".env").exists()
