"""``hermes-memory plugins``: list the memory providers discovery finds."""

from __future__ import annotations

import contextlib
import json
import sys
from typing import TYPE_CHECKING

import click

from hermes_core.cli.terminal import shown as shown_text

if TYPE_CHECKING:  # pragma: no cover
    from hermes_core.discovery.info import ProviderInfo
    from hermes_core.discovery.registry import PluginRecord


def _origin(distribution: str | None, version: str | None) -> str:
    """`` (hermes-memory-honcho 0.1.0)``; a folder plugin's ``plugin.yaml`` version alone."""
    if distribution is None:
        return f" (version {version})" if version else ""
    return f" ({distribution} {version})" if version else f" ({distribution})"


def _status_line(info: ProviderInfo) -> str:
    if info.shadowed_by:
        return f"shadowed by a provider of the same name from {info.shadowed_by}"
    if info.error:
        return f"broken: {info.error}"
    if info.available:
        return "available"
    return f"unavailable: {info.unavailable_reason or 'no reason given'}"


def _render_provider(info: ProviderInfo) -> str:
    from hermes_core.discovery.info import SOURCE_LABELS

    lines = [f"{info.name}{_origin(info.distribution, info.version)}"]
    if info.description:
        lines.append(f"    {info.description}")
    lines.append(f"    source: {SOURCE_LABELS[info.source]}")
    if info.path:
        lines.append(f"    path:   {info.path}")
    elif info.module:  # an entry point that was not loaded: where it would load from
        lines.append(f"    module: {info.module}")
    if info.provider_name and info.provider_name != info.name:
        lines.append(f"    provider name: {info.provider_name}")
    lines.append(f"    status: {_status_line(info)}")
    lines += [f"    warning: {warning}" for warning in info.warnings]
    if not info.shadowed_by and not info.error:
        lines.append(f"    hooks:  {', '.join(info.hooks) or '(required hooks only)'}")
    return "\n".join(lines)


def _render_plugin(record: PluginRecord) -> str:
    line = f"{record.name}{_origin(record.distribution, record.version)}: {record.status}"
    if record.hooks:
        line += f"; hooks: {', '.join(record.hooks)}"
    if record.error:
        line += f"\n    error: {record.error}"
    return line


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@click.option(
    "--all",
    "show_all",
    is_flag=True,
    help=(
        "Also list broken and shadowed providers, every pluggy plugin, the plugin "
        "folders that offer no memory provider and the Hermes entry points no memory "
        "loader reads."
    ),
)
def plugins(as_json: bool, show_all: bool) -> None:
    """List memory providers: name, distribution, source, hooks and availability."""
    from hermes_core.plugins import (
        discover_providers,
        list_plugins,
        misplaced_plugins,
        non_provider_folders,
        unread_entry_points,
    )

    # A plugin that prints while it loads must not corrupt the listing (or the JSON).
    with contextlib.redirect_stdout(sys.stderr):
        found = discover_providers(include_shadowed=show_all)
    shown = found if show_all else [p for p in found if not p.error]
    hidden = len(found) - len(shown)
    records = list_plugins() if show_all else []
    others = non_provider_folders()
    misplaced = misplaced_plugins() if show_all else {}
    unread = unread_entry_points() if show_all or not as_json else []
    if as_json:
        payload: dict[str, object] = {"providers": [p.to_dict() for p in shown]}
        if show_all:
            payload["plugins"] = [r.to_dict() for r in records]
            payload["non_provider_folders"] = others
            payload["misplaced_folders"] = misplaced
            payload["unread_entry_points"] = [point.to_dict() for point in unread]
        click.echo(json.dumps(payload, indent=2))
        return
    if not shown:
        click.echo(
            "No memory providers found. The builtin provider ships inside hermes-memory-core: "
            "reinstall it (pip install --force-reinstall hermes-memory-core), or add a plugin "
            "folder under $HERMES_HOME/plugins/."
        )
    click.echo("\n\n".join(_render_provider(p) for p in shown))
    if hidden:
        click.echo(
            f"\n{hidden} broken provider(s) hidden; `hermes-memory plugins --all` shows why."
        )
    if others and not show_all:
        click.echo(
            f"\n{len(others)} plugin folder(s) offer no memory provider; "
            "`hermes-memory plugins --all` lists them."
        )
    misfiled = [point for point in unread if point.provider]
    if misfiled and not show_all:
        click.echo(
            f"\n{len(misfiled)} installed package(s) declare a memory provider under an "
            "entry-point group no memory loader reads; `hermes-memory plugins --all` lists them."
        )
    if show_all:
        click.echo("\nPluggy plugins (entry-point group hermes_memory):")
        for record in records:
            click.echo(f"  {_render_plugin(record)}")
        if not records:
            click.echo("  (none)")
        if others:
            click.echo(
                "\nPlugin folders offering no memory provider (their __init__.py names neither "
                "MemoryProvider nor register_memory_provider; hermes-memory runs only memory "
                "providers, not general Hermes plugins):"
            )
            for path in others:
                click.echo(f"  {shown_text(path)}")
        if misplaced:
            click.echo(
                "\nMemory plugin folders where no scan looks (plugins/memory/<name>/, or Hermes "
                "Agent's own install tree): move or copy each to $HERMES_HOME/plugins/<name>/ "
                "to use it:"
            )
            for path in misplaced.values():
                click.echo(f"  {shown_text(path)}")
        if unread:
            click.echo(
                "\nInstalled Hermes entry points that no memory loader reads (hermes-memory and "
                "Hermes' memory loader read hermes_agent.memory_providers and hermes_memory):"
            )
            for point in unread:
                what = (
                    "a memory provider under another group: `hermes-memory doctor` says how "
                    "to use it once memory.provider names it"
                    if point.provider
                    else "no memory provider (a general Hermes plugin, a context engine, …); "
                    "not run here"
                )
                click.echo(f"  {point.describe()}: {what}")
