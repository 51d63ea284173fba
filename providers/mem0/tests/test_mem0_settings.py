"""Settings: environment defaults, config.yaml overrides, validation, save_config."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hermes_memory_mem0 import Mem0MemoryProvider
from hermes_memory_mem0.settings import DEFAULT_HOST, load_settings, save_settings
from hypothesis import given
from hypothesis import strategies as st

from hermes_core.config import load_config, save_config
from hermes_core.errors import ConfigError


def test_defaults_without_any_configuration() -> None:
    settings = load_settings({}, env={})
    assert settings.mode == "platform"
    assert settings.host == DEFAULT_HOST
    assert settings.api_key == ""
    assert (settings.top_k, settings.sync_max_chars, settings.breaker_threshold) == (10, 450, 5)
    assert settings.local.embedder == "minilm"


def test_environment_gives_defaults_and_config_overrides_them() -> None:
    env = {
        "MEM0_API_KEY": " m0-key ",
        "MEM0_MODE": "oss",
        "MEM0_HOST": "http://mem0.internal:8000/",
        "MEM0_USER_ID": "alice",
        "MEM0_AGENT_ID": "bot",
    }
    from_env = load_settings({}, env=env)
    assert from_env.mode == "local"  # Hermes' "oss" alias
    assert from_env.api_key == "m0-key"
    assert from_env.host == "http://mem0.internal:8000"
    assert (from_env.user_id, from_env.agent_id) == ("alice", "bot")

    overridden = load_settings({"mem0": {"mode": "platform", "user_id": "bob"}}, env=env)
    assert (overridden.mode, overridden.user_id, overridden.agent_id) == ("platform", "bob", "bot")


def test_api_key_can_come_from_a_named_variable() -> None:
    settings = load_settings({"mem0": {"api_key_env": "TEAM_MEM0"}}, env={"TEAM_MEM0": "k2"})
    assert settings.api_key == "k2"
    assert "k2" not in repr(settings)


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({"mode": "cloudy"}, "mem0.mode must be one of"),
        ({"top_k": 0}, "mem0.top_k must be a whole number between 1 and 50"),
        ({"timeout": "soon"}, "mem0.timeout must be a finite number"),
        ({"retries": 1.5}, "mem0.retries must be a whole number"),
        ({"rerank": "maybe"}, "mem0.rerank must be true or false"),
        ({"host": "mem0.example.com"}, "mem0.host must be an http"),
        ({"tiemout": 3}, r"Unknown mem0 setting\(s\) mem0.tiemout"),
        ({"local": {"embedder": "bert"}}, "mem0.local.embedder must be one of"),
        ({"local": {"dims": 3}}, r"Unknown mem0.local setting\(s\) mem0.local.dims"),
        ({"local": "fast"}, "mem0.local must be a mapping"),
        ({"llm": "gpt"}, "mem0.llm must be a mapping"),
    ],
)
def test_bad_values_name_the_key(section: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_settings({"mem0": section}, env={})


@given(st.floats(allow_nan=True) | st.integers() | st.text(max_size=8))
def test_numbers_are_accepted_only_within_range(value: object) -> None:
    try:
        settings = load_settings({"mem0": {"prefetch_wait": value}}, env={})
    except ConfigError as exc:
        assert "mem0.prefetch_wait" in str(exc)
    else:
        assert 0 <= settings.prefetch_wait <= 30


def test_save_config_merges_into_config_yaml(hermes_home: Path) -> None:
    save_config({"memory": {"provider": "mem0"}, "mem0": {"top_k": 7}}, hermes_home)
    provider = Mem0MemoryProvider()
    provider.save_config(
        {"mode": "local", "local.embedder": "hash", "rerank": True}, str(hermes_home)
    )
    config = load_config(hermes_home)
    assert config["memory"] == {"provider": "mem0"}
    assert config["mem0"] == {
        "top_k": 7,
        "mode": "local",
        "local": {"embedder": "hash"},
        "rerank": True,
    }


def test_save_config_keeps_the_key_in_dotenv_and_validates_first(hermes_home: Path) -> None:
    save_config({"mem0": {"mode": "platform"}}, hermes_home)
    (hermes_home / ".env").write_text("OTHER=1\nMEM0_API_KEY=old\n")
    before = (hermes_home / "config.yaml").read_text()
    with pytest.raises(ConfigError, match=r"mem0\.mode"):
        save_settings({"api_key": "m0-new", "mode": "nowhere"}, hermes_home)
    assert (hermes_home / "config.yaml").read_text() == before
    assert (hermes_home / ".env").read_text() == "OTHER=1\nMEM0_API_KEY=old\n"

    save_settings({"api_key": "m0-secret", "rerank": True}, hermes_home)
    assert "m0-secret" not in (hermes_home / "config.yaml").read_text()
    assert (hermes_home / ".env").read_text() == "OTHER=1\nMEM0_API_KEY=m0-secret\n"
    assert (hermes_home / ".env").stat().st_mode & 0o777 == 0o600
    assert load_settings(load_config(hermes_home), env={}, hermes_home=hermes_home).api_key == (
        "m0-secret"
    )
    save_settings({"api_key": ""}, hermes_home)
    assert (hermes_home / ".env").read_text() == "OTHER=1\n"


def test_api_key_precedence_environment_then_config_then_dotenv(hermes_home: Path) -> None:
    (hermes_home / ".env").write_text('export MEM0_API_KEY="from-dotenv"\n')
    assert load_settings({}, env={}, hermes_home=hermes_home).api_key == "from-dotenv"
    config = {"mem0": {"api_key": "from-config"}}
    assert load_settings(config, env={}, hermes_home=hermes_home).api_key == "from-config"
    env = {"MEM0_API_KEY": "from-env"}
    assert load_settings(config, env=env, hermes_home=hermes_home).api_key == "from-env"


def test_config_schema_marks_the_key_secret() -> None:
    schema = {field["key"]: field for field in Mem0MemoryProvider().get_config_schema()}
    assert schema["api_key"]["secret"] is True
    assert schema["api_key"]["env_var"] == "MEM0_API_KEY"
    assert schema["mode"]["choices"] == ["platform", "local"]
    assert all(not field.get("secret") for key, field in schema.items() if key != "api_key")


def test_provider_reads_config_yaml_from_hermes_home(hermes_home: Path) -> None:
    (hermes_home / "config.yaml").write_text(
        yaml.safe_dump({"mem0": {"mode": "local", "local": {"embedder": "hash"}}})
    )
    provider = Mem0MemoryProvider()
    assert provider.is_available(), provider.unavailable_reason()


@pytest.mark.parametrize(
    ("key", "problem"),
    [
        ("m0-key\nX-Injected: 1", "a line break"),
        ("\u201cm0-key\u201d", "non-ASCII"),  # pasted with typographic quotes
        ("m0 key", "a space"),
        ("m0-key\x1b[2J", "a control character"),
    ],
)
def test_an_api_key_no_http_header_can_carry_is_refused_without_quoting_it(
    hermes_home: Path, key: str, problem: str
) -> None:
    # Before: the key was accepted and every call failed with an httpx message quoting
    # it ("Illegal header value b'Token m0-key\nX-…'"), in the tool result the model
    # reads, the transcript and the log.
    with pytest.raises(ConfigError) as caught:
        load_settings({}, env={"MEM0_API_KEY": key})
    message = str(caught.value)
    assert "MEM0_API_KEY" in message and problem in message
    assert "m0-key" not in message and "m0 key" not in message
    provider = Mem0MemoryProvider({"mem0": {"mode": "platform"}}, env={"MEM0_API_KEY": key})
    provider.initialize("s1", hermes_home=str(hermes_home), platform="cli")
    try:
        result = provider.handle_tool_call("mem0_search", {"query": "anything"})
        assert "MEM0_API_KEY" in result and "m0-key" not in result and "m0 key" not in result
    finally:
        provider.shutdown()
    # Local mode sends no key: a stray bad one does not stop it.
    assert load_settings({"mem0": {"mode": "local"}}, env={"MEM0_API_KEY": key}).mode == "local"


def test_a_bad_api_key_in_config_or_dotenv_is_named_by_where_it_is(hermes_home: Path) -> None:
    with pytest.raises(ConfigError, match=r"\(mem0\.api_key in config\.yaml\) contains a space"):
        load_settings({"mem0": {"api_key": "a b"}}, env={})
    (hermes_home / ".env").write_text('MEM0_API_KEY="ab\\ncd"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"\(MEM0_API_KEY in .*\.env\) contains a line break"):
        load_settings({}, env={}, hermes_home=hermes_home)


def test_save_config_refuses_a_non_ascii_api_key_and_writes_nothing(hermes_home: Path) -> None:
    # Before: "one word without spaces" was the only rule, so a key with typographic
    # quotes was saved and then failed every call with an 'ascii' codec error.
    with pytest.raises(ConfigError, match="non-ASCII"):
        save_settings({"api_key": "\u201cm0-key\u201d"}, hermes_home)
    assert not (hermes_home / ".env").exists()
