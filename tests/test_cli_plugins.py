"""``hermes-memory plugins`` and ``hermes-memory doctor``."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from plugin_kit import (
    ensure_builtin,
    folder_plugin,
    fresh_discovery,
    install_distribution,
    provider_source,
)

from hermes_core.cli import cli
from hermes_core.plugins import get_plugin_manager


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with fresh_discovery(tmp_path_factory.getbasetemp()):
        yield


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture
def plugins_dir(hermes_home: Path) -> Path:
    folder_plugin(hermes_home / "plugins", "good", provider_source("good", doc="Good memory."))
    folder_plugin(
        hermes_home / "plugins",
        "offline",
        provider_source("offline", available=False)
        + "\n    def unavailable_reason(self):\n        return 'set OFFLINE_KEY'\n",
    )
    folder_plugin(hermes_home / "plugins", "cracked", provider_source("cracked") + "\n1/0\n")
    return hermes_home / "plugins"


def test_plugins_json_lists_providers_with_their_details(plugins_dir: Path) -> None:
    result = invoke("plugins", "--json")
    assert result.exit_code == 0
    payload = json.loads(result.stdout)
    assert set(payload) == {"providers"}
    entries = {p["name"]: p for p in payload["providers"]}
    assert "cracked" not in entries  # broken plugins only with --all
    good = entries["good"]
    assert good["source"] == "folder" and good["status"] == "available"
    assert good["description"] == "Good memory."
    assert good["path"] == str(plugins_dir / "good")
    offline = entries["offline"]
    assert (offline["available"], offline["unavailable_reason"]) == (False, "set OFFLINE_KEY")
    assert offline["hooks"] == ["unavailable_reason"]


def test_plugins_all_adds_broken_providers_and_pluggy_plugins(plugins_dir: Path) -> None:
    payload = json.loads(invoke("plugins", "--all", "--json").stdout)
    entries = {p["name"]: p for p in payload["providers"]}
    assert entries["cracked"]["status"] == "broken"
    assert "ZeroDivisionError" in entries["cracked"]["error"]
    assert isinstance(payload["plugins"], list)
    registered = {name for name, _ in get_plugin_manager().list_name_plugin()}
    assert {p["name"] for p in payload["plugins"]} >= registered


def test_plugins_text_output(plugins_dir: Path) -> None:
    result = invoke("plugins")
    assert result.exit_code == 0
    out = result.stdout
    assert "good\n    Good memory.\n    source: folder ($HERMES_HOME/plugins)" in out
    assert "status: available" in out
    assert "status: unavailable: set OFFLINE_KEY" in out
    assert "hooks:  unavailable_reason" in out
    assert "cracked" not in out.split("hidden")[0]
    assert "1 broken provider(s) hidden" in out
    everything = invoke("plugins", "--all").stdout
    assert "status: broken: importing" in everything and "ZeroDivisionError" in everything
    assert "Pluggy plugins (entry-point group hermes_memory):" in everything


def test_plugins_all_shows_shadowed_offers(
    hermes_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder_plugin(hermes_home / "plugins", "twin", provider_source("twin"))
    project = tmp_path / "proj"
    folder_plugin(project / ".hermes" / "plugins", "twin", provider_source("twin"))
    monkeypatch.chdir(project)
    monkeypatch.setenv("HERMES_ENABLE_PROJECT_PLUGINS", "yes")
    entries = json.loads(invoke("plugins", "--all", "--json").stdout)["providers"]
    twins = [(e["source"], e["status"]) for e in entries if e["name"] == "twin"]
    assert twins == [("folder", "available"), ("project", "shadowed")]


def test_plugins_all_names_folders_that_offer_no_memory_provider(
    plugins_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A general Hermes plugin: its recall lives in a pre_llm_call hook, no provider.
    folder_plugin(
        plugins_dir,
        "memsearch",
        "def register(ctx):\n    ctx.register_hook('pre_llm_call', lambda **kw: None)\n",
    )
    (plugins_dir / "notes").mkdir()  # no __init__.py at all
    (plugins_dir / "_private").mkdir()  # hidden by the folder rules, not reported
    project = tmp_path / "proj"
    folder_plugin(project / ".hermes" / "plugins", "stats", "def register(ctx):\n    pass\n")
    monkeypatch.chdir(project)
    monkeypatch.setenv("HERMES_ENABLE_PROJECT_PLUGINS", "1")

    payload = json.loads(invoke("plugins", "--all", "--json").stdout)
    assert payload["non_provider_folders"] == [
        str(plugins_dir / "memsearch"),
        str(plugins_dir / "notes"),
        str(project / ".hermes" / "plugins" / "stats"),
    ]
    assert "memsearch" not in {p["name"] for p in payload["providers"]}
    text = invoke("plugins", "--all").stdout
    assert "Plugin folders offering no memory provider" in text
    assert f"  {plugins_dir / 'memsearch'}\n" in text
    brief = invoke("plugins").stdout
    assert "memsearch" not in brief  # listed only with --all, counted without it
    assert "3 plugin folder(s) offer no memory provider; `hermes-memory plugins --all`" in brief


def test_plugins_with_nothing_found_says_what_to_do(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HERMES_MEMORY_PLUGINS_ALLOW", "")
    pm = get_plugin_manager()
    for name, _ in list(pm.list_name_plugin()):
        pm.unregister(name=name)
    result = invoke("plugins")
    assert "No memory providers found" in result.stdout
    assert "hermes-memory-builtin" not in result.stdout
    assert "pip install --force-reinstall hermes-memory-core" in (" ".join(result.stdout.split()))


# ---------------------------------------------------------------------------- doctor


def doctor() -> Result:
    return CliRunner().invoke(cli, ["doctor"], catch_exceptions=False)


@pytest.fixture
def builtin() -> None:
    ensure_builtin()


def test_doctor_passes_on_a_healthy_home(builtin: None, hermes_home: Path) -> None:
    folder_plugin(hermes_home / "plugins", "good", provider_source("good"))
    (hermes_home / "config.yaml").write_text("memory:\n  provider: good\n", encoding="utf-8")
    sqlite3.connect(hermes_home / "state.db").execute("CREATE TABLE t (x)").connection.close()
    result = doctor()
    assert result.exit_code == 0, result.stdout
    assert f"HERMES_HOME {hermes_home} exists and is writable" in result.stdout
    assert "memory.provider 'good' is available" in result.stdout
    assert "state.db opens" in result.stdout
    assert "0 problem(s)" in result.stdout


def test_doctor_warns_when_the_api_key_variable_is_set_nowhere(
    builtin: None, hermes_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MY_KEY", raising=False)
    (hermes_home / "config.yaml").write_text(
        "model:\n  base_url: http://127.0.0.1:9/v1\n  model: m\n  api_key_env: MY_KEY\n",
        encoding="utf-8",
    )
    missing = doctor()
    assert "model.api_key_env names MY_KEY, which is set neither in the environment" in (
        missing.stdout
    )
    (hermes_home / ".env").write_text("MY_KEY=sk-1\n", encoding="utf-8")  # where Hermes keeps it
    assert "api_key_env names" not in doctor().stdout


def test_doctor_warns_when_the_selected_name_shadows_another_plugin(
    builtin: None, hermes_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder_plugin(hermes_home / "plugins", "twin", provider_source("twin"))
    project = tmp_path / "proj"
    folder_plugin(project / ".hermes" / "plugins", "twin", provider_source("twin"))
    monkeypatch.chdir(project)
    monkeypatch.setenv("HERMES_ENABLE_PROJECT_PLUGINS", "yes")
    (hermes_home / "config.yaml").write_text("memory:\n  provider: twin\n", encoding="utf-8")
    result = doctor()
    assert result.exit_code == 0, result.stdout
    assert "memory.provider 'twin' is available" in result.stdout
    assert (
        "[WARN] memory.provider 'twin' is the folder ($HERMES_HOME/plugins) provider "
        f"({hermes_home / 'plugins' / 'twin'}); the project folder (./.hermes/plugins) provider "
        f"of the same name ({project / '.hermes' / 'plugins' / 'twin'}) is shadowed"
        in result.stdout
    )
    assert "rename its folder and set memory.provider to the new name" in result.stdout
    (hermes_home / "config.yaml").write_text("memory:\n  provider: other\n", encoding="utf-8")
    assert "shadowed" not in doctor().stdout  # only the selected name is worth a warning


def _install_twin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, init: str, **modules: str
) -> None:
    """Distribution hermes-twin on sys.path: package twin_pkg, Hermes entry point twin."""
    site = tmp_path / "site"
    install_distribution(
        site,
        "hermes-twin",
        entry_points={"hermes_agent.memory_providers": {"twin": target}},
        modules={
            "twin_pkg/__init__.py": init,
            **{f"twin_pkg/{name}.py": text for name, text in modules.items()},
        },
    )
    monkeypatch.syspath_prepend(str(site))


def test_doctor_names_an_installed_provider_a_folder_shadows(
    builtin: None, hermes_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An installer that copies its package into plugins/ while its entry point stays.
    _install_twin(tmp_path, monkeypatch, "twin_pkg:register", "def register(ctx):\n    pass\n")
    folder_plugin(hermes_home / "plugins", "twin", provider_source("twin"))
    (hermes_home / "config.yaml").write_text("memory:\n  provider: twin\n", encoding="utf-8")
    result = doctor()
    assert (
        "the entry point (hermes_agent.memory_providers) provider of the same name "
        "(distribution hermes-twin) is shadowed and never loaded" in result.stdout
    )
    assert (
        f"to use the installed one, remove or rename {hermes_home / 'plugins' / 'twin'}; "
        "otherwise uninstall hermes-twin" in result.stdout
    )
    assert " ? " not in result.stdout and "hermes_entry_point" not in result.stdout
    listed = invoke("plugins", "--all").stdout.split("\n\n")
    (shadowed,) = [block for block in listed if "hermes-twin" in block]
    assert "status: shadowed" in shadowed and "module: twin_pkg" in shadowed


def test_doctor_does_not_warn_when_a_folder_reexports_the_installed_package(
    builtin: None, hermes_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The layout pgvector's and memoryrouter's installers write: a folder shim that
    # imports the package whose entry point offers the same name.
    _install_twin(
        tmp_path, monkeypatch, "twin_pkg.provider:Provider", "", provider=provider_source("twin")
    )
    folder_plugin(
        hermes_home / "plugins",
        "twin",
        "from twin_pkg.provider import Provider  # a MemoryProvider\n\n\n"
        "def register(ctx):\n    ctx.register_memory_provider(Provider())\n",
    )
    (hermes_home / "config.yaml").write_text("memory:\n  provider: twin\n", encoding="utf-8")
    result = doctor()
    assert result.exit_code == 0, result.stdout
    assert "shadowed" not in result.stdout
    assert (
        f"memory.provider 'twin': {hermes_home / 'plugins' / 'twin'} runs the code of the package "
        "twin_pkg "
        "that the entry point (hermes_agent.memory_providers) of distribution hermes-twin "
        "offers too" in result.stdout
    )


def test_doctor_does_not_warn_when_a_setup_script_copied_the_installed_package(
    builtin: None, hermes_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # metronix's setup copies its installed package into plugins/<name>/ as it is.
    _install_twin(tmp_path, monkeypatch, "twin_pkg:Provider", provider_source("twin"))
    folder_plugin(hermes_home / "plugins", "twin", provider_source("twin"))
    (hermes_home / "config.yaml").write_text("memory:\n  provider: twin\n", encoding="utf-8")
    result = doctor()
    assert result.exit_code == 0, result.stdout
    assert "shadowed" not in result.stdout and "one provider, found twice" in result.stdout


def test_doctor_warns_about_a_broken_plugin_that_is_not_selected(
    builtin: None, hermes_home: Path
) -> None:
    folder_plugin(hermes_home / "plugins", "cracked", provider_source("cracked") + "\n1/0\n")
    result = doctor()
    assert result.exit_code == 0
    assert "[WARN] provider 'cracked' (folder) is broken" in result.stdout
    assert "0 problem(s)" in result.stdout  # the other warnings: no model, idle providers


def test_doctor_says_when_an_unavailable_provider_gives_no_reason(
    builtin: None, hermes_home: Path
) -> None:
    # Hermes plugins have no unavailable_reason(): the line must not end in "unavailable: "
    folder_plugin(hermes_home / "plugins", "silent", provider_source("silent", available=False))
    result = doctor()
    assert "[ok  ] provider 'silent' is unavailable: no reason given" in result.stdout
    (hermes_home / "config.yaml").write_text("memory:\n  provider: silent\n", encoding="utf-8")
    selected = doctor()
    assert "memory.provider 'silent' is not available: no reason given" in selected.stdout
    assert "run its own setup or init command" in selected.stdout
    assert "do what the reason says" not in selected.stdout


@pytest.mark.parametrize(
    ("setup", "expected", "fix"),
    [
        ("missing_home", "does not exist", "mkdir -p"),
        ("home_is_a_file", "is not a directory", "point HERMES_HOME elsewhere"),
        ("bad_yaml", "is not valid YAML", "edit"),
        ("unknown_provider", "memory.provider is 'ghost' but no such provider", "install"),
        ("general_plugin", "plugins/hooky offers no memory provider (its __init__.py", "select a"),
        ("unavailable_provider", "memory.provider 'offline' is not available: set KEY", "reason"),
        ("broken_provider", "memory.provider 'cracked' is broken", "reinstall"),
        ("blocked_provider", "the plugin lists exclude it", "allow list"),
        ("corrupt_state_db", "state.db cannot be opened", "backup"),
    ],
)
def test_doctor_reports_problems_with_a_fix(
    builtin: None,
    hermes_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    setup: str,
    expected: str,
    fix: str,
) -> None:
    plugins = hermes_home / "plugins"
    config = hermes_home / "config.yaml"
    if setup == "missing_home":
        monkeypatch.setenv("HERMES_HOME", str(hermes_home / "nowhere"))
    elif setup == "home_is_a_file":
        monkeypatch.setenv("HERMES_HOME", str(config))
        config.write_text("", encoding="utf-8")
    elif setup == "bad_yaml":
        config.write_text("memory: [unclosed\n", encoding="utf-8")
    elif setup == "unknown_provider":
        config.write_text("memory:\n  provider: ghost\n", encoding="utf-8")
    elif setup == "general_plugin":
        folder_plugin(plugins, "hooky", "def register(ctx):\n    ctx.register_hook('x', 1)\n")
        config.write_text("memory:\n  provider: hooky\n", encoding="utf-8")
    elif setup == "unavailable_provider":
        folder_plugin(
            plugins,
            "offline",
            provider_source("offline", available=False)
            + "\n    def unavailable_reason(self):\n        return 'set KEY'\n",
        )
        config.write_text("memory:\n  provider: offline\n", encoding="utf-8")
    elif setup == "broken_provider":
        folder_plugin(plugins, "cracked", provider_source("cracked") + "\n1/0\n")
        config.write_text("memory:\n  provider: cracked\n", encoding="utf-8")
    elif setup == "blocked_provider":
        folder_plugin(plugins, "good", provider_source("good"))
        config.write_text("memory:\n  provider: good\nplugins:\n  block: [good]\n", "utf-8")
    elif setup == "corrupt_state_db":
        (hermes_home / "state.db").write_bytes(b"this is not a database" * 100)
    result = doctor()
    assert result.exit_code == 1, result.stdout
    fail_lines = [line for line in result.stdout.splitlines() if line.startswith("[FAIL]")]
    assert any(expected in line for line in fail_lines), result.stdout
    assert fix in result.stdout


def test_doctor_without_builtin_says_how_to_install_it(hermes_home: Path) -> None:
    pm = get_plugin_manager()
    if pm.has_plugin("builtin"):
        pm.unregister(name="builtin")
    result = doctor()
    assert result.exit_code == 1
    # The builtin ships inside the core distribution: the fix reinstalls that one.
    assert "hermes-memory-builtin" not in result.stdout
    assert (
        "fix: reinstall hermes-memory-core, which ships it: "
        "pip install --force-reinstall hermes-memory-core"
    ) in result.stdout


def test_console_script_exit_code(tmp_path: Path) -> None:
    script = Path(sys.executable).parent / "hermes-memory"
    env = dict(os.environ, HERMES_HOME=str(tmp_path / "absent"))
    result = subprocess.run(
        [str(script), "doctor"], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    assert result.returncode == 1
    assert "does not exist" in result.stdout


LINGERING_PLUGIN = (
    provider_source("lingering")
    + """
