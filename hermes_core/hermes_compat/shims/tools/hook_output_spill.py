"""``tools.hook_output_spill``: Hermes Agent's cap on text a hook injects into a turn.

Hermes moves hook output longer than ``hooks.output_spill.max_chars`` into a
file under ``$HERMES_HOME/hook_outputs/<session>/`` and injects a head and tail
preview with the file's path instead. Plugins read the settings
(:func:`get_spill_config`) or apply the cap to their own text
(:func:`spill_if_oversized`); both behave as in Hermes. hermes-memory itself
bounds recall separately (``MAX_RECALL_CHARS`` in the manager).
"""

import logging
import os
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NoReturn

from hermes_core.config import cfg_get, get_hermes_home, load_config
from hermes_core.hermes_compat.finder import missing_attribute

__hermes_compat__ = True

__all__ = [
    "DEFAULT_ENABLED",
    "DEFAULT_MAX_CHARS",
    "DEFAULT_PREVIEW_HEAD",
    "DEFAULT_PREVIEW_TAIL",
    "get_spill_config",
    "spill_if_oversized",
]

logger = logging.getLogger("hermes_core.hermes_compat")

DEFAULT_ENABLED = True
DEFAULT_MAX_CHARS = 10_000
DEFAULT_PREVIEW_HEAD = 500
DEFAULT_PREVIEW_TAIL = 500


def _whole(value: Any, default: int, *, least: int) -> int:
    if isinstance(value, bool):
        return default
    try:
        number = int(value)
    except (TypeError, ValueError, OverflowError):
        return default
    return number if number >= least else default


def get_spill_config() -> dict[str, Any]:
    """``hooks.output_spill`` of ``config.yaml`` with defaults filled in; never raises."""
    try:
        section = cfg_get(load_config(), "hooks.output_spill")
    except Exception:  # an unreadable config.yaml is reported where it is used
        section = None
    if not isinstance(section, Mapping):
        section = {}
    enabled = section.get("enabled", DEFAULT_ENABLED)
    directory = section.get("directory")
    return {
        "enabled": DEFAULT_ENABLED if enabled is None else bool(enabled),
        "max_chars": _whole(section.get("max_chars"), DEFAULT_MAX_CHARS, least=1),
        "preview_head": _whole(section.get("preview_head"), DEFAULT_PREVIEW_HEAD, least=0),
        "preview_tail": _whole(section.get("preview_tail"), DEFAULT_PREVIEW_TAIL, least=0),
        "directory": directory if isinstance(directory, str) else None,
    }


def _spill_folder(directory: str | None, session_id: str | None) -> Path:
    base = Path(directory).expanduser() if directory else get_hermes_home() / "hook_outputs"
    segment = (session_id or "no-session").replace("/", "_").replace("\\", "_")
    return base / segment.replace("..", "_")


def spill_if_oversized(
    text: Any,
    *,
    session_id: str | None = None,
    source: str = "hook",
    config: Mapping[str, Any] | None = None,
) -> str:
    """*text*, or when it is over the cap a preview naming the file that holds all of it."""
    if text is None:
        return ""
    if not isinstance(text, str):
        try:
            text = str(text)
        except Exception:
            return ""
    settings = dict(config) if config is not None else get_spill_config()
    limit = _whole(settings.get("max_chars"), DEFAULT_MAX_CHARS, least=1)
    if not settings.get("enabled", True) or len(text) <= limit:
        return text
    head = _whole(settings.get("preview_head"), 0, least=0)
    tail = _whole(settings.get("preview_tail"), 0, least=0)
    saved: str | None = None
    try:
        folder = _spill_folder(settings.get("directory"), session_id)
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / f"{uuid.uuid4().hex}.txt"
        target.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
        saved = os.fspath(target)
    except OSError as exc:
        logger.warning("Could not save long %s output to a file: %s", source, exc)
    where = f"saved to {saved}" if saved else "unavailable: it could not be saved"
    lines = [f"[{source} output truncated: {len(text):,} characters; the full text is {where}]"]
    if head:
        lines += ["--- head ---", text[:head]]
    if tail and len(text) > head:
        lines += ["--- tail ---", text[-tail:]]
    return "\n".join(lines)


def __getattr__(name: str) -> NoReturn:
    raise missing_attribute(__name__, name, __all__)
