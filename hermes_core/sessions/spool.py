"""Appends that outlive a database outage: a durable local spool in front of a session store.

A PostgreSQL session store retries a lost connection a few times; when the
database stays unreachable (:class:`~hermes_core.errors.SessionStoreUnavailableError`),
:class:`SpooledSessionStore` keeps the messages of each append in an append-only
file under ``$HERMES_HOME/spool/`` instead of failing the turn, and logs a
warning naming the database (password masked) and the file. The other writes a
conversation makes (:data:`SPOOLED_CALLS`: starting a session, its title, its system
prompt, its end, a reopening) are kept in the same file, in order with the messages, as
records of the call; each is a write whose repetition changes nothing (the end keeps its
time), so a spool written back twice after a crash still leaves each row as once. The spool is
written back in order, before anything newer, on the next append that reaches
the database, when a store is opened and when it is closed.

Each record is one JSON line (the session id, the messages and their client
tokens), written with ``fsync``; a torn last line, left by a crash mid-write, is
ignored. Writers and drainers in any thread or process take turns on a lock
file beside the spool. Appends keep their client tokens in the spool, so a
message whose write committed just before the connection dropped, or a spool
drained twice after a crash, is still stored once. A record the database
refuses for good (its session was deleted meanwhile) is moved to
``<spool>.rejected`` and logged, so it never blocks the records after it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from hermes_core.errors import SessionStoreError, SessionStoreUnavailableError
from hermes_core.locking import exclusive_lock, lock_path_beside
from hermes_core.sessions.records import client_tokens as client_tokens_for
from hermes_core.sessions.records import encode_messages, valid_session_id
from hermes_core.sessions.titles import sanitize_title

if TYPE_CHECKING:
    from hermes_core.sessions.store import SessionStore

__all__ = [
    "RETRY_SECONDS",
    "SPOOLED_CALLS",
    "SPOOL_DIR",
    "SessionSpool",
    "SpoolDrain",
    "SpooledSessionStore",
    "drain_spools",
    "spool_path",
    "with_spool",
]

log = logging.getLogger(__name__)
T = TypeVar("T")

SPOOL_DIR = "spool"
RETRY_SECONDS = 10.0
"""After the database was found unreachable, appends go straight to the spool this long
(a turn waits out the connection timeout once, not once per message); the pause doubles
with each failed try, up to :data:`MAX_RETRY_SECONDS`, until the database answers."""
MAX_RETRY_SECONDS = 300.0
FORMAT = 1
GROUP_MESSAGES = 500
"""At most this many spooled messages of one session are written back in one transaction."""
_MODE = 0o600
SPOOLED_CALLS = frozenset(
    {"create_session", "end_session", "reopen_session", "set_session_title", "update_system_prompt"}
)
"""The store's writes besides appends that are spooled during an outage: each sets a value
(or fills empty ones), so writing it back again leaves the row as it was. Not spooled:
deletions and ``update_token_counts`` (it adds: a spool written back twice would count
twice); nothing in a turn calls them, and a caller gets the outage as an error."""
Call = Callable[[str, str, dict[str, Any]], object]
"""Writes back one spooled call: ``(session_id, method, keyword arguments)``."""


def spool_path(hermes_home: str | os.PathLike[str], location: str, user_id: str | None) -> Path:
    """The spool file of the store at *location* (its masked URL) for *user_id*."""
    key = hashlib.sha256(f"{location}\0{user_id or ''}".encode()).hexdigest()[:16]
    return Path(hermes_home) / SPOOL_DIR / f"sessions-{key}.jsonl"


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory descriptors
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class SessionSpool:
    """The append-only file of appends waiting for the database, one JSON record a line."""

    def __init__(
        self, path: str | os.PathLike[str], *, database: str = "", user_id: str | None = None
    ) -> None:
        self.path = Path(path)
        self.database = database
        """The database the records are for (password masked), written into each record."""
        self.user_id = user_id
        self.rejected_path = self.path.with_name(self.path.name + ".rejected")
        self._lock_path = lock_path_beside(self.path)

    def _prepare(self) -> None:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)

    def add(
        self, session_id: str, messages: Sequence[Mapping[str, Any]], tokens: Sequence[str]
    ) -> None:
        """Append one record durably (written and fsynced before this returns)."""
        self._add_record(
            {
                "session_id": session_id,
                "client_tokens": list(tokens),
                "messages": [dict(message) for message in messages],
            }
        )

    def add_call(self, session_id: str, method: str, arguments: Mapping[str, Any]) -> None:
        """Append one store call (a :data:`SPOOLED_CALLS` method and its keyword arguments)
        durably, to be made again in order with the messages."""
        if method not in SPOOLED_CALLS:
            raise ValueError(f"{method} is not a call the spool keeps")
        call = {"method": method, "arguments": dict(arguments)}
        self._add_record(
            {"session_id": session_id, "client_tokens": [], "messages": [], "call": call}
        )

    def _add_record(self, record: dict[str, Any]) -> None:
        line = json.dumps(
            {
                "format": FORMAT,
                **record,
                "spooled_at": time.time(),
                "database": self.database,
                "user_id": self.user_id,
            },
            ensure_ascii=False,
            separators=(",", ":"),
        )
        self._prepare()
        with exclusive_lock(self._lock_path):
            self._append_line(self.path, line)

    @staticmethod
    def _append_line(path: Path, line: str) -> None:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, _MODE)
        try:
            size = os.fstat(fd).st_size
            data = line.encode() + b"\n"
            if size and not _ends_with_newline(path, size):
                data = b"\n" + data  # a torn last line stays a line of its own, ignored
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)

    def contents(self) -> tuple[bytes | None, bytes | None]:
        """The spool file's and the rejected file's bytes (``None``: no such file), read
        together under the lock, so a backup never catches a record half-written."""
        with exclusive_lock(self._lock_path):
            return _bytes_of(self.path), _bytes_of(self.rejected_path)

    def pending(self) -> int:
        """How many records wait (0 without a spool file)."""
        return len(self.records())

    def records(self) -> list[dict[str, Any]]:
        """The complete records waiting, oldest first."""
        if not self._has_data():
            return []
        with exclusive_lock(self._lock_path):
            return self._read()[0]

    def _has_data(self) -> bool:
        try:
            return self.path.stat().st_size > 0
        except FileNotFoundError:
            return False

    def _read(self) -> tuple[list[dict[str, Any]], list[str]]:
        """The complete records in order, and the lines that are not one."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return [], []
        lines = data.split(b"\n")
        torn = lines.pop()  # what follows the last newline: b"" unless a write was cut
        records: list[dict[str, Any]] = []
        bad: list[str] = []
        for raw in lines:
            if raw.strip():
                record = _parse(raw)
                if record is None:
                    bad.append(raw.decode("utf-8", "replace"))
                else:
                    records.append(record)
        if torn:
            last = _parse(torn)  # a whole record whose newline was cut off still counts
            if last is None:
                log.warning("Ignoring the torn last line of %s (a write cut short).", self.path)
            else:
                records.append(last)
        return records, bad

    def drain(
        self,
        write: Callable[[str, list[dict[str, Any]], list[str]], object],
        call: Call | None = None,
    ) -> int:
        """Hand the records to *write(session_id, messages, client_tokens)* (a spooled call to
        *call(session_id, method, arguments)*), oldest first, and remove those written;
        returns how many messages were written. Without *call*, the drain stops at the
        first spooled call (it and the later records stay).

        Consecutive records of one session go in one call (one transaction), up to
        :data:`GROUP_MESSAGES` messages. A :class:`SessionStoreUnavailableError` stops
        the drain: that call's records and the later ones stay, in order, and the error
        is raised. Another :class:`SessionStoreError` is retried record by record, and
        a record refused alone is moved to :attr:`rejected_path`.
        """
        if not self._has_data():
            return 0
        with exclusive_lock(self._lock_path):
            records, bad = self._read()
            for text in bad:
                log.error("Unreadable record in %s moved to %s.", self.path, self.rejected_path)
                self._append_line(self.rejected_path, text)
            written = 0
            for start, group in _groups(records):
                if "call" in group[0] and call is None:
                    self._keep(records[start:])
                    return written
                try:
                    written += self._write_group(write, group, call)
                except SessionStoreUnavailableError:
                    self._keep(records[start:])
                    raise
            self._keep([])
            return written

    def _write_group(
        self,
        write: Callable[[str, list[dict[str, Any]], list[str]], object],
        group: list[dict[str, Any]],
        call: Call | None = None,
    ) -> int:
        session_id = group[0]["session_id"]
        messages = [m for record in group for m in record["messages"]]
        try:
            if "call" in group[0] and call is not None:
                call(session_id, group[0]["call"]["method"], group[0]["call"]["arguments"])
                return 0
            write(session_id, messages, [t for record in group for t in record["client_tokens"]])
            return len(messages)
        except SessionStoreUnavailableError:
            raise
        except SessionStoreError as exc:
            if len(group) > 1:  # find the record refused; store the others
                return sum(self._write_group(write, [record], call) for record in group)
            what = (
                f"The spooled {group[0]['call']['method']} call"
                if "call" in group[0]
                else f"{len(messages)} spooled message(s)"
            )
            log.error(
                "%s of session %s were refused (%s); moved to %s.",
                what,
                session_id,
                exc,
                self.rejected_path,
            )
            self._append_line(self.rejected_path, json.dumps(group[0], ensure_ascii=False))
            return 0

    def _keep(self, records: list[dict[str, Any]]) -> None:
        """Replace the spool by *records* (atomically; the lock is held)."""
        if not records:
            with open(self.path, "r+b") as handle:
                handle.truncate(0)
                os.fsync(handle.fileno())
            return
        partial = self.path.with_name(self.path.name + ".partial")
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, _MODE)
        try:
            for record in records:
                os.write(fd, json.dumps(record, ensure_ascii=False).encode() + b"\n")
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(partial, self.path)
        _fsync_dir(self.path.parent)


