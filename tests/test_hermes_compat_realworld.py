"""Shapes seen in Hermes memory plugins published on their own, loaded through the compat layer.

Each test plugin is written here, in the shape of a published one: a plugin
that subclasses a provider bundled with Hermes (``from plugins.memory.mem0
import Mem0MemoryProvider``), a thin bridge to a package of its own project
that is not installed, a provider that is not a ``MemoryProvider``
subclass whose ``register`` both registers and returns it, one that drives an
async SDK on its own event loop (hindsight's shape) and one that declares its
settings in a ``config_schema.py``.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest
from plugin_kit import folder_plugin, fresh_discovery

from hermes_core import hermes_compat
from hermes_core.manager import MemoryManager
from hermes_core.plugins import activate_providers, discover_providers, load_memory_provider

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("agent") is not None, reason="a real 'agent' package is installed"
)

BUNDLED_STYLE_BASE = '''
"""Stands in for a provider bundled with Hermes (plugins/memory/basestore)."""
from agent.memory_provider import MemoryProvider

LOADS = []
LOADS.append(__name__)


class BaseStoreProvider(MemoryProvider):
    def __init__(self):
        self.session = None
        self.facts = []

    @property
    def name(self):
        return "basestore"

    def is_available(self):
        return True

    def initialize(self, session_id, **kwargs):
        self.session = session_id

    def get_tool_schemas(self):
        return []

    def _write_metadata(self):
        return {"source": "base"}

    def sync_turn(self, user_content, assistant_content, *, session_id=""):
        self.facts.append((user_content, self._write_metadata()))

    def prefetch(self, query, *, session_id=""):
        return "; ".join(text for text, _ in self.facts if query in text)


def register(ctx):
    ctx.register_memory_provider(BaseStoreProvider())
'''

SUBCLASSING_PLUGIN = '''
"""Subclasses the bundled provider by its Hermes path, as a scoped variant."""
from plugins.memory.basestore import BaseStoreProvider


class ScopedProvider(BaseStoreProvider):
    @property
    def name(self):
        return "scoped"

    def _write_metadata(self):
        return {**super()._write_metadata(), "client": "acme"}


def register(ctx) -> None:
    ctx.register_memory_provider(ScopedProvider())
'''


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    hermes_compat.uninstall()
    with fresh_discovery(tmp_path_factory.getbasetemp()):
        yield


def test_subclassing_a_bundled_provider_loads_it_from_the_plugins_folder(
    hermes_home: Path,
) -> None:
    folder_plugin(hermes_home / "plugins", "basestore", BUNDLED_STYLE_BASE)
    folder_plugin(hermes_home / "plugins", "scoped", SUBCLASSING_PLUGIN)

    provider = load_memory_provider("scoped")

    assert provider is not None and provider.name == "scoped"
    provider.initialize("s1", hermes_home=str(hermes_home))
    provider.sync_turn("I work for acme", "noted")
    assert provider.prefetch("acme") == "I work for acme"
    assert provider.facts == [("I work for acme", {"source": "base", "client": "acme"})]
    base = load_memory_provider("basestore")  # the same module: loaded once
    assert base is not None
    assert type(provider).__mro__[1] is type(base)
    assert type(base).__module__.startswith("_hermes_user_memory.basestore__source_")
    assert len(importlib.import_module(type(base).__module__).LOADS) == 1


def test_a_bundled_provider_that_is_not_installed_is_named_in_the_failure(
    hermes_home: Path,
) -> None:
    folder_plugin(hermes_home / "plugins", "scoped", SUBCLASSING_PLUGIN)

    (info,) = [i for i in discover_providers() if i.name == "scoped"]

    assert info.error is not None
    assert "No module named 'plugins.memory.basestore'" in info.error
    assert "bundled with Hermes Agent" in info.error
    assert "$HERMES_HOME/plugins/basestore" in info.error


def test_a_broken_bundled_style_base_is_reported_with_its_folder(hermes_home: Path) -> None:
    folder_plugin(
        hermes_home / "plugins",
        "basestore",
        "from agent.memory_provider import MemoryProvider\nraise RuntimeError('no database')\n",
    )
    folder_plugin(hermes_home / "plugins", "scoped", SUBCLASSING_PLUGIN)

    (info,) = [i for i in discover_providers() if i.name == "scoped"]

    assert info.error is not None
    assert str(hermes_home / "plugins" / "basestore") in info.error
    assert "RuntimeError: no database" in info.error
    # the failed base is not left half-registered: fixing it makes both load
    folder_plugin(hermes_home / "plugins", "basestore", BUNDLED_STYLE_BASE)
    provider = load_memory_provider("scoped")
    assert provider is not None and provider.name == "scoped"


def test_a_bundled_style_base_is_found_where_discovery_looks_and_nowhere_else(
    hermes_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    folder_plugin(project / ".hermes" / "plugins", "basestore", BUNDLED_STYLE_BASE)
    folder_plugin(hermes_home / "plugins", "scoped", SUBCLASSING_PLUGIN)
    monkeypatch.chdir(project)

    monkeypatch.setenv("HERMES_MEMORY_PLUGINS_BLOCK", "basestore")
    monkeypatch.setenv("HERMES_ENABLE_PROJECT_PLUGINS", "1")
    (blocked,) = [i for i in discover_providers() if i.name == "scoped"]
    assert blocked.error is not None and "plugins.memory.basestore" in blocked.error

    monkeypatch.delenv("HERMES_MEMORY_PLUGINS_BLOCK")
    provider = load_memory_provider("scoped")  # the project folder, now permitted
    assert provider is not None and provider.name == "scoped"


def test_a_bridge_to_a_missing_project_package_fails_alone(hermes_home: Path) -> None:
    folder_plugin(
        hermes_home / "plugins",
        "bridge",
        "from .hermes_bridge import BridgeProvider\n\n"
        "def register(ctx):\n    ctx.register_memory_provider(BridgeProvider())\n",
        **{
            "hermes_bridge.py": (
                "from agent.memory_provider import MemoryProvider\n"
                "from bridge_project_core.memory import Service\n\n"
                "class BridgeProvider(MemoryProvider):\n    pass\n"
            )
        },
    )
    (hermes_home / "config.yaml").write_text("memory:\n  provider: bridge\n", encoding="utf-8")

    (info,) = [i for i in discover_providers() if i.name == "bridge"]
    manager = MemoryManager()

    assert info.error is not None
    assert "No module named 'bridge_project_core'" in info.error
    assert "hermes-memory" not in info.error  # an external package: no compat hint
    assert activate_providers(manager) == ["builtin"]


def test_a_duck_typed_provider_returned_and_registered_by_register(hermes_home: Path) -> None:
    folder_plugin(
        hermes_home / "plugins",
        "hubby",
        '''
        """Mentions MemoryProvider for discovery; the provider is a plain class."""
        from typing import Any, Optional

        from .provider import HubProvider


        def register(ctx: Optional[Any] = None):
            provider = HubProvider()
            if ctx is not None and hasattr(ctx, "register_memory_provider"):
                ctx.register_memory_provider(provider)
            return provider
        ''',
        **{
            "provider.py": """
            class HubProvider:
                name = "hubby"

                def __init__(self):
                    self.turns = []

                def is_available(self):
                    return True

                def initialize(self, session_id, **kwargs):
                    self.session = session_id

                def get_tool_schemas(self):
                    return [{"name": "hub_search", "description": "Search.",
                             "parameters": {"type": "object", "properties": {}}}]

                def sync_turn(self, user_content, assistant_content, *, session_id=""):
                    self.turns.append(user_content)
            """
        },
    )

    provider = load_memory_provider("hubby")
    manager = MemoryManager()

    assert provider is not None and provider.name == "hubby"
    assert manager.add_provider(provider)
    assert [s["name"] for s in manager.get_all_tool_schemas()] == ["hub_search"]
    manager.initialize_all("s1", hermes_home=str(hermes_home))
    manager.sync_all("hello there", "hi", session_id="s1")  # no messages: it does not take them
    manager.flush_pending(timeout=5)
    assert manager.prefetch_all("hello") == ""  # the contract's default prefetch
    manager.shutdown_all()
    assert provider.turns == ["hello there"]


SKILLS_TOO_PLUGIN = '''
"""A memory provider that also offers its backend's playbooks as Hermes skills."""
from agent.memory_provider import MemoryProvider
from agent.skill_providers import SkillMetadata, SkillPayload, skill_provider


