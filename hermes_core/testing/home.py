"""Seeding an empty ``HERMES_HOME`` with a configured home's settings, for conformance runs."""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path

__all__ = ["SETTINGS_FILE_LIMIT", "SETTINGS_SUFFIXES", "seed_home"]

SETTINGS_SUFFIXES = (".json", ".yaml", ".yml", ".toml", ".ini", ".cfg", ".env")
"""File types counted as a provider's own settings (anything else is data, not copied)."""

SETTINGS_FILE_LIMIT = 1 << 20
"""Settings files larger than this (1 MiB) are not copied: they are data."""


def _settings_file(path: Path) -> bool:
    try:
        return (
            path.is_file()
            and path.suffix.lower() in SETTINGS_SUFFIXES
            and path.stat().st_size <= SETTINGS_FILE_LIMIT
        )
    except OSError:
        return False


def _provider_settings(source: Path, provider: str) -> list[Path]:
    """*provider*'s own settings files in *source*, where Hermes plugins keep them."""
    if Path(provider).name != provider or provider in ("", ".", ".."):
        return []  # not a plain name: nothing of the home is named after it
    # A plugin named vertex-memory may keep vertex_memory.json, and the other way round.
    names = dict.fromkeys((provider, provider.replace("-", "_"), provider.replace("_", "-")))
    found = [source / f"{name}{suffix}" for name in names for suffix in SETTINGS_SUFFIXES]
    for name in names:
        folder = source / name
        if folder.is_dir() and not folder.is_symlink():
            with contextlib.suppress(OSError):
                found += sorted(folder.iterdir())
    return [path for path in found if _settings_file(path)]


def seed_home(source: Path, home: Path, provider: str | None = None) -> list[str]:
    """Copy *source*'s configuration into *home*; returns the copied paths, relative.

    Always ``config.yaml`` and ``.env``. For *provider*, also the settings
    Hermes plugins keep of their own: ``<provider>.json`` (or ``.yaml``,
    ``.toml``, …) beside them (``honcho.json``) and the settings files at the
    top of a ``<provider>/`` folder (``hindsight/config.json``), the name also
    read with ``-`` and ``_`` swapped (``vertex_memory.json`` for ``vertex-memory``). Databases,
    caches, subfolders and files over 1 MiB are left behind: the tests get the
    configuration, never the data.
    """
    chosen = [path for path in (source / "config.yaml", source / ".env") if path.is_file()]
    if provider:
        chosen += _provider_settings(source, provider)
    copied = []
    for path in chosen:
        relative = path.relative_to(source)
        (home / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, home / relative)
        copied.append(relative.as_posix())
    return copied
