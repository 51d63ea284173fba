"""``$HERMES_HOME/.env``: reading secrets, and updating them in place, atomically, 0600."""

from __future__ import annotations

import multiprocessing
import os
import resource
import signal
import stat
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_core.errors import ConfigError
from hermes_core.secrets import dotenv_path, get_secret, read_dotenv, write_dotenv


def test_dotenv_path_follows_hermes_home(hermes_home: Path, tmp_path: Path) -> None:
    assert dotenv_path() == hermes_home / ".env"
    assert dotenv_path(tmp_path) == tmp_path / ".env"


def test_reads_keys_with_export_quotes_and_comments(hermes_home: Path) -> None:
    (hermes_home / ".env").write_text(
        "\ufeff# secrets\n"
        "\n"
        "PLAIN=abc\n"
        "export EXPORTED='single quoted'\n"
        'DOUBLE="has # hash and \\"escapes\\" \\\\ here" # trailing comment\n'
        "SPACED =  padded  \n"
        "COMMENTED=value # a comment after whitespace\n"
        "HASHED=abc#def\n"
        "EQUALS=a=b==\n"
        'UNTERMINATED="open\n'
        "not a pair\n"
        "1BAD=ignored\n"
        "REPEATED=first\n"
        "REPEATED=second\n",
        encoding="utf-8",
    )
    assert read_dotenv() == {
        "PLAIN": "abc",
        "EXPORTED": "single quoted",
        "DOUBLE": 'has # hash and "escapes" \\ here',
        "SPACED": "padded",
        "COMMENTED": "value",
        "HASHED": "abc#def",
        "EQUALS": "a=b==",
        "UNTERMINATED": '"open',
        "REPEATED": "second",
    }


def test_a_missing_file_reads_as_empty(hermes_home: Path) -> None:
    assert read_dotenv() == {}
    assert get_secret("ANY_KEY", environ={}) == ""


def test_an_unreadable_file_is_a_config_error_naming_it(hermes_home: Path) -> None:
    (hermes_home / ".env").mkdir()
    with pytest.raises(ConfigError, match=r"Cannot read .*\.env"):
        read_dotenv()


def test_environment_wins_over_the_file_and_blanks_do_not_count(hermes_home: Path) -> None:
    (hermes_home / ".env").write_text("ACME_KEY=from-file\nOTHER_KEY=other-file\n")
    assert get_secret("ACME_KEY", environ={"ACME_KEY": " from-env "}) == "from-env"
    assert get_secret("ACME_KEY", environ={"ACME_KEY": "   "}) == "from-file"
    assert get_secret("ACME_KEY", environ={}) == "from-file"
    # every name in the environment first, then every name in the file
    assert get_secret("ACME_KEY", "OTHER_KEY", environ={"OTHER_KEY": "env"}) == "env"
    assert get_secret("MISSING", "OTHER_KEY", environ={}) == "other-file"