def _groups(records: list[dict[str, Any]]) -> Iterator[tuple[int, list[dict[str, Any]]]]:
    """Runs of consecutive appends of one session (index of the first, the run); a spooled
    call is a run of its own."""
    start = 0
    while start < len(records):
        if "call" in records[start]:
            yield start, records[start : start + 1]
            start += 1
            continue
        end, size = start, 0
        session_id = records[start]["session_id"]
        while (
            end < len(records)
            and records[end]["session_id"] == session_id
            and "call" not in records[end]
        ):
            size += len(records[end]["messages"])
            if size > GROUP_MESSAGES and end > start:
                break
            end += 1
        yield start, records[start:end]
        start = end


def _bytes_of(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def _ends_with_newline(path: Path, size: int) -> bool:
    with open(path, "rb") as handle:
        handle.seek(size - 1)
        return handle.read(1) == b"\n"


def _parse(raw: bytes) -> dict[str, Any] | None:
    """The record on one line, or ``None`` when it is not a whole, well-formed one."""
    try:
        record = json.loads(raw.decode("utf-8"))
    except ValueError:
        return None
    return record if _well_formed(record) else None


def _well_formed(record: object) -> bool:
    if not isinstance(record, dict) or not isinstance(record.get("session_id"), str):
        return False
    messages, tokens = record.get("messages"), record.get("client_tokens")
    if "call" in record:
        call = record["call"]
        if not (
            isinstance(call, dict)
            and call.get("method") in SPOOLED_CALLS
            and isinstance(call.get("arguments"), dict)
        ):
            return False
    return (
        isinstance(messages, list)
        and isinstance(tokens, list)
        and len(messages) == len(tokens)
        and all(isinstance(m, dict) for m in messages)
        and all(isinstance(t, str) for t in tokens)
    )


class SpooledSessionStore:
    """*store* (a PostgreSQL session store) whose appends and :data:`SPOOLED_CALLS` go to
    *spool* while the database is unreachable; every other method is the store's own.

    ``append_messages`` returns ``[]`` (and ``append_message`` 0) for messages kept in
    the spool: they get their ids when the spool is written back. A spooled call returns
    what it would on success (``create_session`` the id, the others ``True``); one the
    database refuses when written back (a title taken meanwhile) goes to the rejected
    file, logged, like a refused message.
    """

    def __init__(
        self,
        store: Any,
        spool: SessionSpool,
        *,
        retry_seconds: float = RETRY_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._store = store
        self.spool = spool
        self._retry_seconds = retry_seconds
        self._clock = clock
        self._down_until: float | None = None
        self._pause = retry_seconds
        self.drain()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def __enter__(self) -> SpooledSessionStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Write the spool back if the database answers (not tried again while the last
        try's pause lasts), then close the store."""
        if self._down_until is None or self._clock() >= self._down_until:
            self.drain()
        self._store.close()

    def drain(self) -> int:
        """Write the spooled messages back now; returns how many (0 while the database is
        still unreachable, which is logged)."""
        try:
            return self._drain()
        except SessionStoreUnavailableError as exc:
            self._went_down()
            log.warning("Spooled messages stay in %s: %s", self.spool.path, exc)
            return 0

    def _went_down(self) -> None:
        """Pause the tries (longer after each failed one)."""
        if self._down_until is not None:
            self._pause = min(MAX_RETRY_SECONDS, self._pause * 2)
        self._down_until = self._clock() + self._pause

    def _drain(self) -> int:
        written = self.spool.drain(self._write_back, _replayer(self._store))
        if written:
            log.info("Stored %d spooled message(s) in %s.", written, self._store.path)
        self._down_until = None
        self._pause = self._retry_seconds
        return written

    def _write_back(
        self, session_id: str, messages: list[dict[str, Any]], tokens: list[str]
    ) -> None:
        self._store.append_messages(session_id, messages, client_tokens=tokens)

    def _now_or_spooled(
        self,
        session_id: str,
        what: tuple[str, str],
        direct: Callable[[], T],
        keep: Callable[[], object],
        kept: T,
    ) -> T:
        """*direct()* (after the spool, in order), or, while the database is unreachable,
        *keep()* in the spool, a warning naming *what* (a noun and its verb), and *kept*."""
        error: SessionStoreUnavailableError | None = None
        if self._down_until is None or self._clock() >= self._down_until:
            try:
                self._drain()
                return direct()
            except SessionStoreUnavailableError as exc:
                error = exc
                self._went_down()
        try:
            keep()
        except (TypeError, ValueError) as exc:  # a value JSON cannot hold
            raise SessionStoreUnavailableError(
                f"The session database {self._store.path} is unreachable and {what[0]} "
                f"cannot be spooled ({exc})."
            ) from error
        log.warning(
            "The session database %s is unreachable%s; %s of session %s %s kept in %s and "
            "will be stored when it answers again.",
            self._store.path,
            f" ({error})" if error is not None else "",
            what[0],
            session_id,
            what[1],
            self.spool.path,
        )
        return kept

    def _or_spool(self, method: str, session_id: str, arguments: dict[str, Any], kept: Any) -> Any:
        """Make the store call *method* now, or keep it in the spool and return *kept*."""
        return self._now_or_spooled(
            session_id,
            (f"the {method} call", "is"),
            lambda: getattr(self._store, method)(session_id, **arguments),
            lambda: self.spool.add_call(session_id, method, arguments),
            kept,
        )

    def create_session(self, session_id: str, **fields: Any) -> str:
        """Create a session as the store does (kept in the spool while the database is
        unreachable, with its start time)."""
        valid_session_id(session_id)
        sanitize_title(fields.get("title"))  # a bad title is refused now, never spooled
        if fields.get("model_config") is not None:
            fields["model_config"] = dict(fields["model_config"])
        if fields.get("started_at") is None:
            fields["started_at"] = time.time()
        return cast("str", self._or_spool("create_session", session_id, fields, session_id))

    def end_session(
        self, session_id: str, end_reason: str, *, ended_at: float | None = None
    ) -> bool:
        """End a session as the store does (spooled with the time it ended)."""
        when = time.time() if ended_at is None else ended_at
        arguments = {"end_reason": end_reason, "ended_at": when}
        return cast("bool", self._or_spool("end_session", session_id, arguments, True))

    def reopen_session(self, session_id: str) -> bool:
        """Clear a session's end as the store does (spooled while the database is away)."""
        return cast("bool", self._or_spool("reopen_session", session_id, {}, True))

    def set_session_title(self, session_id: str, title: str | None) -> bool:
        """Set a title as the store does (spooled while the database is away; a title taken
        by then is refused when written back)."""
        sanitize_title(title)
        return cast("bool", self._or_spool("set_session_title", session_id, {"title": title}, True))

    def update_system_prompt(self, session_id: str, prompt: str | None) -> bool:
        """Store a session's system prompt as the store does (spooled while it is away)."""
        arguments = {"prompt": prompt}
        return cast("bool", self._or_spool("update_system_prompt", session_id, arguments, True))

    def append_message(self, session_id: str, role: str, content: Any = None, **fields: Any) -> int:
        """Append one message; its id, or 0 when it was kept in the spool."""
        ids = self.append_messages(session_id, [{"role": role, "content": content, **fields}])
        return ids[0] if ids else 0

    def append_messages(
        self,
        session_id: str,
        messages: Iterable[Mapping[str, Any]],
        *,
        client_tokens: Sequence[str] | None = None,
    ) -> list[int]:
        """Append as the store does; while the database is unreachable, keep the messages in
        the spool (logging a warning) and return ``[]``."""
        rows = [dict(message) for message in messages]
        encode_messages(session_id, rows)  # bad input is refused now, never spooled
        tokens = client_tokens_for(client_tokens, len(rows))
        if not rows:
            return []

        def keep() -> None:
            now = time.time()
            for row in rows:
                if row.get("timestamp") is None:
                    row["timestamp"] = now
            self.spool.add(session_id, rows, tokens)

        return self._now_or_spooled(
            session_id,
            (f"{len(rows)} message(s)", "are"),
            lambda: cast(
                "list[int]", self._store.append_messages(session_id, rows, client_tokens=tokens)
            ),
            keep,
            [],
        )


def _replayer(store: Any) -> Call:
    """Writes a spooled call back to *store*."""

    def replay(session_id: str, method: str, arguments: dict[str, Any]) -> object:
        return getattr(store, method)(session_id, **arguments)

    return replay


def with_spool(store: SessionStore, hermes_home: str | os.PathLike[str]) -> SessionStore:
    """*store* behind a spool in *hermes_home* when it is a PostgreSQL store (a ``state.db``
    has no outage to outlive: it is returned as it is)."""
    from hermes_core.sessions.store import SessionStore

    if isinstance(store, (SessionStore, SpooledSessionStore)) or store.read_only:
        return store
    spool = SessionSpool(
        spool_path(hermes_home, store.path, store.user_id),
        database=store.path,
        user_id=store.user_id,
    )
    return cast("SessionStore", SpooledSessionStore(store, spool))


@dataclass(frozen=True)
class SpoolDrain:
    """What :func:`drain_spools` did with one spool file."""

    path: Path
    database: str
    written: int
    """Messages written back."""
    left: int
    """Records still waiting (the database is unreachable, or the file is another's)."""


def drain_spools(hermes_home: str | os.PathLike[str], store: Any) -> list[SpoolDrain]:
    """Write back every spool file in *hermes_home* kept for *store*'s database, whichever
    user it is for (*store* should be unscoped); files for another database are left.
    Raises :class:`SessionStoreUnavailableError` while the database is unreachable."""
    folder = Path(hermes_home) / SPOOL_DIR
    results = []
    for path in sorted(folder.glob("sessions-*.jsonl")) if folder.is_dir() else []:
        spool = SessionSpool(path)
        records = spool.records()
        if not records:
            continue
        database = str(records[0].get("database") or "")
        if database and database != store.path:
            results.append(SpoolDrain(path, database, 0, len(records)))
            continue

        def write(session_id: str, messages: list[dict[str, Any]], tokens: list[str]) -> None:
            store.append_messages(session_id, messages, client_tokens=tokens)

        # An unreachable database raises: nothing more to try.
        written = spool.drain(write, _replayer(store))
        results.append(SpoolDrain(path, database or store.path, written, spool.pending()))
    return results
