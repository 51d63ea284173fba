"""Moving builtin memory between the files under ``memories/`` and PostgreSQL rows
(``memory.url``), whole and verified.

What moves, per owner (``""``: the single-user memory, else a user id, whose files are in
``memories/users/<escaped id>/``): the two documents as their exact text, the origin
ledgers, the held writes, and the archive tier with its curation log (``archive.db`` ↔
``memory_changes``, ``memory_archived``, ``memory_superseded``, ``memory_judgements``,
``memory_usage``; ids are renumbered, the links between rows kept).

All or nothing: rows are written in one transaction, read back and compared with what
was read before it commits; files are written into a staging folder, read back and
compared, then renamed into place (renames already made are undone when one fails).
An owner whose target already holds anything is refused unless *replace*. The source
is only read (a file archive's interrupted changes are settled first, as its next use
would).

Agents may keep running: the move holds, for each owner it copies, every lock a writer
of that owner's memory takes on the file side (the curator's lock, each document's lock,
the held writes' lock) from the first read to the last rename, and the same advisory
locks in the PostgreSQL transaction that writes rows; a write in progress finishes
first, one that comes later waits until the move is done. The rows are read in one
snapshot. A write made to the source after the move is, of course, not in the copy:
switch the agents to the new place when it is done.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sqlite3
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_core.errors import MemoryStoreError
from hermes_core.users import user_folder_name, user_id_of_folder
from hermes_memory_builtin.archive import ARCHIVE_FILENAME, Archive
from hermes_memory_builtin.archive_rows import tokens
from hermes_memory_builtin.curator import CURATOR_LOCK_NAME
from hermes_memory_builtin.held_rows import insert_held, select_held
from hermes_memory_builtin.locking import exclusive_lock
from hermes_memory_builtin.origins import ORIGINS_DOCUMENT, ledger_filename
from hermes_memory_builtin.quarantine import HELD_FILE, HeldWrite, held_text, parse_held
from hermes_memory_builtin.targets import TARGETS

__all__ = [
    "MoveReport",
    "OwnerMemory",
    "files_to_rows",
    "owner_folder",
    "read_files",
    "read_rows",
    "rows_to_files",
]

DOCUMENT_FILES = {
    **{name: spec.filename for name, spec in TARGETS.items()},
    **{
        f"{ORIGINS_DOCUMENT}:{name}": ledger_filename(spec.filename)
        for name, spec in TARGETS.items()
    },
}
"""Row name (``memory_documents.target``) -> file name beside the memory files."""
MEMORY_FILES = (*DOCUMENT_FILES.values(), HELD_FILE, ARCHIVE_FILENAME)

TABLES: dict[str, tuple[str, ...]] = {
    "changes": (
        "id", "at", "kind", "state", "target", "reason", "before_text", "after_text",
        "before_digest", "details", "undoes", "undone_by",
    ),
    "archived": (
        "id", "target", "text", "reason", "category", "related", "change_id", "archived_at",
        "recall_count",
    ),
    "superseded": ("archived_id", "change_id", "related"),
    "judgements": ("target", "first_digest", "second_digest", "verdict", "at"),
    "usage": ("target", "digest", "first_seen", "last_used", "uses"),
}  # fmt: skip
"""The archive's tables (``archive.db``'s names; ``memory_<name>`` in PostgreSQL) and the
columns both keep, in one order."""
_ORDER = {
    "changes": "id",
    "archived": "id",
    "superseded": "archived_id, change_id, related",
    "judgements": "target, first_digest, second_digest",
    "usage": "target, digest",
}

Row = tuple[Any, ...]


@dataclass
class OwnerMemory:
    """Everything builtin memory keeps for one owner."""

    owner: str
    documents: dict[str, str] = field(default_factory=dict)
    """Row name -> exact text, for the documents that exist."""
    held: list[HeldWrite] = field(default_factory=list)
    tables: dict[str, list[Row]] = field(default_factory=lambda: {name: [] for name in TABLES})

    @property
    def empty(self) -> bool:
        """Whether there is nothing at all."""
        return not (self.documents or self.held or any(self.tables.values()))

    def canonical(self) -> OwnerMemory:
        """The same memory with the archive's ids numbered 1, 2, … in their order (two
        copies are equal when they hold the same, whatever ids their store gave)."""
        changes = {row[0]: n for n, row in enumerate(self.tables["changes"], 1)}
        archived = {row[0]: n for n, row in enumerate(self.tables["archived"], 1)}
        tables = _renumbered(self.tables, changes, archived)
        tables["superseded"].sort()
        return dataclasses.replace(self, tables=tables)

    def counts(self) -> tuple[int, int, int]:
        """Documents, held writes and archived entries."""
        return len(self.documents), len(self.held), len(self.tables["archived"])


def _renumbered(
    tables: dict[str, list[Row]], changes: dict[Any, Any], archived: dict[Any, Any]
) -> dict[str, list[Row]]:
    """*tables* with change ids mapped by *changes* and archived ids by *archived*."""

    def change(value: Any) -> Any:
        return None if value is None else changes.get(value, value)

    return {
        "changes": [(changes[r[0]], *r[1:10], change(r[10]), change(r[11]))
                    for r in tables["changes"]],
        "archived": [(archived[r[0]], *r[1:6], change(r[6]), *r[7:]) for r in tables["archived"]],
        "superseded": [(archived.get(r[0], r[0]), change(r[1]), r[2])
                       for r in tables["superseded"]],
        "judgements": list(tables["judgements"]),
        "usage": list(tables["usage"]),
    }  # fmt: skip


@dataclass(frozen=True)
class MoveReport:
    """What a move copied."""

    owners: int
    documents: int
    held: int
    archived: int
    source: str
    target: str


def owner_folder(memories: Path, owner: str) -> Path:
    """Where *owner*'s files are below the ``memories`` folder."""
    return memories / "users" / user_folder_name(owner) if owner else memories


