"""Module names a plugin written for Hermes Agent imports, served by hermes-memory-core.

A Hermes memory plugin imports a handful of host modules (``agent.memory_provider``,
``tools.registry``, ``hermes_constants``, ``hermes_cli.config``, ``utils`` …),
sometimes its own modules by their bundled path (``plugins.memory.<name>.store``,
see :mod:`.aliases`), and reads its secrets from the environment, where Hermes
has loaded the profile's ``.env``. When the real Hermes Agent is not installed,
:func:`install` adds an import finder (:mod:`.finder`) that answers for exactly
those names with the small modules in ``shims/``, which re-export hermes-memory-core's
own implementations; :func:`prepare` also loads ``$HERMES_HOME/.env`` the way
Hermes does (:mod:`.dotenv`). The context handed to a plugin's ``register(ctx)`` lives in
:mod:`.context`.

Discovery calls :func:`prepare` just before loading a Hermes-style plugin (a
folder plugin or a ``hermes_agent.memory_providers`` entry point) and leaves the
finder in place so that imports a plugin makes lazily, at run time, still
resolve.
"""

from __future__ import annotations

import os
import sys
import threading

from hermes_core.discovery.extract import add_import_hint
from hermes_core.hermes_compat import dotenv
from hermes_core.hermes_compat.aliases import PluginAliasFinder, forget_aliases, register_alias
from hermes_core.hermes_compat.finder import (
    COMPAT_MODULES,
    MARKER,
    NOT_PROVIDED,
    HermesCompatFinder,
    explain_import_error,
)

__all__ = [
    "COMPAT_MODULES",
    "NOT_PROVIDED",
    "HermesCompatFinder",
    "explain_import_error",
    "install",
    "is_installed",
    "prepare",
    "register_alias",
    "uninstall",
]

add_import_hint(explain_import_error)  # failures to import a Hermes name say why

_finder: HermesCompatFinder | None = None
_alias_finder: PluginAliasFinder | None = None
_lock = threading.Lock()


def install() -> None:
    """Add the finders to ``sys.meta_path`` (idempotent, thread-safe).

    The ``plugins.memory.<name>`` alias finder goes first, so a plugin's
    absolute imports of its own modules reach the copies discovery loaded; the
    module finder right after it, asking every other finder itself before it
    serves a name: a real module of that name wins, while a namespace package
    of it (folders another wheel ships without ``__init__.py``) would otherwise
    be taken first and hide the served one.
    """
    global _finder, _alias_finder
    with _lock:
        if _finder is None:
            _finder = HermesCompatFinder()
        if _alias_finder is None:
            _alias_finder = PluginAliasFinder()
        if _finder not in sys.meta_path:
            sys.meta_path.insert(0, _finder)
        if _alias_finder not in sys.meta_path:
            sys.meta_path.insert(0, _alias_finder)


def prepare(hermes_home: str | os.PathLike[str]) -> None:
    """Everything a Hermes-style plugin expects before it is imported.

    Installs the finder and adds the keys of ``<hermes_home>/.env`` that are not
    already set to ``os.environ``.
    """
    install()
    dotenv.apply_profile_env(hermes_home)


def uninstall() -> None:
    """Remove the finder, forget every module it served and the ``.env`` values it added.

    For tests: a plugin that already imported a served name keeps working.
    """
    with _lock:
        for finder in (_finder, _alias_finder):
            if finder is not None and finder in sys.meta_path:
                sys.meta_path.remove(finder)
        forget_aliases()
        roots = {
            root
            for root in {name.partition(".")[0] for name in COMPAT_MODULES}
            if getattr(sys.modules.get(root), MARKER, False)
        }
        for name in [n for n in sys.modules if n.partition(".")[0] in roots]:
            del sys.modules[name]
    dotenv.restore_environ()


def is_installed() -> bool:
    """Whether the finder is currently on ``sys.meta_path``."""
    return _finder is not None and _finder in sys.meta_path