def test_reads_the_process_environment_by_default(
    hermes_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HERMES_TEST_SECRET", "live")
    assert get_secret("HERMES_TEST_SECRET") == "live"


def test_update_keeps_every_other_line_and_the_key_in_place(hermes_home: Path) -> None:
    path = hermes_home / ".env"
    path.write_text("# keys\nA=1\n\nexport ACME_KEY=old # comment\nB='two'\n")
    path.chmod(0o644)
    assert write_dotenv({"ACME_KEY": "new", "NEW_KEY": "added"}) == path
    assert path.read_text() == "# keys\nA=1\n\nexport ACME_KEY=new\nB='two'\nNEW_KEY=added\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert read_dotenv()["ACME_KEY"] == "new"


def test_creates_the_file_and_home_with_mode_0600(tmp_path: Path) -> None:
    home = tmp_path / "fresh" / "home"
    path = write_dotenv({"ACME_KEY": "k"}, home)
    assert path == home / ".env"
    assert path.read_text() == "ACME_KEY=k\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_blank_or_none_removes_a_key_and_duplicates_collapse(hermes_home: Path) -> None:
    path = hermes_home / ".env"
    path.write_text("OTHER=1\nACME_KEY=a\nGONE=x\nACME_KEY=b\n")
    write_dotenv({"ACME_KEY": "c", "GONE": None, "ABSENT": ""})
    assert path.read_text() == "OTHER=1\nACME_KEY=c\n"
    write_dotenv({"OTHER": "", "ACME_KEY": None})
    assert path.read_text() == ""


@pytest.mark.parametrize(
    ("updates", "problem"),
    [
        ({"1BAD": "x"}, "not a valid .env key"),
        ({"HAS SPACE": None}, "not a valid .env key"),
        ({"GOOD": "ok", "ACME_KEY": "line one\nline two"}, "line break"),
        ({"ACME_KEY": "carriage\rreturn"}, "line break"),
        ({"ACME_KEY": "nul\x00byte"}, "NUL character"),
        ({"ACME_KEY": "half \udc80 surrogate"}, "not valid text"),
    ],
)
def test_bad_input_is_refused_and_nothing_is_written(
    hermes_home: Path, updates: dict[str, str | None], problem: str
) -> None:
    path = hermes_home / ".env"
    path.write_text("KEEP=1\n")
    with pytest.raises(ConfigError, match=problem):
        write_dotenv(updates)
    assert path.read_text() == "KEEP=1\n"
    assert sorted(p.name for p in hermes_home.iterdir()) == [".env"]


def test_a_symlinked_file_is_updated_where_it_points(hermes_home: Path, tmp_path: Path) -> None:
    target = tmp_path / "shared.env"
    target.write_text("OTHER=1\n")
    (hermes_home / ".env").symlink_to(target)
    write_dotenv({"ACME_KEY": "k"})
    assert (hermes_home / ".env").is_symlink()
    assert target.read_text() == "OTHER=1\nACME_KEY=k\n"


_value = st.text(
    alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"), max_size=40
).filter(lambda v: v and v.splitlines() == [v])


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=60)
@given(value=_value, comment=st.sampled_from(["# note", "", "# KEY=looks like a key"]))
def test_any_single_line_value_round_trips(hermes_home: Path, value: str, comment: str) -> None:
    path = hermes_home / ".env"
    path.write_text(f"{comment}\nOTHER=unchanged\n", encoding="utf-8")
    write_dotenv({"ACME_KEY": value})
    assert read_dotenv()["ACME_KEY"] == value
    assert read_dotenv()["OTHER"] == "unchanged"
    assert path.read_text(encoding="utf-8").splitlines()[:2] == [comment, "OTHER=unchanged"]


def _write_keys(home: str, worker: int, count: int) -> None:
    for index in range(count):
        write_dotenv({f"KEY_{worker}_{index}": f"value-{worker}-{index}"}, home)


def test_concurrent_writers_in_several_processes_lose_no_update(hermes_home: Path) -> None:
    (hermes_home / ".env").write_text("# shared\n")
    context = multiprocessing.get_context("fork")
    workers = [
        context.Process(target=_write_keys, args=(str(hermes_home), worker, 15))
        for worker in range(4)
    ]
    for process in workers:
        process.start()
    for process in workers:
        process.join(timeout=60)
        assert process.exitcode == 0
    values = read_dotenv()
    assert values == {f"KEY_{w}_{i}": f"value-{w}-{i}" for w in range(4) for i in range(15)}
    assert (hermes_home / ".env").read_text().startswith("# shared\n")
    assert stat.S_IMODE(os.stat(hermes_home / ".env").st_mode) == 0o600


def test_values_that_need_it_are_quoted_and_escaped(hermes_home: Path) -> None:
    write_dotenv({"SIMPLE": "sk-abc_123.x/y:z@w+v,u=", "SPACED": " a b ", "QUOTES": 'say "hi" \\'})
    assert (hermes_home / ".env").read_text().splitlines() == [
        "SIMPLE=sk-abc_123.x/y:z@w+v,u=",
        'SPACED=" a b "',
        'QUOTES="say \\"hi\\" \\\\"',
    ]
    assert read_dotenv() == {
        "SIMPLE": "sk-abc_123.x/y:z@w+v,u=",
        "SPACED": " a b ",
        "QUOTES": 'say "hi" \\',
    }