@contextlib.contextmanager
def _files_locked(memories: Path, owners: Sequence[str]) -> Iterator[None]:
    """Hold every lock a writer of *owners*' memory files takes, in their writers' order
    (the curator's, then each document's; the held writes' lock is never taken with
    another), owners in a fixed order."""
    with contextlib.ExitStack() as stack:
        for owner in sorted(owners):
            folder = owner_folder(memories, owner)
            paths = [folder / CURATOR_LOCK_NAME]
            paths += [folder / spec.filename for spec in TARGETS.values()]
            for path in (*paths, folder / HELD_FILE):
                stack.enter_context(exclusive_lock(path))
        yield


def _lock_rows(conn: Any, owners: Sequence[str]) -> None:
    """The row-side twin of :func:`_files_locked`, in *conn*'s transaction."""
    from hermes_memory_builtin.documents import lock_owner

    for owner in sorted(owners):
        lock_owner(conn, owner, [CURATOR_LOCK_NAME], list(DOCUMENT_FILES))


def _owners_in_files(memories: Path) -> list[str]:
    owners = [""] if any((memories / name).exists() for name in MEMORY_FILES) else []
    users = memories / "users"
    for folder in sorted(users.iterdir()) if users.is_dir() else ():
        owner = user_id_of_folder(folder.name)
        if owner is not None and any((folder / name).exists() for name in MEMORY_FILES):
            owners.append(owner)
    return owners


def _text(path: Path) -> str | None:
    """The exact text of *path*, or ``None`` without one; text PostgreSQL cannot hold (not
    UTF-8, NUL characters) is refused, naming the file."""
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError as exc:
        raise MemoryStoreError(f"{path} is not UTF-8 text ({exc}); fix it before moving.") from exc
    except OSError as exc:
        raise MemoryStoreError(f"Cannot read {path}: {exc.strerror or exc}.") from exc
    if "\x00" in text:
        raise MemoryStoreError(f"{path} holds NUL characters; remove them before moving.")
    return text


def read_files(memories: Path, owner: str) -> OwnerMemory:
    """*owner*'s memory in the files below *memories* (their archive settled first)."""
    folder = owner_folder(memories, owner)
    found = OwnerMemory(owner)
    for name, filename in DOCUMENT_FILES.items():
        text = _text(folder / filename)
        if text is not None:
            found.documents[name] = text
    found.held = parse_held(_text(folder / HELD_FILE), str(folder / HELD_FILE))
    if (folder / ARCHIVE_FILENAME).exists():
        with Archive(folder) as archive:
            for target in TARGETS:
                archive.settle(target)
        found.tables = _archive_rows(folder / ARCHIVE_FILENAME)
    return found


def _archive_rows(path: Path) -> dict[str, list[Row]]:
    try:
        db = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
        try:
            return {
                name: db.execute(
                    f"SELECT {', '.join(columns)} FROM {name} ORDER BY {_ORDER[name]}"
                ).fetchall()
                for name, columns in TABLES.items()
            }
        finally:
            db.close()
    except sqlite3.Error as exc:
        raise MemoryStoreError(f"Cannot read the memory archive {path}: {exc}.") from exc


def read_rows(conn: Any, owner: str) -> OwnerMemory:
    """*owner*'s memory in the rows of *conn*'s database."""
    found = OwnerMemory(owner)
    rows = conn.execute(
        "SELECT target, body FROM memory_documents WHERE owner = %s ORDER BY target", (owner,)
    ).fetchall()
    found.documents = {str(name): str(body) for name, body in rows}
    found.held = select_held(conn, owner)
    found.tables = {
        name: [
            tuple(row)
            for row in conn.execute(
                f"SELECT {', '.join(columns)} FROM memory_{name} WHERE owner = %s "
                f"ORDER BY {_ORDER[name]}",
                (owner,),
            ).fetchall()
        ]
        for name, columns in TABLES.items()
    }
    return found


def _owners_in_rows(conn: Any) -> list[str]:
    tables = ("documents", "held", *(name for name in TABLES if name != "superseded"))
    union = " UNION ".join(f"SELECT owner FROM memory_{name}" for name in tables)
    return [str(row[0]) for row in conn.execute(f"{union} ORDER BY owner").fetchall()]


def _write_rows(conn: Any, memory: OwnerMemory) -> None:
    """Insert *memory* (ids renumbered by the database) into *conn*'s transaction."""
    owner = memory.owner
    for name, body in memory.documents.items():
        conn.execute(
            "INSERT INTO memory_documents (owner, target, body) VALUES (%s, %s, %s)",
            (owner, name, body),
        )
    for write in memory.held:
        insert_held(conn, owner, write)
    changes: dict[Any, Any] = {}
    for row in memory.tables["changes"]:
        changes[row[0]] = conn.execute(
            "INSERT INTO memory_changes (owner, at, kind, state, target, reason, before_text,"
            " after_text, before_digest, details) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
            " RETURNING id",
            (owner, *row[1:10]),
        ).fetchone()[0]
    for row in memory.tables["changes"]:
        undoes, undone_by = (None if v is None else changes.get(v) for v in row[10:12])
        if undoes is not None or undone_by is not None:
            conn.execute(
                "UPDATE memory_changes SET undoes = %s, undone_by = %s WHERE id = %s",
                (undoes, undone_by, changes[row[0]]),
            )
    archived: dict[Any, Any] = {}
    for row in memory.tables["archived"]:
        archived[row[0]] = conn.execute(
            "INSERT INTO memory_archived (owner, target, text, reason, category, related,"
            " change_id, archived_at, recall_count, words)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
            (owner, *row[1:6], changes[row[6]], *row[7:], tokens(row[2])),
        ).fetchone()[0]
    for archived_id, change_id, related in memory.tables["superseded"]:
        conn.execute(
            "INSERT INTO memory_superseded (owner, archived_id, change_id, related)"
            " VALUES (%s, %s, %s, %s)",
            (owner, archived[archived_id], changes[change_id], related),
        )
    for name in ("judgements", "usage"):
        columns = TABLES[name]
        marks = ", ".join(["%s"] * (len(columns) + 1))
        with conn.cursor() as cursor:
            cursor.executemany(
                f"INSERT INTO memory_{name} (owner, {', '.join(columns)}) VALUES ({marks})",
                [(owner, *row) for row in memory.tables[name]],
            )


def _delete_rows(conn: Any, owner: str) -> None:
    for name in ("superseded", "archived", "changes", "judgements", "usage", "held", "documents"):
        conn.execute(f"DELETE FROM memory_{name} WHERE owner = %s", (owner,))


def _chosen(found: Sequence[str], owners: Sequence[str] | None) -> list[str]:
    return list(found) if owners is None else list(dict.fromkeys(owners))


def files_to_rows(
    memories: Path, url: str, *, owners: Sequence[str] | None = None, replace: bool = False
) -> MoveReport:
    """Copy the memory files below *memories* (of *owners*, default every owner found) into
    the PostgreSQL memory store at *url*, verified, in one transaction."""
    from hermes_memory_builtin.documents import PostgresDocuments

    chosen = _chosen(_owners_in_files(memories), owners)
    documents = PostgresDocuments(url)  # creates or migrates the tables
    try:
        with (
            _files_locked(memories, chosen),
            documents.guarded() as conn,
            conn.transaction(),
        ):
            copies = [read_files(memories, owner) for owner in chosen]
            _lock_rows(conn, chosen)
            present = set(_owners_in_rows(conn))
            for memory in copies:
                if memory.owner in present:
                    if not replace:
                        raise _occupied(f"{documents.where} holds memory of", memory.owner)
                    _delete_rows(conn, memory.owner)
                _write_rows(conn, memory)
            for memory in copies:
                if read_rows(conn, memory.owner).canonical() != memory.canonical():
                    raise MemoryStoreError(
                        f"The copy of {_who(memory.owner)} in {documents.where} differs from "
                        f"{owner_folder(memories, memory.owner)} when read back; nothing was "
                        "written."
                    )
    finally:
        documents.close()
    return _report(copies, str(memories), documents.where)