import threading

threading.Thread(target=threading.Event().wait, name="lingering-poller").start()
"""
)


@pytest.mark.parametrize(
    ("command", "config", "status"),
    [
        ("plugins", "", 0),
        ("doctor", "", 0),
        ("doctor", "runtime:\n  hook_timeout: -5\n", 1),  # a problem: the status is kept
    ],
)
def test_a_plugin_thread_that_never_ends_does_not_hang_the_command(
    hermes_home: Path, command: str, config: str, status: int
) -> None:
    folder_plugin(hermes_home / "plugins", "lingering", LINGERING_PLUGIN)
    (hermes_home / "config.yaml").write_text(config, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", "from hermes_core.cli import main; main()", command],
        capture_output=True,
        text=True,
        timeout=60,  # without the fix the process never exits
        check=False,
    )
    assert done.returncode == status, done.stderr
    assert "lingering" in done.stdout
    warnings = [line for line in done.stderr.splitlines() if "lingering-poller" in line]
    assert len(warnings) == 1
    assert "still running after the command: lingering-poller" in warnings[0]


def test_plugin_folders_installed_where_no_scan_looks_are_named_with_the_move(
    builtin: None, hermes_home: Path
) -> None:
    # Installers that put a plugin one level too deep, or into Hermes' own install tree.
    folder_plugin(hermes_home / "plugins" / "memory", "cortext", provider_source("cortext"))
    bundled = hermes_home / "hermes-agent" / "plugins" / "memory"
    folder_plugin(bundled, "harnessmemory", provider_source("harnessmemory"))
    general = hermes_home / "plugins" / "memory" / "notes_tool"
    general.mkdir(parents=True)
    (general / "__init__.py").write_text("def register(ctx):\n    pass\n", encoding="utf-8")

    listed = invoke("plugins", "--all")
    assert "Memory plugin folders where no scan looks" in listed.stdout
    assert str(hermes_home / "plugins" / "memory" / "cortext") in listed.stdout
    assert str(bundled / "harnessmemory") in listed.stdout
    assert "notes_tool" not in listed.stdout  # not a memory plugin: nothing to move
    # plugins/memory itself is not called a general plugin offering no provider
    assert "Plugin folders offering no memory provider" not in listed.stdout
    payload = json.loads(invoke("plugins", "--all", "--json").stdout)
    assert payload["misplaced_folders"] == {
        "cortext": str(hermes_home / "plugins" / "memory" / "cortext"),
        "harnessmemory": str(bundled / "harnessmemory"),
    }

    (hermes_home / "config.yaml").write_text(
        "memory:\n  provider: harnessmemory\n", encoding="utf-8"
    )
    result = doctor()
    assert result.exit_code == 1
    assert f"a plugin folder of that name is at {bundled / 'harnessmemory'}" in result.stdout
    assert (
        f"copy or move {bundled / 'harnessmemory'} to "
        f"{hermes_home / 'plugins' / 'harnessmemory'}" in result.stdout
    )


def test_doctor_names_a_package_that_declares_the_provider_under_another_group(
    builtin: None, hermes_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # spectron-hermes: a general hermes_agent.plugins entry point; hyatlas: a made-up group.
    site = tmp_path / "site"
    install_distribution(
        site,
        "spectron-hermes",
        version="0.3.0",
        entry_points={"hermes_agent.plugins": {"spectron": "spectron_hermes"}},
        modules={"spectron_hermes/__init__.py": provider_source("spectron")},
    )
    install_distribution(  # rag-memory-plugin: hooks and tools only, no memory provider
        site,
        "rag-memory-plugin",
        entry_points={"hermes_agent.plugins": {"rag-memory": "rag_memory.plugin"}},
        modules={
            "rag_memory/__init__.py": "",
            "rag_memory/plugin.py": "def register(ctx):\n    ctx.register_hook('x', print)\n",
        },
    )
    monkeypatch.syspath_prepend(str(site))
    (hermes_home / "config.yaml").write_text("memory:\n  provider: spectron\n", encoding="utf-8")
    result = doctor()
    assert result.exit_code == 1
    assert (
        "spectron-hermes 0.3.0 (hermes_agent.plugins: spectron = spectron_hermes) declares it "
        "under an entry-point group that neither Hermes' memory loader nor hermes-memory reads"
        in result.stdout
    )
    assert "run the package's own installer" in result.stdout
    (hermes_home / "config.yaml").write_text("memory:\n  provider: rag-memory\n", "utf-8")
    general = doctor()
    assert (
        "rag-memory-plugin 1.0 (hermes_agent.plugins: rag-memory = rag_memory.plugin) is a "
        "general Hermes plugin by that name (its code names no MemoryProvider)" in general.stdout
    )
    assert "run the package's own installer" not in general.stdout
    install_distribution(  # hermes-next: a duck-typed provider in a group named for memory
        site,
        "hermes-next",
        version="0.7.1",
        entry_points={"hermes.memory": {"next": "hermes_next.provider:NextProvider"}},
        modules={
            "hermes_next/__init__.py": "",
            "hermes_next/provider.py": "class NextProvider: pass\n",
        },
    )
    (hermes_home / "config.yaml").write_text("memory:\n  provider: next\n", "utf-8")
    duck = doctor()
    assert (
        "hermes-next 0.7.1 (hermes.memory: next = hermes_next.provider:NextProvider) declares it "
        "under an entry-point group" in duck.stdout
    )


def test_doctor_warns_that_general_plugins_hermes_would_run_are_not_run(
    builtin: None, hermes_home: Path
) -> None:
    # protagine leaves turn capture to its general plugin when plugins.enabled names it.
    (hermes_home / "config.yaml").write_text(
        "plugins:\n  enabled: [protagine, disk-cleanup]\n", encoding="utf-8"
    )
    result = doctor()
    assert result.exit_code == 0, result.stdout
    assert (
        "[WARN] plugins.enabled lists protagine, disk-cleanup: Hermes Agent's general "
        "plugins, which hermes-memory does not run" in result.stdout
    )
    (hermes_home / "config.yaml").write_text("plugins:\n  enabled: []\n", encoding="utf-8")
    assert "plugins.enabled" not in doctor().stdout


def test_a_wheel_that_installs_its_plugin_into_hermes_bundled_folder_is_named(
    builtin: None, hermes_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # sonzai-hermes ships site-packages/plugins/memory/sonzai/: Hermes' bundled folder
    # when Hermes is installed in the same environment, scanned by nothing here.
    site = tmp_path / "site"
    folder_plugin(site / "plugins" / "memory", "sonzai", provider_source("sonzai"))
    monkeypatch.syspath_prepend(str(site))
    (hermes_home / "config.yaml").write_text("memory:\n  provider: sonzai\n", encoding="utf-8")
    result = doctor()
    assert result.exit_code == 1
    where = site / "plugins" / "memory" / "sonzai"
    assert f"a plugin folder of that name is at {where}, where no scan looks" in result.stdout
    assert f"copy or move {where} to {hermes_home / 'plugins' / 'sonzai'}" in result.stdout


def test_doctor_points_from_a_plugins_own_name_to_the_name_that_selects_it(
    builtin: None, hermes_home: Path
) -> None:
    # mem0-oss's README selects memory.provider: mem0-oss for a folder named mem0_oss.
    misplaced = hermes_home / "plugins" / "memory" / "mem0_oss"
    folder_plugin(misplaced.parent, "mem0_oss", provider_source("mem0-oss"))
    (hermes_home / "config.yaml").write_text("memory:\n  provider: mem0-oss\n", "utf-8")
    first = doctor()
    assert f"a plugin folder of that name is at {misplaced}, where no scan looks" in first.stdout
    assert f"copy or move {misplaced} to {hermes_home / 'plugins' / 'mem0-oss'}" in first.stdout
    misplaced.rename(hermes_home / "plugins" / "mem0_oss")
    second = doctor()
    assert "the plugin 'mem0_oss' calls itself 'mem0-oss'" in second.stdout
    assert "set memory.provider: mem0_oss in config.yaml" in second.stdout


def test_plugins_text_shows_a_folder_plugins_version(hermes_home: Path) -> None:
    # plugin.yaml supplies the version "for the listing"; only --json used to show it.
    folder_plugin(
        hermes_home / "plugins",
        "notes",
        provider_source("notes"),
        **{"plugin.yaml": 'version: "1.2"\n'},
    )
    folder_plugin(hermes_home / "plugins", "plain", provider_source("plain"))
    payload = json.loads(invoke("plugins", "--json").stdout)
    assert {p["name"]: p["version"] for p in payload["providers"]}["notes"] == "1.2"
    out = invoke("plugins").stdout
    assert "\nnotes (version 1.2)\n" in f"\n{out}"
    assert "\nplain\n" in f"\n{out}"  # no version, nothing added


# ------------------------------------------------- provider calls that never return

HANG = "__import__('time').sleep(10**6)"

# call -> (__init__.py of a provider hanging in it, the listing status it gets)
HANGING_CALLS: dict[str, tuple[str, str]] = {
    "get_tool_schemas()": (
        provider_source("stuck") + f"\n    def get_tool_schemas(self):\n        {HANG}\n",
        "broken",
    ),
    "is_available()": (
        provider_source("stuck") + f"\n    def is_available(self):\n        {HANG}\n",
        "broken",
    ),
    "name": (provider_source("stuck").replace('return "stuck"', HANG), "broken"),
    "unavailable_reason()": (
        provider_source("stuck", available=False)
        + f"\n    def unavailable_reason(self):\n        {HANG}\n",
        "unavailable",
    ),
    "get_config_schema()": (
        provider_source("stuck", available=False)
        + f"\n    def get_config_schema(self):\n        {HANG}\n",
        "unavailable",
    ),
}


@pytest.fixture
def short_call_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    from hermes_core.discovery import deadline

    monkeypatch.setattr(deadline, "PROVIDER_CALL_TIMEOUT", 0.3)


@pytest.mark.parametrize("call", sorted(HANGING_CALLS))
def test_a_provider_call_that_never_returns_is_cut_off_in_plugins_and_doctor(
    call: str, builtin: None, short_call_limit: None, hermes_home: Path
) -> None:
    source, status = HANGING_CALLS[call]
    folder_plugin(hermes_home / "plugins", "stuck", source)
    folder_plugin(hermes_home / "plugins", "good", provider_source("good"))
    said = f"{call} did not return within 0.3 s"

    payload = json.loads(invoke("plugins", "--all", "--json").stdout)
    entries = {p["name"]: p for p in payload["providers"]}
    assert entries["good"]["status"] == "available"
    assert entries["stuck"]["status"] == status
    assert said in (entries["stuck"]["error"] or entries["stuck"]["unavailable_reason"])
    assert "HERMES_MEMORY_PLUGINS_BLOCK" in json.dumps(entries["stuck"])

    text = invoke("plugins", "--all").stdout
    assert said in text and "good\n" in text

    (hermes_home / "config.yaml").write_text("memory:\n  provider: stuck\n", encoding="utf-8")
    result = doctor()
    assert result.exit_code == 1
    assert "[FAIL] memory.provider 'stuck' is" in result.stdout and said in result.stdout
    assert "[ok  ] provider 'good' is available" in result.stdout
