from __future__ import annotations

import argparse
import sys
from pathlib import Path

# Ensure sibling modules are findable when this file is loaded standalone
# (Hermes pre-loads submodules before executing __init__.py).
_PLUGIN_DIR = str(Path(__file__).resolve().parent)
if _PLUGIN_DIR not in sys.path:
    sys.path.insert(0, _PLUGIN_DIR)

from client import FlatClient  # noqa: E402
from config import load_config  # noqa: E402


def register_cli(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("count", help="How many notes are stored")
    p.set_defaults(func=cmd_count)


def cmd_count(args: argparse.Namespace) -> None:
    print(len(FlatClient(load_config(args.hermes_home)).all()))
