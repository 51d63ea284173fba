"""The compatibility layer never shadows a real ``agent``, ``tools``, ``utils`` or ``hermes_cli``.

A user may have unrelated packages with those names on ``sys.path`` (their own
project, a library). Loading Hermes-style plugins must leave every one of them
in charge of its name: plugins that need the Hermes versions fail with the
import error Python gives, and names nobody else provides are still served.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from plugin_kit import write_files
from thirdparty_kit import fixture, install, isolated_plugins, write_config

from hermes_core import hermes_compat
from hermes_core.discovery.adapter import unwrap
from hermes_core.manager import MemoryManager
from hermes_core.plugins import activate_providers, discover_providers


@pytest.fixture(autouse=True)
def _isolated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with isolated_plugins(tmp_path_factory.getbasetemp()):
        yield
    for name in [n for n in sys.modules if n.partition(".")[0] in USER_NAMES]:
        del sys.modules[name]


USER_NAMES = {"agent", "tools", "utils", "hermes_cli"}


@pytest.fixture
def user_packages(tmp_path: Path) -> Path:
    """Unrelated user code named like Hermes' modules, first on ``sys.path``."""
    root = write_files(
        tmp_path / "user-code",
        {
            "agent/__init__.py": "OWNER = 'user'\n",
            "agent/planner.py": "def plan():\n    return ['step']\n",
            "tools/__init__.py": "OWNER = 'user'\n",
            "tools/registry.py": "OWNER = 'user'\nTOOLS = {}\n",
            "utils.py": "OWNER = 'user'\n\ndef slugify(text):\n    return text.lower()\n",
            "hermes_cli/extra.py": "OWNER = 'user'\n",  # a namespace package
        },
    )
    sys.path.insert(0, str(root))  # restored by isolated_plugins
    importlib.invalidate_caches()
    return root


def _owners() -> dict[str, object]:
    return {
        "agent": getattr(importlib.import_module("agent"), "OWNER", None),
        "tools.registry": getattr(importlib.import_module("tools.registry"), "OWNER", None),
        "utils": getattr(importlib.import_module("utils"), "OWNER", None),
        "hermes_cli.extra": getattr(importlib.import_module("hermes_cli.extra"), "OWNER", None),
    }


def test_loading_hermes_plugins_leaves_user_packages_in_charge(
    user_packages: Path, hermes_home: Path
) -> None:
    for folder in ("jotter", "profilemem", "ledger"):
        install(hermes_home, fixture(folder))
    found = {info.name: info for info in discover_providers()}
    assert hermes_compat.is_installed()
    assert _owners() == {
        "agent": "user",
        "tools.registry": "user",
        "utils": "user",
        "hermes_cli.extra": "user",
    }
    for module in ("agent", "tools", "utils", "hermes_cli"):
        assert Path(
            sys.modules[module].__path__[0]
            if hasattr(sys.modules[module], "__path__")
            else sys.modules[module].__file__
        ).is_relative_to(user_packages)
    # Plugins that need Hermes' agent.memory_provider get Python's own import error.
    assert found["jotter"].status == "broken"
    assert "No module named 'agent.memory_provider'" in (found["jotter"].error or "")
    assert "hermes-memory" not in (found["jotter"].error or "")  # not blamed on the layer
    assert found["ledger"].status == "broken"
    # The user's tools/registry.py stays theirs: no tool_error is grafted onto it.
    assert not hasattr(sys.modules["tools.registry"], "tool_error")
    # hermes_constants is nobody else's, so the layer still serves it.
    assert importlib.import_module("hermes_constants").__hermes_compat__ is True


def test_plugin_with_its_own_fallback_base_still_runs(
    user_packages: Path, hermes_home: Path
) -> None:
    spec = fixture("oldtimer")  # try: from agent.memory_provider … except ImportError: object
    install(hermes_home, spec)
    write_config(hermes_home, "oldtimer")
    info = {i.name: i for i in discover_providers()}["oldtimer"]
    assert info.status == "available"
    manager = MemoryManager()
    try:
        assert activate_providers(manager, None, hermes_home) == ["builtin", "oldtimer"]
        provider = manager.get_provider("oldtimer")
        assert type(unwrap(provider)).__mro__[1] is object  # the plugin's own fallback base
        manager.initialize_all("s", platform="cli")
        manager.sync_all("Allergic to peanuts", "ok", session_id="s")
        assert manager.flush_pending(timeout=10)
        assert "peanuts" in manager.prefetch_all("Any peanuts allergy?")
    finally:
        manager.shutdown_all()
    assert _owners()["agent"] == "user"


def test_names_are_served_again_once_the_user_package_is_gone(hermes_home: Path) -> None:
    install(hermes_home, fixture("jotter"))
    info = {i.name: i for i in discover_providers()}["jotter"]
    assert info.status == "available"
    assert sys.modules["agent"].__hermes_compat__ is True