class PlaybookSkills:
    namespace = "pb"

    def list_skills(self):
        return [SkillMetadata(name="deploy", description="How we deploy.")]

    def resolve_skill(self, name):
        return SkillPayload(name=name, content="# deploy")

    def read_supporting_file(self, name, file_path):
        return None


@skill_provider("pb-decorated")
class DecoratedSkills(PlaybookSkills):
    pass


class PlaybookProvider(MemoryProvider):
    name = "playbook"

    def is_available(self):
        return True

    def initialize(self, session_id, **kwargs):
        pass

    def get_tool_schemas(self):
        return []

    def prefetch(self, query, *, session_id=""):
        return "; ".join(s.name for s in PlaybookSkills().list_skills())


def register(ctx):
    ctx.register_memory_provider(PlaybookProvider())
    if hasattr(ctx, "register_skill_provider"):
        ctx.register_skill_provider(PlaybookSkills(), namespace="pb")
'''


def test_a_provider_that_also_offers_skills_loads_and_its_skills_are_ignored(
    hermes_home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder_plugin(hermes_home / "plugins", "playbook", SKILLS_TOO_PLUGIN)

    with caplog.at_level("INFO", logger="hermes_core.plugins"):
        provider = load_memory_provider("playbook")

    assert provider is not None and provider.name == "playbook"
    assert provider.prefetch("deploy") == "deploy"
    assert "skill provider 'pb-decorated' ignored: hermes-memory has no skills" in caplog.text
    assert "ctx.register_skill_provider(" in caplog.text and "has no skills" in caplog.text


def test_skill_provider_types_keep_hermes_defaults_and_namespace_rule(hermes_home: Path) -> None:
    hermes_compat.install()
    from agent.skill_providers import (  # type: ignore[import-not-found]
        SkillPayload,
        SkillProvider,
        register_skill_provider,
    )

    payload = SkillPayload(name="deploy", content="# deploy")
    assert payload.readiness_status == "available" and payload.tags == []
    assert payload.setup_needed is False

    class Skills:
        namespace = ""

        def list_skills(self):
            return []

        def resolve_skill(self, name):
            return None

        def read_supporting_file(self, name, file_path):
            return None

    skills = Skills()
    assert isinstance(skills, SkillProvider)
    assert register_skill_provider(skills, "ops_1") is skills and skills.namespace == "ops_1"
    with pytest.raises(ValueError, match="namespace 'bad name'"):
        register_skill_provider(skills, "bad name")


ASYNC_SDK_PLUGIN = '''
"""Drives an async SDK from sync hooks on a loop thread of its own, as hindsight does."""
import asyncio
import threading