def rows_to_files(
    url: str, memories: Path, *, owners: Sequence[str] | None = None, replace: bool = False
) -> MoveReport:
    """Copy the PostgreSQL memory store at *url* (of *owners*, default every owner) into
    files below *memories*: staged, verified, then renamed into place. Files replaced
    (with *replace*) are kept in ``memories.replaced-<time>`` beside *memories*."""
    from hermes_core.sessions.pgmaintenance import open_connection
    from hermes_core.sessions.postgres import masked_url

    conn = open_connection(
        url, what="the memory database", setting="memory.url / HERMES_MEMORY_URL"
    )
    try:
        with conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            if conn.execute("SELECT to_regclass('memory_documents')").fetchone()[0] is None:
                raise MemoryStoreError(f"{masked_url(url)} holds no memory tables.")
            chosen = _chosen(_owners_in_rows(conn), owners)
            copies = [read_rows(conn, owner) for owner in chosen]
    finally:
        conn.close()
    memories.parent.mkdir(parents=True, exist_ok=True)
    with (
        _files_locked(memories, [m.owner for m in copies]),
        tempfile.TemporaryDirectory(prefix=".memories-moving-", dir=memories.parent) as name,
    ):
        occupied = [m.owner for m in copies if _has_files(owner_folder(memories, m.owner))]
        if occupied and not replace:
            raise _occupied(f"{memories} holds memory files of", occupied[0])
        staged = Path(name)
        for memory in copies:
            _stage_files(owner_folder(staged, memory.owner), memory)
        for memory in copies:
            if read_files(staged, memory.owner).canonical() != memory.canonical():
                raise MemoryStoreError(
                    f"The staged files of {_who(memory.owner)} differ from {masked_url(url)} "
                    "when read back; nothing was written."
                )
        _place(staged, memories, [owner_folder(Path(), m.owner) for m in copies])
    return _report(copies, masked_url(url), str(memories))


def _has_files(folder: Path) -> bool:
    return any((folder / name).exists() for name in MEMORY_FILES)


def _stage_files(folder: Path, memory: OwnerMemory) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in memory.documents.items():
        _write_new(folder / DOCUMENT_FILES[name], text)
    if memory.held:
        _write_new(folder / HELD_FILE, held_text(memory.held))
    if any(memory.tables.values()):
        with Archive(folder) as archive:  # creates the schema (and the search index)
            db = archive.db
            with contextlib.closing(db.cursor()) as cursor:
                cursor.execute("BEGIN IMMEDIATE")
                for name, columns in TABLES.items():
                    marks = ", ".join("?" * len(columns))
                    cursor.executemany(
                        f"INSERT INTO {name} ({', '.join(columns)}) VALUES ({marks})",
                        memory.tables[name],
                    )
                cursor.execute("COMMIT")
            db.execute("PRAGMA journal_mode=DELETE")  # one file to move


def _write_new(path: Path, text: str) -> None:
    with path.open("xb") as stream:
        stream.write(text.encode("utf-8"))
        stream.flush()
        os.fsync(stream.fileno())


def _place(staged: Path, memories: Path, folders: list[Path]) -> None:
    """Rename every memory file of *folders* (relative) from *staged* into *memories*,
    moving what they replace aside; undo every rename made when one fails."""
    aside = memories.parent / f"{memories.name}.replaced-{time.strftime('%Y%m%d-%H%M%S')}"
    moves: list[tuple[Path, Path]] = []
    try:
        for relative in folders:
            for name in MEMORY_FILES:
                old, new = memories / relative / name, staged / relative / name
                if old.exists():
                    (aside / relative).mkdir(parents=True, exist_ok=True)
                    os.rename(old, aside / relative / name)
                    moves.append((aside / relative / name, old))
                if new.exists():
                    old.parent.mkdir(parents=True, exist_ok=True)
                    os.rename(new, old)
                    moves.append((old, new))
    except OSError as exc:
        for moved, back in reversed(moves):
            with contextlib.suppress(OSError):
                os.rename(moved, back)
        raise MemoryStoreError(
            f"Could not move the memory files into {memories} ({exc.strerror or exc}); what "
            "was moved was put back."
        ) from exc


def _who(owner: str) -> str:
    return f"user {owner!r}" if owner else "the single-user memory"


def _occupied(where: str, owner: str) -> MemoryStoreError:
    return MemoryStoreError(
        f"{where} {_who(owner)} already; nothing was moved. Pass --force to replace it (files "
        "replaced are kept aside), or choose the users with --user."
    )


def _report(copies: list[OwnerMemory], source: str, target: str) -> MoveReport:
    counts = [m.counts() for m in copies]
    documents, held, archived = (sum(c[i] for c in counts) for i in range(3))
    return MoveReport(len(copies), documents, held, archived, source, target)
