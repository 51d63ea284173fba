"""``hermes vault …`` — commands of the vault memory plugin."""

from __future__ import annotations

import json

from hermes_constants import display_hermes_home, get_hermes_home

from .config_schema import load_settings


def _facts_path():
    return get_hermes_home() / "vault" / "facts.json"


def register_cli(subparser) -> None:
    """Build the ``hermes vault`` argparse tree."""
    subs = subparser.add_subparsers(dest="vault_action")
    subs.add_parser("status", help="Show where the vault lives and how many facts it holds")
    add = subs.add_parser("add", help="Store a fact")
    add.add_argument("text", help="The fact")


def vault_command(args) -> None:
    action = getattr(args, "vault_action", None)
    path = _facts_path()
    facts = json.loads(path.read_text(encoding="utf-8")) if path.exists() else []
    if action == "add":
        facts.append(args.text)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(facts), encoding="utf-8")
        print(f"stored fact #{len(facts)}")
    elif action == "status":
        settings = load_settings(str(get_hermes_home()))
        print(f"{settings['label']}: {len(facts)} facts in {display_hermes_home()}/vault")
    else:
        print("usage: hermes vault {status,add}")
