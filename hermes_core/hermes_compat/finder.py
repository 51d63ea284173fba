"""The import finder that serves Hermes Agent's module names, and only when nothing else does.

Three tables drive it. :data:`COMPAT_MODULES` are the modules hermes-memory-core serves
(small files under ``shims/`` that re-export hermes-memory-core's own code), some only
under a :data:`CONDITIONAL` condition (the auxiliary LLM client needs a model).
:data:`NOT_PROVIDED` are Hermes modules that some plugins import but that
cannot be honoured outside Hermes: importing one raises
:class:`ModuleNotFoundError` (so a plugin's ``try/except ImportError`` fallback
still works) with a message that says what the module is and that hermes-memory
does not provide it.

The finder sits at the end of ``sys.meta_path``. For a top-level name it first
asks every other finder and steps aside when any of them can locate the name,
so an installed Hermes Agent, or any package that happens to be called
``tools`` or ``utils``, always wins. It serves a submodule only inside a parent
package it served itself.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from types import ModuleType

SHIMS_DIR = Path(__file__).resolve().parent / "shims"
DOCS_HINT = "see the 'Hermes plugin compatibility' page of the hermes-memory docs"

MARKER = "__hermes_compat__"
"""Attribute set to True in every module served by the compatibility layer."""

# Hermes module name -> (file under shims/, is it a package?)
COMPAT_MODULES: dict[str, tuple[str, bool]] = {
    "agent": ("agent/__init__.py", True),
    "agent.memory_provider": ("agent/memory_provider.py", False),
    "agent.memory_manager": ("agent/memory_manager.py", False),
    "agent.secret_scope": ("agent/secret_scope.py", False),
    "agent.redact": ("agent/redact.py", False),
    "agent.plugin_llm": ("agent/plugin_llm.py", False),
    "agent.skill_providers": ("agent/skill_providers.py", False),
    "agent.async_utils": ("agent/async_utils.py", False),
    "agent.message_content": ("agent/message_content.py", False),
    "agent.skill_commands": ("agent/skill_commands.py", False),
    "agent.file_safety": ("agent/file_safety.py", False),
    "agent.runtime_cwd": ("agent/runtime_cwd.py", False),
    # outside agent/ so that only this finder, which checks the condition, can load it
    "agent.auxiliary_client": ("agent_auxiliary_client.py", False),
    "tools": ("tools/__init__.py", True),
    "tools.registry": ("tools/registry.py", False),
    "tools.hook_output_spill": ("tools/hook_output_spill.py", False),
    "hermes_constants": ("hermes_constants.py", False),
    "hermes_cli": ("hermes_cli/__init__.py", True),
    "hermes_cli.config": ("hermes_cli/config.py", False),
    "hermes_cli.input_decode": ("hermes_cli/input_decode.py", False),
    "hermes_cli.plugins": ("hermes_cli/plugins.py", False),
    "hermes_cli.profiles": ("hermes_cli/profiles.py", False),
    "hermes_state": ("hermes_state.py", False),
    "hermes_time": ("hermes_time.py", False),
    "plugins": ("plugins/__init__.py", True),
    "plugins.memory": ("plugins/memory/__init__.py", True),
    "plugins.memory.config_schema": ("plugins/memory/config_schema.py", False),
    "plugins.plugin_utils": ("plugins/plugin_utils.py", False),
    "utils": ("utils.py", False),
}

# Hermes module name -> what it is in Hermes (why it cannot be served here).
NOT_PROVIDED: dict[str, str] = {
    "agent.auxiliary_client": "Hermes Agent's auxiliary LLM client (call_llm)",
    "agent.context_engine": "Hermes Agent's context-engine plugin interface",
    "hermes_cli.secret_prompt": "Hermes Agent's masked prompt for secrets in its setup wizard",
    "hermes_cli.curses_ui": "Hermes Agent's terminal menus for its setup wizard",
    "tools.environments": "Hermes Agent's terminal backends",
    "tools.memory_tool": (
        "Hermes Agent's builtin memory tool (hermes-memory's is hermes_memory_builtin)"
    ),
}


def model_configured() -> bool:
    """Whether the active profile names a model endpoint (config.yaml or the environment).

    True when ``model.*``, or any ``auxiliary.<task>`` section, yields a base URL
    and a model the way :meth:`hermes_core.llm.ChatClient.from_config` reads them
    (no HTTP client is imported to find out).
    """
    from hermes_core.config import cfg_get, load_config, model_endpoint

    try:
        config = load_config()
    except Exception:  # an unreadable config.yaml is reported where it is used
        return False
    auxiliary = cfg_get(config, "auxiliary")
    tasks = list(auxiliary) if isinstance(auxiliary, dict) else []
    sections = ["model", *(f"auxiliary.{task}" for task in tasks)]
    return any(all(model_endpoint(config, section)) for section in sections)


# Hermes module name -> the condition under which it is served (else: not provided).
CONDITIONAL: dict[str, Callable[[], bool]] = {"agent.auxiliary_client": model_configured}

_ROOTS = frozenset(name.partition(".")[0] for name in (*COMPAT_MODULES, *NOT_PROVIDED))

HERMES_AGENT_DEPENDENCIES: dict[str, str] = {
    "requests": "requests",
    "pydantic": "pydantic",
    "openai": "openai",
    "dotenv": "python-dotenv",
    "rich": "rich",
    "jinja2": "jinja2",
    "fire": "fire",
    "ruamel": "ruamel.yaml",
    "croniter": "croniter",
    "packaging": "packaging",
    "markdown": "Markdown",
    "jwt": "PyJWT",
    "psutil": "psutil",
    "prompt_toolkit": "prompt_toolkit",
}
"""Import name -> distribution of libraries Hermes Agent installs, which plugins written
for it may import without declaring; the ``hermes-agent-deps`` extra installs them."""


def provided_modules() -> list[str]:
    """The Hermes module names served unconditionally (not the stand-in parent packages)."""
    return sorted(
        name
        for name, (_, package) in COMPAT_MODULES.items()
        if not package and name not in CONDITIONAL
    )


def missing_attribute(module: str, attribute: str, provided: Iterable[str]) -> AttributeError:
    """The error for a Hermes name that a served module does not provide."""
    return AttributeError(
        f"{module}.{attribute} is not provided by hermes-memory's Hermes compatibility "
        f"layer, which serves only {', '.join(sorted(provided))} from {module!r}; "
        f"{DOCS_HINT}."
    )


def not_provided_message(fullname: str) -> str:
    """The :class:`ModuleNotFoundError` text for a Hermes module that is not served."""
    what = NOT_PROVIDED.get(fullname, "a Hermes Agent module")
    if fullname in CONDITIONAL:
        return (
            f"No module named {fullname!r}: it is {what}, which hermes-memory serves only "
            "when a model is configured; set model.base_url and model.model in config.yaml "
            f"(or HERMES_MODEL_BASE_URL and HERMES_MODEL); {DOCS_HINT}."
        )
    return (
        f"No module named {fullname!r}: it is {what}, which hermes-memory's Hermes "
        f"compatibility layer does not provide (it serves {', '.join(provided_modules())}); "
        f"{DOCS_HINT}."
    )


class _NotProvidedLoader(importlib.abc.Loader):
    """Fails the import of a known Hermes module with a message that explains why."""

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        raise ModuleNotFoundError(not_provided_message(module.__name__), name=module.__name__)


def served_by_compat(module_name: str) -> bool:
    """Whether *module_name*'s top-level package is (or would be) served by this layer."""
    root = sys.modules.get(module_name.partition(".")[0])
    return root is not None and bool(getattr(root, MARKER, False))


