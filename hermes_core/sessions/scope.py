"""Which sessions a store sees: one user's (``sessions.user_id``), or every session.

Both backends scope the same way, so :class:`UserScope` builds the SQL for
either; only the parameter mark differs (``?`` for SQLite, ``%s`` for psycopg).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from hermes_core.errors import SessionStoreError
from hermes_core.users import valid_user_id

__all__ = ["UserScope"]

_CHUNK = 500
"""Session ids checked per statement (well under SQLite's limit of bound values)."""


class UserScope:
    """The sessions of *user_id* (``None``: every session, the single-user case)."""

    def __init__(self, user_id: Any, mark: str = "?") -> None:
        self.user_id = valid_user_id(user_id)
        self._mark = mark

    def sql(self, alias: str = "") -> str:
        """SQL true for the sessions (as *alias*) in scope; bind :meth:`params` to it."""
        column = f"{alias}.user_id" if alias else "user_id"
        return "1 = 1" if self.user_id is None else f"{column} = {self._mark}"

    def params(self) -> tuple[str, ...]:
        """The values :meth:`sql` binds."""
        return () if self.user_id is None else (self.user_id,)

    def sees(self, conn: Any, session_id: str) -> bool:
        """Whether *session_id* exists and is in scope."""
        return (
            conn.execute(
                f"SELECT 1 FROM sessions WHERE id = {self._mark} AND {self.sql()}",
                (session_id, *self.params()),
            ).fetchone()
            is not None
        )

    def visible(self, conn: Any, session_ids: Iterable[str]) -> list[str]:
        """*session_ids* without those out of scope (order kept)."""
        ids = list(session_ids)
        if self.user_id is None or not ids:
            return ids
        mine: set[str] = set()
        for start in range(0, len(ids), _CHUNK):
            chunk = ids[start : start + _CHUNK]
            marks = ", ".join(self._mark for _ in chunk)
            mine.update(
                row[0]
                for row in conn.execute(
                    f"SELECT id FROM sessions WHERE id IN ({marks}) AND user_id = {self._mark}",
                    (*chunk, self.user_id),
                )
            )
        return [session_id for session_id in ids if session_id in mine]

    def owner_for(self, user_id: Any, what: str) -> str | None:
        """The user a new *what* belongs to: the scope's, which *user_id* may only repeat."""
        given = valid_user_id(user_id if user_id not in (None, "") else None)
        if self.user_id is None:
            return given
        if given is not None and given != self.user_id:
            raise SessionStoreError(
                f"This store is scoped to user {self.user_id!r}; {what} cannot belong to "
                f"user {given!r}. Open a store for that user."
            )
        return self.user_id
