"""What the ``hermes-memory memory`` commands share: opening the store and printing results."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from hermes_core.config import load_config
from hermes_core.errors import HermesMemoryError
from hermes_memory_builtin.visible import visible

if TYPE_CHECKING:
    from hermes_memory_builtin.store import MemoryStore

__all__ = ["open_store", "report"]


def open_store(user_id: str | None = None) -> MemoryStore:
    from hermes_memory_builtin.documents import PostgresDocuments, memory_url
    from hermes_memory_builtin.settings import MemorySettings
    from hermes_memory_builtin.store import MemoryStore, memory_dir_for

    try:
        config = load_config()
        settings = MemorySettings.from_config(config)
        url = memory_url(config)
        store = MemoryStore(
            memory_dir_for(None, user_id),
            memory_char_limit=settings.memory_char_limit,
            user_char_limit=settings.user_char_limit,
            documents=PostgresDocuments(url, user_id or "") if url else None,
        )
        honour_overflow(store, config)
        return store
    except HermesMemoryError as exc:
        raise click.ClickException(str(exc)) from exc


def honour_overflow(store: MemoryStore, config: dict[str, Any]) -> None:
    """``memory.overflow: archive`` applies to a person's adds as to the agent's."""
    from hermes_memory_builtin.archive import Archive
    from hermes_memory_builtin.archive_rows import PostgresArchive
    from hermes_memory_builtin.overflow import OverflowArchiver
    from hermes_memory_builtin.policy import CurationPolicy

    if CurationPolicy.from_config(config).overflow == "archive":
        documents = store.documents
        archive = PostgresArchive(documents) if documents else Archive(store.memory_dir)
        store.overflow = OverflowArchiver(archive)


def report(result: dict[str, Any]) -> None:
    """Print a store result; exit 1 with the error and its context on failure."""
    if result.get("success"):
        click.echo(f"{result['message']} {result['target']}: {result['usage']}.")
        for entry in result.get("archived_entries", []):
            click.echo(f"  archived: {visible(entry)}")
        return
    lines = [f"Error: {result.get('error', 'the change failed')}"]
    if result.get("matches"):
        lines.append("Matching entries:")
        lines.extend(f"  - {visible(entry)}" for entry in result["matches"])
    if "current_entries" in result:
        lines.append("Current entries:")
        lines.extend(
            f"  [{number}] {visible(entry)}"
            for number, entry in enumerate(result["current_entries"], 1)
        )
    if result.get("remediation"):
        lines.append(f"Next: {result['remediation']}")
    click.echo("\n".join(lines), err=True)
    raise click.exceptions.Exit(1)
