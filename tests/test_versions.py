"""Each distribution's ``__version__`` is the version its pyproject.toml declares."""

from __future__ import annotations

import importlib
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DISTRIBUTIONS = {
    ROOT: "hermes_core",
    **{
        folder: f"hermes_memory_{folder.name}"
        for folder in sorted((ROOT / "providers").iterdir())
        if (folder / "pyproject.toml").is_file()
    },
}


@pytest.mark.parametrize("folder", list(DISTRIBUTIONS), ids=lambda folder: folder.name)
def test_the_module_version_is_the_declared_one(folder: Path) -> None:
    # Two places name a version; a release that bumps one would report the other.
    declared = tomllib.loads((folder / "pyproject.toml").read_text())["project"]["version"]
    module = DISTRIBUTIONS[folder]
    try:
        imported = importlib.import_module(module)
    except ImportError:
        pytest.skip(f"{module} is not installed in this environment")
    assert imported.__version__ == declared


def test_the_builtin_provider_carries_the_core_version() -> None:
    # It ships inside hermes-memory-core, so it has no version of its own.
    import hermes_memory_builtin

    import hermes_core

    assert hermes_memory_builtin.__version__ == hermes_core.__version__
