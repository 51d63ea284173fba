"""Plugin discovery: where memory providers come from, and which one wins.

Four sources offer providers, consulted in this order of precedence (when two
offer the same name, the first one wins and the other is listed as shadowed):

1. ``entry_point`` — pluggy plugins of project ``hermes_memory``: installed
   distributions declaring ``[project.entry-points.hermes_memory]`` whose module
   implements ``register_memory_providers(register)``. The name is the
   provider's own ``name``.
2. ``folder`` — ``$HERMES_HOME/plugins/<name>/`` written the Hermes Agent way
   (``register(ctx)`` or a ``MemoryProvider`` subclass). The name is the
   directory name.
3. ``project`` — ``./.hermes/plugins/<name>/``, only when
   ``HERMES_ENABLE_PROJECT_PLUGINS`` is truthy, so a repository you ``cd`` into
   cannot inject a backend.
4. ``hermes_entry_point`` — Hermes Agent's own entry-point group
   ``hermes_agent.memory_providers``; the name is the entry-point name.

Why this order: installed distributions are the versioned, tested path (the
builtin provider is one of them), so a stray folder can never replace
``builtin`` or an installed provider of the same name — the same rule Hermes
applies to its bundled providers. Among what remains, the user's own profile
beats the project directory, and both beat the Hermes group, which exists only
for compatibility. Precedence follows the source, not the plugin's health: a
broken plugin still holds its name, and the listing says why it is broken.

``plugins.allow`` / ``plugins.block`` in ``config.yaml`` and the environment
variables ``HERMES_MEMORY_PLUGINS_ALLOW`` / ``HERMES_MEMORY_PLUGINS_BLOCK`` filter
every source (see :mod:`hermes_core.discovery.policy`). A broken plugin never
breaks discovery: it costs one warning naming the plugin and the cause, and its
listing entry carries the error. ``HERMES_HOME`` is resolved on every call.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pluggy

from hermes_core.config import get_hermes_home, load_config, selected_provider
from hermes_core.discovery.deadline import PluginLoadTimeout, bounded_call, load_deadline
from hermes_core.discovery.entry_points import (
    entry_point_groups,
    entry_points_in,
    package_dir_of,
)
from hermes_core.discovery.extract import (
    contain,
    describe_exception,
    describe_import_failure,
    instantiate,
)
from hermes_core.discovery.folders import (
    MISPLACED_PARENTS,
    PROJECT_PLUGINS_ENV,
    PluginFolder,
    load_folder_module,
    misplaced_plugin_folders,
    other_plugin_folders,
    plugin_folder,
    printable,
    project_plugins_dir,
    scan_plugin_folders,
    with_manifest,
)
from hermes_core.discovery.info import (
    ProviderInfo,
    Source,
    failure,
    missing_env_reason,
    name_problem,
    probe,
    reason_of,
)
from hermes_core.discovery.policy import PluginPolicy, current_policy
from hermes_core.discovery.registry import (
    PluginRecord,
    PluginRegistry,
    Registration,
    get_registry,
    plugin_label,
    reset_registry,
)
from hermes_core.discovery.tamper import Replacement, watch
from hermes_core.errors import ConfigError, PluginError
from hermes_core.plugin_objects import provider_from_object
from hermes_core.provider import BUILTIN_PROVIDER_NAME, MemoryProvider

__all__ = [
    "HERMES_ENTRY_POINT_GROUP",
    "PROJECT_PLUGINS_ENV",
    "SOURCE_PRECEDENCE",
    "PluginPolicy",
    "PluginRecord",
    "ProviderInfo",
    "UnreadEntryPoint",
    "activate_providers",
    "discover_providers",
    "get_plugin_manager",
    "hermes_entry_point_folder",
    "list_plugins",
    "load_builtin_provider",
    "load_memory_provider",
    "misplaced_plugins",
    "non_provider_folders",
    "plugin_folder",
    "plugin_policy",
    "reset_plugin_manager",
    "unread_entry_points",
]

logger = logging.getLogger("hermes_core.plugins")

HERMES_ENTRY_POINT_GROUP = "hermes_agent.memory_providers"
SOURCE_PRECEDENCE: tuple[Source, ...] = ("entry_point", "folder", "project", "hermes_entry_point")


def get_plugin_manager() -> pluggy.PluginManager:
    """The process-wide pluggy manager with every permitted ``hermes_memory`` plugin."""
    return get_registry().pm


def reset_plugin_manager() -> None:
    """Drop the cached manager and entry-point scan; the next call rebuilds them.

    Call it after installing or removing a distribution in a running process (tests),
    or after changing the allow/block lists.
    """
    reset_registry()


def list_plugins() -> list[PluginRecord]:
    """Every pluggy plugin with its distribution and hooks, plus blocked and failed ones."""
    return get_registry().plugins()


def plugin_policy(hermes_home: str | os.PathLike[str] | None = None) -> PluginPolicy:
    """The allow/block lists in force for *hermes_home* (default: the active home)."""
    return current_policy(_home(hermes_home))


def _home(hermes_home: str | os.PathLike[str] | None) -> Path:
    return Path(hermes_home).expanduser() if hermes_home is not None else get_hermes_home()


@dataclass
class _Candidate:
    """A provider one source offers under *name*; ``load`` builds an instance."""

    name: str
    info: ProviderInfo
    label: str
    load: Callable[[], Any]
    aliases: tuple[str, ...] = ()

    def permitted_by(self, policy: PluginPolicy) -> bool:
        return policy.permits(
            self.name, self.info.plugin, self.info.distribution, self.info.provider_name
        )


def _load(candidate: _Candidate) -> Any:
    """*candidate*'s provider, loaded within :data:`.deadline.PLUGIN_LOAD_TIMEOUT` seconds.

    Functions of ours the plugin rebinds while it loads are put back, and each
    is logged as a warning naming the plugin (:mod:`hermes_core.discovery.tamper`).
    """
    replaced: list[Replacement] = []
    try:
        with watch(replaced), load_deadline():
            return candidate.load()
    except PluginLoadTimeout as exc:  # raised between the plugin's code and ours
        raise PluginError(str(exc)) from exc
    finally:
        for replacement in replaced:
            logger.warning(
                "Memory plugin %r (%s) %s while loading; the original was put back. "
                "A plugin must not change hermes-memory's own functions: block it or fix it",
                candidate.name,
                candidate.label,
                replacement.describe(),
            )


def _static_name(obj: Any) -> str | None:
    """A provider's name read without creating it (a plain string class attribute)."""
    value = getattr(obj, "name", None) if isinstance(obj, type) else None
    return value if isinstance(value, str) else None


