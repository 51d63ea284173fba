"""The Hermes module names a plugin imports: what each one does, and never shadowing."""

from __future__ import annotations

import importlib
import importlib.util
import json
import logging
import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from plugin_kit import folder_plugin, fresh_discovery, provider_source, write_files

from hermes_core import fencing, hermes_compat, provider
from hermes_core.plugins import discover_providers, load_memory_provider

# These tests assume Hermes Agent itself is not installed (the layer then steps aside).
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("agent") is not None, reason="a real 'agent' package is installed"
)


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    hermes_compat.uninstall()
    with fresh_discovery(tmp_path_factory.getbasetemp()):
        yield


@pytest.fixture
def compat() -> None:
    hermes_compat.install()


def test_names_are_absent_until_the_layer_is_installed() -> None:
    assert not hermes_compat.is_installed()
    assert importlib.util.find_spec("agent") is None
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("tools.registry")


def test_agent_memory_provider_is_the_core_contract(compat: None) -> None:
    module = importlib.import_module("agent.memory_provider")
    assert module.MemoryProvider is provider.MemoryProvider
    assert module.RecallStatus is provider.RecallStatus
    assert module.is_trivial_prompt is provider.is_trivial_prompt
    assert module.spawn_context_thread is provider.spawn_context_thread
    assert module.ctx_bound is provider.ctx_bound
    import agent  # the parent package is bound like a normal import

    assert agent.memory_provider is module


def test_agent_memory_manager_serves_the_fence_and_the_manager(compat: None) -> None:
    from agent.memory_manager import (  # type: ignore[import-not-found]
        MemoryManager,
        build_memory_context_block,
        sanitize_context,
    )

    from hermes_core.manager import MemoryManager as CoreManager

    assert MemoryManager is CoreManager
    assert sanitize_context is fencing.sanitize_context
    assert build_memory_context_block("- likes tea").startswith("<memory-context>")


def test_tool_error_and_tool_result_follow_hermes(compat: None) -> None:
    from tools.registry import tool_error, tool_result  # type: ignore[import-not-found]

    assert json.loads(tool_error("bad query")) == {"error": "bad query"}
    assert json.loads(tool_error(ValueError("x"), success=False)) == {
        "error": "x",
        "success": False,
    }
    assert json.loads(tool_result(success=True, count=2)) == {"success": True, "count": 2}
    assert json.loads(tool_result({"hits": [1]})) == {"hits": [1]}
    assert json.loads(tool_result(["a"])) == ["a"]
    assert tool_result({"city": "Zürich"}) == '{"city": "Zürich"}'  # not ASCII-escaped


def test_get_hermes_home_and_friends_follow_the_environment(
    compat: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hermes_constants import (  # type: ignore[import-not-found]
        display_hermes_home,
        get_default_hermes_root,
        get_hermes_dir,
        get_hermes_home,
    )

    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "one"))
    assert get_hermes_home() == tmp_path / "one"
    assert display_hermes_home() == str(tmp_path / "one")  # not under the home directory
    profile = tmp_path / "root" / "profiles" / "coder"
    monkeypatch.setenv("HERMES_HOME", str(profile))
    assert get_hermes_home() == profile
    assert get_default_hermes_root() == tmp_path / "root"
    assert get_hermes_dir("cache/images", "image_cache") == profile / "cache" / "images"
    (profile / "image_cache").mkdir(parents=True)
    (profile / "image_cache" / "a.png").write_bytes(b"x")
    assert get_hermes_dir("cache/images", "image_cache") == profile / "image_cache"
    monkeypatch.setenv("HERMES_HOME", str(Path.home() / ".hermes"))
    assert display_hermes_home() == "~/.hermes"


def test_hermes_cli_config_cfg_get_takes_one_argument_per_key(
    compat: None, hermes_home: Path
) -> None:
    from hermes_cli.config import cfg_get, load_config, save_config  # type: ignore[import-not-found]

    save_config({"memory": {"provider": "mine"}, "plugins": {"mine": {"url": None}}})
    assert (hermes_home / "config.yaml").is_file()
    config = load_config()
    assert cfg_get(config, "memory", "provider") == "mine"
    assert cfg_get(config, "memory", "missing", default="dflt") == "dflt"
    assert cfg_get(config, "plugins", "mine", "url", default="none") == "none"
    assert cfg_get(config, "memory", "provider", "deeper") is None
    assert cfg_get(None, "a") is None


