"""Stores embedded for the vector-file and numpy-free scan tests, and a CLI search of them in
a fresh interpreter (as ``hermes-memory sessions search`` runs)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hermes_core.sessions import SessionStore

CLI_SEARCH = textwrap.dedent(
    """
    import contextlib, io, json, sys

    from hermes_core.cli import main

    with contextlib.redirect_stdout(io.StringIO()) as out:
        try:
            main(["sessions", "search", sys.argv[1], "--db", sys.argv[2], "--json"])
        except SystemExit:
            pass
    hits = json.loads(out.getvalue())
    loaded = [name for name in ("numpy", "tokenizers") if name in sys.modules]
    json.dump({"hits": hits, "loaded": loaded}, sys.stdout)
    """
)


def embedded_store(path: Path, conversations: Mapping[str, Sequence[Mapping[str, str]]]) -> None:
    """A store at *path* with these conversations (session id → messages), all embedded."""
    with SessionStore(path, semantic="on") as store:
        for session, messages in conversations.items():
            store.create_session(session)
            store.append_messages(session, [dict(message) for message in messages])
        store.index_messages()


def cli_search(path: Path, query: str, home: Path, mode: str = "auto") -> dict[str, Any]:
    """``{"hits": [...], "loaded": [...]}``: the CLI's hits for *query* and which of numpy
    and tokenizers the process imported."""
    env = {**os.environ, "HERMES_HOME": str(home), "HERMES_SEMANTIC_SEARCH": mode}
    done = subprocess.run(
        [sys.executable, "-c", CLI_SEARCH, query, str(path)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer
