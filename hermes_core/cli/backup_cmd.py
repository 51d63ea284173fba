"""``hermes-memory backup`` and ``hermes-memory restore``: the whole home in one archive."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click

from hermes_core.cli.progress import Progress, quiet_option
from hermes_core.config import get_hermes_home
from hermes_core.errors import HermesMemoryError

F = TypeVar("F", bound=Callable[..., Any])


def _home(home: Path | None) -> Path:
    return home if home is not None else get_hermes_home()


def _home_option(fn: F) -> F:
    return click.option(
        "--home",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        help="The HERMES_HOME (default: $HERMES_HOME or ~/.hermes).",
    )(fn)


@contextmanager
def _clean_errors() -> Iterator[None]:
    """Our errors as the command's error message."""
    try:
        yield
    except HermesMemoryError as exc:
        raise click.ClickException(str(exc)) from exc


def _size(path: Path) -> str:
    size = float(path.stat().st_size)
    for unit in ("B", "KiB", "MiB"):
        if size < 1024:
            return f"{size:,.0f} {unit}" if unit == "B" else f"{size:,.1f} {unit}"
        size /= 1024
    return f"{size:,.1f} GiB"


@click.command()
@click.argument("path", required=False, type=click.Path(path_type=Path))
@_home_option
@click.option(
    "--include-secrets",
    is_flag=True,
    help="Also back up .env (API keys): keep such an archive as safe as the keys.",
)
@quiet_option
def backup(path: Path | None, home: Path | None, include_secrets: bool, quiet: bool) -> None:
    """Back up HERMES_HOME into one .tar.gz while agents keep writing.

    Holds a consistent copy of state.db and state.db.vectors (SQLite's online
    backup), the memory files (each read under its lock), config.yaml, and a
    manifest of counts and SHA-256 hashes; .env only with --include-secrets.
    PATH is the archive, or a folder for hermes-backup-<time>.tar.gz (default:
    the current folder). The archive appears whole or not at all. With a
    PostgreSQL session store (sessions.url), its sessions are copied as they
    were at one instant (one REPEATABLE READ transaction) instead of state.db;
    with memory in PostgreSQL (memory.url), every user's memory rows are copied
    too (verified). Messages waiting in the outage spool ($HERMES_HOME/spool)
    are included.
    """
    from hermes_memory_builtin.documents import memory_url

    from hermes_core.backup import create_backup
    from hermes_core.config import load_config
    from hermes_core.sessions.backends import sessions_url

    source = _home(home)
    with _clean_errors():
        config = load_config(source) if source.is_dir() else None
        url = sessions_url(config) if config is not None else None
        memory = memory_url(config) if config is not None else None
    name = f"hermes-backup-{time.strftime('%Y%m%d-%H%M%S')}.tar.gz"
    target = path if path is not None else Path(name)
    if target.is_dir():
        target = target / name
    target = Path(os.path.abspath(target))
    memory_lock: Callable[[Path], contextlib.AbstractContextManager[Path]] | None
    try:
        from hermes_memory_builtin.locking import exclusive_lock as memory_lock
    except ImportError:  # pragma: no cover - the builtin provider ships with the core
        memory_lock = None
    with _clean_errors(), Progress("Backing up", quiet=quiet) as progress:
        manifest = create_backup(
            source,
            target,
            include_secrets=include_secrets,
            memory_lock=memory_lock,
            progress=progress.update,
            sessions_url=url,
            memory_url=memory,
        )
    secrets = " with .env" if manifest.secrets else ""
    origin = f" of {manifest.sessions_source}" if manifest.sessions_source else ""
    rows = (
        f", the memory of {manifest.memory_owners} owner(s) of {manifest.memory_source}"
        if manifest.memory_source
        else ""
    )
    click.echo(
        f"Backed up {source} to {target} ({_size(target)}): {len(manifest.files)} file(s)"
        f"{secrets}, {manifest.sessions:,} session(s), {manifest.messages:,} message(s)"
        f"{origin}{rows}."
    )


@click.command()
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@_home_option
@click.option(
    "--force",
    is_flag=True,
    help="Replace what the home holds (kept in a restore-replaced-<time> folder of it).",
)
@click.option(
    "--sessions-url",
    metavar="URL",
    default=None,
    help="The empty PostgreSQL database for the sessions of a backup taken from PostgreSQL "
    "(default: HERMES_SESSIONS_URL, else sessions.url of the restored config.yaml; with "
    "neither, they become state.db).",
)
@click.option(
    "--memory-url",
    metavar="URL",
    default=None,
    help="The PostgreSQL database for the memory rows of a backup taken with memory.url "
    "(default: HERMES_MEMORY_URL, else memory.url of the restored config.yaml; with "
    "neither, they become the files of memories/).",
)
@quiet_option
def restore(
    path: Path,
    home: Path | None,
    force: bool,
    sessions_url: str | None,
    memory_url: str | None,
    quiet: bool,
) -> None:
    """Restore a backup made by `hermes-memory backup` into HERMES_HOME.

    The archive is checked whole first (every file against its manifest, SQLite's
    integrity check of each database); only then are its files moved into
    place. A home that already holds sessions, memory or config is refused
    unless --force. Stop agents using the home first. Sessions backed up from
    PostgreSQL are copied into an empty PostgreSQL database (never over rows
    there), all or nothing, before any file is moved; memory rows go into the
    memory database, for users who have none there yet (verified).
    """
    from hermes_core.backup import restore_backup

    target = _home(home)
    with _clean_errors(), Progress("Checking the archive", quiet=quiet) as progress:
        manifest, replaced = restore_backup(
            path,
            target,
            force=force,
            progress=progress.update,
            sessions_url=sessions_url,
            memory_url=memory_url,
        )
    where = f" (sessions in {manifest.restored_to})" if manifest.restored_to else ""
    if manifest.memory_restored_to:
        where += f" (memory rows in {manifest.memory_restored_to})"
    click.echo(
        f"Restored {path} into {target}: {len(manifest.files)} file(s), "
        f"{manifest.sessions:,} session(s), {manifest.messages:,} message(s){where}."
    )
    if replaced is not None:
        click.echo(f"What it replaced is in {replaced}.")
