"""Secrets in ``$HERMES_HOME/.env``: API keys stay out of ``config.yaml``.

Hermes Agent reads this file with python-dotenv, and so does this module: it
parses with python-dotenv's own parser, and a key's value is what
``dotenv_values(path, interpolate=False)`` gives. A statement python-dotenv
cannot parse (a quote never closed, text after a closing quote) is skipped, a
later line for the same key wins, and a bare ``KEY`` without ``=`` unsets it,
as ``load_dotenv`` does. A line break inside a quoted value reads as ``\\n``
(python-dotenv reads with universal newlines). ``${NAME}`` is not expanded:
values are read as written, whatever the environment holds, as Hermes' own
``.env`` reader does (its ``load_dotenv`` at start-up expands them, which is why
:func:`write_dotenv` refuses to write one). A file holding more than
:data:`MAX_BLANK_RUN` spaces or tabs in a row is refused by line: python-dotenv
would take minutes over it.

:func:`get_secret` reads a key from the process environment first, then from
the file. :func:`write_dotenv` sets or removes keys in place: a key bound over
several lines is replaced or removed whole, other lines stay byte for byte as
they were (line endings and a UTF-8 BOM included), each value is written on one
line so that python-dotenv reads it back exactly, the file is replaced
atomically with mode 0600, and concurrent writers (threads or processes) take
turns on a lock file, each re-reading the file under the lock.
"""

from __future__ import annotations

import io
import os
import re
import stat
from collections import ChainMap
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import NamedTuple

from hermes_core.errors import ConfigError
from hermes_core.home import file_lock, get_hermes_home, replacing, write_text_atomically

__all__ = ["DOTENV_FILENAME", "dotenv_path", "get_secret", "read_dotenv", "write_dotenv"]

DOTENV_FILENAME = ".env"

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Written without quotes. A backslash too: python-dotenv before 1.2.3 (Hermes pins 1.2.2) reads
# a quoted value ending in an escaped backslash, "C:\\dir\\", past its closing quote.
_BARE = re.compile(r"[A-Za-z0-9_./:@+,=\\-]+")
_EXPORT = re.compile(r"(?:export[^\S\r\n]+)?")  # python-dotenv's, to keep the prefix as written
_ESCAPED = str.maketrans({"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r"})
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_REFERENCE = re.compile(r"\$\{[^}:]*(?::-[^}]*)?\}")  # what python-dotenv's load_dotenv expands
_BOM = "\ufeff"

MAX_BLANK_RUN = 100
"""Spaces and tabs in a row that a ``.env`` may hold: python-dotenv's reading of a bare value
takes time that grows with the square of such a run (400,000 of them take minutes)."""
_LONG_BLANK_RUN = re.compile(rf"[^\S\r\n]{{{MAX_BLANK_RUN + 1}}}")


def dotenv_path(hermes_home: str | os.PathLike[str] | None = None) -> Path:
    """Path of ``.env`` inside *hermes_home* (default: the active ``HERMES_HOME``)."""
    home = Path(hermes_home) if hermes_home is not None else get_hermes_home()
    return home / DOTENV_FILENAME


class _Statement(NamedTuple):
    """One statement of a ``.env`` text, as python-dotenv's parser cuts it."""

    key: str | None  # None: blank lines, a comment, or a statement that does not parse
    value: str | None  # None: a key without "=" (python-dotenv's "variable without a value")
    start: int  # where the line holding the key (or the statement) starts
    end: int  # after the statement's last line ending
    export: str  # the "export " prefix as written
    text: str  # the statement as written, from *start*
    error: bool  # python-dotenv could not parse it (and skips it)


def _statements(text: str) -> Iterator[_Statement]:
    """Every statement of *text* (a ``.env``), in order, placed by offsets into *text*."""
    from dotenv.parser import parse_stream  # imported here: most commands never read .env

    pos = len(text) - len(text.removeprefix(_BOM))  # python-dotenv skips one BOM itself
    for binding in parse_stream(io.StringIO(text, newline="")):
        written = binding.original.string
        body = written.lstrip()
        lead = len(written) - len(body)
        line_start = max(written.rfind("\n", 0, lead), written.rfind("\r", 0, lead)) + 1
        export = _EXPORT.match(body)
        yield _Statement(
            key=binding.key,
            value=binding.value,
            start=pos + line_start,
            end=pos + len(written),
            export=export.group() if export and binding.key is not None else "",
            text=written[line_start:],
            error=binding.error,
        )
        pos += len(written)


