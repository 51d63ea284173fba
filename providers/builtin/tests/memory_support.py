"""Helpers shared by the builtin provider's tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hermes_memory_builtin.entries import ENTRY_DELIMITER


def write_file(path: Path, content: str | bytes) -> None:
    """Put *content* on disk the way a person or another program would."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)


def write_entries(path: Path, entries: list[str]) -> None:
    """Write *entries* in the file format."""
    write_file(path, ENTRY_DELIMITER.join(entries))


def read_entries(path: Path) -> list[str]:
    """The entries on disk, split exactly as written."""
    text = path.read_text(encoding="utf-8")
    return text.split(ENTRY_DELIMITER) if text else []


def as_dict(result: str | dict[str, Any]) -> dict[str, Any]:
    """A tool result (JSON text or dict) as a dict."""
    return json.loads(result) if isinstance(result, str) else result
