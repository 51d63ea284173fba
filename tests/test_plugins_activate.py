"""The builtin provider and activating ``memory.provider`` on a real MemoryManager."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from plugin_kit import (
    StandInBuiltin,
    folder_plugin,
    fresh_discovery,
    provider_source,
    register_builtin,
)

from hermes_core.errors import PluginError
from hermes_core.manager import MemoryManager
from hermes_core.plugins import (
    activate_providers,
    discover_providers,
    get_plugin_manager,
    load_builtin_provider,
)
from hermes_core.provider import MemoryProvider


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with fresh_discovery(tmp_path_factory.getbasetemp()):
        yield


@pytest.fixture
def builtin() -> None:
    register_builtin(StandInBuiltin)


@pytest.fixture
def manager() -> Iterator[MemoryManager]:
    manager = MemoryManager()
    yield manager
    manager.shutdown_all()


def write_config(home: Path, text: str) -> None:
    (home / "config.yaml").write_text(text, encoding="utf-8")


def test_builtin_is_loaded_from_the_plugin_manager(builtin: None) -> None:
    provider = load_builtin_provider()
    assert isinstance(provider, StandInBuiltin)


def test_missing_builtin_tells_the_user_what_to_install() -> None:
    pm = get_plugin_manager()
    if pm.has_plugin("builtin"):  # the real builtin is installed: take it away
        pm.unregister(name="builtin")
    with pytest.raises(PluginError) as raised:
        load_builtin_provider()
    # The builtin ships inside the core distribution: the hint reinstalls that one.
    message = str(raised.value)
    assert "`pip install --force-reinstall hermes-memory-core`" in message
    assert "hermes-memory-builtin" not in message


def test_broken_builtin_says_why() -> None:
    def explode() -> MemoryProvider:
        raise RuntimeError("store unreadable")

    pm = get_plugin_manager()
    if pm.has_plugin("builtin"):  # replace the real plugin of that name
        pm.unregister(name="builtin")
    register_builtin(explode, plugin_name="builtin")
    with pytest.raises(PluginError, match="store unreadable") as raised:
        load_builtin_provider()
    assert "`pip install --force-reinstall hermes-memory-core`" in str(raised.value)
    assert "hermes-memory-builtin" not in str(raised.value)


def test_activate_without_memory_provider_registers_builtin_only(
    builtin: None, manager: MemoryManager, hermes_home: Path
) -> None:
    assert activate_providers(manager, {}, hermes_home) == ["builtin"]
    assert manager.provider_names == ["builtin"]


def test_activate_registers_the_selected_available_provider(
    builtin: None, manager: MemoryManager, hermes_home: Path
) -> None:
    folder_plugin(hermes_home / "plugins", "extmem", provider_source("extmem"))
    config = {"memory": {"provider": "extmem"}}
    assert activate_providers(manager, config, hermes_home) == ["builtin", "extmem"]
    assert manager.provider_names == ["builtin", "extmem"]


def test_activate_reads_config_yaml_when_no_config_is_given(
    builtin: None, manager: MemoryManager, hermes_home: Path
) -> None:
    folder_plugin(hermes_home / "plugins", "fromyaml", provider_source("fromyaml"))
    write_config(hermes_home, "memory:\n  provider: fromyaml\n")
    assert activate_providers(manager, None, hermes_home) == ["builtin", "fromyaml"]


def test_unavailable_provider_is_not_registered_and_the_reason_is_logged(
    builtin: None, manager: MemoryManager, hermes_home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder_plugin(
        hermes_home / "plugins",
        "needskey",
        provider_source("needskey", available=False)
        + "\n    def unavailable_reason(self):\n        return 'set NEEDSKEY_TOKEN'\n",
    )
    with caplog.at_level(logging.WARNING):
        names = activate_providers(manager, {"memory": {"provider": "needskey"}}, hermes_home)
    assert names == ["builtin"]
    assert manager.provider_names == ["builtin"]
    assert "'needskey'" in caplog.text and "set NEEDSKEY_TOKEN" in caplog.text


def test_unknown_provider_warns_and_keeps_builtin(
    builtin: None, manager: MemoryManager, hermes_home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    names = activate_providers(manager, {"memory": {"provider": "nosuch"}}, hermes_home)
    assert names == ["builtin"]
    assert "'nosuch'" in caplog.text and "could not be found" in caplog.text


def test_provider_with_failing_schemas_does_not_take_the_external_slot(
    builtin: None, manager: MemoryManager, hermes_home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder_plugin(
        hermes_home / "plugins",
        "badschema",
        provider_source("badschema")
        + "\n    def get_tool_schemas(self):\n        raise ValueError('schema exploded')\n",
    )
    names = activate_providers(manager, {"memory": {"provider": "badschema"}}, hermes_home)
    assert names == ["builtin"]
    assert manager.provider_names == ["builtin"]
    assert "schema exploded" in caplog.text


def test_malformed_memory_provider_setting_warns(
    builtin: None, manager: MemoryManager, hermes_home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    assert activate_providers(manager, {"memory": {"provider": ["a", "b"]}}, hermes_home) == [
        "builtin"
    ]
    assert "memory.provider" in caplog.text


def test_activation_without_builtin_fails_loudly(manager: MemoryManager, hermes_home: Path) -> None:
    pm = get_plugin_manager()
    if pm.has_plugin("builtin"):
        pm.unregister(name="builtin")
    with pytest.raises(PluginError, match="hermes-memory-core"):
        activate_providers(manager, {}, hermes_home)


def test_requires_env_explains_an_unavailable_plugin_that_gives_no_reason(
    builtin: None,
    manager: MemoryManager,
    hermes_home: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    source = provider_source("quiet", available=False).replace(
        "return False", "return bool(__import__('os').environ.get('QUIET_TOKEN'))"
    )
    manifest = "name: quiet\nrequires_env:\n  - QUIET_TOKEN\n  - name: QUIET_REGION\n"
    folder_plugin(hermes_home / "plugins", "quiet", source, **{"plugin.yaml": manifest})
    monkeypatch.delenv("QUIET_TOKEN", raising=False)
    monkeypatch.delenv("QUIET_REGION", raising=False)
    (info,) = [i for i in discover_providers(hermes_home) if i.name == "quiet"]
    assert info.required_env == ("QUIET_TOKEN", "QUIET_REGION")
    assert info.unavailable_reason.startswith("QUIET_TOKEN, QUIET_REGION are not set")
    assert info.to_dict()["required_env"] == ["QUIET_TOKEN", "QUIET_REGION"]
    with caplog.at_level(logging.WARNING):
        assert activate_providers(manager, {"memory": {"provider": "quiet"}}, hermes_home) == [
            "builtin"
        ]
    assert "QUIET_TOKEN, QUIET_REGION are not set (plugin.yaml requires_env)" in caplog.text
    # once the variables are set (here in the profile's .env), the plugin's own answer counts
    (hermes_home / ".env").write_text("QUIET_TOKEN=t0k3n\nQUIET_REGION=eu\n", encoding="utf-8")
    assert activate_providers(manager, {"memory": {"provider": "quiet"}}, hermes_home) == [
        "builtin",
        "quiet",
    ]


def test_requires_env_entries_marked_optional_are_not_reported_missing(
    hermes_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    manifest = (
        "name: hy\nrequires_env:\n"
        "  - {name: HY_USER, required: true}\n"
        "  - {name: HY_MODE, required: false}\n"
        "  - {name: HY_AGENT, required: 'no'}\n"
        "  - {name: HY_REGION}\n"
        "  - HY_TOKEN\n"
    )
    folder_plugin(
        hermes_home / "plugins",
        "hy",
        provider_source("hy", available=False),
        **{"plugin.yaml": manifest},
    )
    for name in ("HY_USER", "HY_MODE", "HY_AGENT", "HY_REGION", "HY_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    (info,) = [i for i in discover_providers(hermes_home) if i.name == "hy"]
    assert info.required_env == ("HY_USER", "HY_REGION", "HY_TOKEN")
    assert info.unavailable_reason.startswith("HY_USER, HY_REGION, HY_TOKEN are not set")
    assert info.warnings == ()


def test_requires_env_entries_that_name_no_variable_are_warned_about(hermes_home: Path) -> None:
    manifest = "requires_env:\n  - {name: 5}\n  - null\n  - OK_TOKEN\n  - [nested]\n"
    folder_plugin(
        hermes_home / "plugins",
        "odd",
        provider_source("odd", available=False),
        **{"plugin.yaml": manifest},
    )
    (info,) = [i for i in discover_providers(hermes_home) if i.name == "odd"]
    assert info.required_env == ("OK_TOKEN",)
    assert [w.split(": ", 1)[1] for w in info.warnings] == [
        "requires_env entry 1 is a mapping without a text name, not a variable name; ignoring it",
        "requires_env entry 2 is empty, not a variable name; ignoring it",
        "requires_env entry 4 is a list, not a variable name; ignoring it",
    ]


def test_an_unavailable_plugin_without_a_reason_is_explained_by_its_config_schema(
    builtin: None,
    manager: MemoryManager,
    hermes_home: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    schema = (
        "\n    def get_config_schema(self):\n"
        "        return [\n"
        "            {'key': 'api_key', 'required': True, 'env_var': 'MEMANTO_KEY'},\n"
        "            {'key': 'region', 'required': False, 'env_var': 'MEMANTO_REGION'},\n"
        "            {'key': 'url', 'required': True},\n"
        "            'not a field',\n"
        "        ]\n"
    )
    folder_plugin(
        hermes_home / "plugins", "memanto", provider_source("memanto", available=False) + schema
    )
    monkeypatch.delenv("MEMANTO_KEY", raising=False)
    monkeypatch.delenv("MEMANTO_REGION", raising=False)
    (info,) = [i for i in discover_providers(hermes_home) if i.name == "memanto"]
    assert info.unavailable_reason == (
        "MEMANTO_KEY is not set (required by its config schema); "
        "set it in the environment or in $HERMES_HOME/.env"
    )
    with caplog.at_level(logging.WARNING):
        activate_providers(manager, {"memory": {"provider": "memanto"}}, hermes_home)
    assert "MEMANTO_KEY is not set (required by its config schema)" in caplog.text
    monkeypatch.setenv("MEMANTO_KEY", "k")  # set, and still unavailable: the plugin's silence
    (info,) = [i for i in discover_providers(hermes_home) if i.name == "memanto"]
    assert info.unavailable_reason == ""