def test_other_lines_keep_their_bytes_crlf_bom_and_odd_characters(hermes_home: Path) -> None:
    path = hermes_home / ".env"
    original = (
        "\ufeff# keys \x0c page break\r\n"
        "export\tACME_KEY=old\r\n"
        "WIDE='a\u2028b'\r\n"
        "OLD_MAC=1\rLAST=no newline"
    ).encode()
    path.write_bytes(original)
    assert read_dotenv() == {
        "ACME_KEY": "old",
        "WIDE": "a\u2028b",
        "OLD_MAC": "1",
        "LAST": "no newline",
    }
    write_dotenv({"ACME_KEY": "new", "ADDED": "x"})
    assert (
        path.read_bytes()
        == (
            "\ufeff# keys \x0c page break\r\n"
            "export\tACME_KEY=new\r\n"
            "WIDE='a\u2028b'\r\n"
            "OLD_MAC=1\rLAST=no newline\r\n"
            "ADDED=x\r\n"
        ).encode()
    )


def test_a_value_with_a_variable_reference_is_written_literally(hermes_home: Path) -> None:
    # Hermes expands ${VAR} inside double quotes when it loads .env: single quotes keep it
    write_dotenv({"TEMPLATE": "pre${HOME}post", "BOTH": "it's ${HOME}"})
    assert (hermes_home / ".env").read_text().splitlines() == [
        "TEMPLATE='pre${HOME}post'",
        'BOTH="it\'s ${HOME}"',
    ]
    assert read_dotenv() == {"TEMPLATE": "pre${HOME}post", "BOTH": "it's ${HOME}"}


def test_pathological_lines_are_read_in_one_pass(hermes_home: Path) -> None:
    # a scan that backtracks over each whitespace run or escape never finishes on these
    (hermes_home / ".env").write_text(
        "SPACES=x" + " \t" * 200_000 + "y\n"
        'ESCAPES="' + "\\y" * 200_000 + '"\n'
        'OPEN="' + "\\y" * 200_000 + "\n"
    )
    values = read_dotenv()
    assert values["SPACES"] == "x" + " \t" * 200_000 + "y"
    assert values["ESCAPES"] == "y" * 200_000
    assert values["OPEN"] == '"' + "\\y" * 200_000


@pytest.mark.parametrize("kind", ["fifo", "device", "loop"])
def test_a_file_that_is_not_a_regular_file_is_refused_not_read_forever(
    hermes_home: Path, kind: str
) -> None:
    path = hermes_home / ".env"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "device":
        path.symlink_to("/dev/zero")
    else:
        path.symlink_to(path)
    expected = "Too many levels" if kind == "loop" else "not a regular file"
    with pytest.raises(ConfigError, match=expected):
        read_dotenv()
    with pytest.raises(ConfigError, match=expected):
        write_dotenv({"ACME_KEY": "k"})


def test_a_hermes_home_that_is_a_file_is_a_config_error(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.write_text("not a folder")
    assert read_dotenv(home) == {}
    with pytest.raises(ConfigError, match=r"Cannot write .*home/\.env.*writable folder"):
        write_dotenv({"ACME_KEY": "k"}, home)
    assert home.read_text() == "not a folder"


def _write_past_file_size_limit(home: str, limit: int) -> None:
    """Write a value bigger than *limit* bytes with files capped at *limit* (a full disk)."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    try:
        write_dotenv({"BIG_KEY": "v" * (2 * limit)}, home)
    except ConfigError as exc:
        assert "the file was not changed" in str(exc), exc
        assert "vvvv" not in str(exc)
        os._exit(0)
    os._exit(1)


def test_a_failed_write_leaves_the_file_whole_and_no_temp_file(hermes_home: Path) -> None:
    path = hermes_home / ".env"
    path.write_text("# keep me\nACME_KEY=original\n")
    context = multiprocessing.get_context("fork")
    child = context.Process(target=_write_past_file_size_limit, args=(str(hermes_home), 4096))
    child.start()
    child.join(timeout=60)
    assert child.exitcode == 0
    assert path.read_text() == "# keep me\nACME_KEY=original\n"
    assert sorted(p.name for p in hermes_home.iterdir()) == [".env", ".env.lock"]