from agent.memory_provider import MemoryProvider
from hermes_time import now as _hermes_now
from hermes_cli.input_decode import safe_input

_loop = asyncio.new_event_loop()
threading.Thread(target=_loop.run_forever, daemon=True).start()


async def _recall(query):
    await asyncio.sleep(0)
    return f"recalled {query}"


def _run_sync(coro):
    from agent.async_utils import safe_schedule_threadsafe

    future = safe_schedule_threadsafe(coro, _loop)
    if future is None:
        raise RuntimeError("loop unavailable")
    return future.result(timeout=5)


class LoopProvider(MemoryProvider):
    name = "looped"

    def is_available(self):
        return True

    def initialize(self, session_id, **kwargs):
        self.started = _hermes_now()

    def get_tool_schemas(self):
        return []

    def prefetch(self, query, *, session_id=""):
        return _run_sync(_recall(query))

    def shutdown(self):
        _loop.call_soon_threadsafe(_loop.stop)


def register(ctx):
    ctx.register_memory_provider(LoopProvider())
'''


def test_a_plugin_on_its_own_event_loop_schedules_through_agent_async_utils(
    hermes_home: Path,
) -> None:
    folder_plugin(hermes_home / "plugins", "looped", ASYNC_SDK_PLUGIN)
    (hermes_home / "config.yaml").write_text("timezone: Asia/Kolkata\n", encoding="utf-8")

    provider = load_memory_provider("looped")
    assert provider is not None
    provider.initialize("s1")
    assert provider.prefetch("deploy window") == "recalled deploy window"
    assert str(provider.started.tzinfo) == "Asia/Kolkata"  # type: ignore[attr-defined]
    provider.shutdown()

    from agent.async_utils import safe_schedule_threadsafe  # type: ignore[import-not-found]

    async def never_run() -> None:
        raise AssertionError("scheduled on a missing loop")

    coro = never_run()
    assert safe_schedule_threadsafe(coro, None) is None
    assert coro.cr_frame is None  # closed: no "never awaited" warning


def test_hermes_time_follows_the_environment_then_config_yaml(
    hermes_home: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    hermes_compat.install()
    import hermes_time  # type: ignore[import-not-found]

    hermes_time.reset_cache()
    config = hermes_home / "config.yaml"
    config.write_text("timezone: Europe/Madrid\n", encoding="utf-8")
    assert str(hermes_time.get_timezone()) == "Europe/Madrid"
    monkeypatch.setenv("HERMES_TIMEZONE", "Asia/Tokyo")
    assert str(hermes_time.now().tzinfo) == "Asia/Tokyo"
    monkeypatch.setenv("HERMES_TIMEZONE", "Mars/Olympus")
    with caplog.at_level("WARNING", logger="hermes_core.hermes_compat"):
        assert hermes_time.get_timezone() is None
    assert "Invalid timezone 'Mars/Olympus'" in caplog.text
    assert hermes_time.now().tzinfo is not None  # the machine's local zone, still aware
    monkeypatch.delenv("HERMES_TIMEZONE")
    config.write_text("timezone: Asia/Kolkata\n", encoding="utf-8")
    assert str(hermes_time.get_timezone()) == "Europe/Madrid"  # cached until reset
    hermes_time.reset_cache()
    assert str(hermes_time.get_timezone()) == "Asia/Kolkata"


def test_safe_input_decodes_only_shifted_keys(
    hermes_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hermes_compat.install()
    from hermes_cli.input_decode import (  # type: ignore[import-not-found]
        decode_modified_key_sequences,
        safe_input,
    )

    assert decode_modified_key_sequences("\x1b[27;2;84~ok \x1b[72;2u\x1b[73;3u") == "Tok HI"
    kept = "\x1b[27;3;84~ \x1b[27;2;13~ \x1b[57427;2u \x1b[84u \x1b[27;5;84~"
    assert decode_modified_key_sequences(kept) == kept  # Alt, Enter, functional, bare, Ctrl
    huge = "\x1b[27;" + "2" * 5000 + ";84~\x1b[" + "9" * 5000 + ";2u"
    assert decode_modified_key_sequences(huge) == huge  # no int() of a 5000-digit number
    monkeypatch.setattr("builtins.input", lambda prompt="": "\x1b[27;2;65~PI key")
    assert safe_input("API key: ") == "API key"


CONFIG_SCHEMA_PLUGIN = '''
"""Declares its settings in config_schema.py, Hermes' declarative form."""
from agent.memory_provider import MemoryProvider

