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


def _add_archive_commands() -> None:
    from hermes_memory_builtin.curation_cli import COMMANDS
    from hermes_memory_builtin.review_cli import review

    for command in (*COMMANDS, review):
        memory.add_command(command)


_add_archive_commands()
