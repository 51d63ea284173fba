"""``HERMES_HOME`` resolution and ``$HERMES_HOME/config.yaml``.

``HERMES_HOME`` is resolved at call time (never cached at import) so profiles
and tests can switch it; it defaults to ``~/.hermes``.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hermes_core.errors import ConfigError

CONFIG_FILENAME = "config.yaml"

_MISSING = object()


def get_hermes_home() -> Path:
    """Return the active ``HERMES_HOME`` (``$HERMES_HOME`` or ``~/.hermes``)."""
    value = os.environ.get("HERMES_HOME", "").strip()
    if value:
        return Path(value).expanduser()
    return Path.home() / ".hermes"


def config_path(hermes_home: str | os.PathLike[str] | None = None) -> Path:
    """Path of ``config.yaml`` inside *hermes_home* (default: the active home)."""
    home = Path(hermes_home) if hermes_home is not None else get_hermes_home()
    return home / CONFIG_FILENAME


def load_config(hermes_home: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """Read ``config.yaml``; a missing or empty file is an empty dict.

    Raises :class:`ConfigError` naming the file when it is not valid YAML or not
    a mapping at the top level.
    """
    path = config_path(hermes_home)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"Cannot read {path}: {exc}. Fix the file or its permissions.") from exc
    import yaml  # imported here: commands that never read config skip its cost

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path} is not valid YAML: {exc}. Fix the syntax and retry.") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(
            f"{path} must hold a mapping at the top level, found {type(data).__name__}."
        )
    return data


def save_config(
    config: Mapping[str, Any], hermes_home: str | os.PathLike[str] | None = None
) -> Path:
    """Write *config* to ``config.yaml`` atomically (temp file, fsync, rename)."""
    path = config_path(hermes_home)
    path.parent.mkdir(parents=True, exist_ok=True)
    import yaml

    text = yaml.safe_dump(dict(config), sort_keys=False, allow_unicode=True)
    fd, tmp = tempfile.mkstemp(prefix=".config.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def cfg_get(config: Mapping[str, Any] | None, dotted_key: str, default: Any = None) -> Any:
    """Look up ``"a.b.c"`` in nested mappings, returning *default* when absent."""
    node: Any = config or {}
    for part in dotted_key.split("."):
        if not isinstance(node, Mapping):
            return default
        node = node.get(part, _MISSING)
        if node is _MISSING:
            return default
    return node


def set_config_value(config: dict[str, Any], dotted_key: str, value: Any) -> None:
    """Set ``"a.b.c"`` in nested dicts, creating intermediate dicts."""
    parts = dotted_key.split(".")
    node = config
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = {}
            node[part] = child
        node = child
    node[parts[-1]] = value


def selected_provider(config: Mapping[str, Any] | None) -> str | None:
    """The external provider named by ``memory.provider``, or ``None`` for builtin only."""
    value = cfg_get(config, "memory.provider")
    if value is None:
        return None
    if not isinstance(value, str):
        raise ConfigError(f"memory.provider must be a provider name (a string), found {value!r}.")
    value = value.strip()
    return value if value and value != "builtin" else None
