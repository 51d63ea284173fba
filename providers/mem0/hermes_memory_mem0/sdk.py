"""Import the mem0 SDK so that it never phones home.

mem0 reads ``MEM0_TELEMETRY`` and ``MEM0_DIR`` once, at import: posthog
telemetry is on unless told otherwise, and ``~/.mem0/config.json`` is written
on import. :func:`import_mem0` is the only place this package imports mem0: it
switches telemetry off (even when mem0 was imported earlier by someone else),
points ``MEM0_DIR`` under ``HERMES_HOME`` unless the user set it, and stops
mem0 from downloading a spaCy model when spaCy is installed without one.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import threading
from pathlib import Path
from types import ModuleType

__all__ = ["import_mem0", "mem0_installed"]

_lock = threading.Lock()


def mem0_installed() -> bool:
    """Whether the mem0ai SDK can be imported (looks it up, imports nothing)."""
    return _find("mem0")


def import_mem0(data_dir: str | os.PathLike[str]) -> ModuleType:
    """Import and return the ``mem0`` package with telemetry off and state under *data_dir*."""
    with _lock:
        os.environ["MEM0_TELEMETRY"] = "False"
        if "mem0" not in sys.modules and not os.environ.get("MEM0_DIR"):
            Path(data_dir).mkdir(parents=True, exist_ok=True)
            os.environ["MEM0_DIR"] = str(data_dir)
        module = importlib.import_module("mem0")
        # Imported before us with telemetry on: the flags are read at call time.
        for name in ("mem0.memory.telemetry", "mem0.memory.main"):
            loaded = sys.modules.get(name)
            if loaded is not None and getattr(loaded, "MEM0_TELEMETRY", False):
                loaded.MEM0_TELEMETRY = False  # type: ignore[attr-defined]
        _refuse_spacy_download()
        return module


def _refuse_spacy_download() -> None:
    """Without spaCy *and* its model, mark mem0's spaCy loader as failed up front.

    spaCy without en_core_web_sm makes mem0 download the model; without spaCy it
    only logs a warning on first use. Either way mem0 falls back to plain text.
    """
    if not (_find("spacy") and _find("en_core_web_sm")):
        models = importlib.import_module("mem0.utils.spacy_models")
        models._load_failed_full = True  # type: ignore[attr-defined]
        models._load_failed_lemma = True  # type: ignore[attr-defined]


def _find(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ValueError:
        return False
