"""``hermes-memory hermes-run SCRIPT [ARGS]...``: a Hermes plugin's own script, Hermes served.

A plugin package's installer (``hermes-onemem install``) usually imports the
plugin, and the plugin imports Hermes Agent's modules (``agent.memory_provider``,
``hermes_cli.config``). Those exist in a Hermes environment; here they are
served only inside hermes-memory's process. This command runs the installed
console script (or a module, or a script file) in that process, with the
active ``HERMES_HOME``'s Hermes modules and ``.env`` in place, so it works as
it would under Hermes.
"""

from __future__ import annotations

import runpy
import sys
from collections.abc import Callable
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import click


def _console_script(script: str) -> Callable[[], Any]:
    """The function behind the installed console script *script*, imported."""
    from hermes_core.discovery.extract import describe_exception

    found = [ep for ep in entry_points(group="console_scripts") if ep.name == script]
    if not found:
        raise click.ClickException(
            f"No installed console script is named {script!r}. Install the plugin's package "
            "first (pip install ...); `pip show -f <package>` lists the scripts it installs. "
            "A module runs with -m MODULE, a script file by its path."
        )
    try:
        return found[0].load()
    except Exception as exc:
        raise click.ClickException(
            f"Importing {found[0].value} for {script!r} failed: {describe_exception(exc)}"
        ) from exc


@click.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option(
    "-m",
    "--module",
    metavar="MODULE",
    help="Run MODULE as `python -m MODULE` would, instead of a console script.",
)
@click.argument("script", required=False)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def hermes_run(module: str | None, script: str | None, args: tuple[str, ...]) -> None:
    """Run a Hermes plugin's installed console SCRIPT with Hermes' modules served.

    SCRIPT may also be the path of a Python file. ARGS go to it unchanged (put
    them after SCRIPT, --help included; after -m MODULE, put -- before them);
    its exit status is this command's.
    """
    from hermes_core import hermes_compat
    from hermes_core.config import get_hermes_home

    if module is None and script is None:
        raise click.UsageError("Name the console SCRIPT to run (or -m MODULE).")
    hermes_compat.prepare(get_hermes_home())
    if module is not None:
        sys.argv = [module, *((script,) if script is not None else ()), *args]
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    elif script is not None and script.endswith(".py") and Path(script).is_file():
        sys.argv = [script, *args]
        runpy.run_path(script, run_name="__main__")
    elif script is not None:
        target = _console_script(script)
        sys.argv = [script, *args]
        raise SystemExit(target())