from .config_schema import CONFIG_SCHEMA


class DeclaredProvider(MemoryProvider):
    name = "declared"

    def is_available(self):
        return True

    def initialize(self, session_id, **kwargs):
        pass

    def get_tool_schemas(self):
        return []

    def get_config_schema(self):
        return [
            {"key": f.key, "description": f.label, "secret": f.is_secret, "default": f.default}
            for f in CONFIG_SCHEMA.fields
        ]


def register(ctx):
    ctx.register_memory_provider(DeclaredProvider())
'''

CONFIG_SCHEMA_FILE = """
from plugins.memory.config_schema import (
    KIND_SECRET,
    KIND_SELECT,
    ProviderConfigSchema,
    ProviderField,
    ProviderFieldOption,
)

CONFIG_SCHEMA = ProviderConfigSchema(
    name="declared",
    label="Declared",
    fields=(
        ProviderField(key="mode", label="Mode", kind=KIND_SELECT, default="cloud",
                      options=(ProviderFieldOption("cloud", "Cloud"),), inline=True),
        ProviderField(key="api_key", label="API key", kind=KIND_SECRET, env_key="DECLARED_KEY"),
    ),
)
"""


def test_a_plugin_declaring_its_settings_in_config_schema_py_loads(hermes_home: Path) -> None:
    folder_plugin(
        hermes_home / "plugins",
        "declared",
        CONFIG_SCHEMA_PLUGIN,
        **{"config_schema.py": CONFIG_SCHEMA_FILE},
    )

    provider = load_memory_provider("declared")

    assert provider is not None and provider.name == "declared"
    assert provider.get_config_schema() == [
        {"key": "mode", "description": "Mode", "secret": False, "default": "cloud"},
        {"key": "api_key", "description": "API key", "secret": True, "default": ""},
    ]
    from plugins.memory.config_schema import (  # type: ignore[import-not-found]
        ProviderConfigSchema,
    )

    schema = ProviderConfigSchema(name="x", label="X")
    assert schema.storage == "flat_json" and schema.inline_fields() == ()


UPLOADING_PLUGIN = '''
"""Stores turns and uploads files the model names, as Hermes' bundled openviking and retaindb do."""
from agent.file_safety import raise_if_read_blocked
from agent.memory_provider import MemoryProvider
from agent.message_content import flatten_message_text
from agent.skill_commands import extract_user_instruction_from_skill_message


