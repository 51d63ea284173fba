"""What a Hermes plugin's ``register(ctx)`` may do beyond registering its provider.

``ctx.register_tool`` is honoured (the tool is offered through the plugin's
provider), ``ctx.get_config`` reads ``plugins.entries.<plugin>.settings``, and
skills, hooks and CLI commands are accepted and ignored with a reason, never
costing the plugin its provider. Also covers ``hermes_agent.memory_providers``
entry points built the pip way.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from plugin_kit import folder_plugin, install_distribution, write_files
from thirdparty_kit import FIXTURES, fixture, install, isolated_plugins, run_cli, write_config

from hermes_core.manager import MemoryManager
from hermes_core.plugins import activate_providers, discover_providers, load_memory_provider

TOOLBOX_SETTINGS = {"plugins": {"entries": {"toolbox": {"settings": {"greeting": "Ahoy"}}}}}


@pytest.fixture(autouse=True)
def _isolated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with isolated_plugins(tmp_path_factory.getbasetemp()):
        yield


@pytest.fixture
def toolbox_manager(hermes_home: Path) -> Iterator[MemoryManager]:
    install(hermes_home, fixture("toolbox"))
    write_config(hermes_home, "toolbox", TOOLBOX_SETTINGS)
    manager = MemoryManager()
    assert activate_providers(manager, None, hermes_home) == ["builtin", "toolbox"]
    manager.initialize_all("sess-tools", platform="cli")
    try:
        yield manager
    finally:
        manager.shutdown_all()


def test_registered_tools_are_offered_and_routed(toolbox_manager: MemoryManager) -> None:
    manager = toolbox_manager
    names = manager.get_all_tool_names()
    assert {"toolbox_search", "toolbox_stats", "toolbox_echo"} <= names
    assert "toolbox_cloud_sync" not in names  # requires_env=["TOOLBOX_CLOUD_KEY"] is unset
    manager.sync_all("Packed the torque wrench", "ok", session_id="sess-tools")
    assert manager.flush_pending(timeout=10)
    stats = json.loads(manager.handle_tool_call("toolbox_stats", {}, task_id="t-1"))
    assert stats == {"notes": 1, "greeting": "Ahoy"}  # greeting read with ctx.get_config
    provider = manager.get_provider("toolbox")
    assert provider.tool_kwargs == [{"task_id": "t-1"}]  # type: ignore[union-attr]
    echoed = json.loads(manager.handle_tool_call("toolbox_echo", {"text": "ping"}))
    assert echoed == {"echo": "ping"}  # async handler, schema given in the wrapped form
    own = json.loads(manager.handle_tool_call("toolbox_search", {"query": "torque wrench"}))
    assert own == {"results": ["Packed the torque wrench"]}
    assert "Ahoy!" in manager.build_system_prompt()


def test_requires_env_tools_appear_once_the_variable_is_set(
    hermes_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(hermes_home, fixture("toolbox"))
    monkeypatch.setenv("TOOLBOX_CLOUD_KEY", "k")
    provider = load_memory_provider("toolbox")
    assert provider is not None
    names = [schema["name"] for schema in provider.get_tool_schemas()]
    assert names == ["toolbox_search", "toolbox_stats", "toolbox_cloud_sync", "toolbox_echo"]
    assert json.loads(provider.handle_tool_call("toolbox_cloud_sync", {})) == {"synced": True}


def test_skills_hooks_and_cli_commands_are_ignored_with_a_reason(
    hermes_home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    install(hermes_home, fixture("toolbox"))
    with caplog.at_level(logging.INFO, logger="hermes_core.plugins"):
        info = {i.name: i for i in discover_providers()}["toolbox"]
    assert info.status == "available"
    ignored = [r.getMessage() for r in caplog.records if "ignored" in r.getMessage()]
    assert any("register_skill('toolbox-maintenance')" in m and "no skills" in m for m in ignored)
    assert any("register_hook('pre_tool_call')" in m for m in ignored)
    assert not any("register_hook('on_session_start')" in m for m in ignored)  # it runs
    assert any("register_cli_command('toolbox')" in m for m in ignored)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_bad_tool_registrations_are_skipped_but_the_provider_is_kept(
    hermes_home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder_plugin(
        hermes_home / "plugins",
        "sloppy",
        """
        from agent.memory_provider import MemoryProvider


        class Sloppy(MemoryProvider):
            name = "sloppy"

            def is_available(self):
                return True

            def initialize(self, session_id, **kwargs):
                pass

            def get_tool_schemas(self):
                return [{"name": "sloppy_own", "description": "d", "parameters": {}}]

            def handle_tool_call(self, tool_name, args, **kwargs):
                return '{"own": true}'


        def _boom():
            raise RuntimeError("no backend")


        def register(ctx):
            ctx.register_memory_provider(Sloppy())
            ctx.register_tool("sloppy_bad", {}, lambda args: "")          # toolset/schema swapped
            for n in range(50):  # the same wrong call for every tool (remnic: 118 of them)
                ctx.register_tool(f"sloppy_many_{n}", {}, lambda args: "")
            ctx.register_tool("sloppy_own", "t", {"description": "dup"}, lambda args: '{"dup": 1}')
            ctx.register_tool("sloppy_gated", "t", {"description": "x"}, lambda args: "{}",
                              check_fn=_boom)
        """,
    )
    with caplog.at_level(logging.WARNING, logger="hermes_core.plugins"):
        provider = load_memory_provider("sloppy")
    assert provider is not None
    assert [s["name"] for s in provider.get_tool_schemas()] == ["sloppy_own"]  # gated one hidden
    assert json.loads(provider.handle_tool_call("sloppy_own", {})) == {"own": True}
    skipped = [r.getMessage() for r in caplog.records if "register_tool(" in r.getMessage()]
    assert len(skipped) == 1 and "register_tool('sloppy_bad')" in skipped[0]
    assert "other skipped registrations are logged at DEBUG" in skipped[0]


def test_get_config_falls_back_to_the_default(hermes_home: Path) -> None:
    install(hermes_home, fixture("toolbox"))
    provider = load_memory_provider("toolbox")
    assert provider is not None
    assert provider.greeting == "hello"  # type: ignore[attr-defined]


def test_hermes_entry_point_factory_distribution(hermes_home: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    modules = {
        f"epmem/{path.name}": path.read_text(encoding="utf-8")
        for path in (FIXTURES / "epmem_dist" / "epmem").glob("*.py")
    }
    install_distribution(
        site,
        "hermes-epmem",
        version="0.5.0",
        entry_points={"hermes_agent.memory_providers": {"epmem": "epmem.entry:create_provider"}},
        modules=modules,
    )
    import sys

    sys.path.insert(0, str(site))  # restored by isolated_plugins
    info = {i.name: i for i in discover_providers()}["epmem"]
    assert info.source == "hermes_entry_point" and info.status == "available"
    assert info.distribution == "hermes-epmem" and info.version == "0.5.0"
    manager = MemoryManager()
    assert activate_providers(manager, {"memory": {"provider": "epmem"}}, hermes_home) == [
        "builtin",
        "epmem",
    ]
    try:
        manager.initialize_all("s", platform="cli")
        manager.sync_all("Booked flights to Oslo", "ok", session_id="s")
        assert manager.flush_pending(timeout=10)
        assert "Oslo" in manager.prefetch_all("When do the flights leave?")
        result = json.loads(manager.handle_tool_call("epmem_search", {"query": "flights"}))
        assert result == {"ok": True, "results": ["Booked flights to Oslo"]}
    finally:
        manager.shutdown_all()


def test_plugin_cli_py_runs_as_a_hermes_memory_command(hermes_home: Path) -> None:
    install(hermes_home, fixture("vault"))
    write_config(hermes_home, "vault")
    added = run_cli("vault", "add", "The spare key is under the mat")
    assert added.returncode == 0, added.stderr
    assert added.stdout.strip() == "stored fact #1"
    status = run_cli("vault", "status")
    assert status.returncode == 0, status.stderr
    assert status.stdout.strip().startswith("Vault: 1 facts in ")
    helped = run_cli("vault", "--help")
    assert helped.returncode == 0 and "status" in helped.stdout and "add" in helped.stdout
    assert "vault" in run_cli("--help").stdout


def test_cli_py_failures_are_reported_cleanly(hermes_home: Path) -> None:
    write_files(
        hermes_home / "plugins" / "broken_cli",
        {
            "__init__.py": "from agent.memory_provider import MemoryProvider\n",
            "cli.py": "def register_cli(subparser):\n    raise RuntimeError('no parser today')\n",
        },
    )
    write_config(hermes_home, "broken_cli")
    result = run_cli("broken_cli", "status")
    assert result.returncode != 0
    assert "broken_cli" in result.stderr and "no parser today" in result.stderr
    assert "Traceback" not in result.stderr


PIPNOTES_MODULES = {
    "pipnotes/__init__.py": (
        "raise RuntimeError('the plugin itself must not run for its cli.py')\n"
    ),
    "pipnotes/plugin.yaml": "name: pipnotes\ndescription: Notes kept by a pip-installed plugin.\n",
    "pipnotes/labels.py": "GREETING = 'pipnotes here'\n",
    "pipnotes/cli.py": (
        "from .labels import GREETING\n\n\n"
        "def register_cli(subparser):\n"
        "    subs = subparser.add_subparsers(dest='action')\n"
        "    subs.add_parser('status', help='show what is stored')\n\n\n"
        "def pipnotes_command(args):\n"
        "    print(f'{GREETING}: {args.action}')\n"
    ),
    "pipflat.py": "def register(ctx):\n    pass\n",
}


def _install_pipnotes(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install_distribution(
        site,
        "hermes-pipnotes",
        entry_points={
            "hermes_agent.memory_providers": {
                "pipnotes": "pipnotes:register",
                "pipflat": "pipflat:register",
            }
        },
        modules=PIPNOTES_MODULES,
    )
    monkeypatch.setenv("PYTHONPATH", str(site))


def test_an_installed_plugins_cli_py_runs_as_a_hermes_memory_command(
    hermes_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Hermes finds a pip-installed provider's cli.py in its entry point's package.
    _install_pipnotes(tmp_path / "site", monkeypatch)
    write_config(hermes_home, "pipnotes")
    result = run_cli("pipnotes", "status")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "pipnotes here: status"  # relative import; no __init__ run
    assert "Notes kept by a pip-installed plugin." in run_cli("--help").stdout


def test_an_installed_plugin_that_is_a_module_has_no_cli_py(
    hermes_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _install_pipnotes(tmp_path / "site", monkeypatch)
    write_config(hermes_home, "pipflat")  # a lone pipflat.py has no directory for a cli.py
    result = run_cli("pipflat", "status")
    assert result.returncode != 0 and "No such command 'pipflat'" in result.stderr


def test_a_cli_py_without_register_cli_adds_no_command(hermes_home: Path) -> None:
    write_files(
        hermes_home / "plugins" / "setup_only",
        {
            "__init__.py": "from agent.memory_provider import MemoryProvider\n",
            # a setup helper, as some bundled Hermes plugins have: Hermes adds no command
            "cli.py": "def cmd_setup(args):\n    print('set up')\n",
        },
    )
    write_config(hermes_home, "setup_only")
    assert "setup_only" not in run_cli("--help").stdout
    result = run_cli("setup_only", "status")
    assert result.returncode != 0 and "No such command 'setup_only'" in result.stderr


def test_a_cli_py_that_imports_register_cli_from_its_package_adds_the_command(
    hermes_home: Path,
) -> None:
    # An installer that copies a package into the plugin folder and re-exports its CLI.
    write_files(
        hermes_home / "plugins" / "relay",
        {
            "__init__.py": "from agent.memory_provider import MemoryProvider\n",
            "cli.py": "from .relay_pkg.cli import register_cli, relay_command  # noqa: F401\n",
            "relay_pkg/__init__.py": "",
            "relay_pkg/cli.py": (
                "def register_cli(subparser):\n"
                "    subparser.add_argument('action')\n\n\n"
                "def relay_command(args):\n"
                "    print(f'relayed {args.action}')\n"
            ),
        },
    )
    write_config(hermes_home, "relay")
    result = run_cli("relay", "status")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "relayed status"


@pytest.mark.parametrize(
    ("source", "provides"),
    [
        ("def register_cli(parser):\n    pass\n", True),
        ("async def register_cli(parser):\n    pass\n", True),
        ("from .pkg.cli import register_cli\n", True),
        ("from .pkg.cli import build as register_cli\n", True),
        ("import register_cli\n", True),
        ("from hermes_muninndb_plugin.cli import *\n", True),
        ("register_cli = make_cli()\n", True),
        ("try:\n    from .cli_impl import register_cli\nexcept ImportError:\n    pass\n", True),
        ("# register_cli is in the package\ndef cmd_setup(args):\n    pass\n", False),
        ("class Cli:\n    def register_cli(self, parser):\n        pass\n", False),
        ("def setup():\n    from .x import register_cli\n", False),
        ("def register_cli(:\n", True),  # unreadable: importing it says what is wrong
    ],
)
def test_which_cli_py_provides_register_cli(tmp_path: Path, source: str, provides: bool) -> None:
    from hermes_core.hermes_compat.cli_bridge import _defines_register_cli

    path = tmp_path / "cli.py"
    path.write_text(source, encoding="utf-8")
    assert _defines_register_cli(path) is provides


FAKEPLUG_MODULES = {
    "fakeplug/__init__.py": (
        "from agent.memory_provider import MemoryProvider  # Hermes' module, at the top\n"
    ),
    "fakeplug/installer.py": (
        "import os, sys\n"
        "from pathlib import Path\n\n"
        "from hermes_cli.config import load_config, save_config\n"
        "from hermes_constants import get_hermes_home\n\n\n"
        "def main():\n"
        "    if '--help' in sys.argv:\n"
        "        print('usage: fakeplug-install [--select]')\n"
        "        return 0\n"
        "    home = Path(get_hermes_home())\n"
        "    (home / 'plugins' / 'fakeplug').mkdir(parents=True, exist_ok=True)\n"
        "    if '--select' in sys.argv:\n"
        "        config = load_config()\n"
        "        config.setdefault('memory', {})['provider'] = 'fakeplug'\n"
        "        save_config(config)\n"
        "    token = os.environ['FAKE_TOKEN']\n"
        "    print(f'installed into {home} with token {token}')\n"
        "    return 3\n\n\n"
        "if __name__ == '__main__':\n"
        "    sys.exit(main())\n"
    ),
}


def test_a_plugins_installer_script_runs_with_hermes_modules_served(
    hermes_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    install_distribution(
        site,
        "fakeplug",
        entry_points={"console_scripts": {"fakeplug-install": "fakeplug.installer:main"}},
        modules=FAKEPLUG_MODULES,
    )
    monkeypatch.setenv("PYTHONPATH", str(site))
    (hermes_home / ".env").write_text("FAKE_TOKEN=t0k\n", encoding="utf-8")
    # Run as Hermes users do, outside Hermes: the plugin's import of agent.* fails.
    plain = subprocess.run(
        [sys.executable, "-c", "import fakeplug.installer"],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        check=False,
    )
    assert "No module named 'agent'" in plain.stderr
    result = run_cli("hermes-run", "fakeplug-install", "--select")
    assert result.returncode == 3, result.stderr  # the script's own exit status
    assert result.stdout.strip() == f"installed into {hermes_home} with token t0k"
    assert (hermes_home / "plugins" / "fakeplug").is_dir()
    assert "provider: fakeplug" in (hermes_home / "config.yaml").read_text(encoding="utf-8")
    helped = run_cli("hermes-run", "fakeplug-install", "--help")
    assert helped.returncode == 0 and helped.stdout.strip() == "usage: fakeplug-install [--select]"
    missing = run_cli("hermes-run", "no-such-script")
    assert missing.returncode == 1 and "No installed console script is named" in missing.stderr
    # an installer with only `if __name__ == "__main__"`: as a module, or by its path
    as_module = run_cli("hermes-run", "-m", "fakeplug.installer", "--", "--help")
    assert as_module.returncode == 0, as_module.stderr
    assert as_module.stdout.strip() == "usage: fakeplug-install [--select]"
    by_path = run_cli("hermes-run", str(site / "fakeplug" / "installer.py"))
    assert by_path.returncode == 3, by_path.stderr
    assert by_path.stdout.strip() == f"installed into {hermes_home} with token t0k"
