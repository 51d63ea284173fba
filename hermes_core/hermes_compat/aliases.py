"""``plugins.memory.<name>``: absolute imports of a folder plugin's own modules.

Plugins that ship inside Hermes Agent (and copies of them) import their own
modules by their bundled path, ``plugins.memory.<name>.<module>``. When such a
plugin is loaded from ``$HERMES_HOME/plugins/<name>``, :class:`PluginAliasFinder`
makes those names the very module objects discovery loaded (same objects, no
second copy), so ``isinstance`` checks and module state agree.

It answers only under the ``plugins`` stand-in package of this layer (never
under a real ``plugins`` package). It also answers the own name of a package
held by a project-root plugin folder (a clone of the plugin's repository, whose
``memex_hermes/`` package imports ``memex_hermes.config``), unless a package
of that name is installed. Folder plugins loaded in this process are
recorded by :func:`register_alias`; a name not loaded yet is looked up where
discovery looks (``$HERMES_HOME/plugins/<name>``, then the project folder when
enabled, within the plugin allow/block lists) and loaded there, so a plugin that
builds on a bundled one (``from plugins.memory.mem0 import Mem0MemoryProvider``)
works when a copy of that plugin is installed next to it, as it would inside
Hermes.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import threading
from collections.abc import Sequence
from types import ModuleType

from hermes_core.discovery.folders import NAMESPACE
from hermes_core.hermes_compat.finder import (
    COMPAT_MODULES,
    MARKER,
    HermesCompatFinder,
    found_elsewhere,
)

PREFIX = "plugins.memory."

_aliases: dict[str, str] = {}  # plugin directory name -> module name it was loaded under
_packages: dict[str, str] = {}  # own package name of a project-root plugin -> module name
_lock = threading.Lock()


def register_alias(plugin_name: str, module_name: str, package_name: str | None = None) -> None:
    """Make ``plugins.memory.<plugin_name>`` (and *package_name*) name the plugin *module_name*."""
    with _lock:
        if package_name and _packages.get(package_name) != module_name:
            _packages[package_name] = module_name
            _drop_aliases(package_name)
        if _aliases.get(plugin_name) == module_name:
            return
        _aliases[plugin_name] = module_name
        _drop_aliases(PREFIX + plugin_name)


def _drop_aliases(root: str) -> None:
    """Forget the modules imported under *root* that alias another copy of a folder plugin."""
    for name in [n for n in sys.modules if n == root or n.startswith(root + ".")]:
        if str(getattr(sys.modules[name], "__name__", "")).startswith(NAMESPACE + "."):
            del sys.modules[name]


def forget_aliases() -> None:
    """Drop every alias (tests)."""
    with _lock:
        _aliases.clear()
        _packages.clear()


def _load_user_plugin(plugin: str) -> str | None:
    """Load the folder plugin named *plugin* and alias it; its module name.

    The folder is found as discovery finds it (``$HERMES_HOME/plugins``, then the
    project folder when enabled; the plugin policy applies). ``None`` when there
    is no such folder; an :class:`ImportError` naming the folder when it fails
    to load.
    """
    from hermes_core.discovery.folders import load_folder_module, plugin_folder
    from hermes_core.errors import PluginError

    folder = plugin_folder(plugin)
    if folder is None:
        return None
    register_alias(plugin, folder.module_name, folder.package_name)
    try:
        load_folder_module(folder)
    except PluginError as exc:
        with _lock:
            _aliases.pop(plugin, None)
        raise ImportError(
            f"{PREFIX}{plugin} is the Hermes plugin folder {folder.root}, which failed "
            f"to load: {exc}",
            name=PREFIX + plugin,
        ) from exc
    return folder.module_name


class _AliasLoader(importlib.abc.Loader):
    """Returns an already-imported module under a second name, untouched."""

    def __init__(self, module: ModuleType) -> None:
        self.module = module
        self.spec = module.__spec__

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return self.module

    def exec_module(self, module: ModuleType) -> None:
        module.__spec__ = self.spec  # the import system re-pointed it at the alias


class PluginAliasFinder(importlib.abc.MetaPathFinder):
    """Resolves ``plugins.memory.<name>[.<module>]`` to the loaded folder plugin's modules."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        root, _, rest = fullname.partition(".")
        with _lock:
            own_package = _packages.get(root)
        if own_package is not None:
            return self._own_package_spec(fullname, own_package, rest)
        if not fullname.startswith(PREFIX):
            return None
        if not getattr(sys.modules.get("plugins"), MARKER, False):
            return None  # a real ``plugins`` package owns these names
        plugin, _, rest = fullname[len(PREFIX) :].partition(".")
        if PREFIX + plugin in COMPAT_MODULES:
            return None  # a module of Hermes' own plugins.memory package, not a plugin
        with _lock:
            real_root = _aliases.get(plugin)
        if real_root is None or real_root not in sys.modules:  # not loaded, or its load failed
            real_root = _load_user_plugin(plugin) or real_root
        if real_root is None:
            return None
        return _alias_spec(fullname, real_root, rest)

    def _own_package_spec(
        self, fullname: str, real_root: str, rest: str
    ) -> importlib.machinery.ModuleSpec | None:
        if real_root not in sys.modules:  # only while that copy is loading or loaded
            return None
        if rest:
            parent = sys.modules.get(fullname.partition(".")[0])
            if parent is not sys.modules[real_root]:
                return None  # the name belongs to another package
        elif found_elsewhere(fullname, skip=(PluginAliasFinder, HermesCompatFinder)):
            return None  # an installed package of that name wins
        return _alias_spec(fullname, real_root, rest)


def _alias_spec(fullname: str, real_root: str, rest: str) -> importlib.machinery.ModuleSpec | None:
    """A spec naming *fullname* the module ``<real_root>.<rest>`` (imported if need be)."""
    real_name = f"{real_root}.{rest}" if rest else real_root
    module = sys.modules.get(real_name)
    if module is None:
        try:
            module = importlib.import_module(real_name)
        except ImportError:
            return None
    return importlib.machinery.ModuleSpec(
        fullname, _AliasLoader(module), is_package=hasattr(module, "__path__")
    )