class UploadingProvider(MemoryProvider):
    name = "uploading"

    def is_available(self):
        return True

    def initialize(self, session_id, **kwargs):
        self.stored = []

    def get_tool_schemas(self):
        return []

    def sync_turn(self, user_content, assistant_content, *, session_id=""):
        user = extract_user_instruction_from_skill_message(flatten_message_text(user_content))
        if user is not None:
            self.stored.append(user)

    def upload(self, path):
        raise_if_read_blocked(path)
        with open(path, encoding="utf-8") as handle:
            return handle.read()


def register(ctx):
    ctx.register_memory_provider(UploadingProvider())
'''


def test_a_plugin_importing_hermes_message_skill_and_file_helpers_loads_and_uses_them(
    hermes_home: Path, tmp_path: Path
) -> None:
    folder_plugin(hermes_home / "plugins", "uploading", UPLOADING_PLUGIN)
    provider = load_memory_provider("uploading")
    assert provider is not None
    provider.initialize("s1")

    provider.sync_turn(
        [{"type": "text", "text": "deploy on"}, {"type": "image_url", "image_url": {}}, "Tuesday"],
        "ok",
    )
    skill_turn = (
        '[IMPORTANT: The user has invoked the "ops" skill. The full skill content is loaded '
        "below.]\n\nbody\n\nThe user has provided the following instruction alongside the skill "
        "invocation: ship it\n\n[Runtime note: cwd]"
    )
    provider.sync_turn(skill_turn, "ok")
    provider.sync_turn(skill_turn.split("\n\nThe user")[0], "ok")  # a bare /skill: skipped
    assert provider.stored == ["deploy on\nTuesday", "ship it"]  # type: ignore[attr-defined]

    notes = tmp_path / "notes.md"
    notes.write_text("window: Tuesday", encoding="utf-8")
    assert provider.upload(str(notes)) == "window: Tuesday"  # type: ignore[attr-defined]
    (hermes_home / ".env").write_text("KEY=secret\n", encoding="utf-8")
    for denied in (hermes_home / ".env", hermes_home / "auth.json", tmp_path / ".env.local"):
        with pytest.raises(ValueError, match="Access denied"):
            provider.upload(str(denied))  # type: ignore[attr-defined]


PROFILED_PLUGIN = '''
"""Scopes a shared client per Hermes profile, as Hermes' bundled honcho does."""
import itertools

from agent.memory_provider import MemoryProvider
from hermes_cli.profiles import _get_default_hermes_home, get_active_profile_name, list_profiles
from plugins.plugin_utils import SingletonSlot, lazy_singleton

_client = SingletonSlot()
_builds = itertools.count(1)


@lazy_singleton
def shared_settings():
    return {"root": str(_get_default_hermes_home()), "build": next(_builds)}


