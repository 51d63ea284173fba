"""Entry points of installed distributions, with their distribution name and version.

Finding entry points means reading the metadata of every installed
distribution, so it is done once per process (and again when ``sys.path``
changes, or after :func:`forget_entry_points`) and every group is served from
that one scan.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import sys
import threading
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class EntryPointRef:
    """One entry point and the distribution declaring it."""

    entry_point: importlib.metadata.EntryPoint
    distribution: str | None
    version: str | None

    @property
    def name(self) -> str:
        """The entry-point name (the plugin or provider name)."""
        return self.entry_point.name


class _Scan:
    """The entry points found for one ``sys.path``, resolved group by group on demand."""

    def __init__(self, path: tuple[str, ...]) -> None:
        self.path = path
        self._all = importlib.metadata.entry_points()
        self._groups: dict[str, list[EntryPointRef]] = {}

    def groups(self) -> list[str]:
        """Every entry-point group some installed distribution declares, sorted."""
        return sorted(self._all.groups)

    def group(self, group: str) -> list[EntryPointRef]:
        """The entry points of *group*, their distributions' metadata read on first request."""
        if group not in self._groups:
            found = self._all.select(group=group)
            self._groups[group] = [EntryPointRef(ep, *_distribution_of(ep)) for ep in found]
        return self._groups[group]


_scan: _Scan | None = None
_scan_lock = threading.Lock()


def _distribution_of(ep: importlib.metadata.EntryPoint) -> tuple[str | None, str | None]:
    dist = getattr(ep, "dist", None)
    if dist is None:
        return None, None
    try:
        metadata = dist.metadata  # parsed on every access: read it once
        return metadata["Name"], metadata["Version"]
    except Exception:  # broken METADATA must not stop discovery
        return None, None


def _current_scan() -> _Scan:
    global _scan
    path = tuple(sys.path)
    with _scan_lock:
        if _scan is None or _scan.path != path:
            _scan = _Scan(path)
        return _scan


def entry_point_groups() -> list[str]:
    """The entry-point groups the installed distributions declare (same scan as below)."""
    return _current_scan().groups()


def entry_points_in(group: str) -> list[EntryPointRef]:
    """Entry points of *group*, in ``sys.path`` order.

    A distribution installed twice on the path counts once (the first wins, as
    for imports); only the distributions that declare *group* have their
    metadata read. The installed distributions are scanned on the first call
    and again only when ``sys.path`` has changed since.
    """
    scan = _current_scan()
    with _scan_lock:
        return list(scan.group(group))


def forget_entry_points() -> None:
    """Drop the scan; the next :func:`entry_points_in` reads the installed metadata again."""
    global _scan
    with _scan_lock:
        _scan = None


def package_dir_of(entry_point: importlib.metadata.EntryPoint) -> Path | None:
    """The directory of the package an entry point's module is, found without importing it.

    ``None`` when the module is a plain ``.py`` file (it has no directory of its
    own), a namespace or extension module, or cannot be found. Only the
    top-level name goes through ``find_spec`` (which, for a dotted name, would
    run the parent packages); the rest is walked on disk.
    """
    parts = entry_point.value.partition(":")[0].strip().split(".")
    if not all(part.isidentifier() for part in parts):
        return None
    try:
        spec = importlib.util.find_spec(parts[0])
    except (ImportError, ValueError):
        return None
    origin = Path(spec.origin) if spec is not None and spec.origin else None
    if origin is None or origin.name != "__init__.py":
        return None
    directory = origin.parent
    for part in parts[1:]:
        directory = directory / part
        if not (directory / "__init__.py").is_file():
            return None
    return directory
