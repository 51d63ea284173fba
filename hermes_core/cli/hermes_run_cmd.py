"""``hermes-memory hermes-run SCRIPT [ARGS]...``: a Hermes plugin's own script, Hermes served.

A plugin package's installer (``hermes-onemem install``) usually imports the
plugin, and the plugin imports Hermes Agent's modules (``agent.memory_provider``,
``hermes_cli.config``). Those exist in a Hermes environment; here they are
served only inside hermes-memory's process. This command runs the installed
console script in that process, with the active ``HERMES_HOME``'s Hermes
modules and ``.env`` in place, so the script works as it would under Hermes.
"""

from __future__ import annotations

import sys
from importlib.metadata import entry_points

import click


@click.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.argument("script")
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def hermes_run(script: str, args: tuple[str, ...]) -> None:
    """Run the installed console SCRIPT of a Hermes plugin with Hermes' modules served.

    ARGS go to the script unchanged (put them after SCRIPT, --help included).
    Its exit status is this command's.
    """
    from hermes_core import hermes_compat
    from hermes_core.config import get_hermes_home
    from hermes_core.discovery.extract import describe_exception

    found = [ep for ep in entry_points(group="console_scripts") if ep.name == script]
    if not found:
        raise click.ClickException(
            f"No installed console script is named {script!r}. Install the plugin's package "
            "first (pip install ...); `pip show -f <package>` lists the scripts it installs."
        )
    hermes_compat.prepare(get_hermes_home())
    sys.argv = [script, *args]
    try:
        target = found[0].load()
    except Exception as exc:
        raise click.ClickException(
            f"Importing {found[0].value} for {script!r} failed: {describe_exception(exc)}"
        ) from exc
    raise SystemExit(target())