def test_hermes_home_override_and_key_as_newer_plugins_use_them(
    compat: None, hermes_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import hermes_constants  # type: ignore[import-not-found]
    from hermes_cli.config import (  # type: ignore[import-not-found]
        get_env_value_prefer_dotenv,
    )
    from hermes_cli.config import get_hermes_home as config_home

    from hermes_core.config import get_hermes_home as core_home

    assert hermes_constants.get_hermes_home_override() is None
    assert hermes_constants.hermes_home_key() == hermes_constants.hermes_home_key(
        str(hermes_home) + "/./"
    )
    other = tmp_path / "elsewhere"
    token = hermes_constants.set_hermes_home_override(other)
    try:
        assert hermes_constants.get_hermes_home() == other == config_home()
        assert hermes_constants.hermes_home_key().endswith("elsewhere")
        assert core_home() == hermes_home  # hermes-memory-core's own code keeps HERMES_HOME
    finally:
        hermes_constants.reset_hermes_home_override(token)
    assert hermes_constants.get_hermes_home() == hermes_home

    (hermes_home / ".env").write_text("PACO_URL=from-dotenv\n", encoding="utf-8")
    monkeypatch.setenv("PACO_URL", "from-shell")
    monkeypatch.setenv("ONLY_SHELL", "shell")
    assert get_env_value_prefer_dotenv("PACO_URL") == "from-dotenv"
    assert get_env_value_prefer_dotenv("ONLY_SHELL") == "shell"
    assert get_env_value_prefer_dotenv("NOWHERE") is None


def test_hermes_cli_config_save_writes_secrets_back_as_their_templates(
    compat: None, hermes_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A plugin that loads, edits and saves on every initialize (memorylake) must not
    # write the expanded secrets into config.yaml.
    from hermes_cli.config import load_config, save_config  # type: ignore[import-not-found]

    monkeypatch.setenv("VISION_KEY", "sk-very-secret")
    monkeypatch.setenv("REGION", "eu")
    (hermes_home / "config.yaml").write_text(
        "auxiliary:\n  vision:\n    api_key: ${VISION_KEY}\n    base_url: https://${REGION}.x\n"
        "hosts: ['${REGION}-a', '${REGION}-b']\nchanged: ${REGION}\n",
        encoding="utf-8",
    )
    config = load_config()
    assert config["auxiliary"]["vision"]["api_key"] == "sk-very-secret"
    config["plugins"] = {"memorylake": {"skills": True}}
    config["changed"] = "us"  # an edited value is written as edited
    save_config(config)
    text = (hermes_home / "config.yaml").read_text(encoding="utf-8")
    assert "sk-very-secret" not in text
    assert "${VISION_KEY}" in text and "https://${REGION}.x" in text
    assert "${REGION}-a" in text and "changed: us" in text
    assert load_config()["plugins"] == {"memorylake": {"skills": True}}
    (hermes_home / "config.yaml").write_text("{broken: [", encoding="utf-8")
    save_config({"memory": {"provider": "mine"}})  # a broken file is replaced, as before
    assert load_config() == {"memory": {"provider": "mine"}}


def test_hermes_cli_config_save_takes_hermes_keywords_and_merges_the_file(
    compat: None, hermes_home: Path
) -> None:
    # hologram saves only its own section with merge_existing=True.
    from hermes_cli.config import load_config, save_config  # type: ignore[import-not-found]

    (hermes_home / "config.yaml").write_text(
        "memory:\n  provider: hologram\n  budget: 900\nmodel:\n  model: m\n", encoding="utf-8"
    )
    save_config({"memory": {"hologram": {"command": "hologram"}}}, merge_existing=True)
    assert load_config() == {
        "memory": {"provider": "hologram", "budget": 900, "hologram": {"command": "hologram"}},
        "model": {"model": "m"},
    }
    save_config({"memory": {"provider": "other"}}, preserve_keys=["model"], strip_defaults=False)
    assert load_config() == {"memory": {"provider": "other"}, "model": {"model": "m"}}
    save_config({"x": 1})  # without them the file is what was given, as before
    assert load_config() == {"x": 1}


def test_hermes_cli_config_load_config_expands_env_and_never_raises(
    compat: None,
    hermes_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    from hermes_cli.config import (  # type: ignore[import-not-found]
        get_config_path,
        load_config,
        load_config_readonly,
        read_raw_config,
    )

    monkeypatch.setenv("MINE_KEY", "sk-from-env")
    get_config_path().write_text("mine:\n  key: ${MINE_KEY}\n  other: ${NOT_SET}\n")
    assert load_config() == {"mine": {"key": "sk-from-env", "other": "${NOT_SET}"}}
    assert load_config_readonly() == load_config()
    assert read_raw_config() == {"mine": {"key": "${MINE_KEY}", "other": "${NOT_SET}"}}
    get_config_path().write_text("mine: [unclosed\n")
    with caplog.at_level(logging.WARNING):
        assert load_config() == {}
    assert "not valid YAML" in caplog.text
    pairs = zip("abcdefgh", "bcdefghi", strict=True)
    laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{n}: &{n} [{', '.join([f'*{p}'] * 10)}]\n" for p, n in pairs
    )
    get_config_path().write_text(laughs + "mine: *i\n")  # 10**9 values once expanded
    with caplog.at_level(logging.WARNING):
        assert load_config() == {} and read_raw_config() == {}
    assert "expands to more than" in caplog.text


def test_hermes_cli_config_env_helpers(
    compat: None, hermes_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hermes_cli.config import (  # type: ignore[import-not-found]
        get_env_path,
        get_env_value,
        load_env,
        remove_env_value,
        save_env_value,
    )

    monkeypatch.delenv("MINE_TOKEN", raising=False)
    save_env_value("MINE_TOKEN", 'a "quoted" value')
    assert os.environ["MINE_TOKEN"] == 'a "quoted" value'
    assert stat.S_IMODE(get_env_path().stat().st_mode) == 0o600
    assert load_env() == {"MINE_TOKEN": 'a "quoted" value'}
    monkeypatch.delenv("MINE_TOKEN")
    assert get_env_value("MINE_TOKEN") == 'a "quoted" value'  # falls back to the file
    remove_env_value("MINE_TOKEN")
    assert load_env() == {} and get_env_value("MINE_TOKEN") is None
    with pytest.raises(ValueError, match=r"not a valid \.env key"):
        save_env_value("NOT VALID", "x")


def test_utils_writes_atomically_with_the_requested_mode(compat: None, tmp_path: Path) -> None:
    from utils import (  # type: ignore[import-not-found]
        atomic_json_write,
        atomic_yaml_write,
        env_var_enabled,
        is_truthy_value,
        read_json_or_empty,
        safe_json_loads,
    )

    target = tmp_path / "state" / "creds.json"
    atomic_json_write(target, {"token": "ünïcode"}, mode=0o600, sort_keys=True)
    assert json.loads(target.read_text(encoding="utf-8")) == {"token": "ünïcode"}
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    atomic_json_write(target, {"token": "rotated"})  # keeps the existing 0600
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert read_json_or_empty(target) == {"token": "rotated"}
    assert [p.name for p in target.parent.iterdir()] == ["creds.json"]  # no temp files left
    with pytest.raises(TypeError):
        atomic_json_write(target, {"bad": object()})
    assert read_json_or_empty(target) == {"token": "rotated"}  # untouched by the failure
    (tmp_path / "list.json").write_text("[1]")
    assert read_json_or_empty(tmp_path / "list.json") == {}
    assert read_json_or_empty(tmp_path / "missing.json") == {}
    atomic_yaml_write(tmp_path / "c.yaml", {"a": 1}, extra_content="# tail\n")
    assert (tmp_path / "c.yaml").read_text() == "a: 1\n# tail\n"
    assert is_truthy_value("Yes") and not is_truthy_value("false") and is_truthy_value(None, True)
    assert safe_json_loads("{", default={}) == {}
    assert env_var_enabled("HERMES_COMPAT_TEST_UNSET") is False


def test_secret_scope_reads_scope_then_environment_then_env_file(
    compat: None, hermes_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent.secret_scope import (  # type: ignore[import-not-found]
        get_secret,
        is_multiplex_active,
        reset_secret_scope,
        set_secret_scope,
    )

    monkeypatch.delenv("SCOPED_KEY", raising=False)
    (hermes_home / ".env").write_text("export SCOPED_KEY='from-file'\n")
    assert get_secret("SCOPED_KEY") == "from-file"
    monkeypatch.setenv("SCOPED_KEY", "from-env")
    assert get_secret("SCOPED_KEY") == "from-env"
    token = set_secret_scope({"SCOPED_KEY": "from-scope"})
    try:
        assert get_secret("SCOPED_KEY") == "from-scope"
    finally:
        reset_secret_scope(token)
    assert get_secret("NOWHERE_KEY", "fallback") == "fallback"
    assert is_multiplex_active() is False


def test_missing_hermes_names_fail_with_a_clear_message(compat: None) -> None:
    import hermes_constants  # type: ignore[import-not-found]

    with pytest.raises(AttributeError, match=r"hermes_constants\.get_subprocess_home is not"):
        _ = hermes_constants.get_subprocess_home
    with pytest.raises(ImportError, match=r"cannot import name 'registry' from 'tools\.registry'"):
        from tools.registry import registry  # type: ignore[import-not-found]  # noqa: F401
    with pytest.raises(ModuleNotFoundError, match="auxiliary LLM client") as caught:
        importlib.import_module("agent.auxiliary_client")
    assert caught.value.name == "agent.auxiliary_client"
    assert "agent.auxiliary_client" not in sys.modules
    with pytest.raises(ModuleNotFoundError, match="masked prompt for secrets"):
        importlib.import_module("hermes_cli.secret_prompt")


def test_a_plugin_can_build_its_own_context_for_llm(compat: None, hermes_home: Path) -> None:
    # qdrant-memory, given a context without llm (no model configured), builds one itself.
    from hermes_cli.plugins import (  # type: ignore[import-not-found]
        PluginContext,
        PluginManifest,
        get_plugin_manager,
    )

    from hermes_core.errors import LLMNotConfiguredError

    manifest = PluginManifest(name="qdrant-memory", key="qdrant_memory", version="0.5.1")
    assert manifest.key == "qdrant_memory" and manifest.version == "0.5.1"
    ctx = PluginContext(manifest, get_plugin_manager())
    assert get_plugin_manager().list_plugins() == []
    ctx.register_command("qdrant", lambda: None)  # ignored, logged
    assert ctx.ignored == ["register_command"]
    llm = ctx.llm
    assert llm is ctx.llm
    with pytest.raises(LLMNotConfiguredError):
        llm.complete(messages=[{"role": "user", "content": "hi"}])
    with pytest.raises(ImportError, match="cannot import name 'invoke_hook'"):
        from hermes_cli.plugins import invoke_hook  # noqa: F401


def test_plugins_fall_back_when_an_unprovided_name_is_missing(hermes_home: Path) -> None:
    folder_plugin(
        hermes_home / "plugins",
        "careful",
        """
        from agent.memory_provider import MemoryProvider

        try:
            from agent.auxiliary_client import call_llm
        except ImportError:
            call_llm = None


        class Careful(MemoryProvider):
            name = "careful"

            def is_available(self):
                return True

            def initialize(self, session_id, **kwargs):
                pass

            def get_tool_schemas(self):
                return []

            def system_prompt_block(self):
                return "llm" if call_llm else "no llm"
        """,
    )
    loaded = load_memory_provider("careful")
    assert loaded is not None and loaded.system_prompt_block() == "no llm"


def test_broken_plugin_listing_explains_unserved_names(hermes_home: Path) -> None:
    plugins = hermes_home / "plugins"
    folder_plugin(plugins, "wantsreg", "from tools.registry import registry\nMemoryProvider = 1\n")
    folder_plugin(plugins, "wantsother", "import agent.planner\nMemoryProvider = 1\n")
    folder_plugin(
        plugins, "wantsaux", "from agent.auxiliary_client import call_llm\n# MemoryProvider\n"
    )
    found = {i.name: i for i in discover_providers()}
    assert "does not provide that name" in (found["wantsreg"].error or "")
    assert "Hermes Agent module that hermes-memory" in (found["wantsother"].error or "")
    assert "auxiliary LLM client" in (found["wantsaux"].error or "")


def test_a_library_hermes_agent_brings_is_named_with_how_to_install_it(hermes_home: Path) -> None:
    # vertex-memory and engram import requests, which Hermes Agent installs and they don't declare.
    folder_plugin(
        hermes_home / "plugins",
        "wantslib",
        "# MemoryProvider\nraise ModuleNotFoundError('no ruamel', name='ruamel')\n",
    )
    error = {i.name: i for i in discover_providers()}["wantslib"].error or ""
    assert "ruamel.yaml comes with Hermes Agent" in error
    assert "pip install 'hermes-memory-core[hermes-agent-deps]'" in error


def test_only_the_exact_names_are_served(compat: None) -> None:
    for name in ("agent.other", "tools.terminal_tool", "hermes_cli.main", "hermes_cli.config.x"):
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(name)


def test_a_real_package_is_never_shadowed(
    compat: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = tmp_path / "real-hermes"
    write_files(
        real,
        {
            "agent/__init__.py": "REAL = True\n",
            "agent/memory_provider.py": """
                from abc import ABC, abstractmethod

                REAL = True


                class MemoryProvider(ABC):
                    @property
                    @abstractmethod
                    def name(self): ...

                    @abstractmethod
                    def is_available(self): ...

                    @abstractmethod
                    def initialize(self, session_id, **kwargs): ...

                    @abstractmethod
                    def get_tool_schemas(self): ...

                    def prefetch(self, query, *, session_id=""):
                        return ""
            """,
            "tools/__init__.py": "REAL = True\n",
        },
    )
    monkeypatch.syspath_prepend(str(real))
    module = importlib.import_module("agent.memory_provider")
    assert module.REAL is True
    assert module.MemoryProvider is not provider.MemoryProvider
    # tools is real but has no registry: the layer does not graft one onto it.
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("tools.registry")
    # hermes_constants is absent from the real tree, so the layer still serves it.
    assert importlib.import_module("hermes_constants").__hermes_compat__ is True


def test_a_wheel_shipping_folders_into_hermes_plugins_package_does_not_hide_it(
    compat: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # sonzai-hermes and hermes-cashew install site-packages/plugins/memory/<name>/ without
    # plugins/__init__.py, to merge into Hermes' own package: a namespace package.
    site = tmp_path / "site"
    write_files(
        site,
        {
            "plugins/memory/sonzai/__init__.py": "WHERE = 'site-packages'\n",
            "plugins/context_engine/sonzai/__init__.py": "",
        },
    )
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    plugins = importlib.import_module("plugins")
    assert plugins.__hermes_compat__ is True
    assert importlib.import_module("plugins.plugin_utils").__hermes_compat__ is True
    assert importlib.import_module("plugins.memory.config_schema").__hermes_compat__ is True
    # ... and the wheel's own folders are still found under the served packages
    assert importlib.import_module("plugins.memory.sonzai").WHERE == "site-packages"
    importlib.import_module("plugins.context_engine.sonzai")


def test_plugin_for_real_hermes_base_class_is_discovered(
    tmp_path: Path, hermes_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = tmp_path / "real-hermes"
    write_files(
        real,
        {
            "agent/__init__.py": "",
            "agent/memory_provider.py": """
                from abc import ABC, abstractmethod


                class MemoryProvider(ABC):
                    @property
                    @abstractmethod
                    def name(self): ...

                    def prefetch(self, query, *, session_id=""):
                        return ""
            """,
        },
    )
    monkeypatch.syspath_prepend(str(real))
    folder_plugin(
        hermes_home / "plugins",
        "realbase",
        """
        from agent.memory_provider import MemoryProvider


        class RealBaseProvider(MemoryProvider):
            name = "realbase"

            def is_available(self):
                return True

            def initialize(self, session_id, **kwargs):
                pass

            def get_tool_schemas(self):
                return []

            def prefetch(self, query, *, session_id=""):
                return "recalled"
        """,
    )
    info = {i.name: i for i in discover_providers()}["realbase"]
    assert info.available is True and info.hooks == ("prefetch",)
    loaded = load_memory_provider("realbase")
    assert loaded is not None and loaded.prefetch("q") == "recalled"


def test_lazy_imports_inside_hooks_resolve_after_loading(hermes_home: Path) -> None:
    folder_plugin(
        hermes_home / "plugins",
        "lazy",
        """
        from agent.memory_provider import MemoryProvider


        class LazyProvider(MemoryProvider):
            name = "lazy"

            def is_available(self):
                return True

            def initialize(self, session_id, **kwargs):
                pass

            def get_tool_schemas(self):
                return [{"name": "lazy_tool", "description": "d", "parameters": {}}]

            def handle_tool_call(self, tool_name, args, **kwargs):
                from tools.registry import tool_error  # imported only when called

                return tool_error(f"{tool_name} is lazy")
        """,
    )
    loaded = load_memory_provider("lazy")
    assert loaded is not None
    assert json.loads(loaded.handle_tool_call("lazy_tool", {})) == {"error": "lazy_tool is lazy"}


def test_profile_env_is_loaded_without_overriding_and_taken_back(
    hermes_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ALREADY_SET", "from-process")
    monkeypatch.delenv("FROM_DOTENV", raising=False)
    (hermes_home / ".env").write_text(
        '\ufeff# secrets\nFROM_DOTENV="two words" # note\nALREADY_SET=from-file\nbad line\n'
    )
    hermes_compat.prepare(hermes_home)
    assert os.environ["FROM_DOTENV"] == "two words"
    assert os.environ["ALREADY_SET"] == "from-process"
    hermes_compat.uninstall()
    assert "FROM_DOTENV" not in os.environ
    assert os.environ["ALREADY_SET"] == "from-process"


def test_a_profile_env_value_no_environment_can_hold_is_skipped_with_a_warning(
    hermes_home: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    for key in ("NUL_KEY", "GOOD_KEY"):
        monkeypatch.delenv(key, raising=False)
    (hermes_home / ".env").write_bytes(
        b"NUL_KEY=\"sk-se\x00cret\"\n'A=B'=sk-eq\n'N\x00K'=sk-nul\nGOOD_KEY=fine\n"
    )
    hermes_compat.prepare(hermes_home)  # keys python-dotenv reads but no environment can hold
    assert "NUL_KEY" not in os.environ and "A" not in os.environ
    assert os.environ["GOOD_KEY"] == "fine"
    assert "contains '=' or a NUL character" in caplog.text
    assert "NUL_KEY" in caplog.text and "NUL character" in caplog.text
    assert "sk-se" not in caplog.text
    hermes_compat.uninstall()


def test_uninstall_removes_the_finder_and_its_modules(compat: None) -> None:
    importlib.import_module("agent.memory_provider")
    hermes_compat.uninstall()
    assert not hermes_compat.is_installed()
    assert "agent.memory_provider" not in sys.modules
    assert importlib.util.find_spec("agent") is None


def test_hermes_state_turns_on_wal_where_it_can(compat: None, tmp_path: Path) -> None:
    import sqlite3

    from hermes_state import apply_wal_with_fallback  # type: ignore[import-not-found]

    on_disk = sqlite3.connect(tmp_path / "facts.db")
    in_memory = sqlite3.connect(":memory:")
    try:
        assert apply_wal_with_fallback(on_disk, db_label="facts.db") is True
        assert on_disk.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert apply_wal_with_fallback(in_memory) is False  # memory databases refuse WAL
    finally:
        on_disk.close()
        in_memory.close()


def test_plugins_memory_aliases_only_under_the_stand_in(
    hermes_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder_plugin(
        hermes_home / "plugins",
        "absy",
        """
        from agent.memory_provider import MemoryProvider


        class Absy(MemoryProvider):
            name = "absy"

            def is_available(self):
                return True

            def initialize(self, session_id, **kwargs):
                pass

            def get_tool_schemas(self):
                return []

            def system_prompt_block(self):
                from plugins.memory.absy.helper import BLOCK

                return BLOCK
        """,
        **{"helper.py": "BLOCK = 'from the helper'\n"},
    )
    loaded = load_memory_provider("absy")
    assert loaded is not None and loaded.system_prompt_block() == "from the helper"
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("plugins.memory.unknown")
    # With a real ``plugins`` package on the path, its names stay its own.
    hermes_compat.uninstall()
    real = write_files(tmp_path / "real", {"plugins/__init__.py": "REAL = True\n"})
    monkeypatch.syspath_prepend(str(real))
    loaded = load_memory_provider("absy")
    assert loaded is not None
    assert importlib.import_module("plugins").REAL is True
    with pytest.raises(ModuleNotFoundError):
        loaded.system_prompt_block()
    del sys.modules["plugins"]


def test_agent_redact_scrubs_secrets_with_hermes_signature(compat: None) -> None:
    from agent.redact import (  # type: ignore[import-not-found]
        RedactingFormatter,
        redact_sensitive_text,
    )

    key = "sk-" + "a1B2c3D4e5F6g7H8i9J0k1L2"
    text = f"calling with {key} and https://bob:hunter2secret@example.com/x"
    cleaned = redact_sensitive_text(text, force=True, redact_url_credentials=True, file_read=True)
    assert key not in cleaned and "hunter2secret" not in cleaned
    assert cleaned.startswith("calling with [redacted]") and "bob:" in cleaned
    assert redact_sensitive_text("nothing secret here") == "nothing secret here"
    assert redact_sensitive_text(None) is None
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "token=%s", (key,), None)
    assert key not in RedactingFormatter("%(message)s").format(record)
    with pytest.raises(ImportError, match=r"cannot import name 'redact_terminal_output'"):
        from agent.redact import redact_terminal_output  # type: ignore[import-not-found]  # noqa: F401


def test_the_hermes_agent_deps_extra_installs_every_library_named_in_hints() -> None:
    import re
    import tomllib

    from hermes_core.hermes_compat.finder import HERMES_AGENT_DEPENDENCIES

    project = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text("utf-8"))
    extra = project["project"]["optional-dependencies"]["hermes-agent-deps"]
    names = {re.split(r"[<>=!~ ;\[]", requirement)[0].lower() for requirement in extra}
    assert names == {library.lower() for library in HERMES_AGENT_DEPENDENCIES.values()}


def test_hook_output_spill_reads_its_settings_and_spills_long_text(
    compat: None, hermes_home: Path
) -> None:
    # hindsight-scoped imports get_spill_config at the top of its module.
    from tools.hook_output_spill import DEFAULT_MAX_CHARS, get_spill_config, spill_if_oversized

    assert get_spill_config() == {
        "enabled": True,
        "max_chars": DEFAULT_MAX_CHARS,
        "preview_head": 500,
        "preview_tail": 500,
        "directory": None,
    }
    (hermes_home / "config.yaml").write_text(
        "hooks:\n  output_spill: {max_chars: 20, preview_head: 4, preview_tail: -1}\n", "utf-8"
    )
    settings = get_spill_config()
    assert (settings["max_chars"], settings["preview_head"], settings["preview_tail"]) == (
        20,
        4,
        500,  # a negative tail is not a length: the default
    )
    assert spill_if_oversized("short") == "short"
    preview = spill_if_oversized("x" * 30 + "END", session_id="s/1")
    saved = next((hermes_home / "hook_outputs" / "s_1").glob("*.txt"))
    assert saved.read_text("utf-8") == "x" * 30 + "END\n"
    assert str(saved) in preview and "33 characters" in preview
    assert preview.endswith("xxxxxEND") and "--- head ---\nxxxx" in preview


def test_newer_hermes_provider_names_and_structured_recall_are_served(
    compat: None, hermes_home: Path
) -> None:
    # optchat (written for Hermes >= 0.21) imports these; a prefetch may return a result object.
    from agent.memory_provider import (
        MAX_MEMORY_OBSERVATION_BYTES,
        MemoryObservation,
        MemoryPrefetchResult,
        is_core_memory_provider,
    )

    from hermes_core.config import selected_provider

    assert MAX_MEMORY_OBSERVATION_BYTES == 16 * 1024
    assert [is_core_memory_provider(n) for n in (None, " Built-In ", "none", "mem0")] == [
        True,
        True,
        True,
        False,
    ]
    assert selected_provider({"memory": {"provider": "Default"}}) is None
    observation = MemoryObservation("graph", "edges", 1, {"n": 2})
    result = MemoryPrefetchResult("Ana lives in Porto", [observation] * 20)
    assert len(result.observations) == 16 and isinstance(result.observations, tuple)
    with pytest.raises(TypeError, match="list or tuple"):
        MemoryPrefetchResult("x", iter([observation]))  # type: ignore[arg-type]

    folder_plugin(
        hermes_home / "plugins",
        "structured",
        provider_source("structured", cls="Structured")
        + "\n    def prefetch(self, query, *, session_id=''):\n"
        "        from agent.memory_provider import MemoryPrefetchResult\n"
        "        return MemoryPrefetchResult(context='Ana lives in Porto')\n",
    )
    from hermes_core.manager import MemoryManager

    manager = MemoryManager()
    provider = load_memory_provider("structured")
    assert provider is not None
    manager.add_provider(provider)
    assert manager.prefetch_all("where does Ana live?") == "Ana lives in Porto"
    manager.shutdown_all()
