"""Third-party Hermes Agent plugins in every layout load unchanged and run a whole session.

Each fixture under ``tests/thirdparty_plugins`` is installed into a temporary
``HERMES_HOME/plugins``, listed by the real ``hermes-memory plugins --json``,
selected with ``memory.provider`` and driven through :func:`run_lifecycle`.
"""

from __future__ import annotations

import importlib
import json
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from plugin_kit import write_files
from thirdparty_kit import (
    FIRST,
    FOLDER_FIXTURES,
    MIRRORED,
    Fixture,
    fixture,
    install,
    isolated_plugins,
    plugin_threads,
    run_cli,
    run_lifecycle,
    write_config,
)

from hermes_core.plugins import discover_providers, load_memory_provider


@pytest.fixture(autouse=True)
def _isolated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with isolated_plugins(tmp_path_factory.getbasetemp()):
        yield


def test_every_fixture_is_listed_by_the_console_script(hermes_home: Path) -> None:
    for spec in FOLDER_FIXTURES:
        install(hermes_home, spec)
    write_config(hermes_home, None)
    result = run_cli("plugins", "--json")
    assert result.returncode == 0, result.stderr
    listed = {p["name"]: p for p in json.loads(result.stdout)["providers"]}
    for spec in FOLDER_FIXTURES:
        entry = listed.get(spec.name)
        assert entry is not None, f"{spec.name} missing; stderr: {result.stderr}"
        assert entry["source"] == "folder"
        assert entry["status"] == "available", entry
        assert entry["provider_name"] == spec.provider_name
        assert entry["path"] == str(hermes_home / "plugins" / spec.name)
        assert entry["description"] == spec.description
    text = run_cli("plugins")
    assert text.returncode == 0 and "broken" not in text.stdout, text.stdout


@pytest.mark.parametrize("spec", FOLDER_FIXTURES, ids=lambda spec: spec.folder)
def test_fixture_runs_a_whole_session(spec: Fixture, hermes_home: Path) -> None:
    install(hermes_home, spec)
    write_config(hermes_home, spec.provider_name, spec.config)
    run_lifecycle(hermes_home, spec)


