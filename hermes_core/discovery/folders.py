"""Folder plugins: ``$HERMES_HOME/plugins/<name>/`` and ``./.hermes/plugins/<name>/``.

Rules (those of Hermes Agent, so its plugins are found in the same places):

* only direct children of the plugins directory count, and names starting with
  ``_`` or ``.`` are skipped (``plugins/memory/<name>`` is *not* found);
* a child qualifies when its ``__init__.py`` mentions ``register_memory_provider``
  or ``MemoryProvider`` within its first 8 KB — a text check, nothing is imported
  (a ``from <package> import *`` shim counts when that package's file does);
  a child without a root ``__init__.py`` qualifies when it looks like a project
  root (``plugin.yaml``, ``pyproject.toml``, ``setup.py`` or ``setup.cfg``) holding
  exactly one package subdirectory that passes the same check (the layout of an
  unpacked source distribution) — so ``plugins/memory/<name>`` stays unfound;
* the package is imported under a synthetic name,
  ``_hermes_user_memory.<name>__source_<sha256 of its resolved path, 16 hex>``,
  so two homes holding a plugin of the same name never collide; its ``*.py``
  siblings are imported first as submodules (failures ignored), and relative
  imports, nested packages and namespace subdirectories resolve normally;
* a per-module-name lock keeps concurrent loads from seeing a half-run module;
  a module that fails to import is removed again so a fixed plugin can load.

An optional ``plugin.yaml`` (read as UTF-8 with or without BOM) gives ``name``,
``description``, ``version`` and ``requires_env``; a bad one (unreadable, over
64 KiB, not a mapping, a field of the wrong type) is ignored in whole or in part
and each problem is reported with the plugin, never costing it its load.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import logging
import os
import re
import sys
import threading
import types
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_core.config import get_hermes_home, is_truthy
from hermes_core.discovery.extract import contain, describe_exception, describe_import_failure
from hermes_core.discovery.policy import current_policy
from hermes_core.errors import PluginError

if TYPE_CHECKING:
    import ast

logger = logging.getLogger("hermes_core.plugins")

HEURISTIC_CHARS = 8192
MARKERS = ("register_memory_provider", "MemoryProvider")
PROJECT_PLUGINS_ENV = "HERMES_ENABLE_PROJECT_PLUGINS"
"""Set to a true value to also scan ``./.hermes/plugins`` (a project's own plugins)."""
NAMESPACE = "_hermes_user_memory"
MANIFEST = "plugin.yaml"
PROJECT_MARKERS = (MANIFEST, "pyproject.toml", "setup.py", "setup.cfg")
MANIFEST_MAX_BYTES = 64 * 1024
# plugin.yaml field -> (accepted types, how to say them); other fields are kept as they are
MANIFEST_FIELDS: dict[str, tuple[tuple[type, ...], str]] = {
    "name": ((str, int, float), "a string"),
    "description": ((str,), "a string"),
    "version": ((str, int, float), "a string"),
    "requires_env": ((str, list), "a list of variable names"),
}


def _optional(required: object) -> bool:
    """Whether a ``requires_env`` entry's ``required`` value says it is optional."""
    if isinstance(required, str):
        return required.strip().lower() in ("false", "no", "off", "0")
    return required is False or required == 0


@dataclass(frozen=True)
class PluginFolder:
    """A plugin directory that passed the text heuristic."""

    name: str
    root: Path
    package_dir: Path
    manifest: dict[str, Any] = field(default_factory=dict, compare=False)
    manifest_problems: tuple[str, ...] = field(default=(), compare=False)

    @property
    def description(self) -> str:
        """``description`` from ``plugin.yaml``, or ``""``."""
        return str(self.manifest.get("description") or "").strip()

    @property
    def manifest_name(self) -> str | None:
        """``name`` from ``plugin.yaml``, if any (an alias for ``memory.provider``)."""
        value = self.manifest.get("name")
        return str(value).strip() or None if value is not None else None

    @property
    def required_env(self) -> tuple[str, ...]:
        """``requires_env`` from ``plugin.yaml``: the environment variables the plugin needs.

        Read from a list of names, a list of ``{name: …}`` entries or one
        comma-separated string; anything else is ignored. An entry marked
        ``required: false`` is optional (a setting the plugin can do without)
        and is not counted.
        """
        value = self.manifest.get("requires_env")
        items = value.split(",") if isinstance(value, str) else value
        if not isinstance(items, list):
            return ()
        names = (
            item.get("name") if isinstance(item, dict) else item
            for item in items
            if not (isinstance(item, dict) and _optional(item.get("required", True)))
        )
        return tuple(name.strip() for name in names if isinstance(name, str) and name.strip())

    @property
    def version(self) -> str | None:
        """``version`` from ``plugin.yaml``, if any."""
        value = self.manifest.get("version")
        return str(value) if value is not None else None

    @property
    def package_name(self) -> str | None:
        """The import name of the package a project-root plugin holds (``None`` otherwise).

        In a clone of a plugin's repository (``plugin.yaml`` or ``pyproject.toml``
        beside ``memex_hermes/``) the package may import itself by that name,
        as it would once pip-installed.
        """
        name = self.package_dir.name
        return name if self.package_dir != self.root and name.isidentifier() else None

    @property
    def module_name(self) -> str:
        """The synthetic module name this plugin is imported under."""
        import hashlib  # only needed once a folder plugin is loaded

        digest = hashlib.sha256(os.fsencode(self.package_dir.resolve())).hexdigest()[:16]
        safe = re.sub(r"\W", "_", self.name)
        return f"{NAMESPACE}.{safe}__source_{digest}"


def printable(text: str) -> str:
    """*text* (a file name or path) with bytes that are not UTF-8 shown as ``\\xff`` escapes."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _head(path: Path) -> str:
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            return handle.read(HEURISTIC_CHARS)
    except OSError:
        return ""


_STAR_IMPORT = re.compile(r"^from\s+([A-Za-z_][\w.]*)\s+import\s+\*", re.M)


def module_file(name: str, beside: Path | None = None) -> Path | None:
    """The file of module *name*, copied under *beside* (``src/`` too) or installed.

    Nothing is imported: an installed top-level package is located, not loaded.
    """
    parts = name.split(".")
    roots = [beside, beside / "src"] if beside is not None else []
    try:
        spec = importlib.util.find_spec(parts[0]) if parts[0].isidentifier() else None
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.submodule_search_locations:
        roots += [Path(location).parent for location in spec.submodule_search_locations]
    elif spec is not None and spec.origin and len(parts) == 1:
        roots.append(Path(spec.origin).parent)  # a top-level module file
    for root in roots:
        base = root.joinpath(*parts)
        for candidate in (base / "__init__.py", base.with_suffix(".py")):
            if candidate.is_file():
                return candidate
    return None


def mentions_memory_provider(init_file: Path) -> bool:
    """The cheap heuristic: a marker within the first 8 KB of *init_file*.

    A shim that only re-exports a package (``from hermes_muninndb_plugin import *``,
    the package copied beside it or installed) counts when that package's file
    has the marker.
    """
    head = _head(init_file)
    if any(marker in head for marker in MARKERS):
        return True
    for name in _STAR_IMPORT.findall(head):
        found = module_file(name, init_file.parent)
        if found is not None and found != init_file and any(m in _head(found) for m in MARKERS):
            return True
    return False


CODE_CHECK_MAX_BYTES = 512 * 1024
CODE_CHECK_MAX_FILES = 24


def _parsed(module: Path) -> ast.Module | None:
    """*module* parsed, or ``None`` when it is unreadable, too large or not Python."""
    import ast  # only doctor asks, never a scan

    try:
        if module.stat().st_size > CODE_CHECK_MAX_BYTES:
            return None
        return ast.parse(module.read_bytes(), filename=str(module))
    except (OSError, SyntaxError, ValueError):
        return None


def _code_names(tree: ast.AST) -> Iterator[str]:
    """Every identifier *tree*'s code uses or defines; strings, docstrings and comments not."""
    import ast

    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            yield node.id
        elif isinstance(node, ast.Attribute):
            yield node.attr
        elif isinstance(node, ast.alias):
            yield node.name
            if node.asname:
                yield node.asname
        elif isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            yield node.name


def _imported_files(tree: ast.Module, module: Path, package: str | None) -> Iterator[Path]:
    """Files of the modules *tree* imports from its own package, and of its star imports."""
    import ast

    def candidates(base: Path, dotted: str, names: list[str]) -> Iterator[Path]:
        root = base.joinpath(*dotted.split(".")) if dotted else base
        yield root / "__init__.py"
        yield root.with_suffix(".py")
        for name in names:  # from . import provider: a submodule
            yield root / f"{name}.py"
            yield root / name / "__init__.py"

    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            names = [alias.name for alias in node.names if alias.name != "*"]
            if node.level:
                base = module.parent
                for _ in range(node.level - 1):
                    base = base.parent
                yield from (c for c in candidates(base, node.module or "", names) if c.is_file())
            elif node.module and (
                node.module.split(".")[0] == package or any(a.name == "*" for a in node.names)
            ):
                found = module_file(node.module, module.parent)
                if found is not None:
                    yield found
                    if found.name == "__init__.py":
                        yield from (c for c in candidates(found.parent, "", names) if c.is_file())
        elif isinstance(node, ast.Import) and package:
            for alias in node.names:
                if alias.name.split(".")[0] == package:
                    found = module_file(alias.name, module.parent)
                    if found is not None:
                        yield found


def names_memory_provider_in_code(module: Path, package: str | None = None) -> bool:
    """Whether the code of *module* (not its docstrings or comments) names a marker.

    Stricter than :func:`mentions_memory_provider`, which mirrors Hermes' folder
    scan: a general plugin whose docstring explains that it is *not* a
    ``MemoryProvider`` (psy-core-hermes) passes the text check but not this
    one. The modules it imports from its own top-level *package* (relatively,
    or absolutely by that name) and its ``from <package> import *`` re-exports
    are checked too, one level down, so an entry module that only forwards to
    ``.provider`` counts. A file that is too large or does not parse falls
    back to the text check.
    """
    tree = _parsed(module)
    if tree is None:
        return mentions_memory_provider(module)
    if any(marker in name for name in _code_names(tree) for marker in MARKERS):
        return True
    seen = {module.resolve()}
    for found in _imported_files(tree, module, package):
        resolved = found.resolve()
        if resolved in seen:
            continue
        seen.add(resolved)
        if len(seen) > CODE_CHECK_MAX_FILES:
            break
        imported = _parsed(found)
        if imported is None:
            if mentions_memory_provider(found):
                return True
        elif any(marker in name for name in _code_names(imported) for marker in MARKERS):
            return True
    return False


def _visible_dirs(directory: Path) -> list[Path]:
    try:
        children = sorted(directory.iterdir(), key=lambda p: p.name)
    except OSError:
        return []
    return [c for c in children if c.is_dir() and not c.name.startswith(("_", "."))]


def _package_dir(plugin_root: Path) -> Path | None:
    init = plugin_root / "__init__.py"
    if init.is_file():
        return plugin_root if mentions_memory_provider(init) else None
    # pip-style layout: a project root (manifest or packaging file) holding one package.
    if not any((plugin_root / marker).is_file() for marker in PROJECT_MARKERS):
        return None
    packages = [
        child
        for child in _visible_dirs(plugin_root)
        if mentions_memory_provider(child / "__init__.py")
    ]
    return packages[0] if len(packages) == 1 else None


def _names_a_variable(item: object) -> bool:
    """Whether a ``requires_env`` entry is a name or a ``{name: …}`` mapping with one."""
    name = item.get("name") if isinstance(item, dict) else item
    return isinstance(name, str) and bool(name.strip())


def _described(item: object) -> str:
    if isinstance(item, dict):
        return "a mapping without a text name"
    return "empty" if item is None else f"a {type(item).__name__}"


def _checked_fields(data: dict[Any, Any], path: Path) -> tuple[dict[str, Any], list[str]]:
    """The fields of *data* whose type hermes-memory can use, and one problem per other field."""
    kept: dict[str, Any] = {}
    problems = []
    for key, value in data.items():
        expected = MANIFEST_FIELDS.get(key) if isinstance(key, str) else None
        if key == "requires_env" and isinstance(value, list):
            problems += [
                f"{path}: requires_env entry {number} is {_described(item)}, not a variable "
                "name; ignoring it"
                for number, item in enumerate(value, start=1)
                if not _names_a_variable(item)
            ]
        if expected is None or value is None or isinstance(value, expected[0]):
            kept[str(key)] = value
        else:  # never str() the value: an alias bomb expands to gigabytes
            problems.append(
                f"{path}: {key} must be {expected[1]}, not {type(value).__name__}; ignoring it"
            )
    return kept, problems


def read_manifest(plugin_root: Path, package_dir: Path) -> tuple[dict[str, Any], tuple[str, ...]]:
    """``plugin.yaml`` of a plugin (root first, then the package), and what was wrong with it.

    The manifest is optional: an absent one is ``{}``; an unreadable, oversized
    or malformed one is ``{}`` plus the problem, and a field of the wrong type
    is dropped with its problem, so the plugin still loads.
    """
    import yaml

    for directory in dict.fromkeys((plugin_root, package_dir)):
        path = directory / MANIFEST
        if not path.exists():
            continue
        try:
            size = path.stat().st_size
            if not path.is_file():
                return {}, (f"{path} is not a file; ignoring it",)
            if size > MANIFEST_MAX_BYTES:
                return {}, (
                    f"{path} is {size} bytes, more than the {MANIFEST_MAX_BYTES} a plugin.yaml "
                    "may have; ignoring it",
                )
            data = yaml.safe_load(path.read_text(encoding="utf-8-sig"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError, RecursionError) as exc:
            cause = " ".join(describe_exception(exc).split())
            return {}, (f"{path} cannot be read, ignoring it: {cause}",)
        if data is None:  # an empty file
            return {}, ()
        if not isinstance(data, dict):
            return {}, (
                f"{path} holds a {type(data).__name__}, not a mapping of name, description, "
                "version; ignoring it",
            )
        kept, problems = _checked_fields(data, path)
        return kept, tuple(problems)
    return {}, ()


def scan_plugin_folders(plugins_dir: Path) -> list[PluginFolder]:
    """Memory-plugin folders directly under *plugins_dir*, sorted by name."""
    found = []
    for child in _visible_dirs(plugins_dir):
        package_dir = _package_dir(child)
        if package_dir is not None:
            found.append(PluginFolder(child.name, child, package_dir))
    return found


def other_plugin_folders(plugins_dir: Path) -> list[Path]:
    """Folders under *plugins_dir* that hold no memory plugin (general Hermes plugins, say)."""
    return [child for child in _visible_dirs(plugins_dir) if _package_dir(child) is None]


MISPLACED_PARENTS = (Path("plugins") / "memory", Path("hermes-agent") / "plugins" / "memory")
"""Where, under ``HERMES_HOME``, installers put memory plugins that no scan reaches:
one level too deep, or Hermes Agent's own install tree (its bundled providers' folder)."""


def misplaced_plugin_folders(home: Path) -> list[Path]:
    """Memory-plugin folders where no scan looks; nothing is imported.

    Under :data:`MISPLACED_PARENTS` of *home*, and ``plugins/memory/`` of each
    ``sys.path`` folder: a wheel that installs its plugin there (sonzai-hermes)
    counts on Hermes Agent being installed in the same environment, its bundled
    providers' folder then being that one.
    """
    parents = [home / parent for parent in MISPLACED_PARENTS]
    parents += [Path(entry) / "plugins" / "memory" for entry in sys.path if entry]
    return [
        child
        for parent in dict.fromkeys(parents)
        for child in _visible_dirs(parent)
        if _package_dir(child) is not None
    ]


def with_manifest(folder: PluginFolder) -> PluginFolder:
    """*folder* with its ``plugin.yaml`` read (and what was wrong with it)."""
    manifest, problems = read_manifest(folder.root, folder.package_dir)
    return PluginFolder(folder.name, folder.root, folder.package_dir, manifest, problems)


_locks_guard = threading.Lock()
_module_locks: dict[str, threading.Lock] = {}


def _lock_for(module_name: str) -> threading.Lock:
    with _locks_guard:
        return _module_locks.setdefault(module_name, threading.Lock())


def _ensure_namespace() -> None:
    if NAMESPACE not in sys.modules:
        namespace = types.ModuleType(NAMESPACE, "Folder memory plugins, one per resolved path.")
        namespace.__path__ = []
        sys.modules[NAMESPACE] = namespace


def _forget(module_name: str) -> None:
    for name in [n for n in sys.modules if n == module_name or n.startswith(module_name + ".")]:
        del sys.modules[name]


def _preload_siblings(package: types.ModuleType, package_dir: Path) -> None:
    for path in sorted(package_dir.glob("*.py")):
        if path.stem == "__init__" or not path.stem.isidentifier():
            continue
        name = f"{package.__name__}.{path.stem}"
        if name in sys.modules:  # already imported on its own (a plugin's cli.py, say)
            setattr(package, path.stem, sys.modules[name])
            continue
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            continue
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            contain(spec.loader.exec_module, module)
        except Exception as exc:  # a sibling may fail; __init__ decides
            sys.modules.pop(name, None)
            logger.debug("Pre-loading %s failed: %s", path, describe_exception(exc))
            continue
        setattr(package, path.stem, module)


def load_folder_module(folder: PluginFolder) -> types.ModuleType:
    """Import *folder*'s package under its synthetic name (cached while it succeeds)."""
    module_name = folder.module_name
    with _lock_for(module_name):
        cached = sys.modules.get(module_name)
        if cached is not None and getattr(cached, "__file__", None):
            return cached
        _ensure_namespace()
        init = folder.package_dir / "__init__.py"
        spec = importlib.util.spec_from_file_location(
            module_name, init, submodule_search_locations=[str(folder.package_dir)]
        )
        if spec is None or spec.loader is None:  # pragma: no cover - a .py path always has one
            raise PluginError(f"Cannot import {init}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        try:
            _preload_siblings(module, folder.package_dir)
            contain(spec.loader.exec_module, module)
        except BaseException as exc:
            _forget(module_name)  # never leave a half-run module behind
            if not isinstance(exc, Exception):
                raise  # Ctrl-C
            raise PluginError(f"importing {init} raised {describe_import_failure(exc)}") from exc
        return module


def load_folder_submodule(folder: PluginFolder, stem: str) -> types.ModuleType:
    """Import only ``<stem>.py`` of *folder* (its ``cli.py``, say), not the plugin itself.

    The package is represented by an empty shell whose path is the plugin
    directory, so the file's relative imports resolve without running the
    plugin's ``__init__.py``; loading the plugin later replaces the shell.
    """
    module_name = folder.module_name
    full_name = f"{module_name}.{stem}"
    path = folder.package_dir / f"{stem}.py"
    with _lock_for(module_name):
        cached = sys.modules.get(full_name)
        if cached is not None:
            return cached
        _ensure_namespace()
        if module_name not in sys.modules:
            shell_spec = importlib.machinery.ModuleSpec(module_name, None, is_package=True)
            shell_spec.submodule_search_locations = [str(folder.package_dir)]
            sys.modules[module_name] = importlib.util.module_from_spec(shell_spec)
        spec = importlib.util.spec_from_file_location(full_name, path)
        if spec is None or spec.loader is None:  # pragma: no cover - a .py path always has one
            raise PluginError(f"Cannot import {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[full_name] = module
        try:
            contain(spec.loader.exec_module, module)
        except BaseException as exc:
            sys.modules.pop(full_name, None)
            if not isinstance(exc, Exception):
                raise  # Ctrl-C
            raise PluginError(f"importing {path} raised {describe_import_failure(exc)}") from exc
        return module


def project_plugins_dir(user_dir: Path) -> Path | None:
    """``./.hermes/plugins`` when :data:`PROJECT_PLUGINS_ENV` enables it (unless *user_dir*)."""
    if not is_truthy(os.environ.get(PROJECT_PLUGINS_ENV)):
        return None
    project_dir = Path.cwd() / ".hermes" / "plugins"
    try:
        if project_dir.resolve() == user_dir.resolve():
            return None
    except OSError:
        return None
    return project_dir


def plugin_folder(
    name: str, hermes_home: str | os.PathLike[str] | None = None
) -> PluginFolder | None:
    """The folder plugin offering *name* (its directory or ``plugin.yaml`` name), if permitted.

    Looks in ``$HERMES_HOME/plugins`` then, when enabled, ``./.hermes/plugins``;
    nothing is imported.
    """
    home = Path(hermes_home).expanduser() if hermes_home is not None else get_hermes_home()
    policy = current_policy(home)
    user_dir = home / "plugins"
    project_dir = project_plugins_dir(user_dir)
    folders = [
        with_manifest(folder)
        for directory in (user_dir, project_dir)
        if directory is not None
        for folder in scan_plugin_folders(directory)
    ]
    permitted = [f for f in folders if policy.permits(f.name, f.manifest_name)]
    by_directory = [f for f in permitted if f.name == name]
    by_manifest = [f for f in permitted if f.manifest_name == name]
    matches = by_directory or by_manifest
    return matches[0] if matches else None
