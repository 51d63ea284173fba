"""The ``hermes-memory`` command line.

Each command group lives in its own module and is imported only when used,
which keeps ``hermes-memory --help`` and cold starts fast. Plugins add
commands through the ``register_commands`` hook.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import sys
from typing import Any

import click

from hermes_core.errors import HermesMemoryError

# command name -> "module:attribute"; one module per command group.
BUILTIN_COMMANDS: dict[str, str] = {
    "plugins": "hermes_core.cli.plugins_cmd:plugins",
    "doctor": "hermes_core.cli.doctor_cmd:doctor",
    "sessions": "hermes_core.cli.sessions_cmd:sessions",
    "chat": "hermes_core.cli.chat_cmd:chat",
    "demo": "hermes_core.cli.demo_cmd:demo",
    "conformance": "hermes_core.cli.conformance_cmd:conformance",
    "new-provider": "hermes_core.cli.scaffold_cmd:new_provider",
}


class LazyGroup(click.Group):
    """A click group that imports built-in commands on demand and adds plugin commands."""

    _plugin_commands_loaded = False

    def _available_builtins(self) -> dict[str, str]:
        found = {}
        for name, target in BUILTIN_COMMANDS.items():
            module_name = target.partition(":")[0]
            if importlib.util.find_spec(module_name) is not None:
                found[name] = target
        return found

    def _load_plugin_commands(self) -> None:
        if self._plugin_commands_loaded:
            return
        self._plugin_commands_loaded = True
        try:
            from hermes_core.plugins import get_plugin_manager
        except ImportError:  # discovery not available in a stripped install
            return
        get_plugin_manager().hook.register_commands(cli=self)

    def list_commands(self, ctx: click.Context) -> list[str]:
        self._load_plugin_commands()
        return sorted(set(self._available_builtins()) | set(self.commands))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = BUILTIN_COMMANDS.get(cmd_name)
        if target is not None:
            module_name, _, attr = target.partition(":")
            if importlib.util.find_spec(module_name) is not None:
                command: click.Command = getattr(importlib.import_module(module_name), attr)
                return command
        if cmd_name not in self.commands:
            self._load_plugin_commands()
        return self.commands.get(cmd_name)


@click.group(cls=LazyGroup)
@click.version_option(package_name="hermes-core", prog_name="hermes-memory")
@click.option("-v", "--verbose", count=True, help="Show log messages (-v info, -vv debug).")
def cli(verbose: int) -> None:
    """Layered memory for AI agents: providers, sessions, and tools to run them."""
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")


def main(argv: list[str] | None = None) -> Any:
    """Console-script entry point: run the CLI, turning our errors into clean messages."""
    try:
        result = cli.main(args=argv, prog_name="hermes-memory", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except HermesMemoryError as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(1)
    if isinstance(result, int) and result:
        sys.exit(result)
    return result
