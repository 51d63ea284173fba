"""``hermes-memory doctor``: check the installation and say what to fix."""

from __future__ import annotations

import contextlib
import os
import shlex
import sqlite3
import sys
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import click

from hermes_core.config import LONGEST_SECONDS, lenient_count, lenient_seconds
from hermes_core.embeddings import INSTALL_HINT as SEMANTIC_INSTALL_HINT

if TYPE_CHECKING:  # pragma: no cover
    from hermes_core.discovery.info import ProviderInfo

Level = Literal["ok", "warn", "fail"]


@dataclass(frozen=True)
class Finding:
    """One check's outcome; ``fix`` says what to do when it is not ``ok``."""

    level: Level
    message: str
    fix: str = ""


def check_home(home: Path) -> list[Finding]:
    """HERMES_HOME exists, is a directory and is writable."""
    if not home.exists() and home.is_symlink():  # a dangling link, or a loop
        target = os.readlink(home)
        return [
            Finding(
                "fail",
                f"HERMES_HOME {home} is a symbolic link that leads nowhere (to {target}, which "
                "is missing or links back round in a loop)",
                "create the folder it points to, or point HERMES_HOME at a folder",
            )
        ]
    if not home.exists():
        return [
            Finding(
                "fail",
                f"HERMES_HOME {home} does not exist",
                f"create it with `mkdir -p {shlex.quote(str(home))}` or point HERMES_HOME at an "
                "existing directory",
            )
        ]
    if not home.is_dir():
        return [
            Finding("fail", f"HERMES_HOME {home} is not a directory", "point HERMES_HOME elsewhere")
        ]
    try:
        with tempfile.TemporaryFile(dir=home):
            pass
    except OSError as exc:
        return [
            Finding(
                "fail",
                f"HERMES_HOME {home} is not writable ({exc.strerror or exc})",
                f"fix its permissions, e.g. `chmod u+rwx {shlex.quote(str(home))}`",
            )
        ]
    return [Finding("ok", f"HERMES_HOME {home} exists and is writable")]


def check_config(home: Path) -> tuple[list[Finding], dict[str, Any] | None]:
    """config.yaml parses and ``memory.provider`` / ``plugins.*`` are well-formed."""
    from hermes_core.config import config_path, load_config, selected_provider
    from hermes_core.discovery.policy import PluginPolicy
    from hermes_core.errors import ConfigError

    path = config_path(home)
    try:
        config = load_config(home)
        selected_provider(config)
        policy = PluginPolicy.from_sources(config, os.environ)
    except ConfigError as exc:
        # HERMES_HOME itself unusable (a file, a link to nowhere): there is no file to edit.
        fix = f"edit {path}" if home.is_dir() else "point HERMES_HOME at a folder"
        return [Finding("fail", str(exc), fix)], None
    found = [
        Finding("ok", f"{path} parses" if path.exists() else f"no {path}: using defaults"),
        Finding("ok", f"plugin lists: {policy.describe()}"),
    ]
    return found, config


def _settings_checks() -> list[tuple[str, Callable[[dict[str, Any]], object]]]:
    """(settings group, validator) pairs; each validator raises on an unusable value."""
    from hermes_core.errors import PluginError
    from hermes_core.llm import ChatClient
    from hermes_core.plugins import load_builtin_provider
    from hermes_core.runtime.compression import CompressionSettings
    from hermes_core.runtime.session import RuntimeSettings

    def endpoint(section: str) -> Callable[[dict[str, Any]], object]:
        def check(config: dict[str, Any]) -> None:
            client = ChatClient.from_config(config, section=section)
            if client is not None:
                client.close()

        return check

    checks: list[tuple[str, Callable[[dict[str, Any]], object]]] = [
        ("model.*", endpoint("model")),
        ("session_search.* model", endpoint("session_search")),
        ("runtime.* and memory.prefetch_timeout", RuntimeSettings.from_config),
        ("compression.* and model.context_window", CompressionSettings.from_config),
    ]
    try:  # builtin memory reads memory.* itself; it is found like any provider
        builtin = load_builtin_provider()
    except PluginError:  # reported by check_providers
        return checks
    check = getattr(builtin, "check_config", None)
    return [("memory.*", check), *checks] if callable(check) else checks


def _missing_api_keys(home: Path, config: dict[str, Any]) -> list[Finding]:
    """A warning for each ``api_key_env`` naming a variable that is set nowhere."""
    from hermes_core.config import cfg_get
    from hermes_core.errors import ConfigError
    from hermes_core.secrets import dotenv_path, get_secret

    found = []
    for section in ("model", "session_search"):
        name = cfg_get(config, f"{section}.api_key_env")
        if not isinstance(name, str) or not name.strip() or cfg_get(config, f"{section}.api_key"):
            continue
        try:
            value = get_secret(name.strip(), hermes_home=home)
        except ConfigError as exc:
            found.append(Finding("fail", str(exc), f"fix {dotenv_path(home)}"))
            continue
        if not value:
            found.append(
                Finding(
                    "warn",
                    f"{section}.api_key_env names {name.strip()}, which is set neither in the "
                    f"environment nor in {dotenv_path(home)}: requests go without an API key",
                    f"set {name.strip()} in {dotenv_path(home)} or export it (or remove "
                    "api_key_env for an endpoint that needs no key)",
                )
            )
    return found


