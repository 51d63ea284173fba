"""Secrets in ``$HERMES_HOME/.env``: API keys stay out of ``config.yaml``.

The file holds ``KEY=value`` lines in the format Hermes Agent reads and
writes: blank lines and ``#`` comments, an optional ``export`` prefix, a value
bare (a `` #`` after whitespace starts a comment) or in single or double quotes
(``\\"`` and ``\\\\`` escapes inside double quotes). :func:`get_secret` reads a
key from the process environment first, then from the file. :func:`write_dotenv`
sets or removes keys in place: other lines stay as they were, the file is
replaced atomically with mode 0600, and concurrent writers (threads or
processes) take turns on a lock file, each re-reading the file under the lock.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path

from hermes_core.config import get_hermes_home, write_text_atomically
from hermes_core.errors import ConfigError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: threads are still serialised
    fcntl = None  # type: ignore[assignment]

__all__ = ["DOTENV_FILENAME", "dotenv_path", "get_secret", "read_dotenv", "write_dotenv"]

DOTENV_FILENAME = ".env"

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_BARE = re.compile(r"[A-Za-z0-9_./:@+,=-]+")  # written without quotes
_write_lock = threading.Lock()


def dotenv_path(hermes_home: str | os.PathLike[str] | None = None) -> Path:
    """Path of ``.env`` inside *hermes_home* (default: the active ``HERMES_HOME``)."""
    home = Path(hermes_home) if hermes_home is not None else get_hermes_home()
    return home / DOTENV_FILENAME


def _split(line: str) -> tuple[str, str]:
    """``(key, raw value)`` of a ``KEY=value`` line; ``("", "")`` for anything else."""
    text = line.strip()
    if text.startswith("export "):
        text = text.removeprefix("export ").lstrip()
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not _NAME.fullmatch(key):
        return "", ""
    return key, raw


def _decode(raw: str) -> str:
    """The value a raw ``.env`` value stands for (quotes, escapes and comments removed)."""
    value = raw.strip()
    if not value or value[0] not in "'\"":
        return re.split(r"\s+#", value, maxsplit=1)[0]
    quote, end = value[0], 1
    while end < len(value) and value[end] != quote:
        end += 2 if quote == '"' and value[end] == "\\" else 1
    if end >= len(value):  # no closing quote: keep the text as written
        return value
    inner = value[1:end]
    return re.sub(r"\\(.)", r"\1", inner) if quote == '"' else inner


def _read_lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8-sig").splitlines()
    except (FileNotFoundError, NotADirectoryError):
        return []
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"Cannot read {path}: {exc}. Fix the file or its permissions.") from exc


def read_dotenv(hermes_home: str | os.PathLike[str] | None = None) -> dict[str, str]:
    """Every ``KEY=value`` of ``$HERMES_HOME/.env`` (a later line wins); ``{}`` when absent.

    Raises :class:`ConfigError` naming the file when it exists but cannot be read.
    """
    values: dict[str, str] = {}
    for line in _read_lines(dotenv_path(hermes_home)):
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
    if value.splitlines() != [value]:
        raise ConfigError(
            f"The value of {name} contains a line break; a .env value must be a single line."
        )
    if _BARE.fullmatch(value):
        return value
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

    A key already in the file keeps its place (and its ``export`` prefix), a
    repeated key is reduced to one line, new keys are appended; every other line,
    comments included, is kept as it was. Every key and value is checked before
    the file is touched: a bad one raises :class:`ConfigError` and writes nothing.
    The file is replaced atomically and left with mode 0600. Returns its path.
    """
    for name in updates:
        _check_name(name)
    encoded = {
        name: None if value is None or value == "" else _encode(name, value)
        for name, value in updates.items()
    }
    path = dotenv_path(hermes_home)
    if path.is_symlink():
        path = path.resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    with _locked(path):
        lines = _read_lines(path)
        pending = dict(encoded)
        seen: set[str] = set()
        out: list[str] = []
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
                export = "export " if line.strip().startswith("export ") else ""
                out.append(f"{export}{key}={new}")
        out.extend(f"{key}={value}" for key, value in pending.items() if value is not None)
        write_text_atomically(path, "".join(f"{line}\n" for line in out), mode=0o600)
    return path
