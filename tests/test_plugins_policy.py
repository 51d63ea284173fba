"""Precedence between sources, and the allow / block lists."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from plugin_kit import folder_plugin, fresh_discovery, install_distribution, provider_source

from hermes_core.discovery.policy import PluginPolicy
from hermes_core.errors import ConfigError
from hermes_core.plugins import (
    HERMES_ENTRY_POINT_GROUP,
    discover_providers,
    get_plugin_manager,
    list_plugins,
    load_memory_provider,
)


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with fresh_discovery(tmp_path_factory.getbasetemp()):
        yield


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "site-packages"
    path.mkdir()
    monkeypatch.syspath_prepend(str(path))
    return path


def provider_with_marker(name: str, marker: str) -> str:
    return provider_source(name) + f"\nMARKER = {marker!r}\n"


def offer_everywhere(site: Path, home: Path, project: Path, name: str = "dup") -> None:
    """Offer provider *name* from all four sources, each tagged with its source."""
    install_distribution(
        site,
        "hermes-memory-dup",
        entry_points={"hermes_memory": {"dupplugin": "dup_ep.plugin"}},
        modules={
            "dup_ep/__init__.py": "",
            "dup_ep/plugin.py": provider_with_marker(name, "entry_point")
            + "\nfrom hermes_core import hookimpl\n\n@hookimpl\n"
            "def register_memory_providers(register):\n    register(Provider)\n",
        },
    )
    folder_plugin(home / "plugins", name, provider_with_marker(name, "folder"))
    folder_plugin(project / ".hermes" / "plugins", name, provider_with_marker(name, "project"))
    install_distribution(
        site,
        "hermes-agent-dup",
        entry_points={HERMES_ENTRY_POINT_GROUP: {name: "dup_hermes:Provider"}},
        modules={"dup_hermes.py": provider_with_marker(name, "hermes_entry_point")},
    )


def loaded_marker(name: str = "dup") -> str:
    import sys

    provider = load_memory_provider(name)
    assert provider is not None
    return str(sys.modules[type(provider).__module__].MARKER)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    monkeypatch.chdir(path)
    monkeypatch.setenv("HERMES_ENABLE_PROJECT_PLUGINS", "true")
    return path


def test_precedence_entry_point_then_folder_then_project_then_hermes_group(
    site: Path, hermes_home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    offer_everywhere(site, hermes_home, project)
    listing = [i for i in discover_providers() if i.name == "dup"]
    assert [(i.source, i.shadowed_by) for i in listing] == [("entry_point", None)]
    assert loaded_marker() == "entry_point"
    full = [i for i in discover_providers(include_shadowed=True) if i.name == "dup"]
    assert [(i.source, i.shadowed_by) for i in full] == [
        ("entry_point", None),
        ("folder", "entry_point"),
        ("project", "entry_point"),
        ("hermes_entry_point", "entry_point"),
    ]
    # Remove the winners one source at a time.
    monkeypatch.setenv("HERMES_MEMORY_PLUGINS_BLOCK", "hermes-memory-dup")
    assert loaded_marker() == "folder"
    (hermes_home / "plugins" / "dup" / "__init__.py").unlink()
    assert loaded_marker() == "project"
    monkeypatch.delenv("HERMES_ENABLE_PROJECT_PLUGINS")
    assert loaded_marker() == "hermes_entry_point"


def test_a_broken_higher_source_still_holds_the_name(
    site: Path, hermes_home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder_plugin(hermes_home / "plugins", "held", provider_source("held") + "\n1/0\n")
    install_distribution(
        site,
        "held-dist",
        entry_points={HERMES_ENTRY_POINT_GROUP: {"held": "held_mod:Provider"}},
        modules={"held_mod.py": provider_source("held")},
    )
    [entry] = [i for i in discover_providers() if i.name == "held"]
    assert entry.source == "folder" and "ZeroDivisionError" in (entry.error or "")
    assert load_memory_provider("held") is None
    assert "Failed to load memory provider 'held'" in caplog.text


def test_block_list_from_environment_hides_a_folder_plugin(
    hermes_home: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    folder_plugin(hermes_home / "plugins", "keep", provider_source("keep"))
    folder_plugin(hermes_home / "plugins", "drop_me", provider_source("drop_me"))
    monkeypatch.setenv("HERMES_MEMORY_PLUGINS_BLOCK", " Drop-Me , other")
    names = {i.name for i in discover_providers()}
    assert "keep" in names and "drop_me" not in names
    assert load_memory_provider("drop_me") is None
    assert "disabled by the plugin allow/block lists" in caplog.text


def test_block_list_from_config_yaml(hermes_home: Path) -> None:
    folder_plugin(hermes_home / "plugins", "cfgblocked", provider_source("cfgblocked"))
    (hermes_home / "config.yaml").write_text(
        yaml.safe_dump({"plugins": {"block": ["cfgblocked"]}}), encoding="utf-8"
    )
    assert "cfgblocked" not in {i.name for i in discover_providers()}


def test_allow_list_admits_only_named_plugins(
    site: Path, hermes_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder_plugin(hermes_home / "plugins", "alpha", provider_source("alpha"))
    folder_plugin(hermes_home / "plugins", "beta", provider_source("beta"))
    install_distribution(
        site,
        "gamma-dist",
        entry_points={HERMES_ENTRY_POINT_GROUP: {"gamma": "gamma_mod:Provider"}},
        modules={"gamma_mod.py": provider_source("gamma")},
    )
    (hermes_home / "config.yaml").write_text("plugins:\n  allow: [alpha]\n", encoding="utf-8")
    assert {i.name for i in discover_providers()} - {"builtin"} == {"alpha"}
    # The environment's allow list replaces the config's; distribution names match too.
    monkeypatch.setenv("HERMES_MEMORY_PLUGINS_ALLOW", "beta,gamma-dist")
    assert {i.name for i in discover_providers()} - {"builtin"} == {"beta", "gamma"}
    # An empty allow list loads no external plugin at all (the rescue switch).
    monkeypatch.setenv("HERMES_MEMORY_PLUGINS_ALLOW", "")
    assert {i.name for i in discover_providers()} - {"builtin"} == set()


def test_blocked_entry_point_is_never_imported(
    site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    imported = tmp_path / "imported.txt"
    install_distribution(
        site,
        "hermes-memory-crashy",
        entry_points={"hermes_memory": {"crashy": "crashy_pkg"}},
        modules={
            "crashy_pkg/__init__.py": f"open({str(imported)!r}, 'w').close()\n"
            "raise SystemExit('crashy refuses to import')\n"
        },
    )
    monkeypatch.setenv("HERMES_MEMORY_PLUGINS_BLOCK", "hermes-memory-crashy")
    with caplog.at_level(logging.WARNING, logger="hermes_core.plugins"):
        pm = get_plugin_manager()
        discover_providers()
    assert not imported.exists()
    assert pm.is_blocked("crashy")
    assert "crashy" not in caplog.text
    assert [r.status for r in list_plugins() if r.name == "crashy"] == ["blocked"]


def test_builtin_cannot_be_blocked() -> None:
    policy = PluginPolicy(allow=frozenset(), block=frozenset({"builtin"}))
    assert policy.permits("builtin")
    assert policy.permits("other", "hermes-memory-core")
    assert not policy.permits("other")


def test_policy_parsing_and_errors() -> None:
    policy = PluginPolicy.from_sources(
        {"plugins": {"allow": "a, B_c", "block": ["x"]}},
        {"HERMES_MEMORY_PLUGINS_BLOCK": "y,,"},
    )
    assert policy.allow == frozenset({"a", "b-c"})
    assert policy.block == frozenset({"x", "y"})
    assert PluginPolicy.from_sources({}, {}).allow is None
    with pytest.raises(ConfigError, match=r"plugins\.block"):
        PluginPolicy.from_sources({"plugins": {"block": 5}}, {})


def test_invalid_lists_in_config_fall_back_to_the_environment(
    hermes_home: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    folder_plugin(hermes_home / "plugins", "envblocked", provider_source("envblocked"))
    (hermes_home / "config.yaml").write_text("plugins:\n  block: 7\n", encoding="utf-8")
    monkeypatch.setenv("HERMES_MEMORY_PLUGINS_BLOCK", "envblocked")
    assert "envblocked" not in {i.name for i in discover_providers()}
    assert "plugins.block" in caplog.text
