"""Entry points of installed distributions, with their distribution name and version."""

from __future__ import annotations

import importlib.metadata
from dataclasses import dataclass


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


def _distribution_of(ep: importlib.metadata.EntryPoint) -> tuple[str | None, str | None]:
    dist = getattr(ep, "dist", None)
    if dist is None:
        return None, None
    try:
        metadata = dist.metadata  # parsed on every access: read it once
        return metadata["Name"], metadata["Version"]
    except Exception:  # broken METADATA must not stop discovery
        return None, None


def entry_points_in(group: str) -> list[EntryPointRef]:
    """Entry points of *group*, in ``sys.path`` order.

    A distribution installed twice on the path counts once (the first wins, as
    for imports); only the distributions that declare *group* have their
    metadata read, which keeps discovery cheap.
    """
    return [
        EntryPointRef(ep, *_distribution_of(ep))
        for ep in importlib.metadata.entry_points(group=group)
    ]
