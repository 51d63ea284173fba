"""The ``hermes-memory`` command line.

Each command group lives in its own module and is imported only when used,
which keeps ``hermes-memory --help`` and cold starts fast. Plugins add
commands through the ``register_commands`` hook.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
import sys
import threading
from typing import Any

import click

from hermes_core.errors import HermesMemoryError
from hermes_core.threads import threads_left_running

# command name -> ("module:attribute", one-line help); one module per command group.
# The help is here so ``hermes-memory --help`` imports none of the command modules.
BUILTIN_COMMANDS: dict[str, tuple[str, str]] = {
    "plugins": ("hermes_core.cli.plugins_cmd:plugins", "List discovered memory providers."),
    "doctor": ("hermes_core.cli.doctor_cmd:doctor", "Check HERMES_HOME, config and providers."),
    "setup": ("hermes_core.cli.setup_cmd:setup", "Configure a memory provider, then check it."),
    "sessions": ("hermes_core.cli.sessions_cmd:sessions", "Search and browse past sessions."),
    "chat": ("hermes_core.cli.chat_cmd:chat", "Chat with an agent that has layered memory."),
    "demo": ("hermes_core.cli.demo_cmd:demo", "Run every memory layer end to end, offline."),
    "backup": ("hermes_core.cli.backup_cmd:backup", "Back up HERMES_HOME into one archive."),
    "restore": ("hermes_core.cli.backup_cmd:restore", "Restore a backup into HERMES_HOME."),
    "conformance": (
        "hermes_core.cli.conformance_cmd:conformance",
        "Run the conformance suite against a provider.",
    ),
    "new-provider": (
        "hermes_core.cli.scaffold_cmd:new_provider",
        "Create a new provider distribution from the template.",
    ),
    "mcp": ("hermes_core.cli.mcp_cmd:mcp", "Serve memory tools and resources over MCP."),
    "hermes-run": (
        "hermes_core.cli.hermes_run_cmd:hermes_run",
        "Run a Hermes plugin's installed script with Hermes' modules served.",
    ),
}

logger = logging.getLogger(__name__)

LINGERING_THREAD_GRACE = 2.0
"""Seconds ``main`` waits for non-daemon threads a plugin left running before leaving them."""


class LazyGroup(click.Group):
    """A click group that imports built-in commands on demand and adds plugin commands.

    Each plugin's ``register_commands`` runs on its own, so one that raises
    costs a warning, not the whole CLI.
    """

    _plugin_commands_loaded = False

    def _load_plugin_commands(self) -> None:
        if self._plugin_commands_loaded:
            return
        self._plugin_commands_loaded = True
        from hermes_core.plugins import get_plugin_manager

        for impl in get_plugin_manager().hook.register_commands.get_hookimpls():
            try:
                impl.function(cli=self)
            except Exception as exc:  # a broken plugin must not break the CLI
                logger.warning(
                    "Plugin %r failed to register its commands: %s", impl.plugin_name, exc
                )
        # The cli.py of the active Hermes-style folder plugin (`hermes-memory <provider> ...`).
        from hermes_core.hermes_compat.cli_bridge import add_active_plugin_command

        try:
            add_active_plugin_command(self, reserved=tuple(BUILTIN_COMMANDS))
        except Exception as exc:
            logger.warning("The active memory plugin's cli.py could not be added: %s", exc)

    def list_commands(self, ctx: click.Context) -> list[str]:
        self._load_plugin_commands()
        return sorted(set(BUILTIN_COMMANDS) | set(self.commands))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = BUILTIN_COMMANDS.get(cmd_name)
        if entry is not None:
            module_name, _, attr = entry[0].partition(":")
            command: click.Command = getattr(importlib.import_module(module_name), attr)
            return command
        self._load_plugin_commands()
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        self._load_plugin_commands()
        rows = [(name, help_text) for name, (_, help_text) in BUILTIN_COMMANDS.items()]
        rows += [
            (name, command.get_short_help_str(limit=formatter.width))
            for name, command in self.commands.items()
            if name not in BUILTIN_COMMANDS and not command.hidden
        ]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(sorted(rows))


@click.group(cls=LazyGroup)
@click.version_option(package_name="hermes-memory-core", prog_name="hermes-memory")
@click.option("-v", "--verbose", count=True, help="Show log messages (-v info, -vv debug).")
def cli(verbose: int) -> None:
    """Layered memory for AI agents: providers, sessions, and tools to run them."""
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    for handler in logging.getLogger().handlers:
        if _scrub_log_record not in handler.filters:
            handler.addFilter(_scrub_log_record)


def _scrub_log_record(record: logging.LogRecord) -> bool:
    """Remove secrets (a provider URL's password, say) from a record about to be shown."""
    from hermes_core.redaction import RedactingLogFilter  # imported once a record is shown

    return RedactingLogFilter().filter(record)


def main(argv: list[str] | None = None) -> Any:
    """Console-script entry point: run the CLI, turning our errors into clean messages.

    Python waits for every non-daemon thread before it exits, so a plugin that
    starts one (when imported, say) and never stops it would hang the command
    after its output. Such threads still running :data:`LINGERING_THREAD_GRACE`
    seconds after the command finished are named in a warning and the process
    exits with the command's status without waiting for them.
    """
    started = set(threading.enumerate())
    try:
        result = _run(argv)
    except SystemExit as exc:
        _leave_lingering_threads(started, exc.code)
        raise
    _leave_lingering_threads(started, result)
    return result


def _run(argv: list[str] | None) -> Any:
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
    except BrokenPipeError:  # the reader went away (`... | head`): nothing more to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no error at exit
        sys.exit(1)
    except OSError as exc:  # the system refused: permissions, a full disk, a file for a folder
        logger.debug("Operating-system error", exc_info=True)
        click.echo(f"Error: {_describe_os_error(exc)}", err=True)
        sys.exit(1)
    if isinstance(result, int) and result:
        sys.exit(result)
    return result


def _leave_lingering_threads(started: set[threading.Thread], status: Any) -> None:
    """Exit now with *status* if non-daemon threads begun since *started* do not end.

    hermes-memory's own long-lived threads are daemons, so these are usually a plugin's.
    """
    lingering = threads_left_running(started, LINGERING_THREAD_GRACE)
    if not lingering:
        return
    logger.warning(
        "Not waiting for thread(s) still running after the command: %s. A plugin should "
        "start background threads as daemon threads or stop them in its provider's shutdown().",
        ", ".join(sorted(lingering)),
    )
    if status is None:
        code = 0
    elif isinstance(status, int):
        code = status
    else:  # sys.exit("message"): Python prints the message and exits with 1
        print(status, file=sys.stderr)
        code = 1
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing more to say
            stream.flush()
    logging.shutdown()
    os._exit(code)


def _describe_os_error(exc: OSError) -> str:
    """What the system refused, on which path, and what to check."""
    reason = exc.strerror or str(exc)
    where = f": {exc.filename}" if exc.filename else ""
    return (
        f"{reason}{where}. Check that the path exists, is writable by you and that the disk "
        "has room, then retry (-vv shows where it happened)."
    )
