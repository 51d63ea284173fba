"""``agent.file_safety``: Hermes Agent's read denylist for files a model names.

Plugins that read a local file the model or a tool supplied (an attachment to
upload, an import path) call :func:`raise_if_read_blocked` first. It refuses
what Hermes refuses: the profile's and the Hermes root's credential stores
(``.env``, ``auth.json``, OAuth and MCP token files), the skills hub cache, and
project environment files (``.env``, ``.env.local``, ``.envrc``, ...) anywhere.
As in Hermes this is defence in depth, not a security boundary. Hermes' write
guards are not served.
"""

from pathlib import Path
from typing import NoReturn

from hermes_core.hermes_compat.finder import missing_attribute
from hermes_core.hermes_compat.shims.hermes_constants import (
    get_default_hermes_root,
    get_hermes_home,
)

__hermes_compat__ = True

__all__ = ["get_read_block_error", "raise_if_read_blocked"]

_CREDENTIAL_FILES = (
    "auth.json",
    "auth.lock",
    ".anthropic_oauth.json",
    ".env",
    "webhook_subscriptions.json",
    "auth/google_oauth.json",
    "cache/bws_cache.json",
)
_PROJECT_ENV_FILES = frozenset(
    [
        ".env",
        ".env.local",
        ".env.development",
        ".env.production",
        ".env.test",
        ".env.staging",
        ".envrc",
    ]
)
_NOT_A_BOUNDARY = "(Defense-in-depth, not a security boundary.)"


def _hermes_dirs() -> list[Path]:
    dirs: list[Path] = []
    for base in (get_hermes_home(), get_default_hermes_root()):
        real = base.resolve()
        if real not in dirs:
            dirs.append(real)
    return dirs


def get_read_block_error(path: str) -> str | None:
    """Why reading *path* is refused, or ``None`` when it is allowed.

    A relative *path* is resolved against the process's working directory.
    """
    target = Path(path).expanduser().resolve()
    for home in _hermes_dirs():
        if target.is_relative_to(home / "skills" / ".hub"):
            return (
                f"Access denied: {path} is an internal Hermes cache file; list or view "
                "skills with the skill tools instead."
            )
        if any(target == (home / name).resolve() for name in _CREDENTIAL_FILES):
            return (
                f"Access denied: {path} is a Hermes credential store; providers read "
                f"these credentials themselves. {_NOT_A_BOUNDARY}"
            )
        if target.is_relative_to((home / "mcp-tokens").resolve()):
            return f"Access denied: {path} holds Hermes MCP tokens. {_NOT_A_BOUNDARY}"
    if target.name.lower() in _PROJECT_ENV_FILES:
        return (
            f"Access denied: {path} is an environment file that may hold secrets; "
            f"read .env.example for its layout instead. {_NOT_A_BOUNDARY}"
        )
    return None


def raise_if_read_blocked(path: str) -> None:
    """Raise ``ValueError`` when :func:`get_read_block_error` refuses *path*.

    An unexpected error while checking is ignored (the read goes ahead), as in Hermes.
    """
    try:
        blocked = get_read_block_error(path)
    except Exception:
        return
    if blocked:
        raise ValueError(blocked)


def __getattr__(name: str) -> NoReturn:
    raise missing_attribute(__name__, name, __all__)
