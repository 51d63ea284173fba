"""``agent.runtime_cwd``: the working folder an agent's chat runs in.

Hermes Agent runs one process for many chats (its gateway, its desktop app), so
a plugin that keys data on a project asks :func:`resolve_agent_cwd` for the
chat's folder rather than :func:`os.getcwd`. The answer is Hermes': the folder
pinned for the current context by :func:`set_session_cwd`, else
``TERMINAL_CWD``, else the process's working directory; a pinned folder or
``TERMINAL_CWD`` that is not an existing directory is logged and skipped.
:func:`resolve_context_cwd` is the configured folder only (``None`` when none
is), where Hermes looks for context files.
"""

import contextvars
import logging
import os
from pathlib import Path
from typing import NoReturn

from hermes_core.hermes_compat.finder import missing_attribute

__hermes_compat__ = True

__all__ = ["clear_session_cwd", "resolve_agent_cwd", "resolve_context_cwd", "set_session_cwd"]

logger = logging.getLogger("hermes_core.hermes_compat")

_SESSION_CWD: contextvars.ContextVar[str] = contextvars.ContextVar("HERMES_SESSION_CWD", default="")


def set_session_cwd(cwd: str | os.PathLike[str] | None) -> contextvars.Token[str]:
    """Pin *cwd* as the current context's working folder; the token resets it."""
    return _SESSION_CWD.set(str(cwd or "").strip())


def clear_session_cwd() -> None:
    """Forget the current context's pinned folder."""
    _SESSION_CWD.set("")


def _existing(raw: str, label: str) -> Path | None:
    path = Path(raw).expanduser()
    if path.is_dir():
        return path
    logger.warning("%s does not exist: %s", label, raw)
    return None


def _configured() -> Path | None:
    pinned = _SESSION_CWD.get().strip()
    if pinned:
        found = _existing(pinned, "configured working directory")
        if found is not None:
            return found
    terminal = os.environ.get("TERMINAL_CWD", "").strip()
    return _existing(terminal, "TERMINAL_CWD") if terminal else None


def resolve_agent_cwd() -> Path:
    """The chat's working folder: the pinned one, else ``TERMINAL_CWD``, else the process's."""
    return _configured() or Path(os.getcwd())


def resolve_context_cwd() -> Path | None:
    """The configured working folder (pinned, else ``TERMINAL_CWD``), or ``None``."""
    return _configured()


def __getattr__(name: str) -> NoReturn:
    raise missing_attribute(__name__, name, __all__)
