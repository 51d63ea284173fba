"""Installing the fixture plugins of ``tests/thirdparty_plugins`` and driving them.

Each fixture is written the way a third-party Hermes Agent plugin is (its own
imports, layout and call shapes). They all keep notes: a completed turn is
stored, a builtin memory write is mirrored, ``prefetch`` recalls notes sharing a
word with the query and a search tool returns them as JSON. :func:`run_lifecycle`
drives one through a whole session with :func:`activate_providers` and a real
:class:`MemoryManager` and checks exactly that.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from plugin_kit import fresh_discovery

from hermes_core.manager import MemoryManager
from hermes_core.plugins import activate_providers

FIXTURES = Path(__file__).resolve().parent / "thirdparty_plugins"

FIRST = "My favourite colour is teal"
SECOND = "Which colour do I like best?"
MIRRORED = "Lives in Lisbon near the river"
MIRROR_QUERY = "Remind me about Lisbon"


@dataclass(frozen=True)
class Fixture:
    """A fixture plugin and what a correct load of it looks like."""

    folder: str
    provider_name: str
    search_tool: str
    prompt_marker: str
    description: str = ""
    install_as: str = ""
    env: Mapping[str, str] = field(default_factory=dict)
    config: Mapping[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The plugin directory name (the listing name)."""
        return self.install_as or self.folder


FOLDER_FIXTURES = (
    Fixture(
        "jotter",
        "jotter",
        "jotter_search",
        "Jotter memory",
        description="Plain-file notes with keyword recall.",
    ),
    Fixture(
        "ledger",
        "ledger",
        "ledger_search",
        "Ledger memory",
        description="SQLite full-text ledger of everything the user tells the agent",
    ),
    Fixture(
        "vault",
        "vault",
        "vault_search",
        "Vault memory",
        description="Vault — token-protected fact store with a setup schema and "
        "`hermes vault` commands",
        env={"VAULT_TOKEN": "vt-local-test-token"},
    ),
    Fixture(
        "pipmem",
        "pipmem",
        "pipmem_search",
        "PipMem memory",
        description="Pip package provider laid out as a project root",
        install_as="hermes-pipmem",
    ),
    Fixture(
        "toolbox",
        "toolbox",
        "toolbox_search",
        "Toolbox memory",
        description="Memory plugin that also registers general tools, a skill, a hook "
        "and a CLI command",
    ),
    Fixture(
        "profilemem",
        "profilemem",
        "profilemem_search",
        "Profilemem memory",
        description="Profile-scoped memory configured from config.yaml and .env",
        env={"PROFILEMEM_KEY": "pm-local-test-key"},
        config={"plugins": {"profilemem": {"max_facts": 7, "capture": "yes"}}},
    ),
    Fixture("courier", "courier", "courier_lookup", "Courier memory"),
    Fixture("oldtimer", "oldtimer", "oldtimer_recall", "OldTimer memory"),
    Fixture(
        "nested",
        "nested",
        "nested_find",
        "Nested memory",
        description="Root shim that loads the real provider package from a subfolder",
    ),
    Fixture(
        "flatpack",
        "flatpack",
        "flatpack_search",
        "Flatpack memory",
        description="Flat plugin whose modules import each other by bare name",
    ),
    Fixture(
        "holo",
        "holo",
        "holo_facts",
        "Holo memory",
        description="Bundled-style fact store that imports its own modules as "
        "plugins.memory.holo.*",
        config={"plugins": {"holo": {"auto_capture": "yes"}}},
    ),
)


def fixture(folder: str) -> Fixture:
    """The :class:`Fixture` of *folder*."""
    return next(f for f in FOLDER_FIXTURES if f.folder == folder)


def install(home: Path, spec: Fixture) -> Path:
    """Copy the fixture into ``home/plugins/<name>`` and add its ``.env`` entries."""
    target = home / "plugins" / spec.name
    shutil.copytree(FIXTURES / spec.folder, target, ignore=shutil.ignore_patterns("__pycache__"))
    if spec.env:
        with (home / ".env").open("a", encoding="utf-8") as handle:
            for key, value in spec.env.items():
                handle.write(f"{key}={value}\n")
    return target


def write_config(home: Path, provider: str | None, *extra: Mapping[str, Any]) -> None:
    """``config.yaml`` selecting *provider*, merged with *extra* sections."""
    config: dict[str, Any] = {}
    for section in extra:
        for key, value in section.items():
            if isinstance(value, dict):
                config.setdefault(key, {}).update(value)
            else:
                config[key] = value
    if provider:
        config.setdefault("memory", {})["provider"] = provider
    (home / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")


@contextmanager
def isolated_plugins(temp_root: Path) -> Iterator[None]:
    """:func:`fresh_discovery`, plus ``sys.path`` as it was (some plugins extend it)."""
    saved_path = list(sys.path)
    try:
        with fresh_discovery(temp_root):
            yield
    finally:
        sys.path[:] = saved_path


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """The real ``hermes-memory`` console script, with this process's environment."""
    script = Path(sys.executable).parent / "hermes-memory"
    return subprocess.run(
        [str(script), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ),
        check=False,
    )


def plugin_threads(prefix: str) -> list[str]:
    """Names of live threads starting with *prefix*."""
    return [t.name for t in threading.enumerate() if t.name.startswith(prefix) and t.is_alive()]


def run_lifecycle(home: Path, spec: Fixture) -> Any:
    """Drive *spec*'s provider through a whole session; return it (shut down) for more checks."""
    manager = MemoryManager()
    names = activate_providers(manager, None, home)
    assert names == ["builtin", spec.provider_name], names
    provider = manager.get_provider(spec.provider_name)
    assert provider is not None
    try:
        manager.initialize_all("sess-1", platform="cli", agent_context="primary")
        assert spec.prompt_marker in manager.build_system_prompt()
        assert manager.has_tool(spec.search_tool)

        # Turn 1: nothing known yet; the turn is stored in the background.
        manager.on_turn_start(1, FIRST)
        assert "teal" not in manager.prefetch_all(FIRST, session_id="sess-1")
        transcript = [
            {"role": "user", "content": FIRST},
            {"role": "assistant", "content": "Noted!"},
        ]
        manager.sync_all(FIRST, "Noted!", session_id="sess-1", messages=transcript)
        manager.queue_prefetch_all(SECOND, session_id="sess-1")
        assert manager.flush_pending(timeout=10)

        # Turn 2: the stored turn comes back through prefetch and through the tool.
        manager.on_turn_start(2, SECOND)
        assert "teal" in manager.prefetch_all(SECOND, session_id="sess-1")
        found = json.loads(manager.handle_tool_call(spec.search_tool, {"query": SECOND}))
        assert "teal" in json.dumps(found), found

        # A builtin memory write is mirrored into the provider.
        manager.on_memory_write("add", "user", MIRRORED, {"session_id": "sess-1"})
        assert "Lisbon" in manager.prefetch_all(MIRROR_QUERY, session_id="sess-1")

        manager.on_session_end(transcript)
        assert manager.flush_pending(timeout=10)
    finally:
        manager.shutdown_all()
    assert manager.shutdown_drain_state["status"] == "drained"
    return provider