def _values(text: str) -> dict[str, str]:
    """The keys *text* sets and their values, as ``load_dotenv`` would set them.

    python-dotenv reads a file with universal newlines, so a line break inside a
    quoted value reads as ``\\n`` whatever the file holds.
    """
    values: dict[str, str] = {}
    for statement in _statements(_LINE_BREAK.sub("\n", text)):
        if statement.key is None:
            continue
        if statement.value is None:
            values.pop(statement.key, None)
        else:
            values[statement.key] = statement.value
    return values


def _opens_a_quote_never_closed(statement: _Statement) -> bool:
    """Whether *statement*, which python-dotenv cannot parse, parses once a quote is closed
    (a quote that opens a key, as a lone ``'`` does, needs a character before it closes)."""
    from dotenv.parser import parse_stream

    return statement.error and any(
        not binding.error
        for quote in "\"'"
        for filler in ("", "x")
        for binding in parse_stream(io.StringIO(f"{statement.text}{filler}{quote}\n", newline=""))
    )


def _read_text(path: Path) -> str:
    """The text of *path* as stored (BOM and line endings kept); "" when it does not exist.

    Only a regular file is read: a directory, FIFO or device (a symlink to
    ``/dev/zero``) is refused rather than read forever.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except (FileNotFoundError, NotADirectoryError):
        return ""
    except OSError as exc:
        raise ConfigError(
            f"Cannot read {path}: {exc.strerror or exc}. Fix the file or its permissions."
        ) from exc
    try:
        kind = os.fstat(fd).st_mode
        if stat.S_ISDIR(kind):
            raise ConfigError(
                f"Cannot read {path}: it is a directory, not a file. Move it aside and retry."
            )
        if not stat.S_ISREG(kind):
            raise ConfigError(
                f"Cannot read {path}: it is not a regular file. Replace it with a text "
                "file of KEY=value lines."
            )
        with os.fdopen(os.dup(fd), "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise ConfigError(
            f"Cannot read {path}: {exc.strerror or exc}. Fix the file or its permissions."
        ) from exc
    finally:
        os.close(fd)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"Cannot read {path}: not valid UTF-8 at byte {exc.start}. Save it as UTF-8 text."
        ) from exc
    long_run = _LONG_BLANK_RUN.search(text)
    if long_run:
        line = len(_LINE_BREAK.findall(text, 0, long_run.start())) + 1
        raise ConfigError(
            f"Cannot read {path}: line {line} holds more than {MAX_BLANK_RUN} spaces or tabs "
            "in a row, which python-dotenv (and so Hermes) can take minutes to read. Remove "
            "them and retry."
        )
    return text


def read_dotenv(hermes_home: str | os.PathLike[str] | None = None) -> dict[str, str]:
    """The keys ``$HERMES_HOME/.env`` sets and their values; ``{}`` when it does not exist.

    These are python-dotenv's ``dotenv_values(path, interpolate=False)`` less the
    keys it reads as ``None`` (a ``KEY`` without ``=``), which ``load_dotenv`` does
    not set. Raises :class:`ConfigError` naming the file when it exists but cannot
    be read.
    """
    return _values(_read_text(dotenv_path(hermes_home)))


def get_secret(
    *names: str,
    hermes_home: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> str:
    """The first non-blank value of *names* in the environment, else in ``.env``; "" if none.

    Every name is looked up in *environ* (default ``os.environ``) before any is
    looked up in the file, so a variable exported in the shell always wins.
    The value is stripped of surrounding whitespace.
    """
    env = os.environ if environ is None else environ
    for name in names:
        value = env.get(name, "").strip()
        if value:
            return value
    stored = read_dotenv(hermes_home)
    for name in names:
        value = stored.get(name, "").strip()
        if value:
            return value
    return ""


def profile_environ(hermes_home: str | os.PathLike[str] | None = None) -> Mapping[str, str]:
    """The environment as the profile sees it: ``os.environ``, then ``$HERMES_HOME/.env``.

    Hermes Agent keeps API keys in ``.env`` and loads it at start-up; a variable
    exported in the shell still wins. Raises :class:`ConfigError` when ``.env``
    exists but cannot be read.
    """
    return ChainMap(os.environ, read_dotenv(hermes_home))


def _check_name(name: str) -> None:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ConfigError(
            f"{name!r} is not a valid .env key: use letters, digits and '_' "
            "(not starting with a digit), for example ACME_API_KEY."
        )


def _encode(name: str, value: str) -> str:
    """*value* as written on one line so that python-dotenv (and :func:`read_dotenv`) reads it back.

    A value ``load_dotenv`` would expand is refused: no quoting keeps Hermes from
    expanding it.
    """
    if not isinstance(value, str):
        raise ConfigError(f"The value of {name} must be text, got {type(value).__name__}.")
    if "\x00" in value:
        raise ConfigError(
            f"The value of {name} contains a NUL character, which no environment variable "
            "can hold. Check that the value was copied whole."
        )
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ConfigError(
            f"The value of {name} is not valid text (an unpaired surrogate at position "
            f"{exc.start}). Check that the value was copied whole."
        ) from exc
    if _LONG_BLANK_RUN.search(value):
        raise ConfigError(
            f"The value of {name} holds more than {MAX_BLANK_RUN} spaces or tabs in a row, "
            "which python-dotenv (and so Hermes) can take minutes to read. Shorten them."
        )
    if _REFERENCE.search(value):
        raise ConfigError(
            f"The value of {name} contains a ${{...}} reference, which Hermes replaces with "
            "the variable's value when it loads .env (python-dotenv does so whatever the "
            f"quoting), so it would not arrive as written. Set {name} in the environment instead."
        )
    if _BARE.fullmatch(value):
        return value
    return '"' + value.translate(_ESCAPED) + '"'  # line breaks as \n and \r escapes


def write_dotenv(
    updates: Mapping[str, str | None], hermes_home: str | os.PathLike[str] | None = None
) -> Path:
    """Set each key of *updates* in ``$HERMES_HOME/.env``; ``None`` or "" removes the key.

    A key already in the file keeps its place, its ``export`` prefix and its line
    ending; a key bound over several lines (a quoted value with line breaks) is
    replaced or removed whole; a repeated key is reduced to one binding, new keys
    are appended; every other line, comments included, is kept byte for byte.
    A value is written on one line (a line break as a ``\\n`` escape in double
    quotes) that python-dotenv reads back exactly. Every key and value is checked
    before the file is touched: a bad one raises :class:`ConfigError` and writes
    nothing, as does a quote in the file that is never closed and would take in
    the new lines. The file is replaced atomically and left with mode 0600; a
    failure to write (read-only folder, full disk) raises :class:`ConfigError` and
    leaves the file as it was. A symlinked ``.env`` is updated where it points.
    Returns the path written.
    """
    for name in updates:
        _check_name(name)
    wanted = {
        name: None if value is None or value == "" else value for name, value in updates.items()
    }
    encoded = {
        name: None if value is None else _encode(name, value) for name, value in wanted.items()
    }
    with replacing(dotenv_path(hermes_home)) as path, file_lock(path):
        old = _read_text(path)
        new = _updated(old, encoded)
        _check_reads_back(path, old, new, wanted)
        write_text_atomically(path, new, mode=0o600)
    return path


def _updated(text: str, encoded: Mapping[str, str | None]) -> str:
    """*text* of a ``.env`` with the keys of *encoded* set (or removed when ``None``)."""
    bom = _BOM if text.startswith(_BOM) else ""
    body = text.removeprefix(_BOM)
    first_break = _LINE_BREAK.search(body)
    ending = first_break.group() if first_break else "\n"
    if body and not _ending(body):
        body += ending
    pending = dict(encoded)
    out = [bom]
    kept = 0  # body[:kept] is already in out
    for statement in _statements(body):
        key = statement.key
        if key is None or key not in encoded:
            continue
        out.append(body[kept : statement.start])
        kept = statement.end
        if key in pending:  # the first binding of the key: later ones are dropped
            new = pending.pop(key)
            if new is not None:
                line_ending = _ending(body[statement.start : statement.end])
                out.append(f"{statement.export}{key}={new}{line_ending}")
    out.append(body[kept:])
    out.extend(f"{key}={value}{ending}" for key, value in pending.items() if value is not None)
    return "".join(out)


def _check_reads_back(path: Path, old: str, new: str, wanted: Mapping[str, str | None]) -> None:
    """Raise :class:`ConfigError` unless *new* reads as *old* with *wanted* set."""
    expected = _values(old)
    for name, value in wanted.items():
        if value is None:
            expected.pop(name, None)
        else:
            expected[name] = value
    if _values(new) == expected:
        return
    # Only a quote never closed reads past its own statement, so one takes in the new lines.
    body = old.removeprefix(_BOM)
    pos = next(s.start for s in _statements(body) if _opens_a_quote_never_closed(s))
    line = len(_LINE_BREAK.findall(body, 0, pos)) + 1
    raise ConfigError(
        f"Cannot update {path}: the quote opened on line {line} is never closed, so "
        "python-dotenv (and Hermes) would read the new lines as part of its value. Close or "
        "remove that quote and retry; the file was not changed."
    )


def _ending(text: str) -> str:
    """The line ending *text* ends with (``\\n``, ``\\r\\n``, ``\\r``), "" when none."""
    return text[len(text.rstrip("\r\n")) :]
