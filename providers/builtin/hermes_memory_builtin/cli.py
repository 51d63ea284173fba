"""``hermes-memory memory``: inspect and fix persistent memory by hand.

The commands use the same :class:`MemoryStore` as the ``memory`` tool, so a
person's edits are scanned, locked, re-read, budget-checked and written
atomically exactly like the agent's. The ``memory.*_enabled`` switches only
govern what the agent sees; these commands can always reach both files.
"""

from __future__ import annotations

import json
from typing import Any

import click

from hermes_memory_builtin.command_store import open_store, report
from hermes_memory_builtin.visible import visible

TARGET_CHOICE = click.Choice(["memory", "user"])


USER_OPTION = click.option(
    "--user",
    "user_id",
    metavar="ID",
    help="The files of one user of a gateway (the user_id the host passes); default: the "
    "single-user files.",
)


@click.group("memory")
def memory() -> None:
    """Inspect and fix persistent memory (MEMORY.md and USER.md)."""


@memory.command("show")
@click.option("--target", type=TARGET_CHOICE, help="Show one file only (default: both).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@USER_OPTION
def show(target: str | None, as_json: bool, user_id: str | None) -> None:
    """Show the entries as they are on disk now, with usage.

    Entries that the threat scan withholds from the system prompt are flagged,
    so you can remove them.
    """
    from hermes_memory_builtin.entries import dedupe, parse_entries, total_chars
    from hermes_memory_builtin.snapshot import format_true_usage
    from hermes_memory_builtin.targets import TARGETS
    from hermes_memory_builtin.threats import scan_for_threats

    store = open_store(user_id)
    names = [target] if target else list(TARGETS)
    shown_files: dict[str, Any] = {}
    for name in names:
        read = store.read_document(name)
        entries = dedupe(parse_entries(read.text))
        size, limit = total_chars(entries), store.char_limit(name)
        shown_files[name] = {
            "file": store.location(name),
            "chars": size,
            "limit": limit,
            "usage": format_true_usage(size, limit),
            "error": read.error,
            "entries": [
                {"text": entry, "threats": scan_for_threats(entry, scope="strict")}
                for entry in entries
            ],
        }
    failed = any(item["error"] for item in shown_files.values())
    if as_json:
        click.echo(json.dumps(shown_files, ensure_ascii=False, indent=2))
    else:
        for name, item in shown_files.items():
            _print_target(name, TARGETS[name].filename, item)
    if failed:
        raise click.exceptions.Exit(1)


def _print_target(name: str, filename: str, item: dict[str, Any]) -> None:
    click.echo(click.style(f"{filename}", bold=True) + f"  {item['file']}")
    if item["error"]:
        click.echo(
            f"  Error: the file exists but cannot be read ({item['error']}). Fix it "
            "(valid UTF-8, readable) before changing memory.",
            err=True,
        )
        return
    count = len(item["entries"])
    click.echo(f"  {item['usage']}, {count} entr{'y' if count == 1 else 'ies'}")
    if item["chars"] > item["limit"]:
        click.echo(
            "  over its budget: the agent sees only part of it and every add is refused; "
            f"remove or merge entries (`hermes-memory memory remove --target {name} TEXT`)"
        )
    if not count:
        click.echo("  (no entries)")
    for number, entry in enumerate(item["entries"], 1):
        text = visible(entry["text"]).replace("\n", "\n      ")
        click.echo(f"  [{number}] {text}")
        if entry["threats"]:
            click.echo(
                "      ! withheld from the system prompt (threat pattern(s): "
                f"{', '.join(entry['threats'])}); remove it with "
                f"`hermes-memory memory remove --target {name} '<part of it>'`"
            )
    click.echo("")


@memory.command("add")
@click.option("--target", type=TARGET_CHOICE, default="memory", show_default=True)
@click.argument("content")
@USER_OPTION
def add(target: str, content: str, user_id: str | None) -> None:
    """Add CONTENT as a new entry."""
    report(open_store(user_id).add(target, content, "user", reviewed=True))


@memory.command("replace")
@click.option("--target", type=TARGET_CHOICE, default="memory", show_default=True)
@click.argument("old_text")
@click.argument("new_content")
@USER_OPTION
def replace(target: str, old_text: str, new_content: str, user_id: str | None) -> None:
    """Replace the whole entry containing OLD_TEXT with NEW_CONTENT."""
    report(open_store(user_id).replace(target, old_text, new_content, "user", reviewed=True))


@memory.command("remove")
@click.option("--target", type=TARGET_CHOICE, default="memory", show_default=True)
@click.argument("old_text")
@USER_OPTION
def remove(target: str, old_text: str, user_id: str | None) -> None:
    """Remove the entry containing OLD_TEXT (a unique part of it)."""
    report(open_store(user_id).remove(target, old_text))


@memory.command("migrate")
@click.option(
    "--to",
    "target",
    required=True,
    metavar="URL|files",
    help="postgresql://user:pass@host/db to copy the memory files into rows, or `files` to "
    "copy rows into $HERMES_HOME/memories.",
)
@click.option(
    "--from",
    "source",
    metavar="URL",
    default=None,
    help="With --to files: the database (default: memory.url, else HERMES_MEMORY_URL).",
)
@click.option(
    "--user",
    "users",
    metavar="ID",
    multiple=True,
    help="Only this user's memory (repeat for several); default: every user's and the "
    "single-user memory.",
)
@click.option("--force", is_flag=True, help="Replace what the target holds for those users.")
def migrate(target: str, source: str | None, users: tuple[str, ...], force: bool) -> None:
    """Copy builtin memory between files and PostgreSQL rows, then verify the copy.

    Moves MEMORY.md and USER.md (their exact text), the origin ledgers, held writes and
    the archive tier with its curation log, per user. All or nothing: rows are written
    in one transaction and files staged, and both are read back and compared before
    anything is kept. A user whose target already holds memory is refused unless
    --force. The source is only read. Agents may keep running: the move takes the
    locks their writes take, so a write in progress finishes first and later ones wait;
    afterwards set (or remove) memory.url.
    """
    from hermes_core.config import get_hermes_home
    from hermes_core.errors import HermesMemoryError
    from hermes_core.users import valid_user_id
    from hermes_memory_builtin.documents import memory_url
    from hermes_memory_builtin.memory_move import files_to_rows, rows_to_files
    from hermes_memory_builtin.store import memory_dir_for

    try:
        owners = [valid_user_id(user) or "" for user in users] or None
        memories = memory_dir_for(get_hermes_home())
        if target == "files":
            from hermes_core.config import load_config

            url = source or memory_url(load_config())
            if url is None:
                raise click.UsageError(
                    "--to files copies rows of a database: give --from URL (or set memory.url)."
                )
            report = rows_to_files(url, memories, owners=owners, replace=force)
            after = "remove memory.url (and HERMES_MEMORY_URL) so agents use the files"
        else:
            from hermes_core.sessions.postgres import is_postgres_url

            if not is_postgres_url(target):
                raise click.BadParameter(
                    "give postgresql://user:password@host:5432/database, or `files`.",
                    param_hint="'--to'",
                )
            url = target
            report = files_to_rows(memories, url, owners=owners, replace=force)
            after = f"set memory.url (or HERMES_MEMORY_URL) to {report.target}"
    except HermesMemoryError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(
        f"Copied the memory of {report.owners} owner(s) from {report.source} to "
        f"{report.target}: {report.documents} document(s), {report.held} held write(s), "
        f"{report.archived} archived entr{'y' if report.archived == 1 else 'ies'}; read back "
        f"and identical. Next: {after}."
    )


def _add_archive_commands() -> None:
    from hermes_memory_builtin.curation_cli import COMMANDS
    from hermes_memory_builtin.review_cli import review

    for command in (*COMMANDS, review):
        memory.add_command(command)


_add_archive_commands()
