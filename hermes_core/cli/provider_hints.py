"""What to tell a user who names a provider that is not installed: its install line, or the
installed names it is close to."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

OWN_PROVIDERS: dict[str, str] = {
    "honcho": "hermes-memory-honcho",
    "mem0": "hermes-memory-mem0",
    "supermemory": "hermes-memory-supermemory",
}
"""hermes-memory's own external providers and the distribution that installs each."""


def install_line(name: str) -> str | None:
    """``pip install hermes-memory-<name>`` for one of our own providers, else ``None``."""
    distribution = OWN_PROVIDERS.get(name.strip().lower())
    return f"pip install {distribution}" if distribution else None


def close_names(name: str, names: Iterable[str]) -> list[str]:
    """The names in *names* that *name* is probably a misspelling of, closest first."""
    choices = sorted(set(names))
    folded = {choice.lower(): choice for choice in choices}
    found = difflib.get_close_matches(name.strip().lower(), list(folded), n=3, cutoff=0.6)
    return [folded[match] for match in found]


def not_installed(name: str, installed: Iterable[str]) -> str:
    """One sentence on provider *name*, which is not installed: how to install it or what was
    probably meant."""
    installed = [n for n in installed if n != "builtin"]
    line = install_line(name)
    if line is not None:
        return f"the provider {name!r} is not installed: {line}"
    close = close_names(name, [*installed, *OWN_PROVIDERS])
    listed = ", ".join(sorted(installed)) or "none besides builtin"
    hint = f"did you mean {' or '.join(repr(c) for c in close)}? " if close else ""
    return f"no provider is called {name!r}: {hint}(installed: {listed})"
