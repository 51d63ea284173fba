"""``hermes_time``: the current time in the profile's configured time zone.

The zone is ``HERMES_TIMEZONE`` when set, else the ``timezone`` key of the
profile's ``config.yaml`` (an IANA name such as ``Europe/Madrid``), else the
machine's local zone. A name that is not a known zone is logged once as a
warning and the local zone is used. The answer is cached per source (the
variable's value, or the ``config.yaml`` path of the active profile), so
switching ``HERMES_HOME`` never reuses another profile's zone; call
:func:`reset_cache` after editing the zone in place.
"""

import logging
import os
import threading
from datetime import datetime
from typing import NoReturn
from zoneinfo import ZoneInfo

from hermes_core.config import config_path, load_config
from hermes_core.hermes_compat.finder import missing_attribute

__hermes_compat__ = True

__all__ = ["get_timezone", "now", "reset_cache"]

logger = logging.getLogger("hermes_core.hermes_compat")

_lock = threading.Lock()
_zones: dict[tuple[str, str], ZoneInfo | None] = {}


def _source() -> tuple[str, str]:
    configured = os.environ.get("HERMES_TIMEZONE", "").strip()
    if configured:
        return ("environment", configured)
    return ("config", str(config_path()))


def _configured_name(source: tuple[str, str]) -> str:
    kind, value = source
    if kind == "environment":
        return value
    try:
        zone = load_config().get("timezone")
    except Exception:  # an unreadable config.yaml is reported where it is used
        return ""
    return zone.strip() if isinstance(zone, str) else ""


def _zone(name: str) -> ZoneInfo | None:
    if not name:
        return None
    try:
        return ZoneInfo(name)
    except Exception as exc:
        logger.warning("Invalid timezone %r (%s); using the machine's local time", name, exc)
        return None


def get_timezone() -> ZoneInfo | None:
    """The configured zone, or ``None`` when the machine's local time applies."""
    source = _source()
    with _lock:
        if source in _zones:
            return _zones[source]
    zone = _zone(_configured_name(source))
    with _lock:
        return _zones.setdefault(source, zone)


def reset_cache() -> None:
    """Forget the cached zones, so the next call reads the configuration again."""
    with _lock:
        _zones.clear()


def now() -> datetime:
    """The current time as an aware datetime in the configured (else local) zone."""
    zone = get_timezone()
    return datetime.now(zone) if zone is not None else datetime.now().astimezone()


def __getattr__(name: str) -> NoReturn:
    raise missing_attribute(__name__, name, __all__)
