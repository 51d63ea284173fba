"""``$HERMES_HOME/.env``: reading secrets, and updating them in place, atomically, 0600."""

from __future__ import annotations

import multiprocessing
import os
import resource
import signal
import stat
from pathlib import Path

import pytest
from dotenv import dotenv_values
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_core.errors import ConfigError
from hermes_core.secrets import dotenv_path, get_secret, read_dotenv, write_dotenv

PEM = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg\nNOT_A_KEY=inside\n-----END PRIVATE KEY-----"


def _dotenv(path: Path) -> dict[str, str]:
    """What python-dotenv's load_dotenv would set from *path*, ${NAME} left as written."""
    values = dotenv_values(path, interpolate=False)
    return {key: value for key, value in values.items() if value is not None}


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
        "1ODD.NAME=kept\n"
        "REPEATED=first\n"
        "REPEATED=second\n"
        "UNSET=value\n"
        "UNSET\n",
        encoding="utf-8",
    )
    # as python-dotenv reads it: a statement it cannot parse is skipped, any name is a key
    assert read_dotenv() == {
        "PLAIN": "abc",
        "EXPORTED": "single quoted",
        "DOUBLE": 'has # hash and "escapes" \\ here',
        "SPACED": "padded",
        "COMMENTED": "value",
        "HASHED": "abc#def",
        "EQUALS": "a=b==",
        "1ODD.NAME": "kept",
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
        ({"GOOD": "ok", "ACME_KEY": "pre${HOME}post"}, r"\$\{\.\.\.\} reference"),
        ({"ACME_KEY": "${NAME:-default}"}, "in the environment instead"),
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
    values = {
        "SIMPLE": "sk-abc_123.x/y:z@w+v,u=",
        "WINDOWS": "C:\\dir\\",  # bare: python-dotenv < 1.2.3 misreads "C:\\dir\\"
        "SPACED": " a b ",
        "QUOTES": 'say "hi" \\',
    }
    write_dotenv(values)
    assert (hermes_home / ".env").read_text().splitlines() == [
        "SIMPLE=sk-abc_123.x/y:z@w+v,u=",
        "WINDOWS=C:\\dir\\",
        'SPACED=" a b "',
        'QUOTES="say \\"hi\\" \\\\"',
    ]
    assert read_dotenv() == _dotenv(hermes_home / ".env") == values


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


def test_a_variable_reference_is_read_as_written_and_never_written(
    hermes_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # load_dotenv (so Hermes) expands ${NAME} in any quotes; read_dotenv reads the text as written
    monkeypatch.setenv("HERMES_TEST_REF", "expanded")
    path = hermes_home / ".env"
    path.write_text("SINGLE='${HERMES_TEST_REF}'\nDOUBLE=\"${HERMES_TEST_REF}\"\nBARE=${X:-d}\n")
    assert read_dotenv() == {
        "SINGLE": "${HERMES_TEST_REF}",
        "DOUBLE": "${HERMES_TEST_REF}",
        "BARE": "${X:-d}",
    }
    assert dotenv_values(path) == {"SINGLE": "expanded", "DOUBLE": "expanded", "BARE": "d"}
    # so write_dotenv refuses a value Hermes would expand, and writes the near misses as they are
    with pytest.raises(ConfigError, match=r"SINGLE contains a \$\{\.\.\.\} reference"):
        write_dotenv({"SINGLE": "it's ${HERMES_TEST_REF}"})
    near_misses = {"OPEN": "${HERMES_TEST_REF", "COLON": "${A:b}", "DOLLAR": "$HERMES_TEST_REF"}
    write_dotenv(near_misses)
    assert read_dotenv() == dotenv_values(path, interpolate=False)
    assert {key: dotenv_values(path)[key] for key in near_misses} == near_misses


def test_pathological_lines_are_read_in_one_pass(hermes_home: Path) -> None:
    # a scan that backtracks over each escape never finishes on these
    (hermes_home / ".env").write_text(
        'ESCAPES="' + "\\y" * 200_000 + '"\n'
        'OPEN="' + "\\y" * 200_000 + "\n"
        'RUN="' + "a" * 200_000 + "\\\n"  # (?:[^"\\]+|\\.)* would try each way to cut it
        "SPACES=x" + " \t" * 50 + "y\n"
        "AFTER=1\n"
    )
    values = read_dotenv()
    assert values["ESCAPES"] == "\\y" * 200_000  # python-dotenv keeps an unknown escape
    assert values["SPACES"] == "x" + " \t" * 50 + "y"
    assert values["AFTER"] == "1"
    assert "OPEN" not in values and "RUN" not in values  # a quote never closed: skipped


def test_a_run_of_blanks_python_dotenv_reads_for_minutes_is_refused_by_line(
    hermes_home: Path,
) -> None:
    # python-dotenv's bare-value reading is quadratic in such a run: 400,000 blanks take minutes
    path = hermes_home / ".env"
    original = "A=1\nSPACES=x" + " \t" * 200_000 + "y\n"
    path.write_text(original)
    with pytest.raises(ConfigError, match=r"\.env: line 2 holds more than 100 spaces or tabs"):
        read_dotenv()
    with pytest.raises(ConfigError, match=r"line 2 holds more than 100 spaces"):
        write_dotenv({"A": "2"})
    with pytest.raises(ConfigError, match=r"The value of B holds more than 100 spaces"):
        write_dotenv({"B": "x" + " " * 101 + "y"})
    assert path.read_text() == original


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


# -- as python-dotenv reads it: multi-line values, escapes, and writing them back -------------


def test_a_quoted_value_spanning_lines_is_one_value(hermes_home: Path) -> None:
    path = hermes_home / ".env"
    path.write_bytes(
        (
            f'PRIVATE_KEY="{PEM}"\n'
            'CREDENTIALS=\'{\r\n  "type": "service_account",\r\n  "id": "x=1"\r\n}\'\r\n'
            "AFTER=1\n"
        ).encode()
    )
    assert (
        read_dotenv()
        == _dotenv(path)
        == {
            "PRIVATE_KEY": PEM,
            "CREDENTIALS": '{\n  "type": "service_account",\n  "id": "x=1"\n}',
            "AFTER": "1",
        }
    )


def test_escapes_are_decoded_as_python_dotenv_decodes_them(hermes_home: Path) -> None:
    path = hermes_home / ".env"
    path.write_text(
        'DOUBLE="a\\nb\\tc\\\\d\\"e\\\'f\\qg"\n'  # "a\nb\tc\\d\"e\'f\qg"
        "SINGLE='a\\nb\\\\c\\'d'\n"  # 'a\nb\\c\'d'
        "BARE=a\\nb\n"
    )
    assert (
        read_dotenv()
        == _dotenv(path)
        == {
            "DOUBLE": "a\nb\tc\\d\"e'f\\qg",  # an unknown escape keeps its backslash
            "SINGLE": "a\\nb\\c'd",  # only \\ and \' are escapes in single quotes
            "BARE": "a\\nb",
        }
    )


def test_a_value_spanning_lines_is_replaced_and_removed_whole(hermes_home: Path) -> None:
    path = hermes_home / ".env"
    path.write_text(f"# keys\nexport PRIVATE_KEY=\"{PEM}\"\nOTHER=1\nGONE='a\nB=b'\nLAST=2\n")
    write_dotenv({"PRIVATE_KEY": "new", "GONE": None})
    assert path.read_text() == "# keys\nexport PRIVATE_KEY=new\nOTHER=1\nLAST=2\n"
    assert read_dotenv() == _dotenv(path) == {"PRIVATE_KEY": "new", "OTHER": "1", "LAST": "2"}


def test_a_value_with_line_breaks_is_written_on_one_line_and_read_back(hermes_home: Path) -> None:
    path = hermes_home / ".env"
    path.write_text("OTHER=1\n")
    write_dotenv({"PRIVATE_KEY": PEM, "MIXED": "a\r\nb\rc\\n"})
    assert path.read_bytes().decode().split("\n") == [
        "OTHER=1",
        'PRIVATE_KEY="' + PEM.replace("\n", "\\n") + '"',
        'MIXED="a\\r\\nb\\rc\\\\n"',
        "",
    ]
    assert (
        read_dotenv()
        == _dotenv(path)
        == {"OTHER": "1", "PRIVATE_KEY": PEM, "MIXED": "a\r\nb\rc\\n"}
    )


def test_a_key_without_a_value_unsets_it_and_every_binding_is_replaced(hermes_home: Path) -> None:
    path = hermes_home / ".env"
    path.write_text("ACME_KEY=old\nOTHER=1\nACME_KEY\n")
    assert read_dotenv() == _dotenv(path) == {"OTHER": "1"}
    write_dotenv({"ACME_KEY": "new"})
    assert path.read_text() == "ACME_KEY=new\nOTHER=1\n"


def test_a_quote_never_closed_that_would_take_in_new_lines_is_named(hermes_home: Path) -> None:
    path = hermes_home / ".env"
    original = 'A=1\nBROKEN="no closing quote\nB=2\n'
    path.write_text(original)
    assert read_dotenv() == _dotenv(path) == {"A": "1", "B": "2"}
    with pytest.raises(ConfigError, match=r"quote opened on line 2 is never closed.*not changed"):
        write_dotenv({"NEW": "two words"})
    assert path.read_text() == original
    write_dotenv({"NEW": "bare", "B": "3"})  # nothing quoted: the broken statement stays apart
    assert read_dotenv() == _dotenv(path) == {"A": "1", "B": "3", "NEW": "bare"}


def test_a_lone_quote_that_would_open_a_key_is_named_too(hermes_home: Path) -> None:
    # A lone ' starts a quoted key in python-dotenv's grammar; a new value holding a quote
    # would close it and read everything between as one key (hypothesis found this).
    path = hermes_home / ".env"
    path.write_text("A=1\n'")  # no line ending after the quote
    with pytest.raises(ConfigError, match=r"quote opened on line 2 is never closed.*not changed"):
        write_dotenv({"ACME_KEY": "'"})
    assert path.read_text() == "A=1\n'"


# -- properties, with python-dotenv as the oracle ----------------------------------------------

_LINE_ENDING = st.sampled_from(["\n", "\r\n", "\r"])
_NAMES = ["ACME_KEY", "A", "b2", "export", "1BAD", "a.b", "é", "'quoted key'", "''"]


def _quoted(quote: str) -> st.SearchStrategy[str]:
    """A value in *quote*: any text, escapes known and unknown, raw line breaks."""
    piece = st.one_of(
        st.text(st.characters(exclude_categories=["Cs"], exclude_characters=quote + "\\")),
        st.sampled_from(["\\n", "\\t", "\\\\", '\\"', "\\'", "\\a", "\\q", "\n", "\r\n", "\r"]),
        st.sampled_from(["NAME=value", "# not a comment", "${A}", "é\u2028\x85\x0b"]),
    )
    return st.lists(piece, max_size=5).map(lambda parts: quote + "".join(parts) + quote)


_BARE_TEXT = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\r\n"))
_STATEMENT = st.one_of(
    st.sampled_from(["", "  ", "# comment", "  # KEY=not a key", "not a statement", "ACME_KEY"]),
    st.builds(
        "".join,
        st.tuples(
            st.sampled_from(["", " ", "\t"]),
            st.sampled_from(["", "export ", "export\t"]),
            st.sampled_from(_NAMES),
            st.sampled_from(["=", " = ", "=\t", "= "]),
            st.one_of(
                _quoted('"'),
                _quoted("'"),
                _BARE_TEXT,  # may hold ' #', '#', quotes, trailing spaces
                st.sampled_from(['"never closed', "'never closed", "# comment", "#hash"]),
            ),
            st.sampled_from(["", "  # note", " junk", "\t"]),
        ),
    ),
)
_STRUCTURED = st.builds(
    lambda bom, lines, last: bom + "".join(text + ending for text, ending in lines) + last,
    st.sampled_from(["", "\ufeff"]),
    st.lists(st.tuples(_STATEMENT, _LINE_ENDING), max_size=8),
    st.one_of(st.just(""), _STATEMENT),  # a last line without a line ending
)
_SOUP = ["ACME_KEY", "A", "export ", " ", "\t", "=", "'", '"', "\\", "#", "\n", "\r\n", "\r"]
_SOUP += ["\\n", "é", "\u2028", "\x85", "\x0b", "\x00", "\ufeff", "${A}", "x y"]
_DOTENV_TEXT = st.one_of(_STRUCTURED, st.lists(st.sampled_from(_SOUP), max_size=30).map("".join))
_NEW_VALUE = st.one_of(
    st.none(),
    st.just(""),
    st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00")).filter(
        lambda value: "${" not in value
    ),
    st.sampled_from([PEM, "a\r\nb", "ends in \\", 'say "hi"', " padded ", "it's", "a # b"]),
)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=200)
@given(text=_DOTENV_TEXT)
def test_reads_every_file_as_python_dotenv_does(hermes_home: Path, text: str) -> None:
    path = hermes_home / ".env"
    path.write_bytes(text.encode("utf-8"))
    assert read_dotenv() == _dotenv(path)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=150)
