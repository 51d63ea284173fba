"""A provider written for Hermes Agent, dropped into HERMES_HOME/plugins, works unchanged.

It imports ``agent.memory_provider``, ``tools.registry`` and ``hermes_constants``,
registers itself through ``register(ctx)`` and keeps a sibling module reached by
a relative import. ``hermes-memory plugins`` (the real console script) lists it,
and :class:`MemoryManager` drives it through a whole session.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from plugin_kit import ensure_builtin, fresh_discovery, write_files

from hermes_core.manager import MemoryManager
from hermes_core.plugins import activate_providers

HERMES_PLUGIN = {
    "plugin.yaml": """
        name: notes
        description: Notes kept as JSON lines in the profile
    """,
    "store.py": '''
        """Append-only notes file."""
        import json


        class NotesStore:
            def __init__(self, path):
                self.path = path
                path.parent.mkdir(parents=True, exist_ok=True)

            def add(self, text):
                with open(self.path, "a", encoding="utf-8") as handle:
                    handle.write(json.dumps(text) + "\\n")

            def search(self, query):
                if not self.path.exists():
                    return []
                words = {w.lower().strip("?.,!") for w in query.split() if len(w) > 2}
                notes = [json.loads(line) for line in self.path.read_text("utf-8").splitlines()]
                return [n for n in notes if words & {w.lower().strip("?.,!") for w in n.split()}]
    ''',
    "__init__.py": '''
        """Notes: a memory plugin for Hermes Agent."""
        import json
        from pathlib import Path

        from agent.memory_provider import MemoryProvider, RecallStatus, is_trivial_prompt
        from hermes_constants import get_hermes_home
        from tools.registry import tool_error

        from .store import NotesStore


        class NotesMemoryProvider(MemoryProvider):
            def __init__(self):
                self._store = None
                self._last_count = 0
                self.events = []

            @property
            def name(self):
                return "notes"

            def is_available(self):
                return True

            def initialize(self, session_id, **kwargs):
                home = Path(kwargs.get("hermes_home") or get_hermes_home())
                self._store = NotesStore(home / "notes" / "notes.jsonl")
                self.events.append(("initialize", session_id, kwargs.get("platform")))

            def system_prompt_block(self):
                return "Notes memory is active; notes_search looks things up."

            def on_turn_start(self, turn_number, message, **kwargs):
                self.events.append(("turn", turn_number))

            def prefetch(self, query, *, session_id=""):
                if is_trivial_prompt(query):
                    self._last_count = 0
                    return ""
                hits = self._store.search(query)
                self._last_count = len(hits)
                return "\\n".join(f"- {hit}" for hit in hits)

            def recall_status(self):
                return RecallStatus("notes", self._last_count) if self._last_count else None

            def sync_turn(self, user_content, assistant_content, *, session_id="", messages=None):
                self._store.add(user_content)

            def get_tool_schemas(self):
                return [
                    {
                        "name": "notes_search",
                        "description": "Search saved notes.",
                        "parameters": {
                            "type": "object",
                            "properties": {"query": {"type": "string"}},
                            "required": ["query"],
                        },
                    }
                ]

            def handle_tool_call(self, tool_name, args, **kwargs):
                if tool_name != "notes_search":
                    return tool_error(f"Unknown tool {tool_name}")
                if not args.get("query"):
                    return tool_error("query is required")
                return json.dumps({"results": self._store.search(args["query"])})

            def on_memory_write(self, action, target, content, metadata=None):
                self.events.append(("memory_write", action, target, content))

            def on_session_end(self, messages):
                self.events.append(("session_end", len(messages)))

            def count(self):
                path = self._store.path
                return len(path.read_text("utf-8").splitlines()) if path.exists() else 0

            def shutdown(self):
                self.events.append(("shutdown",))


        def register(ctx):
            provider = NotesMemoryProvider()
            ctx.register_memory_provider(provider)
            ctx.register_tool(
                "notes_count",
                "notes",
                {"description": "How many notes are kept.", "parameters": {}},
                lambda args, **kw: json.dumps({"count": provider.count()}),
            )
    ''',
}


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with fresh_discovery(tmp_path_factory.getbasetemp()):
        yield


@pytest.fixture
def notes_plugin(hermes_home: Path) -> Path:
    return write_files(hermes_home / "plugins" / "notes", HERMES_PLUGIN)


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).parent / "hermes-memory"
    return subprocess.run(
        [str(script), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ),
        check=False,
    )


def test_hermes_plugin_is_listed_by_the_console_script(notes_plugin: Path) -> None:
    result = run_cli("plugins", "--json")
    assert result.returncode == 0, result.stderr
    entries = {p["name"]: p for p in json.loads(result.stdout)["providers"]}
    notes = entries["notes"]
    assert notes["source"] == "folder"
    assert notes["description"] == "Notes kept as JSON lines in the profile"
    assert notes["path"] == str(notes_plugin)
    assert notes["available"] is True and notes["status"] == "available"
    assert set(notes["hooks"]) == {
        "system_prompt_block",
        "on_turn_start",
        "prefetch",
        "recall_status",
        "sync_turn",
        "handle_tool_call",
        "on_memory_write",
        "on_session_end",
        "shutdown",
    }
    text = run_cli("plugins")
    assert text.returncode == 0, text.stderr
    assert "notes" in text.stdout and "folder ($HERMES_HOME/plugins)" in text.stdout


def test_hermes_plugin_runs_a_full_lifecycle_under_the_manager(
    notes_plugin: Path, hermes_home: Path
) -> None:
    ensure_builtin()
    manager = MemoryManager()
    try:
        names = activate_providers(manager, {"memory": {"provider": "notes"}}, hermes_home)
        assert names == ["builtin", "notes"]
        notes = manager.get_provider("notes")
        assert notes is not None

        manager.initialize_all("sess-1", platform="cli", hermes_home=str(hermes_home))
        assert "Notes memory is active" in manager.build_system_prompt()
        assert manager.has_tool("notes_search")
        assert manager.has_tool("notes_count")  # registered with ctx.register_tool

        # Turn 1: nothing known yet; the turn is synced in the background.
        manager.on_turn_start(1, "I adopted a cat named Miso")
        assert "Miso" not in manager.prefetch_all("I adopted a cat named Miso")
        manager.sync_all("I adopted a cat named Miso", "Congratulations!", session_id="sess-1")
        assert manager.flush_pending(timeout=10)

        # Turn 2: the note comes back through prefetch and through the tool.
        manager.on_turn_start(2, "what is my cat called?")
        assert "- I adopted a cat named Miso" in manager.prefetch_all("what is my cat called?")
        assert json.loads(manager.handle_tool_call("notes_count", {})) == {"count": 1}
        found = json.loads(manager.handle_tool_call("notes_search", {"query": "cat"}))
        assert found == {"results": ["I adopted a cat named Miso"]}
        assert "error" in json.loads(manager.handle_tool_call("notes_search", {}))

        manager.on_memory_write("add", "user", "Has a cat called Miso")
        manager.on_session_end([{"role": "user", "content": "bye"}])
        assert manager.flush_pending(timeout=10)
    finally:
        manager.shutdown_all()

    events = notes.events  # type: ignore[attr-defined]
    assert events[0] == ("initialize", "sess-1", "cli")
    assert ("turn", 1) in events and ("turn", 2) in events
    assert ("memory_write", "add", "user", "Has a cat called Miso") in events
    assert ("session_end", 1) in events
    assert events[-1] == ("shutdown",)
    stored = (hermes_home / "notes" / "notes.jsonl").read_text(encoding="utf-8")
    assert json.loads(stored.splitlines()[0]) == "I adopted a cat named Miso"
