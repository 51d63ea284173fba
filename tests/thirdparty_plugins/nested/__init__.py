"""Top-level entry point for ``hermes plugins install``.

The loader imports this ``__init__.py`` and looks for ``register`` or a
``MemoryProvider`` subclass. The implementation lives in ``nested_core/`` so it
can also be copied into ``plugins/memory/nested`` unchanged; this shim loads it
by file path under the module name the loader gave us.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path

if __name__.startswith("_hermes_user_memory"):
    if "." in __name__:
        _parent = __name__.split(".", 1)[0]
        if _parent not in sys.modules:
            sys.modules[_parent] = types.ModuleType(_parent)

    _INNER_DIR = Path(__file__).parent / "nested_core"
    _INNER_NAME = f"{__name__}._nested_inner"
    _spec = importlib.util.spec_from_file_location(
        _INNER_NAME, str(_INNER_DIR / "__init__.py"), submodule_search_locations=[str(_INNER_DIR)]
    )
    if _spec is None or _spec.loader is None:  # pragma: no cover
        raise ImportError(f"nested: cannot find inner package at {_INNER_DIR}")
    _inner = importlib.util.module_from_spec(_spec)
    sys.modules[_INNER_NAME] = _inner
    _spec.loader.exec_module(_inner)

    register = _inner.register
    NestedMemoryProvider = _inner.NestedMemoryProvider
    __all__ = ["NestedMemoryProvider", "register"]