class ProfiledProvider(MemoryProvider):
    name = "profiled"

    def is_available(self):
        return True

    def initialize(self, session_id, **kwargs):
        self.client = _client.get(lambda: {"peer": get_active_profile_name()})
        self.profiles = [(p.name, p.is_default) for p in list_profiles()]
        self.settings = shared_settings()

    def get_tool_schemas(self):
        return []


def register(ctx):
    ctx.register_memory_provider(ProfiledProvider())
'''


def test_a_plugin_scoping_by_hermes_profile_loads_and_reads_the_profiles(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    work = root / "profiles" / "work"
    for home in (root, work, root / "profiles" / "Bad Name", root / "profiles" / "coder"):
        home.mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("HERMES_HOME", str(work))
    folder_plugin(work / "plugins", "profiled", PROFILED_PLUGIN)
    provider = load_memory_provider("profiled")
    assert provider is not None
    provider.initialize("s1")
    assert provider.client == {"peer": "work"}  # type: ignore[attr-defined]
    assert provider.profiles == [  # type: ignore[attr-defined]
        ("default", True),
        ("coder", False),
        ("work", False),
    ]
    assert provider.settings == {"root": str(root), "build": 1}  # type: ignore[attr-defined]
    provider.initialize("s2")  # built once: the slot and the singleton keep their first object
    assert provider.settings["build"] == 1  # type: ignore[attr-defined]

    from hermes_cli.profiles import get_active_profile_name  # type: ignore[import-not-found]
    from plugins.plugin_utils import SingletonSlot  # type: ignore[import-not-found]

    monkeypatch.setenv("HERMES_HOME", str(root))
    assert get_active_profile_name() == "default"
    slot = SingletonSlot()
    with pytest.raises(RuntimeError):
        slot.get(lambda: (_ for _ in ()).throw(RuntimeError("backend down")))
    assert slot.peek() is None and slot.get(lambda: "built") == "built"  # a failed build retries
    slot.reset()
    assert slot.peek() is None


LOCATED_PLUGIN = '''
"""Tags each turn with the chat's folder, as a daemon-backed provider (backstory) does."""
import os

from agent.memory_provider import MemoryProvider


def chat_folder():
    try:
        from agent.runtime_cwd import resolve_agent_cwd
        return str(resolve_agent_cwd())
    except Exception:  # older Hermes: no such module
        return "fallback:" + os.getcwd()


class LocatedProvider(MemoryProvider):
    name = "located"

    def is_available(self):
        return True

    def initialize(self, session_id, **kwargs):
        self.folders = []

    def get_tool_schemas(self):
        return []

    def sync_turn(self, user_content, assistant_content, *, session_id="", messages=None):
        self.folders.append(chat_folder())


def register(ctx):
    ctx.register_memory_provider(LocatedProvider())
'''


def test_a_plugin_asking_hermes_for_the_chat_folder_gets_terminal_cwd_then_the_process_cwd(
    hermes_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    launch = tmp_path / "launch"
    launch.mkdir()
    monkeypatch.chdir(launch)
    folder_plugin(hermes_home / "plugins", "located", LOCATED_PLUGIN)
    provider = load_memory_provider("located")
    assert provider is not None
    provider.initialize("s1")

    monkeypatch.setenv("TERMINAL_CWD", str(project))
    provider.sync_turn("u", "a")
    monkeypatch.setenv("TERMINAL_CWD", str(tmp_path / "gone"))  # not a folder: skipped
    provider.sync_turn("u", "a")
    monkeypatch.delenv("TERMINAL_CWD")
    provider.sync_turn("u", "a")

    assert provider.folders == [str(project), str(launch), str(launch)]  # type: ignore[attr-defined]

    from agent.runtime_cwd import (  # type: ignore[import-not-found]
        clear_session_cwd,
        resolve_context_cwd,
        set_session_cwd,
    )

    assert resolve_context_cwd() is None
    set_session_cwd(str(project))
    provider.sync_turn("u", "a")
    assert resolve_context_cwd() == project
    clear_session_cwd()
    provider.sync_turn("u", "a")
    assert provider.folders[-2:] == [str(project), str(launch)]  # type: ignore[attr-defined]
