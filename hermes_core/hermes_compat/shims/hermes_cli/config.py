"""``hermes_cli.config``: ``$HERMES_HOME/config.yaml`` and ``.env``, the Hermes Agent way.

Differences from hermes-memory-core's own :mod:`hermes_core.config` that Hermes
plugins rely on: ``cfg_get(config, "a", "b", default=...)`` takes one argument
per key; ``load_config()`` never raises (a broken file is logged and read as
empty) and expands ``${VAR}`` references from the environment, which
``save_config()`` writes back as the templates they came from; Hermes' built-in
defaults are not merged in (plugins read their settings with defaults anyway).
"""

import logging
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, NoReturn

from hermes_core import config as _core
from hermes_core.config import parse_config
from hermes_core.errors import ConfigError
from hermes_core.hermes_compat.dotenv import read_profile_env
from hermes_core.hermes_compat.finder import missing_attribute
from hermes_core.hermes_compat.shims.hermes_constants import get_hermes_home
from hermes_core.secrets import dotenv_path, write_dotenv

__hermes_compat__ = True

__all__ = [
    "cfg_get",
    "get_config_path",
    "get_env_path",
    "get_env_value",
    "get_env_value_prefer_dotenv",
    "get_hermes_home",
    "load_config",
    "load_config_readonly",
    "load_env",
    "read_raw_config",
    "read_user_config_raw",
    "remove_env_value",
    "save_config",
    "save_env_value",
]

logger = logging.getLogger("hermes_core.hermes_compat")

_ENV_REF = _core.ENV_TEMPLATE


def get_config_path() -> Path:
    """``$HERMES_HOME/config.yaml``."""
    return _core.config_path()


def get_env_path() -> Path:
    """``$HERMES_HOME/.env``."""
    return dotenv_path()


def read_user_config_raw(path: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """The mapping in *path* (default ``config.yaml``) as written; ``{}`` if missing or broken."""
    target = Path(path) if path is not None else get_config_path()
    if target.exists() and not target.is_file():
        logger.warning("%s is not a regular file; reading it as empty.", target)
        return {}
    try:
        text = target.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        logger.warning("Cannot read %s (%s); reading it as empty.", target, exc)
        return {}
    try:
        return parse_config(target, text)
    except ConfigError as exc:
        logger.warning("%s; reading it as empty.", exc)
        return {}


def read_raw_config() -> dict[str, Any]:
    """``config.yaml`` as written, without ``${VAR}`` expansion; ``{}`` if missing or broken."""
    return read_user_config_raw()


def _expand(value: Any) -> Any:
    if isinstance(value, str):
        return _ENV_REF.sub(lambda m: os.environ.get(m.group(1), m.group(0)), value)
    if isinstance(value, dict):
        return {key: _expand(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_expand(item) for item in value]
    return value


def load_config() -> dict[str, Any]:
    """``config.yaml`` with ``${VAR}`` references expanded; ``{}`` if missing or broken."""
    expanded: dict[str, Any] = _expand(read_raw_config())
    return expanded


def load_config_readonly() -> dict[str, Any]:
    """Same as :func:`load_config` (the caller promises not to write it back)."""
    return load_config()


def _templates_kept(new: Any, written: Any) -> Any:
    """*new*, with each value that is the expansion of a ``${VAR}`` template in *written*
    (the file as it is) put back as that template."""
    if isinstance(new, str) and isinstance(written, str):
        return written if _ENV_REF.search(written) and _expand(written) == new else new
    if isinstance(new, Mapping) and isinstance(written, Mapping):
        return {
            key: _templates_kept(value, written[key]) if key in written else value
            for key, value in new.items()
        }
    if isinstance(new, list) and isinstance(written, list) and len(new) == len(written):
        return [_templates_kept(value, old) for value, old in zip(new, written, strict=True)]
    return new


def _merged(written: Any, new: Any) -> Any:
    """*new* laid over *written*: mappings merge key by key, anything else is replaced."""
    if isinstance(written, Mapping) and isinstance(new, Mapping):
        return {
            **written,
            **{key: _merged(written.get(key), value) for key, value in new.items()},
        }
    return new


def save_config(
    config: Mapping[str, Any],
    *,
    strip_defaults: bool = True,
    preserve_keys: Iterable[str] | None = None,
    merge_existing: bool = False,
) -> None:
    """Write *config* to ``config.yaml`` atomically, keeping its ``${VAR}`` templates.

    :func:`load_config` expands ``${VAR}``; a plugin that loads, edits and saves
    would otherwise write the secrets themselves into the file. As in Hermes,
    a value still equal to its template's expansion is written as the template.
    *merge_existing* lays *config* over the file (a plugin saving only its own
    section keeps the rest); *preserve_keys* keeps those top-level keys of the
    file that *config* lacks. *strip_defaults* is accepted: no Hermes defaults
    are merged in here, so there are none to strip.
    """
    with _core.replacing(get_config_path()) as path, _core.file_lock(path):
        written = read_user_config_raw(path)
        result: Mapping[str, Any] = _merged(written, config) if merge_existing else config
        kept = {key: written[key] for key in preserve_keys or () if key in written}
        result = {**kept, **result}
        _core.save_config(_templates_kept(result, written))


def cfg_get(config: Any, *keys: str, default: Any = None) -> Any:
    """``config[k1][k2]…``; *default* when a level is missing, not a mapping, or None."""
    node = config
    for key in keys:
        if not isinstance(node, Mapping) or key not in node:
            return default
        node = node[key]
    return default if node is None else node


def load_env() -> dict[str, str]:
    """The profile's ``.env`` as a dict (``{}`` when absent)."""
    return read_profile_env()


def get_env_value(key: str) -> str | None:
    """*key* from the environment, else from the profile's ``.env``."""
    value = os.environ.get(key)
    return value if value is not None else load_env().get(key)


def get_env_value_prefer_dotenv(key: str) -> str | None:
    """*key* from the profile's ``.env``, else from the environment."""
    value = load_env().get(key)
    return value if value is not None else os.environ.get(key)


def _write_env(key: str, value: str | None) -> None:
    try:
        write_dotenv({key: value})
    except ConfigError as exc:  # Hermes raises ValueError for a bad name or value
        raise ValueError(str(exc)) from exc


def save_env_value(key: str, value: str) -> None:
    """Persist ``KEY=value`` in the profile's ``.env`` (0600) and set it in this process."""
    _write_env(key, str(value))
    os.environ[key] = str(value)


def remove_env_value(key: str) -> None:
    """Remove *key* from the profile's ``.env`` and from this process's environment."""
    _write_env(key, None)
    os.environ.pop(key, None)


def __getattr__(name: str) -> NoReturn:
    raise missing_attribute(__name__, name, __all__)
