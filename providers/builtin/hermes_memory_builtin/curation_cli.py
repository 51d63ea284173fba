"""``hermes-memory memory search | curate | history | undo``: the archive tier by hand."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import click

from hermes_core.config import load_config
from hermes_core.errors import HermesMemoryError
from hermes_memory_builtin.visible import visible

if TYPE_CHECKING:
    from hermes_memory_builtin.archive_rows import AnyArchive
    from hermes_memory_builtin.policy import CurationPolicy


def _open(user_id: str | None) -> tuple[AnyArchive, dict[str, int], CurationPolicy]:
    archive, limits, policy, _ = _open_with_config(user_id)
    return archive, limits, policy


USER_OPTION = click.option(
    "--user",
    "user_id",
    metavar="ID",
    help="The archive of one user of a gateway (the user_id the host passes); default: the "
    "single-user archive.",
)


def _open_with_config(
    user_id: str | None,
) -> tuple[AnyArchive, dict[str, int], CurationPolicy, dict[str, Any]]:
    from hermes_memory_builtin.archive import Archive
    from hermes_memory_builtin.archive_rows import PostgresArchive
    from hermes_memory_builtin.documents import PostgresDocuments, memory_url
    from hermes_memory_builtin.policy import CurationPolicy
    from hermes_memory_builtin.settings import MemorySettings
    from hermes_memory_builtin.store import memory_dir_for

    try:
        config = load_config()
        settings = MemorySettings.from_config(config)
        policy = CurationPolicy.from_config(config)
        url = memory_url(config)
        folder = memory_dir_for(None, user_id)
        archive: AnyArchive = (
            PostgresArchive(PostgresDocuments(url, user_id or "")) if url else Archive(folder)
        )
    except HermesMemoryError as exc:
        raise click.ClickException(str(exc)) from exc
    limits = {"memory": settings.memory_char_limit, "user": settings.user_char_limit}
    return archive, limits, policy, config


@contextlib.contextmanager
def _clear_errors() -> Iterator[None]:
    """Turn a store or archive error into a one-line CLI error (exit status 1)."""
    try:
        yield
    except HermesMemoryError as exc:
        raise click.ClickException(str(exc)) from exc


def _when(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


@click.command("search")
@USER_OPTION
@click.argument("query")
@click.option("--all", "include_old", is_flag=True, help="Include superseded and working state.")
@click.option("--limit", type=click.IntRange(1, 1000), default=20, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
def search(query: str, include_old: bool, limit: int, as_json: bool, user_id: str | None) -> None:
    """Search the archive (entries moved out of MEMORY.md / USER.md) for QUERY."""
    archive, _, _ = _open(user_id)
    with archive, _clear_errors():
        found = (
            archive.search(query, limit=limit, current_only=not include_old)
            if archive.exists()
            else []
        )
    if as_json:
        rows = [
            {
                "id": e.id,
                "target": e.target,
                "text": e.text,
                "reason": e.reason,
                "category": e.category,
                "superseded": e.superseded,
                "change": e.change_id,
            }
            for e in found
        ]
        click.echo(json.dumps(rows, ensure_ascii=False, indent=2))
        return
    if not found:
        click.echo("No archived entry matches.")
        return
    for entry in found:
        flag = " (superseded)" if entry.superseded and entry.reason != "superseded" else ""
        click.echo(f"[{entry.target}] {visible(entry.text)}  <- {entry.reason}{flag}")


@click.command("curate")
@USER_OPTION
@click.option("--dry-run", is_flag=True, help="Log proposals only; change nothing.")
def curate(dry_run: bool, user_id: str | None) -> None:
    """Run the curator now: merge duplicates, archive superseded, stale and surplus entries.

    Changes show in the system prompt from the next session on; each file's
    change can be reverted with `hermes-memory memory undo ID`.
    """
    from hermes_memory_builtin.curator import Curator
    from hermes_memory_builtin.curator_model import judge_for
    from hermes_memory_builtin.store import memory_dir_for

    archive, limits, policy, config = _open_with_config(user_id)
    judge = judge_for(config, max_calls=policy.model_calls) if policy.model else None
    with archive, _clear_errors():
        curator = Curator(
            memory_dir_for(None, user_id), archive, limits=limits, policy=policy, judge=judge
        )
        report = curator.run(apply=not dry_run)
    for target, why in report.skipped.items():
        click.echo(f"Skipped {target}: {why}", err=True)
    if not report.plans:
        click.echo("Nothing to curate.")
        return
    verb = "Proposed" if dry_run else "Applied"
    for plan, change_id in zip(report.plans, report.change_ids, strict=True):
        click.echo(f"{verb} #{change_id} {plan.target}: {plan.summary()}")
        for moved in plan.moved:
            click.echo(f"  - {moved.reason}: {moved.text}")


@click.command("history")
@USER_OPTION
@click.option("--limit", type=click.IntRange(1, 10_000), default=20, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
def history(limit: int, as_json: bool, user_id: str | None) -> None:
    """Show the curation log, newest first: what moved, why, and the change ids to undo."""
    archive, _, _ = _open(user_id)
    with archive, _clear_errors():
        changes = archive.changes(limit) if archive.exists() else []
        moved = {c.id: archive.moved_by(c.id) for c in changes}
    if as_json:
        rows: list[dict[str, Any]] = [
            {
                "id": c.id,
                "at": c.at,
                "kind": c.kind,
                "state": c.state,
                "target": c.target,
                "reason": c.reason,
                "undoes": c.undoes,
                "undone_by": c.undone_by,
                "details": c.details,
                "before": c.before_text,
                "after": c.after_text,
            }
            for c in changes
        ]
        click.echo(json.dumps(rows, ensure_ascii=False, indent=2))
        return
    if not changes:
        click.echo("The curation log is empty.")
        return
    for change in changes:
        undone = f" (undone by #{change.undone_by})" if change.undone_by else ""
        click.echo(
            f"#{change.id} {_when(change.at)} {change.kind} {change.target}: "
            f"{change.reason}{undone}"
        )
        for entry in moved[change.id]:
            click.echo(f"    {entry.reason}: {entry.text}")
        for item in change.details.get("moved", []) if change.kind == "proposal" else []:
            click.echo(f"    would move ({item['reason']}): {item['text']}")


@click.command("undo")
@USER_OPTION
@click.argument("change_id", type=int)
def undo(change_id: int, user_id: str | None) -> None:
    """Revert change CHANGE_ID (see `history`): the file gets its exact earlier text back."""
    from hermes_memory_builtin.curation_log import undo as undo_change

    archive, _, _ = _open(user_id)
    with archive, _clear_errors():
        done = undo_change(archive, change_id)
    click.echo(f"Undid #{change_id} as #{done.id}; the next session shows the restored file.")


COMMANDS = (search, curate, history, undo)