def _from_registration(reg: Registration) -> _Candidate:
    label = f"plugin {plugin_label(reg.plugin, reg.distribution, reg.version)}"
    base = ProviderInfo(
        name=reg.plugin,
        source="entry_point",
        distribution=reg.distribution,
        version=reg.version,
        plugin=reg.plugin,
    )
    if reg.error is not None:
        return _Candidate(reg.plugin, base, label, _fail(reg.error))
    static_name = _static_name(reg.obj)
    if static_name is not None:  # known without creating it: create it only when loaded
        obj = reg.obj
        return _Candidate(
            static_name, base.with_changes(name=static_name), label, lambda: instantiate(obj)
        )
    try:
        provider = _load(_Candidate(reg.plugin, base, label, lambda: instantiate(reg.obj)))
        name = str(bounded_call("name", getattr, provider, "name"))
    except Exception as exc:  # PluginError from loading, or a raising or hanging ``name``
        cause = str(exc) if isinstance(exc, PluginError) else failure("name", exc)
        return _Candidate(reg.plugin, base, label, _fail(cause))
    info = base.with_changes(name=name, provider_name=name)
    return _Candidate(name, info, label, lambda: provider)


def _fail(cause: str) -> Callable[[], Any]:
    def load() -> Any:
        raise PluginError(cause)

    return load