class HermesCompatFinder(importlib.abc.MetaPathFinder):
    """A meta-path finder serving the Hermes module names only when nothing else does."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        served = COMPAT_MODULES.get(fullname)
        condition = CONDITIONAL.get(fullname)
        if served is not None and condition is not None and not condition():
            served = None
        if served is None and fullname not in NOT_PROVIDED:
            return None
        parent_name, _, last = fullname.rpartition(".")
        if parent_name:
            # Serve a submodule only inside a package this layer provided.
            parent = sys.modules.get(parent_name)
            if parent is None or not getattr(parent, MARKER, False):
                return None
            # Folders other distributions put under that name (see below) continue here.
            portions = [
                os.path.join(entry, last)
                for entry in getattr(parent, "__path__", ())
                if os.path.isdir(os.path.join(entry, last))
            ]
        else:
            other = spec_elsewhere(fullname, skip=(HermesCompatFinder,))
            if other is not None and not is_namespace(other):
                return None
            # A namespace portion (a wheel shipping plugins/memory/<name>/ to merge into
            # Hermes' own package) must not hide the served package: it joins it instead.
            portions = list(other.submodule_search_locations or ()) if other is not None else []
        if served is None:
            return importlib.machinery.ModuleSpec(fullname, _NotProvidedLoader())
        relative, is_package = served
        return importlib.util.spec_from_file_location(
            fullname,
            SHIMS_DIR / relative,
            submodule_search_locations=portions if is_package else None,
        )


def is_namespace(spec: importlib.machinery.ModuleSpec) -> bool:
    """Whether *spec* is a namespace package: folders without ``__init__.py``, no code."""
    return spec.submodule_search_locations is not None and spec.origin in (None, "namespace")


def spec_elsewhere(fullname: str, skip: tuple[type, ...]) -> importlib.machinery.ModuleSpec | None:
    """The spec a finder on ``sys.meta_path`` other than those of *skip* gives *fullname*."""
    for finder in list(sys.meta_path):
        if isinstance(finder, skip):
            continue
        find_spec = getattr(finder, "find_spec", None)
        if find_spec is None:
            continue
        try:
            spec = find_spec(fullname, None)
        except Exception:  # a misbehaving finder must not break the import
            continue
        if spec is not None:
            return spec
    return None


def found_elsewhere(fullname: str, skip: tuple[type, ...]) -> bool:
    """Whether a finder on ``sys.meta_path`` other than those of *skip* locates *fullname*."""
    return spec_elsewhere(fullname, skip) is not None


def explain_import_error(exc: BaseException) -> str | None:
    """A hint when *exc* is a plugin asking for a Hermes name this layer does not serve."""
    if not isinstance(exc, ImportError) or not exc.name:
        return None
    name = exc.name
    library = HERMES_AGENT_DEPENDENCIES.get(name.partition(".")[0])
    if library is not None and isinstance(exc, ModuleNotFoundError):
        return (
            f"{library} comes with Hermes Agent, so plugins written for it may use it without "
            f"declaring it: pip install {library}, or "
            "pip install 'hermes-memory-core[hermes-agent-deps]' "
            "for every library Hermes Agent brings"
        )
    if name.partition(".")[0] not in _ROOTS:
        return None
    if not served_by_compat(name):
        return shadowing_hint(name.partition(".")[0])
    if name in COMPAT_MODULES and "cannot import name" in str(exc):
        return (
            f"hermes-memory's stand-in for the Hermes module {name!r} does not provide that "
            f"name; {DOCS_HINT}"
        )
    if name not in COMPAT_MODULES and isinstance(exc, ModuleNotFoundError):
        if name in NOT_PROVIDED:
            return None  # its message already explains
        plugin = name.split(".")[2] if name.startswith("plugins.memory.") else None
        if plugin:
            return (
                f"{name!r} belongs to the memory plugin {plugin!r} bundled with Hermes Agent, "
                f"which hermes-memory does not ship; it resolves plugins.memory.{plugin} only "
                f"to a Hermes plugin folder $HERMES_HOME/plugins/{plugin}; {DOCS_HINT}"
            )
        return (
            f"{name!r} is a Hermes Agent module that hermes-memory's compatibility layer "
            f"does not provide; {DOCS_HINT}"
        )
    return None


def shadowing_hint(root: str) -> str | None:
    """A hint when an unrelated module named *root* hides the Hermes module of that name.

    The finder steps aside for anything else on ``sys.path`` called ``hermes_cli``,
    ``utils``, ``tools``…; a plugin then imports that module instead of Hermes'
    and fails on a name it lacks. ``None`` when *root* is not imported, is this
    layer's own, or belongs to Hermes Agent itself (its names are simply missing).
    """
    module = sys.modules.get(root)
    if module is None or getattr(module, MARKER, False):
        return None
    owners = _distributions_of(root)
    if "hermes-agent" in owners:
        return None
    where = getattr(module, "__file__", None) or "a namespace package"
    source = f" (installed by {', '.join(sorted(owners))})" if owners else ""
    return (
        f"the {root!r} imported here is {where}{source}, not Hermes Agent's module; Hermes' "
        f"{root!r} is served only when no other module of that name is on sys.path: uninstall "
        "that package, or run the plugin from an environment without it"
    )


def _distributions_of(root: str) -> set[str]:
    """The installed distributions that ship the top-level module *root* (normalised names)."""
    from importlib.metadata import packages_distributions

    try:
        names = packages_distributions().get(root, [])
    except Exception:  # broken metadata must not hide the import error itself
        return set()
    return {name.lower().replace("_", "-") for name in names}
