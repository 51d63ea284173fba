"""Module names a plugin written for Hermes Agent imports, served by hermes-core.

A Hermes memory plugin imports a handful of host modules: ``agent.memory_provider``,
``tools.registry``, ``hermes_constants`` and ``hermes_cli.config``. When the real
Hermes Agent is not installed, :func:`install` adds an import finder that answers
for exactly those names (and nothing else) with the small modules in ``shims/``,
which re-export hermes-core's own implementations. The finder never shadows a real
module: it steps aside whenever any other finder can locate the name, and it only
serves a submodule (``tools.registry``) when its parent (``tools``) came from here.

Discovery installs it just before loading a Hermes-style plugin (a folder plugin or
a ``hermes_agent.memory_providers`` entry point) and leaves it in place so that
imports a plugin makes lazily, at run time, still resolve.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

__all__ = ["COMPAT_MODULES", "HermesCompatFinder", "install", "is_installed", "uninstall"]

SHIMS_DIR = Path(__file__).resolve().parent / "shims"

# Hermes module name -> (file under shims/, is it a package?)
COMPAT_MODULES: dict[str, tuple[str, bool]] = {
    "agent": ("agent/__init__.py", True),
    "agent.memory_provider": ("agent/memory_provider.py", False),
    "tools": ("tools/__init__.py", True),
    "tools.registry": ("tools/registry.py", False),
    "hermes_constants": ("hermes_constants.py", False),
    "hermes_cli": ("hermes_cli/__init__.py", True),
    "hermes_cli.config": ("hermes_cli/config.py", False),
}

MARKER = "__hermes_compat__"
"""Attribute set to True in every module served by the compatibility layer."""


class HermesCompatFinder(importlib.abc.MetaPathFinder):
    """A meta-path finder serving the Hermes module names only when nothing else does."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        entry = COMPAT_MODULES.get(fullname)
        if entry is None:
            return None
        parent_name, _, _ = fullname.rpartition(".")
        if parent_name:
            # Serve a submodule only inside a package this layer provided.
            parent = sys.modules.get(parent_name)
            if parent is None or not getattr(parent, MARKER, False):
                return None
        elif self._found_elsewhere(fullname):
            return None
        relative, is_package = entry
        return importlib.util.spec_from_file_location(
            fullname,
            SHIMS_DIR / relative,
            submodule_search_locations=[] if is_package else None,
        )

    def _found_elsewhere(self, fullname: str) -> bool:
        for finder in list(sys.meta_path):
            if finder is self or isinstance(finder, HermesCompatFinder):
                continue
            find_spec = getattr(finder, "find_spec", None)
            if find_spec is None:
                continue
            try:
                if find_spec(fullname, None) is not None:
                    return True
            except Exception:  # a misbehaving finder must not break the import
                continue
        return False


_finder: HermesCompatFinder | None = None
_lock = threading.Lock()


def install() -> None:
    """Append the finder to ``sys.meta_path`` (idempotent, thread-safe)."""
    global _finder
    with _lock:
        if _finder is None:
            _finder = HermesCompatFinder()
        if _finder not in sys.meta_path:
            sys.meta_path.append(_finder)


def uninstall() -> None:
    """Remove the finder and forget every module it served (for tests)."""
    with _lock:
        if _finder is not None and _finder in sys.meta_path:
            sys.meta_path.remove(_finder)
        for name in list(COMPAT_MODULES):
            module = sys.modules.get(name)
            if module is not None and getattr(module, MARKER, False):
                del sys.modules[name]


def is_installed() -> bool:
    """Whether the finder is currently on ``sys.meta_path``."""
    return _finder is not None and _finder in sys.meta_path
