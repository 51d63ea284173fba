"""Building real plugins for discovery tests: folders, and installed distributions.

A distribution is a real ``*.dist-info`` directory (``METADATA`` +
``entry_points.txt``) next to its modules on a temporary ``sys.path`` entry —
exactly what ``importlib.metadata`` reads for an installed wheel.
"""

from __future__ import annotations

import sys
import textwrap
import types
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hermes_core import hermes_compat
from hermes_core.discovery.folders import NAMESPACE
from hermes_core.errors import PluginError
from hermes_core.hookspecs import hookimpl
from hermes_core.plugins import get_plugin_manager, load_builtin_provider, reset_plugin_manager
from hermes_core.provider import MemoryProvider

PROVIDER_CLASS = '''
from hermes_core.provider import MemoryProvider


class {cls}(MemoryProvider):
    """{doc}"""

    def __init__(self):
        self.initialized = None

    @property
    def name(self):
        return "{name}"

    def is_available(self):
        return {available}

    def initialize(self, session_id, **kwargs):
        self.initialized = session_id

    def get_tool_schemas(self):
        return []
'''


def provider_source(
    name: str, *, cls: str = "Provider", doc: str = "A test provider.", available: bool = True
) -> str:
    """Source of a minimal concrete provider class."""
    return PROVIDER_CLASS.format(name=name, cls=cls, doc=doc, available=available)


def write_files(root: Path, files: Mapping[str, str]) -> Path:
    """Write *files* (relative path -> source, dedented) under *root*."""
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def folder_plugin(plugins_dir: Path, name: str, init: str, **files: str) -> Path:
    """A ``plugins/<name>/`` folder with ``__init__.py`` = *init* and extra *files*."""
    return write_files(plugins_dir / name, {"__init__.py": init, **files})


def install_distribution(
    site: Path,
    name: str,
    *,
    version: str = "1.0",
    entry_points: Mapping[str, Mapping[str, str]],
    modules: Mapping[str, str],
) -> Path:
    """Lay out distribution *name* in *site* (a directory on ``sys.path``)."""
    write_files(site, modules)
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8"
    )
    sections = []
    for group, items in entry_points.items():
        lines = "\n".join(f"{key} = {target}" for key, target in items.items())
        sections.append(f"[{group}]\n{lines}\n")
    (info / "entry_points.txt").write_text("\n".join(sections), encoding="utf-8")
    return info


@contextmanager
def fresh_discovery(temp_root: Path) -> Iterator[None]:
    """Rebuild the plugin manager around a test and forget modules it imported.

    Modules loaded from under *temp_root* (test plugins), folder plugins and the
    Hermes compatibility modules are removed afterwards; nothing else is.
    """
    reset_plugin_manager()
    try:
        yield
    finally:
        reset_plugin_manager()
        hermes_compat.uninstall()
        root = str(temp_root)
        for module_name, module in list(sys.modules.items()):
            origin = getattr(module, "__file__", None) or ""
            if (
                origin.startswith(root)
                or module_name == NAMESPACE
                or module_name.startswith(NAMESPACE + ".")
            ):
                del sys.modules[module_name]


class StandInBuiltin(MemoryProvider):
    """A small always-on provider registered under the reserved name ``builtin``."""

    name = "builtin"

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        pass

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return []


def register_builtin(obj: Any = StandInBuiltin, plugin_name: str = "stand-in-builtin") -> None:
    """Register a pluggy plugin offering *obj* as the builtin provider (it is asked first)."""
    plugin = types.ModuleType(f"{plugin_name}_plugin")

    @hookimpl
    def register_memory_providers(register: Any) -> None:
        register(obj)

    plugin.register_memory_providers = register_memory_providers  # type: ignore[attr-defined]
    get_plugin_manager().register(plugin, name=plugin_name)


def ensure_builtin() -> None:
    """Use the installed builtin provider, or the stand-in when it is not installed."""
    try:
        load_builtin_provider()
    except PluginError:
        register_builtin()
