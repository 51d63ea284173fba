"""Secrets in ``$HERMES_HOME/.env``: API keys stay out of ``config.yaml``.

The file holds ``KEY=value`` lines in the format Hermes Agent reads and
writes: blank lines and ``#`` comments, an optional ``export`` prefix, a value
bare (a `` #`` after whitespace starts a comment) or in single or double quotes
(``\\"`` and ``\\\\`` escapes inside double quotes). Lines end at ``\\n``,
``\\r\\n`` or ``\\r``. :func:`get_secret` reads a key from the process environment
first, then from the file. :func:`write_dotenv` sets or removes keys in place:
other lines stay byte for byte as they were (line endings and a UTF-8 BOM
included), the file is replaced atomically with mode 0600, and concurrent
writers (threads or processes) take turns on a lock file, each re-reading the
file under the lock.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path

from hermes_core.config import get_hermes_home, replacing, write_text_atomically
from hermes_core.errors import ConfigError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: threads are still serialised
    fcntl = None  # type: ignore[assignment]

__all__ = ["DOTENV_FILENAME", "dotenv_path", "get_secret", "read_dotenv", "write_dotenv"]

DOTENV_FILENAME = ".env"

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_BARE = re.compile(r"[A-Za-z0-9_./:@+,=-]+")  # written without quotes
_EXPORT = re.compile(r"export[ \t]+")
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")  # one line with its ending
_DOUBLE_QUOTED = re.compile(r'"((?:[^"\\]+|\\.)*)"')
_COMMENT = re.compile(r"\s#")
_BOM = "\ufeff"
_write_lock = threading.Lock()


def dotenv_path(hermes_home: str | os.PathLike[str] | None = None) -> Path:
    """Path of ``.env`` inside *hermes_home* (default: the active ``HERMES_HOME``)."""
    home = Path(hermes_home) if hermes_home is not None else get_hermes_home()
    return home / DOTENV_FILENAME


def _split(line: str) -> tuple[str, str]:
    """``(key, raw value)`` of a ``KEY=value`` line; ``("", "")`` for anything else."""
    text = line.strip()
    export = _EXPORT.match(text)
    if export:
        text = text[export.end() :]
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not _NAME.fullmatch(key):
        return "", ""
    return key, raw


def _decode(raw: str) -> str:
    """The value a raw ``.env`` value stands for (quotes, escapes and comments removed)."""
    value = raw.strip()
    if not value or value[0] not in "'\"":
        comment = _COMMENT.search(value)
        return value[: comment.start()].rstrip() if comment else value
    if value[0] == "'":
        end = value.find("'", 1)
        return value if end < 0 else value[1:end]  # no closing quote: keep the text as written
    quoted = _DOUBLE_QUOTED.match(value)
    if quoted is None:
        return value
    # a backslash escapes the character after it, a doubled backslash stands for one
    return "\\".join(part.replace("\\", "") for part in quoted.group(1).split("\\\\"))


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
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"Cannot read {path}: not valid UTF-8 at byte {exc.start}. Save it as UTF-8 text."
        ) from exc


def _lines(text: str) -> list[str]:
    """*text* cut into lines, each with its line ending (the last one may have none)."""
    return _LINE.findall(text.removeprefix(_BOM))


def read_dotenv(hermes_home: str | os.PathLike[str] | None = None) -> dict[str, str]:
    """Every ``KEY=value`` of ``$HERMES_HOME/.env`` (a later line wins); ``{}`` when absent.

    Raises :class:`ConfigError` naming the file when it exists but cannot be read.
    """
    values: dict[str, str] = {}
    for line in _lines(_read_text(dotenv_path(hermes_home))):
        key, raw = _split(line)
        if key:
            values[key] = _decode(raw)
    return values


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


def _check_name(name: str) -> None:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ConfigError(
            f"{name!r} is not a valid .env key: use letters, digits and '_' "
            "(not starting with a digit), for example ACME_API_KEY."
        )


def _encode(name: str, value: str) -> str:
    """*value* as it must be written so that :func:`read_dotenv` gives it back."""
    if not isinstance(value, str):
        raise ConfigError(f"The value of {name} must be text, got {type(value).__name__}.")
    if "\n" in value or "\r" in value:
        raise ConfigError(
            f"The value of {name} contains a line break; a .env value must be a single line."
        )
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
    if _BARE.fullmatch(value):
        return value
    if "${" in value and "'" not in value:
        return f"'{value}'"  # single quotes: Hermes expands ${VAR} inside double quotes
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Serialise writers of *path* across threads and processes."""
    with _write_lock:
        if fcntl is None:  # pragma: no cover
            yield
            return
        lock_path = path.with_name(f"{path.name}.lock")
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing releases the lock


def write_dotenv(
    updates: Mapping[str, str | None], hermes_home: str | os.PathLike[str] | None = None
) -> Path:
    """Set each key of *updates* in ``$HERMES_HOME/.env``; ``None`` or "" removes the key.

    A key already in the file keeps its place, its ``export`` prefix and its line
    ending; a repeated key is reduced to one line, new keys are appended; every
    other line, comments included, is kept byte for byte. Every key and value is
    checked before the file is touched: a bad one raises :class:`ConfigError`
    and writes nothing. The file is replaced atomically and left with mode 0600;
    a failure to write (read-only folder, full disk) raises :class:`ConfigError`
    and leaves the file as it was. A symlinked ``.env`` is updated where it
    points. Returns the path written.
    """
    for name in updates:
        _check_name(name)
    encoded = {
        name: None if value is None or value == "" else _encode(name, value)
        for name, value in updates.items()
    }
    with replacing(dotenv_path(hermes_home)) as path, _locked(path):
        text = _updated(_read_text(path), encoded)
        write_text_atomically(path, text, mode=0o600)
    return path


def _updated(text: str, encoded: Mapping[str, str | None]) -> str:
    """*text* of a ``.env`` with the keys of *encoded* set (or removed when ``None``)."""
    lines = _lines(text)
    ending = next((_ending(line) for line in lines if _ending(line)), "\n")
    if lines and not _ending(lines[-1]):
        lines[-1] += ending
    pending = dict(encoded)
    seen: set[str] = set()
    out: list[str] = [_BOM] if text.startswith(_BOM) else []
    for line in lines:
        key = _split(line)[0]
        if key not in encoded:
            out.append(line)
            continue
        if key in seen:
            continue  # a duplicate of a key being set: drop it
        seen.add(key)
        new = pending.pop(key)
        if new is not None:
            export = _EXPORT.match(line.lstrip())
            out.append(f"{export.group() if export else ''}{key}={new}{_ending(line)}")
    out.extend(f"{key}={value}{ending}" for key, value in pending.items() if value is not None)
    return "".join(out)


def _ending(line: str) -> str:
    """The line ending of *line* (``\\n``, ``\\r\\n``, ``\\r``), "" when it has none."""
    return line[len(line.rstrip("\r\n")) :]