def test_single_file_plugin_without_register_uses_its_subclass(hermes_home: Path) -> None:
    spec = fixture("jotter")
    install(hermes_home, spec)
    write_config(hermes_home, "jotter")
    provider = run_lifecycle(hermes_home, spec)
    assert provider.closed is True
    notes = (hermes_home / "jotter" / "notes.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(n)["source"] for n in notes] == ["turn", "memory:user"]
    assert json.loads(provider.handle_tool_call("jotter_search", {})) == {
        "error": "query is required",
        "tool": "jotter_search",
    }


def test_package_with_siblings_nested_package_and_relative_imports(hermes_home: Path) -> None:
    spec = fixture("ledger")
    install(hermes_home, spec)
    write_config(hermes_home, "ledger")
    provider = run_lifecycle(hermes_home, spec)
    assert provider.session_ends == 1
    info = {i.name: i for i in discover_providers()}["ledger"]
    assert info.version == "1.2.0"
    assert {"prefetch", "recall_status", "sync_turn", "on_memory_write"} <= set(info.hooks)


def test_project_root_layout_is_selected_by_its_plugin_yaml_name(hermes_home: Path) -> None:
    spec = fixture("pipmem")  # cloned as hermes-pipmem/, selected as ``pipmem``
    install(hermes_home, spec)
    write_config(hermes_home, "pipmem")
    run_lifecycle(hermes_home, spec)
    assert json.loads((hermes_home / "pipmem.json").read_text()) == [FIRST, MIRRORED]
    info = {i.name: i for i in discover_providers()}["hermes-pipmem"]
    assert info.version == "2.0.0" and info.provider_name == "pipmem"


def test_doctor_and_conformance_accept_the_plugin_yaml_name(hermes_home: Path) -> None:
    # A clone under its repository's name (hermes-llmwiki/, name: llmwiki) runs when
    # selected by its plugin.yaml name; doctor and conformance must find it too.
    install(hermes_home, fixture("pipmem"))
    write_config(hermes_home, "pipmem")
    doctor = run_cli("doctor")
    assert "memory.provider 'pipmem' is available" in doctor.stdout, doctor.stdout
    assert "no such provider" not in doctor.stdout
    conformance = run_cli("conformance", "pipmem", "-k", "stable_identifier")
    assert "No memory provider named" not in conformance.stderr, conformance.stderr
    assert conformance.returncode == 0, conformance.stdout + conformance.stderr


def test_secrets_come_from_the_profile_env_file(hermes_home: Path) -> None:
    spec = fixture("vault")
    install(hermes_home, spec)
    write_config(hermes_home, "vault")
    run_lifecycle(hermes_home, spec)


def test_missing_secret_leaves_the_plugin_unavailable_with_its_reason(
    hermes_home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    install(hermes_home, Fixture("vault", "vault", "vault_search", "Vault memory"))  # no .env
    info = {i.name: i for i in discover_providers()}["vault"]
    assert info.available is False
    assert "VAULT_TOKEN" in info.unavailable_reason


def test_vault_config_schema_and_save_config_follow_the_hermes_shapes(hermes_home: Path) -> None:
    spec = fixture("vault")
    install(hermes_home, spec)
    provider = load_memory_provider("vault")
    assert provider is not None
    schema = provider.get_config_schema()
    token = next(field for field in schema if field["key"] == "token")
    assert token["secret"] is True and token["env_var"] == "VAULT_TOKEN"
    provider.save_config({"max_results": 3, "token": "never-written"}, str(hermes_home))
    saved = json.loads((hermes_home / "vault.json").read_text())
    assert saved == {"max_results": 3, "label": "Vault"}


def test_import_time_config_and_profile_helpers(hermes_home: Path) -> None:
    spec = fixture("profilemem")
    install(hermes_home, spec)
    write_config(hermes_home, "profilemem", spec.config)
    provider = run_lifecycle(hermes_home, spec)
    plugin = sys.modules[type(provider).__module__]
    assert plugin.MAX_FACTS == 7 and plugin.CAPTURE is True
    assert hermes_home == plugin.HOME_AT_IMPORT
    store = hermes_home / "profilemem" / "facts.json"
    assert json.loads(store.read_text()) == {"facts": [FIRST, MIRRORED]}
    assert stat.S_IMODE(store.stat().st_mode) == 0o600


def test_background_threads_carry_the_context_and_stop_on_shutdown(hermes_home: Path) -> None:
    spec = fixture("courier")
    install(hermes_home, spec)
    write_config(hermes_home, "courier")
    provider = run_lifecycle(hermes_home, spec)
    assert provider.sessions_seen() == ["sess-1"]  # contextvar copied into the writer thread
    assert "courier-writer" in provider.threads_started
    assert "courier-prefetch" in provider.threads_started
    assert plugin_threads("courier-") == []


def test_legacy_signatures_are_called_in_their_own_shapes(hermes_home: Path) -> None:
    spec = fixture("oldtimer")
    install(hermes_home, spec)
    write_config(hermes_home, "oldtimer")
    provider = run_lifecycle(hermes_home, spec)
    assert provider.turns[0] == FIRST
    assert provider.writes == [MIRRORED]
    assert provider.turn_starts == [1, 2]
    assert provider.shut is True


def test_root_shim_loading_an_inner_package_by_path(hermes_home: Path) -> None:
    spec = fixture("nested")
    install(hermes_home, spec)
    write_config(hermes_home, "nested")
    provider = run_lifecycle(hermes_home, spec)
    assert type(provider).__module__.startswith("_hermes_user_memory.nested__source_")


def test_flat_plugin_with_bare_sibling_imports(hermes_home: Path) -> None:
    spec = fixture("flatpack")
    install(hermes_home, spec)
    write_config(hermes_home, "flatpack")
    run_lifecycle(hermes_home, spec)
    stored = json.loads((hermes_home / "flatpack" / "flatpack.json").read_text())
    assert stored == [FIRST, MIRRORED]


def test_bundled_style_absolute_imports_reach_the_loaded_copy(hermes_home: Path) -> None:
    spec = fixture("holo")
    install(hermes_home, spec)
    write_config(hermes_home, "holo", spec.config)
    provider = run_lifecycle(hermes_home, spec)
    real = type(provider).__module__
    assert sys.modules["plugins.memory.holo"] is sys.modules[real]
    assert sys.modules["plugins.memory.holo.retrieval"] is sys.modules[f"{real}.retrieval"]
    store = importlib.import_module("plugins.memory.holo.store")
    assert store.FactStore is sys.modules[f"{real}.store"].FactStore
    assert store.__spec__.name == f"{real}.store"  # its own spec, not the alias


SELF_IMPORTING = {
    "plugin.yaml": "name: selfref\nversion: 0.3.0\n",
    "pyproject.toml": '[project]\nname = "selfref-hermes"\nversion = "0.3.0"\n',
    "selfref_hermes/__init__.py": (
        "from selfref_hermes.provider import SelfRefProvider\n"
        "\n"
        "def register(ctx):\n"
        "    ctx.register_memory_provider(SelfRefProvider())\n"
    ),
    "selfref_hermes/config.py": "LIMIT = 3\n",
    "selfref_hermes/provider.py": (
        "from agent.memory_provider import MemoryProvider\n"
        "from selfref_hermes.config import LIMIT\n"
        "import selfref_hermes.config as config_module\n"
        "\n"
        "class SelfRefProvider(MemoryProvider):\n"
        "    name = 'selfref'\n"
        "    def is_available(self):\n"
        "        return True\n"
        "    def initialize(self, session_id, **kwargs):\n"
        "        self.limit = LIMIT\n"
        "        self.config_module = config_module\n"
        "    def get_tool_schemas(self):\n"
        "        return []\n"
    ),
}


def test_a_cloned_repository_whose_package_imports_itself_by_name(hermes_home: Path) -> None:
    write_files(hermes_home / "plugins" / "selfref-hermes", SELF_IMPORTING)
    provider = load_memory_provider("selfref")
    assert provider is not None
    provider.initialize("s1")
    real = type(provider).__module__.rpartition(".")[0]
    assert real.startswith("_hermes_user_memory.selfref_hermes__source_")
    # one copy of each module: the package's own name is the loaded copy
    assert sys.modules["selfref_hermes"] is sys.modules[real]
    assert provider.config_module is sys.modules[f"{real}.config"]  # type: ignore[attr-defined]
    assert provider.limit == 3  # type: ignore[attr-defined]


def test_an_installed_package_of_that_name_still_wins(
    hermes_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_files(
        tmp_path / "site",
        {
            "selfref_hermes/__init__.py": "INSTALLED = True\n",
            "selfref_hermes/config.py": "LIMIT = 9\n",
            "selfref_hermes/provider.py": SELF_IMPORTING["selfref_hermes/provider.py"],
        },
    )
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    for name in [n for n in sys.modules if n.partition(".")[0] == "selfref_hermes"]:
        monkeypatch.delitem(sys.modules, name)
    write_files(hermes_home / "plugins" / "selfref-hermes", SELF_IMPORTING)
    provider = load_memory_provider("selfref")
    assert provider is not None
    provider.initialize("s1")
    assert provider.limit == 9  # type: ignore[attr-defined]  # the installed copy's
    assert sys.modules["selfref_hermes"].INSTALLED is True
