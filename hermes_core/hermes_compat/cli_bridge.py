"""``hermes-memory <provider> …``: the ``cli.py`` of the active Hermes-style plugin.

A Hermes memory plugin may ship a ``cli.py`` next to its ``__init__.py`` with
``register_cli(parser)`` (which builds an argparse tree) and a handler named
``<provider>_command(args)``. The plugin is a folder in ``$HERMES_HOME/plugins``
or, as in newer Hermes releases, the package a ``hermes_agent.memory_providers``
entry point names. As in Hermes, only the provider selected by
``memory.provider`` gets a command, only when its ``cli.py`` defines or
imports ``register_cli``, and only its ``cli.py`` is imported (not the plugin), so the
command works even when the plugin itself cannot load. The arguments are
handed to argparse unchanged (``--help`` included); the parsed namespace also
carries ``hermes_home``. The handler is ``args.func`` when a subcommand set one
with ``set_defaults(func=...)``, else ``<provider>_command``.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click

from hermes_core.config import get_hermes_home, load_config, selected_provider
from hermes_core.discovery.extract import describe_exception
from hermes_core.discovery.folders import PluginFolder, load_folder_submodule
from hermes_core.errors import ConfigError, PluginError
from hermes_core.hermes_compat.dotenv import read_profile_env
from hermes_core.hermes_compat.hooks import run_awaitable
from hermes_core.redaction import REDACTED, redact_egress

CLI_FILE = "cli.py"
REGISTER_CLI = "register_cli"


def add_active_plugin_command(group: click.Group, reserved: Sequence[str] = ()) -> None:
    """Add the active plugin's ``cli.py`` to *group* as a command named after the provider."""
    from hermes_core.plugins import hermes_entry_point_folder, plugin_folder

    home = get_hermes_home()
    try:
        name = selected_provider(load_config(home))
    except ConfigError:
        return
    if not name or name in group.commands or name in reserved:
        return
    folder = plugin_folder(name, home)
    installed = folder is None
    if installed:
        folder = hermes_entry_point_folder(name, home)
    if folder is None or not _defines_register_cli(folder.package_dir / CLI_FILE):
        return
    group.add_command(_command(name, folder, home, installed=installed))


def _binds_register_cli(statements: list[ast.stmt]) -> bool:
    """Whether module-level *statements* bind ``register_cli`` (def, assignment or import)."""
    for node in statements:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.name == REGISTER_CLI:
                return True
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            # `from .pkg.cli import *` may bring it too (muninndb); importing settles it.
            if any((alias.asname or alias.name) in (REGISTER_CLI, "*") for alias in node.names):
                return True
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == REGISTER_CLI for t in targets):
                return True
        elif isinstance(node, (ast.If, ast.Try, ast.With)):  # guarded imports and definitions
            nested = [*node.body, *getattr(node, "orelse", []), *getattr(node, "finalbody", [])]
            nested += [stmt for handler in getattr(node, "handlers", []) for stmt in handler.body]
            if _binds_register_cli(nested):
                return True
    return False


def _defines_register_cli(path: Path) -> bool:
    """Whether *path* is a ``cli.py`` that provides ``register_cli``, read without importing it.

    Defined there or imported into it (``from .package.cli import register_cli``,
    or a ``*`` import that may carry it), as Hermes reads the attribute of the
    imported module. As in Hermes, a
    ``cli.py`` with other helpers only (a setup function) adds no command.
    """
    try:
        source = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    try:
        return _binds_register_cli(ast.parse(source).body)
    except (SyntaxError, ValueError, RecursionError):  # importing it will say what is wrong
        return re.search(rf"\b{REGISTER_CLI}\b", source) is not None


def _handler(module: Any, name: str, args: argparse.Namespace) -> Callable[[Any], Any] | None:
    func = getattr(args, "func", None)
    if callable(func):
        return func
    for attr in (f"{name}_command", f"{name.replace('-', '_')}_command"):
        handler = getattr(module, attr, None)
        if callable(handler):
            return handler
    return None


class _PluginFailure(Exception):
    """The plugin's ``register_cli``, argument parsing or handler failed; the text says how."""


def _call(function: Callable[[Any], Any], argument: Any) -> Any:
    """``function(argument)``, its result awaited when it is awaitable (an async handler).

    ``SystemExit`` (a handler's ``sys.exit(1)``) and ``KeyboardInterrupt`` pass
    through; any other failure is raised as :class:`_PluginFailure`.
    """
    try:
        result = function(argument)
        if inspect.isawaitable(result):
            result = run_awaitable(result)
    except (SystemExit, KeyboardInterrupt):
        raise
    except BaseException as exc:
        raise _PluginFailure(describe_exception(exc)) from exc
    return result


def _failure(home: Path, message: str) -> click.ClickException:
    """*message* as a CLI error, with the profile's secrets and anything key-like removed."""
    for value in read_profile_env(home).values():
        if len(value) >= 8:
            message = message.replace(value, REDACTED)
    return click.ClickException(redact_egress(message))


def _command(name: str, folder: PluginFolder, home: Path, *, installed: bool) -> click.Command:
    """The click command running *folder*'s ``cli.py``; *installed*: an entry point's package."""
    description = folder.description or f"Manage the {name} memory plugin."

    @click.command(
        name=name,
        help=description,
        short_help=description,
        add_help_option=False,
        context_settings={"ignore_unknown_options": True},
    )
    @click.argument("argv", nargs=-1, type=click.UNPROCESSED)
    def run(argv: tuple[str, ...]) -> None:
        from hermes_core import hermes_compat

        hermes_compat.prepare(home)
        if not installed:  # an installed package is imported by its own name, not plugins.memory.*
            hermes_compat.register_alias(folder.name, folder.module_name, folder.package_name)
        cli_path = folder.package_dir / CLI_FILE
        try:
            module = load_folder_submodule(folder, "cli")
        except PluginError as exc:
            raise _failure(home, f"memory plugin {name!r}: {exc}") from exc
        register_cli = getattr(module, REGISTER_CLI, None)
        if not callable(register_cli):
            raise click.ClickException(
                f"memory plugin {name!r}: {cli_path} defines no register_cli(parser)"
            )
        parser = argparse.ArgumentParser(prog=f"hermes-memory {name}", description=description)
        parser.set_defaults(hermes_home=str(home))
        try:
            _call(register_cli, parser)
        except _PluginFailure as exc:
            raise _failure(
                home, f"memory plugin {name!r}: register_cli() in {cli_path} raised {exc}"
            ) from exc.__cause__
        try:  # the argument types and actions are the plugin's code too
            args = _call(parser.parse_args, list(argv))
        except _PluginFailure as exc:
            raise _failure(home, f"memory plugin {name!r}: {exc}") from exc.__cause__
        handler = _handler(module, name, args)
        if handler is None:
            parser.print_help()
            return
        try:
            _call(handler, args)
        except _PluginFailure as exc:
            raise _failure(home, f"memory plugin {name!r}: {exc}") from exc.__cause__

    return run
