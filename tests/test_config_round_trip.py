"""Saving config.yaml keeps the user's comments, order, quoting and layout."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_core.config import load_config_raw, save_config, set_config_value, update_config
from hermes_core.errors import ConfigError

USER_FILE = """\
# My agent's settings: edited by hand, keep these notes.
model:
  base_url: http://localhost:8000/v1   # the vLLM box under the desk
  model: 'qwen3-8b'

# Memory: builtin for now.
memory:
  provider: builtin  # try mem0 next week
  memory_char_limit: 2200
  hidden:
  - tool
  - cron

session_search:
  api_key_env: ${OPENAI_KEY_VAR}
"""


def write(home: Path, text: str) -> Path:
    path = home / "config.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_update_keeps_comments_order_quotes_and_untouched_lines(tmp_path: Path) -> None:
    path = write(tmp_path, USER_FILE)

    def change(config: dict[str, Any]) -> None:
        config["memory"]["provider"] = "mem0"
        config["mem0"] = {"mode": "platform", "top_k": 5}

    update_config(change, tmp_path)
    text = path.read_text(encoding="utf-8")
    assert text == USER_FILE.replace("provider: builtin  # try", "provider: mem0     # try") + (
        "mem0:\n  mode: platform\n  top_k: 5\n"
    )
    config = load_config_raw(tmp_path)
    assert config["memory"]["provider"] == "mem0"
    assert config["session_search"]["api_key_env"] == "${OPENAI_KEY_VAR}"  # template kept


def test_an_unchanged_save_leaves_the_file_byte_for_byte(tmp_path: Path) -> None:
    path = write(tmp_path, USER_FILE)
    save_config(load_config_raw(tmp_path), tmp_path)
    assert path.read_text(encoding="utf-8") == USER_FILE


def test_removed_keys_go_and_the_comments_of_the_others_stay(tmp_path: Path) -> None:
    path = write(tmp_path, USER_FILE)

    def change(config: dict[str, Any]) -> None:
        del config["session_search"]
        config["memory"]["hidden"] = ["tool"]

    update_config(change, tmp_path)
    text = path.read_text(encoding="utf-8")
    assert "session_search" not in text
    assert "# the vLLM box under the desk" in text and "# try mem0 next week" in text
    assert load_config_raw(tmp_path)["memory"]["hidden"] == ["tool"]


@pytest.mark.parametrize(
    ("layout", "expected"),
    [
        ("memory:\n    provider: builtin\n    hidden:\n        - a\n", "        - a\n"),
        ("memory:\n  provider: builtin\n  hidden:\n    - a\n", "    - a\n"),
        ("memory:\n  provider: builtin\n  hidden:\n  - a\n", "  - a\n"),
    ],
)
def test_the_files_own_indentation_is_kept(tmp_path: Path, layout: str, expected: str) -> None:
    path = write(tmp_path, layout)
    update_config(lambda c: set_config_value(c, "memory.provider", "mem0"), tmp_path)
    text = path.read_text(encoding="utf-8")
    assert text == layout.replace("builtin", "mem0")
    assert text.endswith(expected)


@pytest.mark.parametrize("text", ["yes", "no", "on", "0777", "1:30", "null", "~", "1e3", "true"])
def test_new_text_values_read_back_as_text(tmp_path: Path, text: str) -> None:
    # ruamel.yaml writes YAML 1.2, where `yes` is text; PyYAML (and Hermes) read 1.1.
    write(tmp_path, "# keep me\nmemory: {}\n")
    update_config(lambda c: set_config_value(c, "mem0.value", text), tmp_path)
    assert load_config_raw(tmp_path)["mem0"]["value"] == text
    assert "# keep me" in (tmp_path / "config.yaml").read_text()


def test_a_file_of_only_comments_keeps_them(tmp_path: Path) -> None:
    path = write(tmp_path, "# settings go here\n# (see docs/setup.md)\n")
    update_config(lambda c: set_config_value(c, "memory.provider", "mem0"), tmp_path)
    assert (
        path.read_text() == "# settings go here\n# (see docs/setup.md)\nmemory:\n  provider: mem0\n"
    )


def test_a_file_with_aliases_reads_back_as_saved(tmp_path: Path) -> None:
    write(tmp_path, "# shared\nbase: &b {x: 1}\nother: *b\n")
    update_config(lambda c: set_config_value(c, "other", {"x": 3}), tmp_path)
    assert load_config_raw(tmp_path) == {"base": {"x": 1}, "other": {"x": 3}}
    assert (tmp_path / "config.yaml").read_text().startswith("# shared\n")


def test_a_value_yaml_cannot_hold_is_refused_and_the_file_is_unchanged(tmp_path: Path) -> None:
    path = write(tmp_path, USER_FILE)
    with pytest.raises(ConfigError, match="Cannot save a value of type object"):
        update_config(lambda c: set_config_value(c, "memory.provider", object()), tmp_path)
    assert path.read_text() == USER_FILE


def test_permissions_and_symlinks_survive_an_edit(tmp_path: Path) -> None:
    real = tmp_path / "real.yaml"
    real.write_text(USER_FILE)
    real.chmod(0o640)
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").symlink_to(real)
    update_config(lambda c: set_config_value(c, "memory.provider", "mem0"), home)
    assert (home / "config.yaml").is_symlink()
    assert oct(os.stat(real).st_mode & 0o777) == "0o640"
    assert "# the vLLM box" in real.read_text()


keys = st.sampled_from(["model", "memory", "mem0", "provider", "a", "b", "x-y", "yes", "1"])
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12),
    st.sampled_from(["yes", "off", "0o17", "12:30", "${HOME}", "# not a comment", "a: b"]),
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3),
    max_leaves=8,
)
configs = st.dictionaries(keys, values, max_size=4)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(before=configs, after=configs)
def test_any_edit_reads_back_as_the_saved_config(tmp_path: Path, before: dict, after: dict) -> None:
    # Whatever the file held and whatever is saved, load_config reads exactly what was saved.
    text = "# header comment\n" + yaml.safe_dump(before, sort_keys=False, allow_unicode=True)
    write(tmp_path, text)
    save_config(after, tmp_path)
    assert load_config_raw(tmp_path) == after
    written = (tmp_path / "config.yaml").read_text(encoding="utf-8")
    if after:
        assert written.startswith("# header comment\n")