def _pluggy_candidates(registry: PluginRegistry) -> Iterator[_Candidate]:
    for reg in registry.registrations():
        yield _from_registration(reg)


def _folder_candidates(plugins_dir: Path, source: Source, home: Path) -> Iterator[_Candidate]:
    for folder in scan_plugin_folders(plugins_dir):
        folder = with_manifest(folder)
        name = printable(folder.name)
        alias = folder.manifest_name
        aliases = (alias,) if alias and alias != folder.name else ()
        info = ProviderInfo(
            name=name,
            description=folder.description,
            source=source,
            version=folder.version,
            path=printable(str(folder.root)),
            required_env=folder.required_env,
            warnings=folder.manifest_problems,
            aliases=aliases,
        )
        label = f"{source} plugin at {info.path}"
        load = _folder_loader(folder, home)
        if name != folder.name:  # config.yaml (UTF-8 text) could never select it
            load = _fail(
                f"the folder name {name!r} is not valid UTF-8, so memory.provider cannot "
                "select it; rename the directory"
            )
        yield _Candidate(name, info, label, load, aliases)


def _prepare_hermes_plugin(home: Path, folder: PluginFolder | None = None) -> None:
    """Serve the Hermes module names and load ``.env`` before a Hermes-style plugin runs."""
    from hermes_core import hermes_compat  # imported only when such a plugin exists

    hermes_compat.prepare(home)
    if folder is not None:  # its absolute imports, plugins.memory.<name>.*, reach this copy
        hermes_compat.register_alias(folder.name, folder.module_name, folder.package_name)


def _folder_loader(folder: PluginFolder, home: Path) -> Callable[[], Any]:
    def load() -> Any:
        _prepare_hermes_plugin(home, folder)
        module = load_folder_module(folder)
        return provider_from_object(module, f"plugin folder {folder.root}", folder.name)

    return load


def _hermes_entry_point_candidates(home: Path) -> Iterator[_Candidate]:
    for ref in entry_points_in(HERMES_ENTRY_POINT_GROUP):
        info = ProviderInfo(
            name=ref.name,
            source="hermes_entry_point",
            distribution=ref.distribution,
            version=ref.version,
            plugin=ref.name,
            module=ref.entry_point.module,
        )
        label = (
            f"entry point {plugin_label(ref.name, ref.distribution, ref.version)} "
            f"of group {HERMES_ENTRY_POINT_GROUP}"
        )

        def load(ep: Any = ref.entry_point, label: str = label) -> Any:
            _prepare_hermes_plugin(home)
            try:
                obj = contain(ep.load)
            except Exception as exc:  # PluginCrash: a plugin's SystemExit counts too
                cause = describe_import_failure(exc)
                raise PluginError(f"importing {ep.value} raised {cause}") from exc
            return provider_from_object(obj, label, ep.name)

        yield _Candidate(ref.name, info, label, load)


def _candidates(home: Path) -> Iterator[_Candidate]:
    """Every offered provider, highest precedence first."""
    yield from _pluggy_candidates(get_registry())
    user_dir = home / "plugins"
    yield from _folder_candidates(user_dir, "folder", home)
    project_dir = project_plugins_dir(user_dir)
    if project_dir is not None:
        yield from _folder_candidates(project_dir, "project", home)
    yield from _hermes_entry_point_candidates(home)


def _describe(candidate: _Candidate) -> ProviderInfo:
    """Load and probe *candidate*; any failure becomes one warning and the entry's error."""
    for warning in candidate.info.warnings:
        logger.warning("Memory provider %r: %s", candidate.name, warning)
    try:
        provider = _load(candidate)
    except PluginError as exc:
        logger.warning(
            "Memory provider %r (%s) is broken: %s", candidate.name, candidate.label, exc
        )
        return candidate.info.with_changes(error=str(exc))
    info = probe(provider, candidate.info)
    if info.error:
        logger.warning(
            "Memory provider %r (%s) is broken: %s", candidate.name, candidate.label, info.error
        )
    return info


