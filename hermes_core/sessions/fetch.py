"""Running a query's candidates against ``messages``, with search filters.

:class:`SearchFilters` (role, source, time, sessions) are applied to the best
``k`` candidates of the index; when they reject too many, ``k`` grows and the
index is asked again, so unfiltered searches cost what a hand-written
``MATCH … ORDER BY rank LIMIT n`` costs. :func:`run` returns hit rows, the
shape the rest of the search works on.
"""

from __future__ import annotations

import dataclasses
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hermes_core.sessions import arguments
from hermes_core.sessions.layout import Layout
from hermes_core.sessions.routing import Candidates

__all__ = ["SearchFilters", "detail_columns", "run", "without_absent_sources"]

_GROWTH = 8
_MAX_BOUNDED_K = 50_000


@dataclass(frozen=True)
class SearchFilters:
    """Restrictions applied to search hits (all optional)."""

    roles: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    exclude_sources: tuple[str, ...] = ()
    since: float | None = None
    until: float | None = None
    session_ids: tuple[str, ...] = ()
    exclude_session_ids: tuple[str, ...] = ()
    user_id: str | None = None
    """Only this user's sessions (``None``: every session)."""

    @classmethod
    def from_arguments(
        cls,
        *,
        role_filter: Sequence[str] | str | None = None,
        source_filter: Sequence[str] | str | None = None,
        exclude_sources: Sequence[str] | str | None = None,
        since: object = None,
        until: object = None,
        session_ids: Sequence[str] | str = (),
        exclude_session_ids: Sequence[str] | str = (),
        user_id: str | None = None,
    ) -> SearchFilters:
        """The filters of a ``search_messages`` call, each argument checked (a list or a
        comma-separated string; epoch seconds), as both backends take them."""
        return cls(
            roles=arguments.names(role_filter),
            sources=arguments.names(source_filter),
            exclude_sources=arguments.names(exclude_sources),
            since=arguments.epoch(since, "since"),
            until=arguments.epoch(until, "until"),
            session_ids=arguments.ids(session_ids),
            exclude_session_ids=arguments.ids(exclude_session_ids),
            user_id=user_id,
        )

    @property
    def active(self) -> bool:
        """True when any filter is set."""
        return any(
            (
                self.roles,
                self.sources,
                self.exclude_sources,
                self.since is not None,
                self.until is not None,
                self.session_ids,
                self.exclude_session_ids,
                self.user_id is not None,
            )
        )


def without_absent_sources(conn: sqlite3.Connection, filters: SearchFilters) -> SearchFilters:
    """*filters* without the excluded sources no session has (one indexed look-up).

    ``session_search`` always excludes its hidden sources (``tool`` by default),
    which most histories never hold: an exclusion that can reject nothing
    would still cost a second statement and a join on every search.
    """
    if not filters.exclude_sources:
        return filters
    params: dict[str, Any] = {}
    held = conn.execute(
        "SELECT 1 FROM sessions AS s WHERE "
        + _in_list("s.source", filters.exclude_sources, params, "x")
        + " LIMIT 1",
        params,
    ).fetchone()
    return filters if held is not None else dataclasses.replace(filters, exclude_sources=())


def _in_list(column: str, values: Sequence[str], params: dict[str, Any], key: str) -> str:
    names = []
    for n, value in enumerate(values):
        name = f"{key}{n}"
        params[name] = value
        names.append(f":{name}")
    return f"{column} IN ({', '.join(names)})"


def _filter_sql(filters: SearchFilters, layout: Layout, params: dict[str, Any]) -> str:
    parts = [layout.visible_rows_sql("m")]
    if filters.roles:
        parts.append(_in_list("m.role", filters.roles, params, "f_role"))
    if filters.sources:
        parts.append(_in_list("s.source", filters.sources, params, "f_src"))
    if filters.exclude_sources:
        parts.append("NOT " + _in_list("s.source", filters.exclude_sources, params, "f_xsrc"))
    if filters.since is not None:
        params["f_since"] = float(filters.since)
        parts.append("m.timestamp >= :f_since")
    if filters.until is not None:
        params["f_until"] = float(filters.until)
        parts.append("m.timestamp < :f_until")
    if filters.session_ids:
        parts.append(_in_list("m.session_id", filters.session_ids, params, "f_sid"))
    if filters.exclude_session_ids:
        parts.append(
            "NOT " + _in_list("m.session_id", filters.exclude_session_ids, params, "f_xsid")
        )
    if filters.user_id is not None:
        params["f_user"] = filters.user_id
        parts.append("m.session_id IN (SELECT id FROM sessions WHERE user_id = :f_user)")
    return " AND ".join(parts)


