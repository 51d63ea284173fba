"""Choosing the session store's backend: ``state.db`` (SQLite, the default) or PostgreSQL.

``HERMES_SESSIONS_URL``, else ``sessions.url`` in ``config.yaml``, names a
PostgreSQL database (``postgresql://user:pass@host:5432/db``); without either
the store is ``$HERMES_HOME/state.db``. Both backends have the same public
methods and results, so nothing in the agent changes (see ``docs/scaling.md``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from hermes_core.config import cfg_get, get_hermes_home
from hermes_core.errors import ConfigError

if TYPE_CHECKING:
    from hermes_core.sessions.opening import UpgradeProgress
    from hermes_core.sessions.store import SessionStore

__all__ = ["SESSIONS_URL_ENV", "open_session_store", "sessions_url"]

SESSIONS_URL_ENV = "HERMES_SESSIONS_URL"


def sessions_url(config: Mapping[str, Any] | None = None) -> str | None:
    """The configured PostgreSQL URL of the session store, or ``None`` for ``state.db``."""
    value = os.environ.get(SESSIONS_URL_ENV) or cfg_get(config, "sessions.url")
    if value in (None, ""):
        return None
    from hermes_core.sessions.postgres import is_postgres_url, masked_url

    if not is_postgres_url(value):
        shown = masked_url(value) if isinstance(value, str) else repr(value)
        raise ConfigError(
            f"sessions.url (or {SESSIONS_URL_ENV}) is {shown[:80]}, not a PostgreSQL URL; give "
            "postgresql://user:password@host:5432/database, or remove it to use state.db."
        )
    return str(value)


def open_session_store(
    target: str | os.PathLike[str] | None = None,
    *,
    config: Mapping[str, Any] | None = None,
    hermes_home: str | os.PathLike[str] | None = None,
    read_only: bool = False,
    user_id: str | None = None,
    semantic: str | bool | None = None,
    upgrade_progress: UpgradeProgress | None = None,
    index_progress: UpgradeProgress | None = None,
) -> SessionStore:
    """The session store at *target* (a ``state.db`` path or a ``postgresql://`` URL), else
    the configured one (:func:`sessions_url`), else ``<hermes_home>/state.db``.

    The PostgreSQL store has the SQLite store's public methods (it is typed as one).
    *upgrade_progress* gets an upgrade the writable open finishes as (rows done, rows in
    all): a SQLite file's CJK index, as :class:`~hermes_core.sessions.SessionStore`
    documents, or a PostgreSQL store's stems (migration 4,
    :mod:`~hermes_core.sessions.pgbackfill`). *index_progress* gets a PostgreSQL store's
    trigram index build that the writable open finishes (migration 6, or a killed build's
    index again, :mod:`~hermes_core.sessions.pgtrigram`) as (blocks done, blocks in all); a
    ``state.db`` has no such build.
    """
    from hermes_core.sessions.postgres import PostgresSessionStore, is_postgres_url
    from hermes_core.sessions.store import SessionStore

    if target is None:
        target = sessions_url(config)
    if target is None:
        home = Path(hermes_home) if hermes_home is not None else get_hermes_home()
        target = home / "state.db"
    if is_postgres_url(target):
        store = PostgresSessionStore(
            str(target),
            read_only=read_only,
            user_id=user_id,
            semantic=semantic,
            upgrade_progress=upgrade_progress,
            index_progress=index_progress,
        )
        return cast("SessionStore", store)
    return SessionStore(
        target,
        read_only=read_only,
        user_id=user_id,
        semantic=semantic,
        upgrade_progress=upgrade_progress,
    )