def discover_providers(
    hermes_home: str | os.PathLike[str] | None = None, *, include_shadowed: bool = False
) -> list[ProviderInfo]:
    """Every provider the sources offer, one entry per name.

    Entries come grouped by source in precedence order, sorted by name within a
    source.
    Each entry is probed (created, ``is_available()``, ``unavailable_reason()``,
    ``get_tool_schemas()``); broken plugins appear with ``error`` set. With
    *include_shadowed*, entries that lost their name to a higher source are
    included too, with ``shadowed_by`` set (they are not loaded).
    """
    home = _home(hermes_home)
    policy = current_policy(home)
    winners: dict[str, ProviderInfo] = {}
    listing: list[ProviderInfo] = []
    for candidate in _candidates(home):
        if not candidate.permitted_by(policy):
            continue
        winner = winners.get(candidate.name)
        if winner is not None:
            if winner.source == candidate.info.source:
                logger.warning(
                    "Two %s plugins offer the memory provider %r; using the one from %s",
                    winner.source,
                    candidate.name,
                    winner.distribution or winner.plugin or winner.path,
                )
            if include_shadowed:
                listing.append(candidate.info.with_changes(shadowed_by=winner.source))
            continue
        info = _describe(candidate)
        winners[candidate.name] = info
        listing.append(info)
    listing.sort(key=lambda i: (SOURCE_PRECEDENCE.index(i.source), bool(i.shadowed_by), i.name))
    return listing


def selected_entry(listing: list[ProviderInfo], name: str) -> ProviderInfo | None:
    """The entry of *listing* that ``memory.provider: <name>`` selects.

    As :func:`load_memory_provider` chooses: the entry named *name*, else the one
    folder whose ``plugin.yaml`` name it is (``None`` when several are).
    """
    exact = [info for info in listing if info.name == name]
    if exact:
        return exact[0]
    by_alias = [info for info in listing if name in info.aliases]
    return by_alias[0] if len(by_alias) == 1 else None


def load_memory_provider(
    name: str, hermes_home: str | os.PathLike[str] | None = None
) -> MemoryProvider | None:
    """A fresh instance of provider *name* from the highest-precedence source offering it.

    When no source offers *name*, a folder plugin whose ``plugin.yaml`` declares
    ``name: <name>`` is used (the folder name stays the listing name). A source
    whose offer the allow/block lists exclude is passed over. Returns
    ``None`` (after a warning saying why) when every offer is excluded or the
    winning one fails to load; ``None`` silently when nobody offers the name.
    """
    home = _home(hermes_home)
    policy = current_policy(home)
    blocked = False
    candidates = list(_candidates(home))
    offers = [c for c in candidates if c.name == name]
    if not offers:  # a folder plugin may be selected by its plugin.yaml name too
        offers = [c for c in candidates if name in c.aliases]
        if len({c.name for c in offers}) > 1:
            logger.warning(
                "Memory provider %r is ambiguous: plugin.yaml of %s all use that name; set "
                "memory.provider to one folder name",
                name,
                ", ".join(sorted({c.name for c in offers})),
            )
            return None
    for candidate in offers:
        if not candidate.permitted_by(policy):
            blocked = True  # a lower-precedence source may still offer the name
            continue
        try:
            provider: MemoryProvider = _load(candidate)
        except PluginError as exc:
            logger.warning("Failed to load memory provider %r (%s): %s", name, candidate.label, exc)
            return None
        return provider
    if blocked:
        logger.warning(
            "Memory provider %r is disabled by the plugin allow/block lists (%s)",
            name,
            policy.describe(),
        )
    else:
        logger.debug("No source offers a memory provider named %r", name)
    return None


