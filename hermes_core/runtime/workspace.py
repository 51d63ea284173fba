"""Where a session runs: its working directory's git checkout, found without running git."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["git_root", "path_text"]

_MAX_LEVELS = 128
"""Folders walked up at most (a deeper path is not a checkout anyone works in)."""


def git_root(working_dir: str | os.PathLike[str]) -> str | None:
    """The root of the git checkout holding *working_dir*, or ``None`` outside one.

    A checkout's root holds ``.git``: a folder, or a file in a worktree or a
    submodule. Unreadable folders end the search quietly.
    """
    try:
        folder = Path(working_dir).expanduser().resolve(strict=False)
    except (OSError, RuntimeError, ValueError):
        return None
    for candidate in [folder, *folder.parents][:_MAX_LEVELS]:
        try:
            if (candidate / ".git").exists():
                return str(candidate)
        except OSError:
            return None
    return None


def path_text(path: str | os.PathLike[str]) -> str:
    """*path* as text that can be stored: bytes that are not UTF-8 become U+FFFD.

    A folder name in another encoding reaches Python as lone surrogates, which
    no UTF-8 column (nor JSON) can hold.
    """
    return os.fsencode(path).decode("utf-8", "replace")
