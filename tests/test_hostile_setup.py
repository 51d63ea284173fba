"""Setup paths under hostile input: config.yaml writes and a plugin's ``cli.py`` commands."""

from __future__ import annotations

import copy
import multiprocessing
import os
import resource
import signal
import stat
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from plugin_kit import write_files
from thirdparty_kit import run_cli, write_config

from hermes_core.config import (
    header_value_problem,
    load_config,
    load_config_raw,
    save_config,
    set_config_value,
    update_config,
)
from hermes_core.errors import ConfigError


@pytest.mark.parametrize("held", ["gpt-4o", ["a", "b"], 7, True])
def test_setting_a_key_through_a_value_is_refused_and_nothing_changes(held: Any) -> None:
    config: dict[str, Any] = {"model": {"name": held}, "other": 1}
    before = copy.deepcopy(config)
    with pytest.raises(
        ConfigError, match=r"Cannot set model\.name\.base_url: model\.name holds a \w+"
    ) as caught:
        set_config_value(config, "model.name.base_url", "http://127.0.0.1:1")
    assert config == before
    assert "gpt-4o" not in str(caught.value)  # the value is not shown: it may be a key


@pytest.mark.parametrize("key", ["", ".", "a..b", ".a", "a.", "a. .b", 5, None])
def test_a_malformed_setting_name_is_refused(key: Any) -> None:
    config: dict[str, Any] = {"a": {}}
    with pytest.raises(ConfigError, match="is not a setting name"):
        set_config_value(config, key, 1)
    assert config == {"a": {}}


def test_set_config_value_creates_sections_and_keeps_any_value(hermes_home: Path) -> None:
    config: dict[str, Any] = {"memory": None, "keep": {"x": 1}}
    set_config_value(config, "memory.provider", "notes")
    set_config_value(config, "mémoire.clé", "ünïcode")
    set_config_value(config, "keep.nested", {"deep": [1, None, {"k": "v"}]})
    set_config_value(config, "keep.long", "word " * 20_000)
    set_config_value(config, "keep.none", None)
    assert config["memory"] == {"provider": "notes"}
    assert config["keep"]["x"] == 1
    save_config(config)
    assert load_config() == config


_text = st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=12)
_plain = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=12,
)


# deadline=None: the first save into an existing file imports ruamel.yaml (a few 100 ms).
@settings(
    suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=150, deadline=None
)
@given(config=st.dictionaries(_text, _plain, max_size=4), nel=st.sampled_from(["", "a\x85b"]))
def test_any_plain_config_round_trips(hermes_home: Path, config: dict[str, Any], nel: str) -> None:
    # PyYAML folds a NEL (U+0085) inside a quoted string into a space unless it is escaped
    config = {**config, "text": nel} if nel else config
    save_config(config)
    assert load_config_raw() == config


def test_a_nel_survives_the_hermes_atomic_yaml_write(hermes_home: Path) -> None:
    from hermes_core import hermes_compat

    hermes_compat.prepare(hermes_home)
    try:
        from utils import atomic_yaml_write  # type: ignore[import-not-found]

        atomic_yaml_write(hermes_home / "plugin.yaml", {"line\x85key": "a\x85b"})
    finally:
        hermes_compat.uninstall()
    assert yaml.safe_load((hermes_home / "plugin.yaml").read_text()) == {"line\x85key": "a\x85b"}


class _Opaque:
    pass


def _nested(depth: int) -> dict[str, Any]:
    root: dict[str, Any] = {}
    node = root
    for _ in range(depth):
        node["a"] = {}
        node = node["a"]
    return root


@pytest.mark.parametrize(
    ("config", "problem"),
    [
        ({"model": _Opaque()}, "value of type _Opaque"),
        (["model", "x"], "must be a mapping"),
        (_nested(5_000), "nested too deeply"),
    ],
)
def test_a_config_yaml_cannot_hold_is_refused_before_the_file_is_touched(
    hermes_home: Path, config: Any, problem: str
) -> None:
    path = hermes_home / "config.yaml"
    path.write_text("# mine\nmodel:\n  model: kept\n")
    with pytest.raises(ConfigError, match=problem):
        save_config(config)
    assert path.read_text() == "# mine\nmodel:\n  model: kept\n"
    assert sorted(p.name for p in hermes_home.iterdir()) == ["config.yaml"]


def test_save_config_writes_through_a_symlink_and_keeps_the_mode(
    hermes_home: Path, tmp_path: Path
) -> None:
    target = tmp_path / "dotfiles" / "hermes.yaml"
    target.parent.mkdir()
    target.write_text("a: 1\n")
    target.chmod(0o640)
    (hermes_home / "config.yaml").symlink_to(target)
    save_config({"a": 2})
    assert (hermes_home / "config.yaml").is_symlink()
    assert load_config() == {"a": 2}
    assert stat.S_IMODE(target.stat().st_mode) == 0o640


def test_a_hermes_home_that_is_a_file_is_a_config_error(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.write_text("not a folder")
    with pytest.raises(ConfigError, match=r"Cannot write .*home/config\.yaml.*writable folder"):
        save_config({"a": 1}, home)
    assert home.read_text() == "not a folder"


def _save_past_file_size_limit(home: str, limit: int) -> None:
    """Save a config bigger than *limit* bytes with files capped at *limit* (a full disk)."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    try:
        save_config({"notes": "n" * (2 * limit)}, home)
    except ConfigError as exc:
        os._exit(0 if "the file was not changed" in str(exc) else 2)
    os._exit(1)


def test_a_failed_config_write_leaves_the_file_whole_and_no_temp_file(hermes_home: Path) -> None:
    path = hermes_home / "config.yaml"
    path.write_text("# mine\nmemory:\n  provider: notes\n")
    context = multiprocessing.get_context("fork")
    child = context.Process(target=_save_past_file_size_limit, args=(str(hermes_home), 4096))
    child.start()
    child.join(timeout=60)
    assert child.exitcode == 0
    assert path.read_text() == "# mine\nmemory:\n  provider: notes\n"
    assert sorted(p.name for p in hermes_home.iterdir()) == ["config.yaml"]


def _version(writer: int, round_: int) -> dict[str, Any]:
    return {
        "writer": writer,
        "round": round_,
        "padding": [f"{writer}-{i}" * 20 for i in range(300)],
    }


def _save_rounds(home: str, writer: int, rounds: int) -> None:
    for round_ in range(rounds):
        save_config(_version(writer, round_), home)


def test_readers_see_a_whole_config_while_processes_rewrite_it(hermes_home: Path) -> None:
    save_config(_version(0, 0))
    context = multiprocessing.get_context("fork")
    writers = [
        context.Process(target=_save_rounds, args=(str(hermes_home), writer, 25))
        for writer in range(3)
    ]
    for process in writers:
        process.start()
    while any(process.is_alive() for process in writers):
        seen = load_config()
        assert seen == _version(seen["writer"], seen["round"])
    for process in writers:
        process.join(timeout=60)
        assert process.exitcode == 0
    assert load_config()["round"] == 24
    assert sorted(p.name for p in hermes_home.iterdir()) == ["config.yaml"]


def _set_keys(home: str, writer: int, count: int) -> None:
    for index in range(count):
        update_config(
            partial(set_config_value, dotted_key=f"w{writer}.k{index}", value=index), home
        )


def test_processes_updating_config_at_once_lose_no_setting(hermes_home: Path) -> None:
    (hermes_home / "config.yaml").write_text("memory:\n  provider: notes\n")
    context = multiprocessing.get_context("fork")
    writers = [
        context.Process(target=_set_keys, args=(str(hermes_home), writer, 15))
        for writer in range(4)
    ]
    for process in writers:
        process.start()
    for process in writers:
        process.join(timeout=60)
        assert process.exitcode == 0
    assert load_config() == {
        "memory": {"provider": "notes"},
        **{f"w{w}": {f"k{i}": i for i in range(15)} for w in range(4)},
    }


def test_a_failed_update_writes_nothing(hermes_home: Path) -> None:
    path = hermes_home / "config.yaml"
    path.write_text("# mine\nmemory: {provider: notes}\n")

    def change(config: dict[str, Any]) -> None:
        config["memory"]["provider"] = "other"
        raise ConfigError("refused")

    with pytest.raises(ConfigError, match="refused"):
        update_config(change)
    assert path.read_text() == "# mine\nmemory: {provider: notes}\n"
    update_config(lambda config: config.update(extra=1))
    assert load_config() == {"memory": {"provider": "notes"}, "extra": 1}


def _cli_plugin(home: Path, name: str, cli: str) -> None:
    write_files(
        home / "plugins" / name,
        {"__init__.py": "from agent.memory_provider import MemoryProvider\n", "cli.py": cli},
    )
    write_config(home, name)


def test_a_cli_failure_never_prints_a_secret_of_the_profile(hermes_home: Path) -> None:
    (hermes_home / ".env").write_text("OPAQUE_TOKEN=opaque-honcho-key-123\n")
    _cli_plugin(
        hermes_home,
        "leaky",
        """
        import os

        def register_cli(parser):
            parser.add_argument("action")

        def leaky_command(args):
            raise RuntimeError(
                "login refused for " + os.environ["OPAQUE_TOKEN"]
                + " and sk-proj-AbCdEfGhIjKlMnOpQrStUvWx0123456789"
            )
        """,
    )
    result = run_cli("leaky", "login")
    assert result.returncode == 1
    assert "memory plugin 'leaky': RuntimeError: login refused for [redacted]" in result.stderr
    assert "opaque-honcho-key-123" not in result.stderr + result.stdout
    assert "AbCdEfGhIjKlMnOp" not in result.stderr + result.stdout


def test_an_async_handler_runs_and_sys_exit_sets_the_status(hermes_home: Path) -> None:
    _cli_plugin(
        hermes_home,
        "asyncy",
        """
        import sys

        def register_cli(parser):
            parser.add_argument("action")

        async def asyncy_command(args):
            print("ran", args.action)
            if args.action == "fail":
                sys.exit(3)
        """,
    )
    ran = run_cli("asyncy", "status")
    assert ran.returncode == 0 and ran.stdout.strip() == "ran status"
    assert "never awaited" not in ran.stderr
    failed = run_cli("asyncy", "fail")
    assert failed.returncode == 3 and failed.stdout.strip() == "ran fail"


def test_a_plugin_base_exception_is_one_line_not_a_traceback(hermes_home: Path) -> None:
    _cli_plugin(
        hermes_home,
        "odd",
        """
        class Stop(BaseException):
            pass

        def register_cli(parser):
            pass

        def odd_command(args):
            raise Stop("plugin gave up")
        """,
    )
    result = run_cli("odd")
    assert result.returncode == 1
    assert "memory plugin 'odd': Stop: plugin gave up" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_failing_argument_type_of_the_plugin_is_one_line(hermes_home: Path) -> None:
    (hermes_home / ".env").write_text("OPAQUE_TOKEN=opaque-honcho-key-123\n")
    _cli_plugin(
        hermes_home,
        "typed",
        """
        import os

        def strict(text):
            raise LookupError("no account for " + os.environ["OPAQUE_TOKEN"])

        def register_cli(parser):
            parser.add_argument("--account", type=strict)

        def typed_command(args):
            print(args.account)
        """,
    )
    result = run_cli("typed", "--account", "me")
    assert result.returncode == 1
    assert "memory plugin 'typed': LookupError: no account for [redacted]" in result.stderr
    assert "Traceback" not in result.stderr and "opaque-honcho" not in result.stderr
    refused = run_cli("typed", "extra")  # argparse's own refusal is left as it is
    assert refused.returncode == 2 and "unrecognized arguments: extra" in refused.stderr


def test_env_templates_are_expanded_on_read_and_kept_on_update(
    hermes_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Hermes expands ${VAR} in config.yaml from the environment (its .env loaded first).
    monkeypatch.setenv("MYURL", "http://127.0.0.1:9")
    monkeypatch.delenv("MY_MODEL", raising=False)
    monkeypatch.delenv("NOT_SET_ANYWHERE", raising=False)
    (hermes_home / ".env").write_text("MY_MODEL=small-1\nMYURL=http://wrong\n", "utf-8")
    config_file = hermes_home / "config.yaml"
    config_file.write_text(
        "model:\n  base_url: ${MYURL}/v1\n  model: ${MY_MODEL}\n"
        "  note: ${NOT_SET_ANYWHERE} and $MYURL\n  list: ['${MY_MODEL}', 3]\n",
        encoding="utf-8",
    )
    assert load_config()["model"] == {
        "base_url": "http://127.0.0.1:9/v1",  # the environment wins over .env
        "model": "small-1",
        "note": "${NOT_SET_ANYWHERE} and $MYURL",  # unset, or not a ${...} reference: as written
        "list": ["small-1", 3],
    }
    update_config(lambda config: set_config_value(config, "memory.provider", "mem0"))
    written = config_file.read_text("utf-8")
    assert "${MYURL}/v1" in written and "${MY_MODEL}" in written
    assert "127.0.0.1" not in written and "small-1" not in written
    assert load_config()["memory"] == {"provider": "mem0"}


@given(st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E)))
def test_a_printable_ascii_key_can_go_in_a_header(key: str) -> None:
    assert header_value_problem(key) is None


@given(
    st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=8),
    st.sampled_from(["\n", "\r", " ", "\t", "\x00", "\x7f", "\u201c", "é", "\u00a0"]),
    st.integers(min_value=0, max_value=8),
)
def test_a_key_no_header_can_carry_is_named_by_position_not_quoted(
    key: str, bad: str, at: int
) -> None:
    value = key[:at] + bad + key[at:]
    problem = header_value_problem(value)
    assert problem is not None and f"(character {at + 1})" in problem
    assert key[:8] not in problem  # never the key itself
