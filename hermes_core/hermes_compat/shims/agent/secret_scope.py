"""``agent.secret_scope``: reading a credential by environment-variable name.

Hermes Agent resolves secrets through a context-local scope so that one gateway
process can serve several profiles. hermes-memory serves one profile per
process, so a read goes to the installed scope first (when a caller installed
one with :func:`set_secret_scope`), then to ``os.environ`` (where the profile's
``.env`` was loaded before the plugin), then to ``$HERMES_HOME/.env`` of the
profile active at call time. Multiplexing is never active.
"""

import os
from collections.abc import Mapping
from contextvars import ContextVar, Token
from typing import NoReturn

from hermes_core.hermes_compat.dotenv import read_profile_env
from hermes_core.hermes_compat.finder import missing_attribute

__hermes_compat__ = True

__all__ = [
    "UnscopedSecretError",
    "current_secret_scope",
    "get_secret",
    "is_multiplex_active",
    "reset_secret_scope",
    "set_secret_scope",
]

_SCOPE: ContextVar[Mapping[str, str] | None] = ContextVar(
    "hermes_compat_secret_scope", default=None
)


class UnscopedSecretError(RuntimeError):
    """Raised by Hermes when a secret is read unscoped while multiplexing (never here)."""


def is_multiplex_active() -> bool:
    """Always False: hermes-memory serves one profile per process."""
    return False


def set_secret_scope(secrets: Mapping[str, str] | None) -> Token[Mapping[str, str] | None]:
    """Install *secrets* as the scope of the current context; returns a reset token."""
    return _SCOPE.set(secrets)


def reset_secret_scope(token: Token[Mapping[str, str] | None]) -> None:
    """Restore the scope that was active before :func:`set_secret_scope`."""
    _SCOPE.reset(token)


def current_secret_scope() -> Mapping[str, str] | None:
    """The installed scope, or None."""
    return _SCOPE.get()


def get_secret(name: str, default: str | None = None) -> str | None:
    """The value of credential *name*: scope, then environment, then the profile's ``.env``."""
    scope = _SCOPE.get()
    if scope is not None and scope.get(name) is not None:
        return scope[name]
    value = os.environ.get(name)
    if value is not None:
        return value
    return read_profile_env().get(name, default)


def __getattr__(name: str) -> NoReturn:
    raise missing_attribute(__name__, name, __all__)
