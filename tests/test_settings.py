"""Typed provider settings: parsing, errors that name the key, the schema they give."""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hermes_core.errors import ConfigError
from hermes_core.settings import (
    Setting,
    api_key_problem,
    config_schema,
    refuse_unknown,
    settings_section,
)

TIMEOUT = Setting("timeout", float, 10.0, "Seconds", env=("ACME_TIMEOUT",), minimum=0.5, maximum=60)
RETRIES = Setting("retries", int, 2, "Retries", minimum=0, maximum=5)
RERANK = Setting("rerank", bool, False, "Rerank results")
MODE = Setting("mode", str, "fast", "Mode", choices=("fast", "thorough"), normalize=str.lower)
NAME = Setting("name", str, "x", "Id", pattern=re.compile(r"[a-z]+"), pattern_hint="lower letters")
URL = Setting("base_url", str, "", "URL", is_url=True)
KEY = Setting("api_key", str, "", "Key", env=("ACME_API_KEY",), secret=True, url="https://acme")


@pytest.mark.parametrize(
    ("setting", "raw", "value"),
    [
        (TIMEOUT, "7.5", 7.5),
        (TIMEOUT, 3, 3.0),
        (RETRIES, "2", 2),
        (RETRIES, 4.0, 4),
        (RERANK, "yes", True),
        (RERANK, " Off ", False),
        (RERANK, True, True),
        (MODE, " Thorough ", "thorough"),
        (NAME, "abc", "abc"),
        (URL, "", ""),
        (URL, "http://localhost:8000", "http://localhost:8000"),
        (KEY, " sk-1 ", "sk-1"),
    ],
)
def test_values_are_read_into_their_type(setting: Setting, raw: object, value: object) -> None:
    assert setting.parse(raw, "acme.x") == value


@pytest.mark.parametrize(
    ("setting", "raw", "expected"),
    [
        (TIMEOUT, "soon", "a finite number between 0.5 and 60"),
        (TIMEOUT, float("nan"), "a finite number between 0.5 and 60"),
        (TIMEOUT, 61, "a finite number between 0.5 and 60"),
        (TIMEOUT, True, "a finite number"),
        (RETRIES, 1.5, "a whole number between 0 and 5"),
        (RERANK, "maybe", "true or false"),
        (MODE, "slow", "one of fast, thorough"),
        (NAME, "ABC", "lower letters"),
        (URL, "ftp://x", "an http(s) URL"),
        (MODE, 3, "text"),
    ],
)
def test_a_bad_value_is_refused_naming_where_it_came_from(
    setting: Setting, raw: object, expected: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        setting.parse(raw, f"acme.{setting.key} in config.yaml")
    message = str(caught.value)
    assert message.startswith(f"acme.{setting.key} in config.yaml must be {expected}")
    assert repr(raw) in message
    if setting.default not in ("", None):  # a blank default is not offered
        assert f"(unset it to use the default {setting.default!r})" in message


def test_a_secret_is_never_quoted() -> None:
    with pytest.raises(ConfigError) as caught:
        KEY.parse(12345, "ACME_API_KEY")
    assert "12345" not in str(caught.value)
    refusal = api_key_problem("sk 1\nX", "ACME_API_KEY in .env", "Acme")
    assert refusal is not None
    assert str(refusal).startswith("The Acme API key (ACME_API_KEY in .env) contains a space")
    assert "sk 1" not in str(refusal)
    assert api_key_problem("sk-1", "ACME_API_KEY", "Acme") is None


@given(st.one_of(st.floats(allow_nan=True), st.integers(), st.text(max_size=8), st.booleans()))
def test_a_number_is_in_range_and_finite_or_refused(raw: object) -> None:
    try:
        value = TIMEOUT.parse(raw, "acme.timeout")
    except ConfigError as exc:
        assert str(exc).startswith("acme.timeout must be")
    else:
        assert isinstance(value, float) and math.isfinite(value) and 0.5 <= value <= 60


def test_the_schema_describes_each_setting_shown_in_setup() -> None:
    hidden = Setting("internal", int, 1, "Not asked", in_schema=False)
    when = Setting("host", str, "", "Host", when={"mode": "remote"})
    schema = config_schema([KEY, TIMEOUT, MODE, hidden, when])
    assert [entry["key"] for entry in schema] == ["api_key", "timeout", "mode", "host"]
    key, timeout, mode, host = schema
    assert key == {
        "key": "api_key",
        "description": "Key",
        "type": "text",
        "secret": True,
        "required": False,
        "env_var": "ACME_API_KEY",
        "url": "https://acme",
    }
    assert (timeout["type"], timeout["default"], timeout["minimum"], timeout["maximum"]) == (
        "number",
        10.0,
        0.5,
        60,
    )
    assert timeout["env_var"] == "ACME_TIMEOUT"
    assert mode["choices"] == ["fast", "thorough"]
    assert host["when"] == {"mode": "remote"}


def test_a_section_must_be_a_mapping_of_known_keys() -> None:
    assert settings_section({}, "acme", "config.yaml") == {}
    assert settings_section({"acme": {"a": 1}}, "acme", "config.yaml") == {"a": 1}
    with pytest.raises(ConfigError, match=r"'acme' in /h/config.yaml must be a mapping"):
        settings_section({"acme": [1]}, "acme", "/h/config.yaml")
    refuse_unknown({"timeout": 1}, ["timeout"], "Acme", "acme")
    with pytest.raises(
        ConfigError,
        match=r"Unknown Acme setting\(s\) acme\.1, acme\.colour in x\. Known settings: timeout\.",
    ):
        refuse_unknown({"colour": 1, 1: 2, "timeout": 3}, ["timeout"], "Acme", "acme", " in x")
