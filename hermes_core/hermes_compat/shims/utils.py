"""``utils``: the file and environment helpers Hermes Agent plugins import.

Writes are atomic (a temporary file in the same directory, fsync, rename) and
leave no temporary file behind on failure. An explicit *mode* (``0o600`` for
secrets) is applied before the rename; without one an existing file keeps its
permission bits and a new file gets the ones ``open(path, "w")`` would give it.
"""

import json
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, NoReturn

from hermes_core.config import TRUTHY_STRINGS, is_truthy
from hermes_core.hermes_compat.finder import missing_attribute

__hermes_compat__ = True

__all__ = [
    "TRUTHY_STRINGS",
    "atomic_json_write",
    "atomic_write_text",
    "atomic_yaml_write",
    "env_bool",
    "env_float",
    "env_int",
    "env_var_enabled",
    "is_truthy_value",
    "read_json_or_empty",
    "safe_json_loads",
]


def is_truthy_value(value: Any, default: bool = False) -> bool:
    """``True`` for True, non-zero numbers and ``1/true/yes/on``; *default* for None."""
    return is_truthy(value, default)


def env_var_enabled(name: str, default: str = "") -> bool:
    """Whether environment variable *name* holds a truthy value."""
    return is_truthy_value(os.environ.get(name, default))


def _env_number(name: str, default: Any, cast: Callable[[str], Any]) -> Any:
    raw = os.environ.get(name, "").strip()
    try:
        return cast(raw) if raw else default
    except ValueError:
        return default


def env_int(name: str, default: int = 0) -> int:
    """Environment variable *name* as an int, *default* when unset or malformed."""
    value: int = _env_number(name, default, int)
    return value


def env_float(name: str, default: float = 0.0) -> float:
    """Environment variable *name* as a float, *default* when unset or malformed."""
    value: float = _env_number(name, default, float)
    return value


def env_bool(name: str, default: bool = False) -> bool:
    """Environment variable *name* as a bool, *default* when unset."""
    return is_truthy_value(os.environ.get(name), default=default)


def safe_json_loads(text: Any, default: Any = None) -> Any:
    """``json.loads(text)``, or *default* when it does not parse."""
    try:
        return json.loads(text)
    except (TypeError, ValueError, RecursionError):
        return default


def read_json_or_empty(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The JSON object in *path*; ``{}`` when missing, unreadable, malformed or not an object."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _new_file_mode() -> int:
    current = os.umask(0o077)
    os.umask(current)
    return 0o666 & ~current


def _atomic_write(path: Path, write: Callable[[IO[str]], object], *, mode: int | None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if mode is None:
        try:
            mode = stat.S_IMODE(path.stat().st_mode)
        except FileNotFoundError:
            mode = _new_file_mode()
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}_", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            os.chmod(tmp, mode)
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(
    path: str | os.PathLike[str], content: str, *, mode: int | None = None, **_: Any
) -> None:
    """Write *content* to *path* atomically."""
    _atomic_write(Path(path), lambda handle: handle.write(content), mode=mode)


def atomic_json_write(
    path: str | os.PathLike[str],
    data: Any,
    *,
    indent: int | None = 2,
    mode: int | None = None,
    ensure_ascii: bool = False,
    fsync_dir: bool = False,
    **dump_kwargs: Any,
) -> None:
    """Write *data* as JSON to *path* atomically (``mode=0o600`` for credentials)."""
    text = json.dumps(data, indent=indent, ensure_ascii=ensure_ascii, **dump_kwargs)
    _atomic_write(Path(path), lambda handle: handle.write(text), mode=mode)


def atomic_yaml_write(
    path: str | os.PathLike[str],
    data: Any,
    *,
    default_flow_style: bool = False,
    sort_keys: bool = False,
    extra_content: str | None = None,
    **_: Any,
) -> None:
    """Write *data* as YAML to *path* atomically, optionally followed by *extra_content*."""
    import yaml

    text = yaml.safe_dump(
        data, default_flow_style=default_flow_style, sort_keys=sort_keys, allow_unicode=True
    )
    if "\x85" in text:  # PyYAML folds a NEL in a quoted string into a space: escape it
        text = yaml.safe_dump(data, default_flow_style=default_flow_style, sort_keys=sort_keys)
    _atomic_write(Path(path), lambda handle: handle.write(text + (extra_content or "")), mode=None)


def __getattr__(name: str) -> NoReturn:
    raise missing_attribute(__name__, name, __all__)