def non_provider_folders(hermes_home: str | os.PathLike[str] | None = None) -> list[str]:
    """Folders under ``$HERMES_HOME/plugins`` (and, when enabled, ``./.hermes/plugins``)
    that offer no memory provider, such as general Hermes plugins; nothing is imported.

    A folder counts when neither its ``__init__.py`` nor its single package's
    names ``MemoryProvider`` or ``register_memory_provider`` in its first 8 KB.
    """
    home = _home(hermes_home)
    user_dir = home / "plugins"
    project_dir = project_plugins_dir(user_dir)
    holders = {home / parent for parent in MISPLACED_PARENTS}  # see misplaced_plugins()
    return [
        printable(str(path))
        for directory in (user_dir, project_dir)
        if directory is not None
        for path in other_plugin_folders(directory)
        if not (path in holders and scan_plugin_folders(path))  # it holds plugins, one down
    ]


@dataclass(frozen=True)
class UnreadEntryPoint:
    """An installed entry point in a Hermes group that no memory loader reads.

    ``provider`` tells a memory provider declared under the wrong group
    (``hermes.plugins.memory``, or a general group whose module's code names
    ``MemoryProvider``) from a general Hermes plugin (hooks, tools, commands).
    """

    distribution: str | None
    version: str | None
    group: str
    name: str
    value: str
    provider: bool

    def describe(self) -> str:
        """``dist version (group: name = value)``, as ``doctor`` names it."""
        label = " ".join(part for part in (self.distribution, self.version) if part)
        return f"{label or 'an unnamed distribution'} ({self.group}: {self.name} = {self.value})"

    def to_dict(self) -> dict[str, Any]:
        """The fields, for ``plugins --all --json``."""
        return {
            "distribution": self.distribution,
            "version": self.version,
            "group": self.group,
            "name": self.name,
            "value": self.value,
            "kind": "memory provider" if self.provider else "general plugin",
        }


READ_ENTRY_POINT_GROUPS = frozenset({"hermes_memory", HERMES_ENTRY_POINT_GROUP})


def unread_entry_points() -> list[UnreadEntryPoint]:
    """Installed entry points of Hermes groups (named ``hermes…``) that discovery does not read.

    Hermes Agent's general plugins (``hermes_agent.plugins``: hooks, tools,
    commands) are listed so that ``plugins --all`` says where an installed
    Hermes plugin went, as it does for a general plugin's folder; a provider
    under another group is told apart by the group's name or by its module's
    code (located and parsed, never imported).
    """
    from hermes_core.discovery.folders import module_file, names_memory_provider_in_code

    found: list[UnreadEntryPoint] = []
    for group in entry_point_groups():
        if not group.lower().startswith("hermes") or group in READ_ENTRY_POINT_GROUPS:
            continue
        for ref in entry_points_in(group):
            point = ref.entry_point
            module = point.value.partition(":")[0].strip()
            code = module_file(module) if module else None
            provider = "memory" in group.lower() or (
                code is not None and names_memory_provider_in_code(code, module.split(".")[0])
            )
            found.append(
                UnreadEntryPoint(
                    ref.distribution, ref.version, group, point.name, point.value, provider
                )
            )
    return found


def misplaced_plugins(hermes_home: str | os.PathLike[str] | None = None) -> dict[str, str]:
    """Memory-plugin folders where no scan looks, by name: ``name -> path``; nothing is imported.

    Some installers put a plugin in ``$HERMES_HOME/plugins/memory/<name>/`` (a
    level Hermes does not scan either) or in Hermes Agent's own install tree,
    ``$HERMES_HOME/hermes-agent/plugins/memory/<name>/``; it is found once it is
    moved or copied to ``$HERMES_HOME/plugins/<name>/``.
    """
    found: dict[str, str] = {}
    for path in misplaced_plugin_folders(_home(hermes_home)):
        found.setdefault(path.name, printable(str(path)))
    return found


def hermes_entry_point_folder(
    name: str, hermes_home: str | os.PathLike[str] | None = None
) -> PluginFolder | None:
    """The package directory of the ``hermes_agent.memory_providers`` entry point *name*.

    This is where Hermes looks for a pip-installed provider's ``cli.py`` and
    ``plugin.yaml``. ``None`` when no permitted entry point has that name, when
    a ``hermes_memory`` plugin offers the name first, or when the entry point's
    module is not a package; nothing is imported.
    """
    home = _home(hermes_home)
    policy = current_policy(home)
    for ref in entry_points_in(HERMES_ENTRY_POINT_GROUP):
        if ref.name != name or not policy.permits(ref.name, ref.distribution):
            continue
        if any(candidate.name == name for candidate in _pluggy_candidates(get_registry())):
            return None
        directory = package_dir_of(ref.entry_point)
        if directory is None:
            return None
        return with_manifest(PluginFolder(name, directory, directory))
    return None