_SEARCH_COUNTS = (
    ("max_concurrency", 1, 5, 3),
    ("max_tokens", 64, 32_000, 2000),
    ("max_chars", 2000, 1_000_000, 100_000),
)
"""``session_search.*`` whole numbers the tool reads: (key, lowest, highest, default)."""
_SEARCH_SECONDS = (("overall_timeout", 60.0),)
"""``session_search.*`` durations the tool reads, and their defaults. ``timeout`` is
checked with the summary model's endpoint, which reads it too."""


def _is_whole(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    try:
        return float(str(value).strip()).is_integer()  # "3" and 3.0 are read as 3
    except ValueError:
        return False


def _usable_seconds(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    try:
        number = float(value)
    except (TypeError, ValueError):
        return False
    return 0 < number <= LONGEST_SECONDS


def check_session_search(home: Path, config: dict[str, Any]) -> list[Finding]:
    """The ``session_search.*`` settings the tool reads besides its model are usable.

    The tool falls back to a default (or the nearest bound) without a word for
    a value it cannot use, and answers an error for a bad ``semantic``: each is
    a problem here, naming the key, the value and what is accepted.
    """
    from hermes_core.config import cfg_get, config_path
    from hermes_core.errors import ConfigError
    from hermes_core.sessions.semantic import SEMANTIC_ENV, semantic_mode

    section = cfg_get(config, "session_search")
    if section is not None and not isinstance(section, Mapping):
        return []  # "session_search must be a mapping" comes with the model's settings
    path = config_path(home)
    found = []

    def problem(key: str, value: Any, accepted: str, used: str, default: str) -> None:
        found.append(
            Finding(
                "fail",
                f"session_search.{key} is {value!r:.80}, but it must be {accepted}: "
                f"session search uses {used} instead",
                f"set session_search.{key} to {accepted} in {path}, or remove it for the "
                f"default ({default})",
            )
        )

    for key, low, high, default in _SEARCH_COUNTS:
        value = cfg_get(config, f"session_search.{key}")
        if value is None:
            continue
        used = lenient_count(value, default, low, high)
        if not _is_whole(value) or used != int(float(str(value).strip())):
            problem(
                key, value, f"a whole number from {low:,} to {high:,}", f"{used:,}", f"{default:,}"
            )
    for key, seconds in _SEARCH_SECONDS:
        value = cfg_get(config, f"session_search.{key}")
        if value is None:
            continue
        used_seconds = lenient_seconds(value, seconds)
        if not _usable_seconds(value):
            problem(
                key,
                value,
                f"a positive number of seconds, at most {LONGEST_SECONDS:,.0f} (a day)",
                f"{used_seconds:g} s",
                f"{seconds:g}",
            )
    hidden = cfg_get(config, "session_search.hidden_sources")
    accepted = "a list of source names (or comma-separated text; null or [] hides none)"
    if hidden is not None and not isinstance(hidden, (str, list)):
        problem("hidden_sources", hidden, accepted, "the default [tool]", "[tool]")
    elif isinstance(hidden, list) and not all(isinstance(item, str) for item in hidden):
        odd = next(item for item in hidden if not isinstance(item, str))
        problem("hidden_sources", hidden, accepted, f"{str(odd)!r} as a source name", "[tool]")
    semantic = cfg_get(config, "session_search.semantic")
    try:
        semantic_mode(semantic)
    except ConfigError as exc:
        where = (
            f"set session_search.semantic to auto, on or off (or true/false) in {path}"
            if semantic is not None
            else f"set ${SEMANTIC_ENV} to auto, on or off, or unset it"
        )
        found.append(
            Finding(
                "fail", f"{exc} Every session search answers this error until it is fixed", where
            )
        )
    return found or [Finding("ok", "session_search.* search settings are usable")]


NEEDS_A_MODEL = (
    "`hermes-memory chat` refuses to start without one; session_search answers with excerpts "
    "instead of summaries, compression keeps an extractive summary, and mem0's local mode "
    "stores turns verbatim instead of extracting facts"
)
"""What works differently without a model endpoint."""


def _model_finding(home: Path, config: dict[str, Any]) -> Finding:
    """Whether a model endpoint is configured (``model.*`` or the environment)."""
    from hermes_core.config import config_path, model_endpoint
    from hermes_core.secrets import profile_environ

    base_url, model = model_endpoint(config, "model", profile_environ(home))
    if base_url and model:
        return Finding("ok", f"model.* settings are usable: {model} at {base_url}")
    missing = " and ".join(
        name for name, value in (("model.base_url", base_url), ("model.model", model)) if not value
    )
    return Finding(
        "warn",
        f"no model is configured ({missing} not set): {NEEDS_A_MODEL}",
        f"set model.base_url and model.model in {config_path(home)} (or HERMES_MODEL_BASE_URL "
        "and HERMES_MODEL); any OpenAI-compatible endpoint works (docs/model-endpoint.md)",
    )


def check_memory_files(home: Path, config: dict[str, Any] | None) -> list[Finding]:
    """MEMORY.md and USER.md fit their character budgets."""
    try:
        from hermes_memory_builtin.entries import dedupe, parse_entries, total_chars
        from hermes_memory_builtin.files import read_memory_file
        from hermes_memory_builtin.snapshot import format_true_usage
        from hermes_memory_builtin.store import MemoryStore
        from hermes_memory_builtin.targets import TARGETS
    except ImportError:  # reported by check_providers
        return []
    from hermes_core.errors import HermesMemoryError

    if config is None:
        return []
    try:
        store = MemoryStore.from_config(home, config)
        if _memory_url(config) is not None:  # check_memory_rows reports the documents
            return []
    except HermesMemoryError:  # reported with the memory.* settings
        return []
    found = []
    for name, target in TARGETS.items():
        path = store.path(name)
        if not path.is_file():
            continue
        read = read_memory_file(path)
        if read.error:
            found.append(
                Finding(
                    "fail",
                    f"{path} cannot be read: {read.error}",
                    "fix the file (valid UTF-8, readable); `hermes-memory memory show` shows "
                    "what it holds",
                )
            )
            continue
        size, limit = total_chars(dedupe(parse_entries(read.text))), store.char_limit(name)
        setting = f"memory.{'memory' if name == 'memory' else 'user'}_char_limit"
        if size <= limit:
            found.append(
                Finding("ok", f"{target.filename} prompt tier: {format_true_usage(size, limit)}")
            )
            continue
        times = f"{size / limit:,.1f}×" if limit else "far over"
        found.append(
            Finding(
                "fail",
                f"{target.filename} holds {size:,} characters, {times} its budget of {limit:,} "
                f"({setting}; {size * 100 // max(limit, 1):,}%): the agent sees only part of "
                "it in its system prompt and no new entry fits",
                f"curate it: `hermes-memory memory show --target {name}` lists the entries; "
                f"remove or merge them (`hermes-memory memory remove --target {name} TEXT`, "
                f"`memory replace`), "
                f"or raise {setting} in {home / 'config.yaml'} (at most 1,000,000); with "
                "memory.overflow: archive and memory.curator: auto, entries that do not fit move "
                "to the archive tier (docs/memory.md)",
            )
        )
    return found


def check_settings(home: Path, config: dict[str, Any] | None) -> list[Finding]:
    """Every documented setting of config.yaml has a usable value."""
    from hermes_core.config import cfg_get, config_path
    from hermes_core.errors import HermesMemoryError

    if config is None:
        return []
    found = []
    for group, validate in _settings_checks():
        try:
            validate(config)
        except (HermesMemoryError, ValueError) as exc:
            found.append(Finding("fail", str(exc), f"edit {config_path(home)}"))
        else:
            found.append(
                _model_finding(home, config)
                if group == "model.*"
                else Finding("ok", f"{group} settings are usable")
            )
        if group.startswith("session_search"):  # then what the tool reads besides its model
            found += check_session_search(home, config)
    found += _missing_api_keys(home, config)
    enabled = cfg_get(config, "plugins.enabled")
    if isinstance(enabled, list) and enabled:
        names = ", ".join(str(name) for name in enabled)
        found.append(
            Finding(
                "warn",
                f"plugins.enabled lists {names}: Hermes Agent's general plugins, which "
                "hermes-memory does not run (it runs the memory provider and the hooks its "
                "plugin registers); a memory provider that leaves work to its general plugin "
                "(turn capture, say) does less here",
                "nothing to do if the list is for Hermes Agent; otherwise choose a memory "
                "provider that does the work itself",
            )
        )
    return found


_MANIFEST_FIX = (
    "fix the plugin's plugin.yaml (a mapping of name, description, version and "
    "requires_env strings) or delete it: it is optional"
)


def check_providers(home: Path, config: dict[str, Any] | None) -> list[Finding]:
    """The builtin and the selected provider load; every discovered provider's status."""
    from hermes_core.config import selected_provider
    from hermes_core.errors import PluginError
    from hermes_core.plugins import (
        discover_providers,
        load_builtin_provider,
        misplaced_plugins,
        non_provider_folders,
        plugin_policy,
        selected_entry,
    )

    found: list[Finding] = []
    try:
        load_builtin_provider()
        found.append(Finding("ok", "builtin provider installed"))
    except PluginError as exc:
        found.append(
            Finding(
                "fail",
                str(exc),
                "reinstall hermes-memory-core, which ships it: "
                "pip install --force-reinstall hermes-memory-core",
            )
        )
    with contextlib.redirect_stdout(sys.stderr):  # a plugin printing while it loads
        everything = discover_providers(home, include_shadowed=True)
    listing = [info for info in everything if not info.shadowed_by]
    shadowed = [info for info in everything if info.shadowed_by]
    for info in listing:
        found += [
            Finding("warn", f"provider {info.name!r} ({info.source}): {warning}", _MANIFEST_FIX)
            for warning in info.warnings
        ]
        if info.name == "builtin":
            continue
        if info.error:
            found.append(
                Finding(
                    "warn",
                    f"provider {info.name!r} ({info.source}) is broken: {info.error}",
                    "fix or remove the plugin, or block it with HERMES_MEMORY_PLUGINS_BLOCK",
                )
            )
        elif info.available:
            found.append(Finding("ok", f"provider {info.name!r} is available"))
        else:
            reason = info.unavailable_reason or "no reason given"
            found.append(Finding("ok", f"provider {info.name!r} is unavailable: {reason}"))
    selected = selected_provider(config) if config is not None else None
    if selected is None:
        idle = [i for i in listing if i.name != "builtin" and not i.error]
        if not idle:
            found.append(Finding("ok", "memory.provider not set: builtin memory only"))
            return found
        idle_names = [i.name for i in idle]
        named = (
            idle_names[0]
            if len(idle_names) == 1
            else f"{', '.join(idle_names[:-1])} and {idle_names[-1]}"
        )
        first = next((i.name for i in idle if i.available), idle_names[0])
        found.append(
            Finding(
                "warn",
                f"{named} {'is' if len(idle_names) == 1 else 'are'} installed but memory.provider "
                "is not set, so only builtin memory is used",
                f"to use one: hermes-memory setup {first} --activate (or set memory.provider: "
                f"{first} in config.yaml); or uninstall what you do not use",
            )
        )
        return found
    match = selected_entry(listing, selected)
    policy = plugin_policy(home)
    if match is None and not policy.permits(selected):
        found.append(
            Finding(
                "fail",
                f"memory.provider is {selected!r} but the plugin lists exclude it "
                f"({policy.describe()})",
                "remove it from plugins.block / HERMES_MEMORY_PLUGINS_BLOCK or add it to the "
                "allow list",
            )
        )
    elif match is None:
        names = ", ".join(i.name for i in listing if i.name != "builtin") or "none"
        general = [path for path in non_provider_folders(home) if Path(path).name == selected]
        misplaced_by_name = misplaced_plugins(home)
        misplaced = next(
            (misplaced_by_name[n] for n in misplaced_by_name if _same_name(n, selected)), None
        )
        namesake = next(
            (
                info
                for info in listing
                if _same_name(info.name, selected) or _same_name(info.provider_name, selected)
            ),
            None,
        )
        elsewhere, general_points = _other_group_entry_points(selected)
        found.append(
            Finding(
                "fail",
                f"memory.provider is {selected!r} but no such provider was found (found: {names})"
                + (
                    f"; the folder {general[0]} offers no memory provider (its __init__.py "
                    "names neither MemoryProvider nor register_memory_provider: a general "
                    "Hermes plugin, which hermes-memory does not run)"
                    if general
                    else ""
                )
                + (
                    f"; the plugin {namesake.name!r} calls itself {namesake.provider_name!r}, "
                    "but memory.provider selects a plugin by its folder (or entry-point) name"
                    if namesake is not None
                    else ""
                )
                + (
                    f"; a plugin folder of that name is at {misplaced}, where no scan looks"
                    if misplaced
                    else ""
                )
                + (
                    f"; {elsewhere} declares it under an entry-point group that neither "
                    "Hermes' memory loader nor hermes-memory reads (they read "
                    "hermes_agent.memory_providers and hermes_memory)"
                    if elsewhere
                    else ""
                )
                + (
                    f"; {general_points} is a general Hermes plugin by that name (its code "
                    "names no MemoryProvider), which no memory loader runs"
                    if general_points and not elsewhere
                    else ""
                ),
                f"set memory.provider: {namesake.name} in config.yaml"
                if namesake is not None
                else "select a memory provider plugin instead (that folder holds a general "
                "plugin), or remove memory.provider to use builtin memory only"
                if general and not misplaced and not elsewhere
                else "select a memory provider plugin instead (that package is a general "
                "plugin; Hermes Agent runs it from plugins.enabled), or remove memory.provider "
                "to use builtin memory only"
                if general_points and not misplaced and not elsewhere
                else f"copy or move {misplaced} to {home / 'plugins' / selected}"
                if misplaced
                else "run the package's own installer (through `hermes-memory hermes-run` if it "
                f"needs Hermes' modules) or copy its plugin folder to {home / 'plugins' / selected}"
                if elsewhere
                else _unknown_provider_fix(home, selected, listing),
            )
        )
    elif match.error:
        found.append(
            Finding(
                "fail",
                f"memory.provider {selected!r} is broken: {match.error}",
                "fix or reinstall the plugin, or change memory.provider in config.yaml",
            )
        )
    elif not match.available:
        found.append(
            Finding(
                "fail",
                f"memory.provider {selected!r} is not available: "
                f"{match.unavailable_reason or 'no reason given'}",
                "do what the reason says, or change memory.provider in config.yaml"
                if match.unavailable_reason
                else "the plugin says nothing more: run its own setup or init command, or "
                "check the settings its README names; or change memory.provider in config.yaml",
            )
        )
    else:
        found.append(Finding("ok", f"memory.provider {selected!r} is available"))
    if match is not None:
        hidden = [info for info in shadowed if info.name == match.name]
        found += [_shadowed_finding(selected, match, info) for info in hidden]
    return found


def _same_name(name: str | None, selected: str) -> bool:
    """*name* is *selected* written with ``-`` and ``_`` swapped or in another case."""

    def folded(text: str) -> str:
        return text.strip().lower().replace("-", "_")

    return name is not None and folded(name) == folded(selected)


def _unknown_provider_fix(home: Path, selected: str, listing: list[ProviderInfo]) -> str:
    """What to do about ``memory.provider: <selected>`` that nothing offers: our provider's
    install line, the installed name it is close to, or where a provider can come from."""
    from hermes_core.cli.provider_hints import close_names, install_line

    line = install_line(selected)
    if line is not None:
        return f"install it: {line} (then `hermes-memory setup {selected.strip().lower()}`)"
    close = close_names(selected, [i.name for i in listing if i.name != "builtin"])
    if close:
        return f"did you mean {close[0]}? set memory.provider: {close[0]} in config.yaml"
    own = close_names(selected, list(_own_providers()))
    if own:
        return f"did you mean {own[0]}? install it: {install_line(own[0])}"
    return (
        f"install the provider's package, add its folder under {home / 'plugins'}, or change "
        "memory.provider in config.yaml"
    )


def _own_providers() -> dict[str, str]:
    from hermes_core.cli.provider_hints import OWN_PROVIDERS

    return OWN_PROVIDERS


def _other_group_entry_points(name: str) -> tuple[str, str]:
    """Installed entry points called *name* in groups discovery does not read, described.

    Returns ``(providers, general)``: those in a group named for memory or whose
    module names ``MemoryProvider`` (located, not imported), and those that are
    general Hermes plugins.
    """
    from importlib.metadata import distributions

    from hermes_core.discovery.folders import module_file, names_memory_provider_in_code
    from hermes_core.plugins import HERMES_ENTRY_POINT_GROUP

    read = {"hermes_memory", HERMES_ENTRY_POINT_GROUP, "console_scripts", "gui_scripts"}
    providers, general = set(), set()
    for dist in distributions():
        try:
            points = [p for p in dist.entry_points if p.name == name and p.group not in read]
            label = f"{dist.metadata['Name']} {dist.version}"
        except Exception:  # a broken distribution's metadata says nothing useful here
            continue
        for point in points:
            described = f"{label} ({point.group}: {point.name} = {point.value})"
            code = module_file(point.module)
            # A group named for memory (hermes.memory) is meant for providers, duck-typed too.
            # Otherwise only the code counts: a general plugin's docstring may well say
            # it is no MemoryProvider (psy-core-hermes).
            package = point.module.split(".")[0]
            if "memory" in point.group.lower() or (
                code is not None and names_memory_provider_in_code(code, package)
            ):
                providers.add(described)
            else:
                general.add(described)
    return ", ".join(sorted(providers)), ", ".join(sorted(general))


def _where(info: ProviderInfo) -> str:
    """Where a discovered provider comes from: its folder, or the distribution installing it."""
    if info.path:
        return info.path
    return f"distribution {info.distribution}" if info.distribution else "an unknown place"


def _installed_package(info: ProviderInfo) -> str | None:
    """The top-level package of *info*'s code, unless it is a folder plugin's own module."""
    from hermes_core.discovery.folders import NAMESPACE

    package = (info.module or "").split(".")[0]
    return package if package and package != NAMESPACE else None


def _same_package(folder: ProviderInfo, installed: ProviderInfo) -> bool:
    """Whether both providers' code is one installed package: re-exported, or copied whole.

    A folder that imports the package shares its module; one a setup script
    copied from it (metronix) has the same ``__init__.py``, located without
    importing the package.
    """
    package = _installed_package(installed)
    if package is None:
        return False
    if package == _installed_package(folder):
        return True
    import importlib.util

    try:
        spec = importlib.util.find_spec(package)
        origin = Path(spec.origin) if spec is not None and spec.origin else None
        return (
            origin is not None
            and folder.path is not None
            and (Path(folder.path) / "__init__.py").read_bytes() == origin.read_bytes()
        )
    except (ImportError, ValueError, OSError):
        return False


def _shadowed_finding(selected: str, match: ProviderInfo, info: ProviderInfo) -> Finding:
    """The warning for *info*, a provider of the selected name that *match* hides."""
    from hermes_core.discovery.info import SOURCE_LABELS

    label = SOURCE_LABELS.get(info.source, info.source)
    if _same_package(match, info):  # an installer's folder that imports the installed package
        return Finding(
            "ok",
            f"memory.provider {selected!r}: {_where(match)} runs the code of the package "
            f"{_installed_package(info)} that the {label} of {_where(info)} offers too; "
            "one provider, found twice",
        )
    problem = (
        f"memory.provider {selected!r} is the {SOURCE_LABELS.get(match.source, match.source)} "
        f"provider ({_where(match)}); the {label} provider of the same name ({_where(info)}) "
        "is shadowed and never loaded"
    )
    if info.source in ("folder", "project"):
        fix = (
            "to use the shadowed one, rename its folder and set memory.provider to the new "
            "name; otherwise remove it"
        )
    else:
        fix = (
            f"to use the installed one, remove or rename {_where(match)}; otherwise "
            f"uninstall {info.distribution or 'its distribution'}"
        )
    return Finding("warn", problem, fix)


_SALVAGE_FIX = (
    "run `hermes-memory sessions recover` to salvage every readable session and message into "
    "a new file (it says how many rows were lost), or restore a backup"
)


def check_session_database(home: Path, config: dict[str, Any] | None) -> list[Finding]:
    """The PostgreSQL session store, when ``sessions.url`` names one: the server answers,
    the schema's version and migrations, the search indexes (missing, invalid or left over by a
    concurrent build cut short), and messages left in the spool."""
    from hermes_core.errors import HermesMemoryError
    from hermes_core.sessions.backends import sessions_url
    from hermes_core.sessions.pgmaintenance import schema_status
    from hermes_core.sessions.postgres import masked_url

    try:
        url = sessions_url(config or {})
    except HermesMemoryError as exc:
        return [Finding("fail", str(exc), "fix sessions.url (or HERMES_SESSIONS_URL)")]
    if url is None:
        return []
    try:
        status = schema_status(url)
    except HermesMemoryError as exc:
        return [
            Finding(
                "fail",
                str(exc),
                "start the server (or open the network path to it), or fix sessions.url",
            )
        ]
    shown = masked_url(url)
    findings = [
        _schema_finding(
            shown, status.version, status.known, status.applied, "hermes_schema_migrations"
        )
    ]
    findings += [
        Finding("fail", f"{shown}: {index.text}", index.fix)
        for index in status.indexes
        if index.level == "problem"
    ]
    if status.stems_left:
        findings.append(
            Finding(
                "warn",
                f"{shown} has {status.stems_left:,} messages still to stem (migration 4, "
                "unfinished): searches find them by Snowball's stems until then",
                "start a process that opens the store for writing (an agent, `hermes-memory "
                "chat`): it goes on from where the last one stopped",
            )
        )
    findings += [
        Finding("warn", f"{shown}: {index.text}", index.fix)
        for index in status.indexes
        if index.level == "warning"
    ]
    findings += _spool_findings(home)
    return findings


def _schema_finding(
    shown: str,
    version: int,
    known: int,
    applied: tuple[int, ...],
    table: str,
    first_use: str = "the first session creates the session tables",
    schema: str = "schema",
) -> Finding:
    """What a store's migrations table (*table*) says of its schema at *shown*."""
    if version == 0:
        return Finding("ok", f"{shown} answers; {first_use}")
    if version > known:
        return Finding(
            "fail",
            f"{shown} has {schema} version {version}, written by a newer hermes-memory (this one "
            f"knows up to {known}): this one cannot use it",
            "upgrade hermes-memory",
        )
    missing = [v for v in range(1, version + 1) if v not in applied]
    if missing:
        return Finding(
            "fail",
            f"{shown} records {schema} version {version} but not migration(s) "
            f"{', '.join(map(str, missing))}: {table} was edited by hand",
            "restore the database from a backup, or migrate into a new one "
            "(`hermes-memory sessions migrate`)",
        )
    if version < known:
        return Finding(
            "ok",
            f"{shown} answers at {schema} version {version}; the next agent to start applies "
            f"migration(s) {', '.join(map(str, range(version + 1, known + 1)))}",
        )
    return Finding("ok", f"{shown} answers; {schema} version {version}, every migration applied")


def _spool_findings(home: Path) -> list[Finding]:
    from hermes_core.sessions.spool import SPOOL_DIR, SessionSpool

    folder = home / SPOOL_DIR
    files = sorted(folder.glob("sessions-*.jsonl")) if folder.is_dir() else []
    waiting = sum(SessionSpool(path).pending() for path in files)
    findings = []
    if waiting:
        findings.append(
            Finding(
                "warn",
                f"{waiting} append(s) kept in {folder} while the database was unreachable "
                "are not stored yet",
                "`hermes-memory sessions spool` stores them now (agents of the same user "
                "store them too, when they next write or start); keep the folder until then",
            )
        )
    rejected = sorted(folder.glob("sessions-*.jsonl.rejected")) if folder.is_dir() else []
    for path in rejected:
        findings.append(
            Finding(
                "warn",
                f"{path} holds spooled messages the database refused (their session was "
                "deleted meanwhile, or a record was damaged)",
                "read it (one JSON record a line: a session id, its messages), store what "
                "you need again, then delete it",
            )
        )
    return findings


def check_state_db(home: Path) -> list[Finding]:
    """state.db, when present, opens and every sessions command can read it."""
    path = home / "state.db"
    if not path.exists():
        return [Finding("ok", f"no {path} yet: it is created by the first session")]
    try:
        connection = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=5)
        try:
            names = {row[0] for row in connection.execute("SELECT name FROM sqlite_master")}
        finally:
            connection.close()
    except sqlite3.Error as exc:
        return [Finding("fail", f"{path} cannot be opened: {exc}", _SALVAGE_FIX)]
    if not names:
        return [Finding("ok", f"{path} opens (empty: the first session fills it)")]
    if not {"sessions", "messages"} <= names:
        return [
            Finding(
                "warn",
                f"{path} opens but holds no sessions (no 'sessions' and 'messages' tables): "
                "it is another program's database, and sessions cannot be recorded in it",
                "move it aside, or point HERMES_HOME at another folder",
            )
        ]
    return _session_db_findings(path, len(names))


def _session_db_findings(path: Path, objects: int) -> list[Finding]:
    """Whether the commands can read the session database at *path* (one row per table)."""
    from hermes_core.errors import HermesMemoryError
    from hermes_core.sessions import SCHEMA_VERSION, SessionStore

    try:
        with SessionStore(path, read_only=True) as store:
            layout, problems = store.layout, store.probe()
            cjk_left = store.gram_backlog() if layout.ours and not problems else 0
    except HermesMemoryError as exc:
        return [Finding("fail", str(exc), _SALVAGE_FIX)]
    if problems:
        return [
            Finding(
                "fail",
                f"{path} is damaged: {'; '.join(problems)}",
                "run `hermes-memory sessions check`, then `hermes-memory sessions repair`; "
                "if a rebuild cannot fix the file, `hermes-memory sessions recover` salvages "
                "every readable row into a new one",
            )
        ]
    if not layout.ours:
        return [
            Finding(
                "warn",
                f"{path} was written by Hermes Agent: hermes-memory reads it but cannot record "
                "sessions in it",
                "point HERMES_HOME at another folder to chat; read this file with "
                "`hermes-memory sessions list --db`",
            )
        ]
    if layout.version > SCHEMA_VERSION:
        return [
            Finding(
                "warn",
                f"{path} was written by a newer hermes-memory (schema version {layout.version}); "
                "this one only reads it",
                "upgrade hermes-memory",
            )
        ]
    findings = [
        Finding(
            "ok",
            f"{path} opens ({objects} schema objects); "
            "`hermes-memory sessions check` reads it through for damage",
        )
    ]
    if cjk_left:
        why = (
            f"the upgrade to schema version {SCHEMA_VERSION}"
            if layout.version < SCHEMA_VERSION
            else "an upgrade or repair left unfinished"
        )
        findings.append(
            Finding(
                "ok",
                f"{cjk_left:,} CJK message(s) in {path} are not in the CJK search index yet "
                f"({why}): searches find them meanwhile, and the next agent or writing command "
                "indexes them in batches; `hermes-memory sessions stats` counts what is left",
            )
        )
    return findings


def check_semantic(home: Path, config: dict[str, Any] | None) -> list[Finding]:
    """Semantic search, when on or auto: whether its encoder is installed, what is not embedded.

    Checking that the encoder loads takes about a second; counting what is not
    embedded reads ``state.db`` and its vectors' sidecar and writes nothing.
    """
    from hermes_core.config import cfg_get
    from hermes_core.embeddings import (
        STATIC_INSTALL_HINT,
        encoder_name,
        load_encoder,
        missing_encoder_requirements,
    )
    from hermes_core.errors import ConfigError, HermesMemoryError
    from hermes_core.sessions.backends import open_session_store, sessions_url
    from hermes_core.sessions.semantic import semantic_available, semantic_mode

    if config is None:
        return []
    try:
        mode = semantic_mode(cfg_get(config, "session_search.semantic"))
    except (ConfigError, ValueError):  # reported with the session_search settings
        return []
    if mode == "off":
        return []
    try:
        name = encoder_name()
    except ConfigError as exc:
        return [Finding("fail", str(exc), "unset it or set static or minilm")]
    label = "MiniLM" if name == "minilm" else "static"
    hint = SEMANTIC_INSTALL_HINT if name == "minilm" else STATIC_INSTALL_HINT
    if not semantic_available():
        missing = ", ".join(missing_encoder_requirements()) or f"the {label} encoder"
        if mode == "on":
            return [
                Finding(
                    "fail",
                    f"semantic search is on but the {label} encoder is not installed (missing: "
                    f"{missing}): every session search answers an error until it is",
                    f"{hint}, or set session_search.semantic to auto or off",
                )
            ]
        return [
            Finding(
                "ok",
                f"semantic search is auto and the {label} encoder is not installed: session "
                f"search matches words only (to search by meaning too: {hint})",
            )
        ]
    try:
        load_encoder()
    except ConfigError as exc:  # installed, yet it does not load
        return [
            Finding(
                "fail" if mode == "on" else "warn",
                f"the {label} encoder for semantic search does not load: {exc}",
                f"reinstall it: {hint}",
            )
        ]
    found = [Finding("ok", f"semantic search is {mode}: the {label} encoder is installed")]
    try:
        url = sessions_url(config)
    except ConfigError:  # reported with the session store
        return found
    path: Any = home / "state.db"
    if url is None and not path.is_file():
        return found
    try:
        with open_session_store(url or path, read_only=True, semantic="off") as store:
            pending = store.messages_to_embed()
            path = store.path  # a PostgreSQL URL with its password masked
    except (HermesMemoryError, sqlite3.Error):  # the store's own checks say what is wrong
        return found
    found.append(
        Finding(
            "ok",
            f"{pending:,} message(s) in {path} are not embedded for semantic search yet "
            "(searches use meaning once 90 % are, and embed some as they go): "
            "`hermes-memory sessions index` embeds them all"
            if pending
            else f"every message in {path} is embedded for semantic search",
        )
    )
    return found


def _memory_url(config: dict[str, Any] | None) -> str | None:
    """``memory.url`` (or HERMES_MEMORY_URL): the database holding builtin memory, if any."""
    from hermes_memory_builtin.documents import memory_url

    return memory_url(config or {})


_ROWS_LISTED = 5
"""Over-budget documents a finding names, at most."""


def check_memory_rows(home: Path, config: dict[str, Any] | None) -> list[Finding]:
    """Builtin memory in PostgreSQL, when ``memory.url`` names a database: the server
    answers, the memory schema's migrations, every user's documents within their budgets,
    held writes waiting, the archive's size, and memory files left unused beside it."""
    from hermes_core.errors import HermesMemoryError

    try:
        from hermes_memory_builtin.rows_status import MIGRATIONS_TABLE, memory_rows_status
        from hermes_memory_builtin.settings import MemorySettings
        from hermes_memory_builtin.snapshot import format_true_usage
        from hermes_memory_builtin.targets import TARGETS
    except ImportError:  # reported by check_providers
        return []
    try:
        url = _memory_url(config)
        if url is None:
            return []
        settings = MemorySettings.from_config(config or {})
    except HermesMemoryError as exc:
        return [Finding("fail", str(exc), "fix memory.url (or HERMES_MEMORY_URL)")]
    try:
        status = memory_rows_status(url)
    except HermesMemoryError as exc:
        return [
            Finding(
                "fail",
                str(exc),
                "start the server (or open the network path to it), or fix memory.url",
            )
        ]
    found = [
        _schema_finding(
            status.url,
            status.version,
            status.known,
            status.applied,
            MIGRATIONS_TABLE,
            "the first memory write creates the memory tables",
            "memory schema",
        )
    ]
    limits = {"memory": settings.memory_char_limit, "user": settings.user_char_limit}
    over = [doc for doc in status.documents if doc.chars > limits[doc.target]]
    users = len({doc.owner for doc in status.documents})
    if over:
        named = "; ".join(
            f"{TARGETS[doc.target].filename} of {_owner(doc.owner)}: "
            f"{format_true_usage(doc.chars, limits[doc.target])}"
            for doc in over[:_ROWS_LISTED]
        )
        more = f" and {len(over) - _ROWS_LISTED} more" if len(over) > _ROWS_LISTED else ""
        found.append(
            Finding(
                "fail",
                f"{len(over)} memory document(s) in {status.url} are over their budget "
                f"({named}{more}): the agent sees only part of them and no new entry fits",
                "curate them: `hermes-memory memory show --user ID --target T` lists the "
                "entries; remove or merge them, or raise memory.memory_char_limit / "
                "memory.user_char_limit",
            )
        )
    elif status.documents:
        found.append(
            Finding(
                "ok",
                f"memory rows: {len(status.documents):,} document(s) of {users:,} user(s) in "
                f"{status.url}, each within its budget",
            )
        )
    if status.held:
        found.append(
            Finding(
                "warn",
                f"{status.held:,} memory write(s) in {status.url} are held for review",
                "`hermes-memory memory review` lists them (--user ID for a user's); accept "
                "or reject each",
            )
        )
    if status.archived:
        found.append(
            Finding("ok", f"memory archive: {status.archived:,} archived entries in {status.url}")
        )
    left = [p for p in (home / "memories" / t.filename for t in TARGETS.values()) if p.is_file()]
    if left:
        found.append(
            Finding(
                "warn",
                f"{', '.join(map(str, left))} exist(s) but memory.url keeps memory in "
                f"{status.url}: the files are not used",
                "move them into the database with `hermes-memory memory migrate --to URL`, or "
                "delete them if the rows are what you keep",
            )
        )
    return found


def _owner(owner: str) -> str:
    return f"user {owner!r}" if owner else "the single user"


def check_memory_archive(home: Path, config: dict[str, Any] | None = None) -> list[Finding]:
    """The size of builtin memory's archive tier, when there is one (the prompt tier's
    usage is :func:`check_memory_files`'s; a PostgreSQL store's, :func:`check_memory_rows`')."""
    from hermes_memory_builtin.archive import ARCHIVE_FILENAME, Archive

    from hermes_core.errors import HermesMemoryError

    try:
        if _memory_url(config) is not None:
            return []
    except HermesMemoryError:  # reported by check_memory_rows
        return []
    folder = home / "memories"
    if not (folder / ARCHIVE_FILENAME).exists():
        return []
    try:
        with Archive(folder) as archive:
            count = archive.count()
            entries = "entry" if count == 1 else "entries"
            return [
                Finding("ok", f"memory archive: {count:,} archived {entries} in {archive.path}")
            ]
    except Exception as exc:
        return [Finding("warn", f"memory archive {folder / ARCHIVE_FILENAME}: {exc}", str(exc))]


_MARKS: dict[Level, str] = {"ok": "ok  ", "warn": "WARN", "fail": "FAIL"}


@click.command()
@click.pass_context
def doctor(ctx: click.Context) -> None:
    """Check HERMES_HOME, config.yaml, every provider and state.db; say what to fix."""
    from hermes_core.config import get_hermes_home

    home = get_hermes_home()
    findings = check_home(home)
    config_findings, config = check_config(home)
    findings += config_findings
    findings += check_settings(home, config)
    findings += check_memory_files(home, config)
    findings += check_memory_rows(home, config)
    findings += check_providers(home, config)
    database = check_session_database(home, config)
    findings += database
    if not database or (home / "state.db").exists():  # unused beside a PostgreSQL store
        findings += check_state_db(home)
    findings += check_semantic(home, config)
    findings += check_memory_archive(home, config)
    for finding in findings:
        colour = {"ok": "green", "warn": "yellow", "fail": "red"}[finding.level]
        click.echo(f"[{click.style(_MARKS[finding.level], fg=colour)}] {finding.message}")
        if finding.fix and finding.level != "ok":
            click.echo(f"       fix: {finding.fix}")
    failures = sum(f.level == "fail" for f in findings)
    warnings = sum(f.level == "warn" for f in findings)
    click.echo(f"\n{failures} problem(s), {warnings} warning(s).")
    if failures:
        ctx.exit(1)
