"""``hermes-memory memory review``: the writes held for the user, accepted or rejected."""

from __future__ import annotations

import datetime

import click

from hermes_core.errors import HermesMemoryError
from hermes_memory_builtin.command_store import open_store, report
from hermes_memory_builtin.visible import visible

__all__ = ["review"]


@click.command("review")
@click.option("--accept", "accept_ids", multiple=True, metavar="ID", help="Store this held write.")
@click.option("--reject", "reject_ids", multiple=True, metavar="ID", help="Drop this held write.")
@click.option("--user", "user_id", default=None, help="The files of one user of a gateway.")
def review(accept_ids: tuple[str, ...], reject_ids: tuple[str, ...], user_id: str | None) -> None:
    """List memory writes held for review (never in the prompt); accept or reject them."""
    store = open_store(user_id)
    try:
        for held_id in reject_ids:
            store.reject_held(held_id)
            click.echo(f"Rejected {held_id}.")
        for held_id in accept_ids:
            report(store.accept_held(held_id))
        if accept_ids or reject_ids:
            return
        held = store.held_writes().held()
    except HermesMemoryError as exc:
        raise click.ClickException(str(exc)) from exc
    if not held:
        click.echo("No memory writes are held for review.")
        return
    click.echo(f"{len(held)} memory write(s) held for review (not in the prompt):")
    for item in held:
        when = datetime.datetime.fromtimestamp(item.held_at, tz=datetime.UTC)
        if item.operations:
            kind = f"batch of {len(item.operations)} (applied all together or not at all)"
        else:
            kind = "replace" if item.replaces else "add"
        click.echo(
            f"\n[{item.id}] {kind} target={item.target} "
            f"origin={item.origin} score={item.score:.2f} "
            f"held {when:%Y-%m-%d %H:%M} UTC\n  why: {item.reason}\n  {visible(item.content)}"
        )
        for number, op in enumerate(item.operations, 1):
            text = op.get("content") or op.get("old_text") or ""
            origin = f" origin={op['origin']}" if op.get("origin") else ""
            click.echo(f"    {number}. {op.get('action')}{origin}: {visible(str(text))}")
    click.echo("\nAccept with --accept ID, reject with --reject ID.")