@given(
    text=_DOTENV_TEXT,
    updates=st.dictionaries(
        st.sampled_from(["ACME_KEY", "A", "b2", "NEW_KEY"]), _NEW_VALUE, min_size=1, max_size=3
    ),
)
def test_what_is_written_reads_back_the_same_in_python_dotenv(
    hermes_home: Path, text: str, updates: dict[str, str | None]
) -> None:
    path = hermes_home / ".env"
    path.write_bytes(text.encode("utf-8"))
    before = read_dotenv()
    try:
        write_dotenv(updates)
    except ConfigError as exc:  # a quote never closed would take in the new lines
        assert "is never closed" in str(exc)
        assert path.read_bytes() == text.encode("utf-8")
        return
    kept = {key: value for key, value in before.items() if key not in updates}
    written = {key: value for key, value in updates.items() if value}
    assert read_dotenv() == _dotenv(path) == kept | written
    loaded = dotenv_values(path)  # as Hermes loads it: ${NAME} expanded, and none written
    assert {key: loaded[key] for key in written} == written
    if not any(key in text for key in updates):  # only appended: the file before is untouched
        assert path.read_bytes().startswith(text.encode("utf-8"))


def test_only_one_byte_order_mark_is_skipped_as_python_dotenv_skips_it(hermes_home: Path) -> None:
    path = hermes_home / ".env"
    path.write_text("\ufeff\ufeffA=1\nB=2\n", encoding="utf-8")
    assert read_dotenv() == _dotenv(path) == {"\ufeffA": "1", "B": "2"}
    write_dotenv({"B": "3", "C": "x"})
    assert path.read_text(encoding="utf-8") == "\ufeff\ufeffA=1\nB=3\nC=x\n"
    assert read_dotenv() == _dotenv(path)