def load_builtin_provider() -> MemoryProvider:
    """The builtin provider (shipped in hermes-memory-core); :class:`PluginError` if absent."""
    registry = get_registry()
    for candidate in _pluggy_candidates(registry):
        if candidate.name != BUILTIN_PROVIDER_NAME:
            continue
        try:
            provider: MemoryProvider = _load(candidate)
        except PluginError as exc:
            raise PluginError(
                f"The builtin memory provider failed to load: {exc}. It ships "
                "inside hermes-memory-core: reinstall it with "
                "`pip install --force-reinstall hermes-memory-core` (from a clone: "
                "`pip install --force-reinstall .`)."
            ) from exc
        return provider
    failed = [r for r in registry.plugins() if r.name == BUILTIN_PROVIDER_NAME and r.error]
    cause = f" (its plugin could not be loaded: {failed[0].error})" if failed else ""
    raise PluginError(
        f"The builtin memory provider is not installed{cause}. It provides the memory and "
        "session_search tools and ships inside hermes-memory-core: reinstall it with "
        "`pip install --force-reinstall hermes-memory-core` (from a clone: "
        "`pip install --force-reinstall .`)."
    )


def _warn_not_activated(name: str, why: str) -> None:
    logger.warning(
        "Memory provider %r (memory.provider in config.yaml) %s; continuing with the builtin "
        "provider only. Run `hermes-memory doctor` for details.",
        name,
        why,
    )


def activate_providers(
    manager: Any,
    config: dict[str, Any] | None = None,
    hermes_home: str | os.PathLike[str] | None = None,
) -> list[str]:
    """Register the builtin provider, then ``memory.provider`` if it loads and is available.

    A missing, broken or unavailable external provider costs a warning (with its
    ``unavailable_reason()``) and leaves the builtin provider running alone.
    Returns the names of the providers added to *manager*.
    """
    home = _home(hermes_home)
    builtin = load_builtin_provider()
    manager.add_provider(builtin)
    activated = [builtin.name]
    try:
        name = selected_provider(load_config(home) if config is None else config)
    except ConfigError as exc:
        logger.warning("%s Continuing with the builtin provider only.", exc)
        return activated
    if name is None:
        return activated
    provider = load_memory_provider(name, home)
    if provider is None:
        _warn_not_activated(name, "could not be found or loaded")
        return activated
    try:
        problem = name_problem(bounded_call("name", getattr, provider, "name"), name)
    except Exception as exc:
        problem = failure("name", exc)
    if problem:
        _warn_not_activated(name, f"is refused: its {problem}")
        return activated
    try:
        available = bounded_call("is_available()", provider.is_available)
    except Exception as exc:
        _warn_not_activated(
            name, f"failed its availability check ({failure('is_available()', exc)})"
        )
        return activated
    if not available:
        reason = reason_of(provider)
        if not reason:
            folder = plugin_folder(name, home)
            reason = missing_env_reason(folder.required_env if folder else (), provider)
        _warn_not_activated(name, f"is not available: {reason or 'no reason given'}")
        return activated
    try:
        bounded_call("get_tool_schemas()", provider.get_tool_schemas)
    except Exception as exc:
        _warn_not_activated(name, f"could not be registered ({failure('get_tool_schemas()', exc)})")
        return activated
    try:
        contain(manager.add_provider, provider)
    except Exception as exc:
        _warn_not_activated(name, f"could not be registered ({describe_exception(exc)})")
        return activated
    if manager.get_provider(provider.name) is provider:
        activated.append(provider.name)
    return activated