def _name(layout: Layout, alias: str = "m") -> str:
    return f"{alias}.name" if "name" in layout.message_columns else "NULL"


def detail_columns(layout: Layout, text: bool, alias: str = "m") -> str:
    """The columns of a hit row after its id, score and snippet, read from *alias*.

    ``session_id, role, timestamp, tool_name, content, tool_calls, name``; the
    two text columns are ``NULL`` unless *text*, ``name`` when the layout lacks it.
    """
    m = alias
    tool_calls = f"{m}.tool_calls" if "tool_calls" in layout.message_columns else "NULL"
    texts = f"{m}.content, {tool_calls}" if text else "NULL, NULL"
    return f"{m}.session_id, {m}.role, {m}.timestamp, {m}.tool_name, {texts}, {_name(layout, m)}"


def run(
    conn: sqlite3.Connection,
    candidates: Candidates,
    layout: Layout,
    filters: SearchFilters,
    need: int,
    text: bool,
) -> list[tuple[Any, ...]]:
    """The first *need* filtered hits of *candidates*, growing the candidate pool as needed.

    Rows are ``(id, score, snippet, session_id, role, timestamp, tool_name,
    content, tool_calls, name)``; the two text columns are ``None`` unless *text*.
    The filters go into the candidates' own statement (one statement, no second
    look-up of the rows that passed).
    """
    columns = detail_columns(layout, text)
    # CROSS JOIN keeps the candidates as the outer loop, so rows come out in the
    # index's order (ties included) and pages of different sizes agree.
    if layout.every_row_visible and not filters.active:
        # Nothing can be filtered out: one statement, and the index's top *need* are the hits.
        bound = {**candidates.params, "k": need}
        if candidates.bare and not text:
            # Python's sqlite3 spends as much on each value fetched as SQLite spends on the
            # row: the columns known to be NULL are added here instead.
            sql = (
                f"SELECT c.id, m.session_id, m.role, m.timestamp, m.tool_name, {_name(layout)} "
                f"FROM ({candidates.sql}) AS c CROSS JOIN messages AS m ON m.id = c.id"
            )
            return [
                (mid, None, None, sid, role, ts, tool, None, None, name)
                for mid, sid, role, ts, tool, name in conn.execute(sql, bound)
            ]
        sql = (
            f"SELECT c.id, c.score, c.snippet, {columns} FROM ({candidates.sql}) AS c "
            "CROSS JOIN messages AS m ON m.id = c.id"
        )
        return conn.execute(sql, bound).fetchall()
    params: dict[str, Any] = {}
    where = _filter_sql(filters, layout, params)
    join = (
        " CROSS JOIN sessions AS s ON s.id = m.session_id"
        if filters.sources or filters.exclude_sources
        else ""
    )
    # ``n``: how many candidates the index gave, to tell a pool the filters emptied from
    # one the index has no more rows for.
    sql = (
        f"SELECT c.id, c.score, c.snippet, {columns}, c.n FROM "
        f"(SELECT *, count(*) OVER () AS n FROM ({candidates.sql})) AS c "
        f"CROSS JOIN messages AS m ON m.id = c.id{join} WHERE {where}"
    )
    k = max(need, 1)
    while True:
        found = conn.execute(sql, {**candidates.params, **params, "k": k}).fetchall()
        if len(found) >= need or k < 0:
            return [row[:-1] for row in found[:need]]
        pool = found[0][-1] if found else _count(conn, candidates, k)
        if pool < k:
            return [row[:-1] for row in found]
        k = k * _GROWTH if k * _GROWTH <= _MAX_BOUNDED_K else -1


def _count(conn: sqlite3.Connection, candidates: Candidates, k: int) -> int:
    """How many rows *candidates* yield when bounded by *k*."""
    row = conn.execute(
        f"SELECT count(*) FROM ({candidates.sql})", {**candidates.params, "k": k}
    ).fetchone()
    return int(row[0])
