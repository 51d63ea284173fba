"""Backing up a HERMES_HOME into one archive, and restoring it, while agents keep writing.

A backup is a ``.tar.gz`` holding

* ``state.db`` and its vector sidecar ``state.db.vectors``, each copied with
  SQLite's online backup API (:func:`~hermes_core.sessions.snapshot.copy_database`):
  the database as it was at one instant, though agents go on appending;
* every file under ``memories/`` (``MEMORY.md``, ``USER.md``…), each read under
  the lock its writers take, so no file is caught half-replaced;
* ``config.yaml``, read under its lock; ``.env`` only when secrets are asked for;
* ``manifest.json``: the format, when and from where, and each file's size and
  SHA-256, with the number of sessions and messages in ``state.db``.

With a PostgreSQL session store (``sessions.url``), the sessions are copied instead
into ``sessions.postgresql.db``, a file in ``state.db``'s format read from the
database in one REPEATABLE READ transaction (one instant, while agents write); a
restore copies it into an empty PostgreSQL database (the configured one), or
makes it the home's ``state.db`` when no database is configured.

With builtin memory in PostgreSQL (``memory.url``), every user's memory rows are
archived too, as the files they would be (``memory.postgresql/``, the layout of
``memories/``: documents, origin ledgers, held writes, ``archive.db``; read in one
snapshot and verified, :mod:`hermes_memory_builtin.memory_move`); a restore writes them
into the configured memory database (refusing users who have rows there), or into
``memories/`` when none is configured. The outage spool (``spool/``: messages kept while
the session database was unreachable, and those it refused) is archived as it is, each
file read under the spool's lock, and restored into the home, where agents write it back.

The archive is written to a temporary file beside the destination and renamed
onto it, so a destination never holds a partial archive. A restore reads the
whole archive into a folder inside the home first and checks it (every file
against the manifest, ``PRAGMA integrity_check`` of each database) before it
moves anything into place; the files it replaces are kept in a folder it names.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import sqlite3
import tarfile
import tempfile
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO, Any
from urllib.parse import quote

from hermes_core.config import file_lock
from hermes_core.errors import BackupError, HermesMemoryError

__all__ = [
    "FORMAT",
    "MANIFEST_NAME",
    "BackupManifest",
    "create_backup",
    "home_contents",
    "read_manifest",
    "restore_backup",
]

FORMAT = "hermes-memory-backup/1"
MANIFEST_NAME = "manifest.json"
DATABASES = ("state.db", "state.db.vectors")
POSTGRES_SESSIONS = "sessions.postgresql.db"
"""The archived copy of a PostgreSQL session store (a SQLite file in state.db's format)."""
MEMORY_DIR = "memories"
MEMORY_ROWS = "memory.postgresql"
"""The archived memory rows of ``memory.url``, as the files of a ``memories`` folder."""
SPOOL = "spool"
SECRETS_FILE = ".env"
CONFIG_FILE = "config.yaml"
RESTORED_ITEMS = (*DATABASES, MEMORY_DIR, SPOOL, CONFIG_FILE, SECRETS_FILE)
"""What a backup may hold, at the top of the home: what a restore replaces."""
_SKIPPED_SUFFIXES = (".lock", ".tmp")
"""Lock files and a writer's temporary files are not memory."""
_CHUNK = 1024 * 1024
MAX_MANIFEST_BYTES = 16 * 1024 * 1024
"""A manifest is a few kilobytes; a longer one is not read into memory."""

MemoryLock = Callable[[Path], AbstractContextManager[Any]]
"""Takes the lock the memory files' writers take (the builtin provider's)."""
Progress = Callable[[int, int], None]
"""Called with (steps done, steps in all)."""


@dataclass
class BackupManifest:
    """What an archive holds: ``files`` maps each archived path to its size and SHA-256."""

    created_at: float
    hermes_home: str
    files: dict[str, dict[str, Any]] = field(default_factory=dict)
    sessions: int = 0
    messages: int = 0
    secrets: bool = False
    sessions_backend: str = "sqlite"
    """Where the sessions were: ``sqlite`` (``state.db``) or ``postgresql``."""
    sessions_source: str = ""
    """The PostgreSQL database they were copied from (password masked), else ``""``."""
    memory_source: str = ""
    """The PostgreSQL database the memory rows were copied from (password masked), else
    ``""`` (the memory files only)."""
    memory_owners: int = 0
    """How many owners' memory rows were archived."""
    restored_to: str = ""
    """Set by :func:`restore_backup`: where the archived sessions went (not archived)."""
    memory_restored_to: str = ""
    """Set by :func:`restore_backup`: where the archived memory rows went (not archived)."""

    def to_json(self) -> str:
        """The manifest as the archive stores it."""
        return json.dumps(
            {
                "format": FORMAT,
                "created_at": self.created_at,
                "hermes_home": self.hermes_home,
                "sessions": self.sessions,
                "messages": self.messages,
                "secrets": self.secrets,
                "sessions_backend": self.sessions_backend,
                "sessions_source": self.sessions_source,
                "memory_source": self.memory_source,
                "memory_owners": self.memory_owners,
                "files": self.files,
            },
            indent=2,
            ensure_ascii=False,
        )


def home_contents(home: Path) -> list[str]:
    """What a restore would replace in *home*: the backed-up items that exist there."""
    found = []
    for name in RESTORED_ITEMS:
        path = home / name
        if name in (MEMORY_DIR, SPOOL):
            if path.is_dir() and any(_memory_files(path)):
                found.append(name)
        elif path.exists() or path.is_symlink():
            found.append(name)
    return found


def _memory_files(folder: Path) -> Iterator[Path]:
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.name.endswith(_SKIPPED_SUFFIXES):
            yield path


def _read_only_uri(path: Path) -> str:
    return f"file:{quote(os.fsencode(path.resolve()))}?mode=ro"


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while chunk := stream.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _counts(db: Path) -> tuple[int, int]:
    """Sessions and messages in the database *db* (0, 0 when it has no such tables)."""
    conn = sqlite3.connect(_read_only_uri(db), uri=True)
    try:
        names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
        if not {"sessions", "messages"} <= names:
            return 0, 0
        sessions = conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]
        messages = conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
        return int(sessions), int(messages)
    finally:
        conn.close()


def _staging(parent: Path, prefix: str) -> tempfile.TemporaryDirectory[str]:
    try:
        parent.mkdir(parents=True, exist_ok=True)
        return tempfile.TemporaryDirectory(prefix=prefix, dir=parent)
    except OSError as exc:
        raise BackupError(
            f"Cannot create a working folder in {parent} ({exc.strerror or exc}); it must be "
            "a writable folder with room for a copy of the home."
        ) from exc


def create_backup(
    home: Path,
    archive: Path,
    *,
    include_secrets: bool = False,
    memory_lock: MemoryLock | None = None,
    progress: Progress | None = None,
    sessions_url: str | None = None,
    memory_url: str | None = None,
) -> BackupManifest:
    """Write a backup of *home* to *archive* (a new ``.tar.gz``) and return its manifest.

    With *sessions_url* (the PostgreSQL session store in use), its sessions are
    archived as :data:`POSTGRES_SESSIONS` instead of the home's ``state.db``. With
    *memory_url* (builtin memory in PostgreSQL), every user's memory rows are archived as
    :data:`MEMORY_ROWS`.

    *memory_lock* is taken around reading each memory file (the builtin
    provider's lock; without it the files are read as they are, which is
    still whole: writers replace them by renaming). ``.env`` is included only
    with *include_secrets*. Raises :class:`~hermes_core.errors.BackupError`;
    *archive* is then left as it was.
    """
    from hermes_core.sessions.snapshot import copy_database

    if not home.is_dir():
        raise BackupError(f"{home} is not a folder; there is no HERMES_HOME to back up there.")
    manifest = BackupManifest(created_at=time.time(), hermes_home=str(home))
    memory = home / MEMORY_DIR
    memory_files = list(_memory_files(memory)) if memory.is_dir() else []
    steps = len(DATABASES) + len(memory_files) + 2
    done = 0

    def step() -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, steps)

    with _staging(archive.parent, f".{archive.name}.") as name:
        staged = Path(name) / "home"
        staged.mkdir()
        if sessions_url is not None:
            _copy_postgres(sessions_url, staged / POSTGRES_SESSIONS, manifest)
            done += len(DATABASES) - 1
            step()
        for db in DATABASES if sessions_url is None else ():
            source = home / db
            if source.is_file():
                try:
                    copy_database(source, staged / db)
                except HermesMemoryError as exc:
                    raise BackupError(f"Cannot back up {source}: {exc}") from exc
            step()
        if (staged / "state.db").exists():
            manifest.sessions, manifest.messages = _counts(staged / "state.db")
        for path in memory_files:
            relative = path.relative_to(home)
            lock = memory_lock(path) if memory_lock and path.suffix == ".md" else None
            with lock or contextlib.nullcontext():
                data = path.read_bytes()
            target = staged / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            step()
        if memory_url is not None:
            _copy_memory_rows(memory_url, staged / MEMORY_ROWS, manifest)
        _copy_spool(home / SPOOL, staged / SPOOL)
        config = home / CONFIG_FILE
        if config.is_file():
            with file_lock(config):
                (staged / CONFIG_FILE).write_bytes(config.read_bytes())
        step()
        secrets = home / SECRETS_FILE
        if include_secrets and secrets.is_file():
            (staged / SECRETS_FILE).write_bytes(secrets.read_bytes())
            manifest.secrets = True
        step()
        for path in sorted(p for p in staged.rglob("*") if p.is_file()):
            manifest.files[path.relative_to(staged).as_posix()] = {
                "size": path.stat().st_size,
                "sha256": _sha256_file(path),
            }
        _write_archive(staged, manifest, archive)
    return manifest


def _copy_postgres(url: str, target: Path, manifest: BackupManifest) -> None:
    """Copy the PostgreSQL session store at *url* into the new file *target* (one instant)."""
    from hermes_core.sessions.pgmaintenance import copy_to_sqlite
    from hermes_core.sessions.postgres import masked_url

    try:
        manifest.sessions, manifest.messages = copy_to_sqlite(url, target)
    except HermesMemoryError as exc:
        raise BackupError(f"Cannot back up the sessions of {masked_url(url)}: {exc}") from exc
    manifest.sessions_backend = "postgresql"
    manifest.sessions_source = masked_url(url)


def _copy_memory_rows(url: str, target: Path, manifest: BackupManifest) -> None:
    """Write every owner's memory rows at *url* as files below the new folder *target*."""
    from hermes_memory_builtin.memory_move import rows_to_files

    from hermes_core.sessions.postgres import masked_url

    try:
        report = rows_to_files(url, target)
    except HermesMemoryError as exc:
        raise BackupError(f"Cannot back up the memory of {masked_url(url)}: {exc}") from exc
    manifest.memory_source, manifest.memory_owners = report.source, report.owners


def _copy_spool(folder: Path, target: Path) -> None:
    """Copy the spool files of *folder* (each read under the spool's lock) into *target*."""
    from hermes_core.sessions.spool import SessionSpool

    for path in sorted(folder.glob("sessions-*.jsonl")) if folder.is_dir() else []:
        spool = SessionSpool(path)
        for source, data in zip((path, spool.rejected_path), spool.contents(), strict=True):
            if data is not None:
                target.mkdir(mode=0o700, parents=True, exist_ok=True)
                (target / source.name).write_bytes(data)
    for path in sorted(folder.glob("sessions-*.jsonl.rejected")) if folder.is_dir() else []:
        if not (target / path.name).exists():  # refused records of a spool since emptied
            target.mkdir(mode=0o700, parents=True, exist_ok=True)
            (target / path.name).write_bytes(path.read_bytes())


def _write_archive(staged: Path, manifest: BackupManifest, archive: Path) -> None:
    """Pack *staged* and the manifest into *archive* through a temporary file and a rename."""
    fd, temp_name = tempfile.mkstemp(prefix=f".{archive.name}.", suffix=".part", dir=archive.parent)
    try:
        with os.fdopen(fd, "wb") as raw:
            with tarfile.open(fileobj=raw, mode="w:gz", compresslevel=6) as tar:
                data = manifest.to_json().encode("utf-8")
                info = tarfile.TarInfo(MANIFEST_NAME)
                info.size, info.mtime, info.mode = len(data), int(manifest.created_at), 0o600
                tar.addfile(info, io.BytesIO(data))
                for relative in manifest.files:
                    info = tar.gettarinfo(staged / relative, arcname=relative)
                    info.mode, info.uid, info.gid, info.uname, info.gname = 0o600, 0, 0, "", ""
                    with (staged / relative).open("rb") as stream:
                        tar.addfile(info, stream)
            raw.flush()
            os.fsync(raw.fileno())
        os.chmod(temp_name, 0o600)  # it holds the conversations (and, maybe, the secrets)
        os.replace(temp_name, archive)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp_name)
        raise


def _refused(archive: Path, why: str) -> BackupError:
    return BackupError(
        f"{archive} is not a usable hermes-memory backup: {why}. Nothing was changed; use "
        "another backup."
    )


def read_manifest(archive: Path) -> BackupManifest:
    """The manifest of *archive*, checked for shape (not yet against the files)."""
    try:
        with tarfile.open(archive, mode="r:gz") as tar:
            member = tar.getmember(MANIFEST_NAME)
            if member.size > MAX_MANIFEST_BYTES:
                raise _refused(archive, f"its {MANIFEST_NAME} is {member.size:,} bytes long")
            stream = tar.extractfile(member)
            if stream is None:
                raise _refused(archive, f"its {MANIFEST_NAME} is not a file")
            data = json.loads(stream.read().decode("utf-8"))
    except KeyError as exc:
        raise _refused(archive, f"it has no {MANIFEST_NAME}") from exc
    except (OSError, tarfile.TarError, EOFError, ValueError) as exc:
        raise _refused(archive, f"it cannot be read as a .tar.gz with a manifest ({exc})") from exc
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        found = data.get("format") if isinstance(data, dict) else None
        raise _refused(archive, f"its manifest is of format {found!r}, not {FORMAT!r}")
    files = data.get("files")
    if not isinstance(files, dict):
        raise _refused(archive, "its manifest lists no files")
    for name, entry in files.items():
        if not _safe_member(name):
            raise _refused(archive, f"it would write {name!r}, outside the items a backup holds")
        if not (
            isinstance(entry, dict)
            and isinstance(entry.get("size"), int)
            and isinstance(entry.get("sha256"), str)
        ):
            raise _refused(archive, f"its manifest entry for {name!r} has no size and SHA-256")
    return BackupManifest(
        created_at=float(data.get("created_at") or 0),
        hermes_home=str(data.get("hermes_home") or ""),
        files=files,
        sessions=int(data.get("sessions") or 0),
        messages=int(data.get("messages") or 0),
        secrets=bool(data.get("secrets")),
        sessions_backend=str(data.get("sessions_backend") or "sqlite"),
        sessions_source=str(data.get("sessions_source") or ""),
        memory_source=str(data.get("memory_source") or ""),
        memory_owners=int(data.get("memory_owners") or 0),
    )


def _safe_member(name: str) -> bool:
    """True for a path a backup may hold: one of its items, relative, without ``..``."""
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts or "\\" in name or not path.parts:
        return False
    top = path.parts[0]
    return (top in (MEMORY_DIR, MEMORY_ROWS, SPOOL) and len(path.parts) > 1) or (
        len(path.parts) == 1 and top in (*DATABASES, POSTGRES_SESSIONS, CONFIG_FILE, SECRETS_FILE)
    )


def _extract(
    archive: Path, manifest: BackupManifest, into: Path, progress: Progress | None
) -> None:
    """Write every file of *manifest* from *archive* under *into*, checking size and hash."""
    total = len(manifest.files)
    try:
        with tarfile.open(archive, mode="r:gz") as tar:
            for number, (name, entry) in enumerate(manifest.files.items(), start=1):
                try:
                    member = tar.getmember(name)
                except KeyError:
                    raise _refused(archive, f"{name} is in its manifest but not in it") from None
                stream = tar.extractfile(member) if member.isreg() else None
                if stream is None:
                    raise _refused(archive, f"{name} is not a regular file in it")
                if member.size != entry["size"]:
                    raise _refused(archive, f"{name} does not match its manifest (damaged)")
                size, digest = _copy_out(stream, into / name)
                if size != entry["size"] or digest != entry["sha256"]:
                    raise _refused(archive, f"{name} does not match its manifest (damaged)")
                if progress is not None:
                    progress(number, total)
    except (OSError, tarfile.TarError, EOFError, zlib.error) as exc:
        raise _refused(archive, f"it cannot be read to the end ({exc})") from exc


def _copy_out(stream: IO[bytes], target: Path) -> tuple[int, str]:
    """Write *stream* to the new file *target* (0600); its size and SHA-256.

    Errors reading *stream* go to the caller (a damaged archive); a failure to
    write (a full disk) is a :class:`BackupError` about the home.
    """
    digest = hashlib.sha256()
    size = 0
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        out = os.fdopen(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb")
    except OSError as exc:
        raise _unwritable(target, exc) from exc
    with out:
        while chunk := stream.read(_CHUNK):
            digest.update(chunk)
            size += len(chunk)
            try:
                out.write(chunk)
            except OSError as exc:
                raise _unwritable(target, exc) from exc
        try:
            out.flush()
            os.fsync(out.fileno())
        except OSError as exc:
            raise _unwritable(target, exc) from exc
    return size, digest.hexdigest()


def _unwritable(target: Path, exc: OSError) -> BackupError:
    return BackupError(
        f"Cannot write {target} ({exc.strerror or exc}); nothing was changed. Make room or "
        "fix the folder's permissions, then retry."
    )


def _check_database(archive: Path, path: Path, name: str) -> None:
    try:
        conn = sqlite3.connect(_read_only_uri(path), uri=True)
        try:
            result = [row[0] for row in conn.execute("PRAGMA integrity_check")]
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise _refused(archive, f"its {name} is not an intact SQLite database ({exc})") from exc
    if result != ["ok"]:
        raise _refused(archive, f"its {name} fails SQLite's integrity check ({result[0]})")


def restore_backup(
    archive: Path,
    home: Path,
    *,
    force: bool = False,
    progress: Progress | None = None,
    sessions_url: str | None = None,
    memory_url: str | None = None,
) -> tuple[BackupManifest, Path | None]:
    """Restore *archive* into *home*; returns its manifest and where replaced files went.

    Sessions archived from PostgreSQL go into the empty database *sessions_url*,
    else the configured one (``HERMES_SESSIONS_URL``, else ``sessions.url`` of the
    ``config.yaml`` the home has once restored), all or nothing and verified
    before any file is moved; without one they become the home's ``state.db``.
    ``manifest.restored_to`` says where they went. Memory rows go into *memory_url*,
    else the configured memory database (``HERMES_MEMORY_URL`` / ``memory.url``), for
    users who have no rows there yet (all or nothing, verified); without one they become
    the files of ``memories/`` (``manifest.memory_restored_to``).

    Refuses (:class:`~hermes_core.errors.BackupError`, nothing changed) a home
    that holds any item a backup holds, unless *force*; then those items are
    moved into a new ``restore-replaced-<time>`` folder of the home, whose path
    is returned. The archive is checked whole before anything is moved. Stop
    the agents using *home* first: a process with the old ``state.db`` open
    would keep writing to the replaced file.
    """
    manifest = read_manifest(archive)
    present = home_contents(home) if home.exists() else []
    if present and not force:
        raise BackupError(
            f"{home} already holds {', '.join(present)}; restoring would replace them. Nothing "
            "was changed. Restore into an empty HERMES_HOME, or pass --force (what is replaced "
            "is kept in a restore-replaced-<time> folder of the home)."
        )
    with _staging(home, ".hermes-restore-") as name:
        staged = Path(name)
        _extract(archive, manifest, staged, progress)
        for db in (*DATABASES, POSTGRES_SESSIONS):
            if (staged / db).exists():
                _check_database(archive, staged / db, db)
        for db in ("state.db", POSTGRES_SESSIONS):
            if (staged / db).exists():
                counts = _counts(staged / db)
                if counts != (manifest.sessions, manifest.messages):
                    raise _refused(archive, f"its {db} does not hold the sessions it lists")
        if (staged / "state.db").exists():
            manifest.restored_to = str(home / "state.db")
        if (staged / POSTGRES_SESSIONS).exists():
            url = sessions_url or _configured_url(staged, home)
            if url is None:
                os.rename(staged / POSTGRES_SESSIONS, staged / "state.db")
                manifest.restored_to = str(home / "state.db")
            else:
                manifest.restored_to = _restore_postgres(staged / POSTGRES_SESSIONS, url)
        try:
            if (staged / MEMORY_ROWS).is_dir():
                manifest.memory_restored_to = _restore_memory_rows(
                    staged, home, memory_url or _configured_url(staged, home, "memory")
                )
            replaced = _swap_in(staged, home, present)
        except BackupError as exc:
            if manifest.sessions_backend == "postgresql" and "://" in manifest.restored_to:
                raise BackupError(
                    f"{exc} The sessions were restored into {manifest.restored_to} already."
                ) from exc
            raise
    return manifest, replaced


def _configured_url(staged: Path, home: Path, what: str = "sessions") -> str | None:
    """The PostgreSQL database the home keeps *what* (``sessions`` or ``memory``) in once
    restored (see :func:`restore_backup`)."""
    from hermes_memory_builtin.documents import memory_url

    from hermes_core.config import load_config
    from hermes_core.sessions.backends import sessions_url

    folder = staged if (staged / CONFIG_FILE).exists() else home
    try:
        config = load_config(folder)
        return sessions_url(config) if what == "sessions" else memory_url(config)
    except HermesMemoryError as exc:
        raise BackupError(f"Cannot tell where to restore the {what}: {exc}") from exc


def _restore_memory_rows(staged: Path, home: Path, url: str | None) -> str:
    """Put the archived memory rows into the database *url*, or (without one) among the
    staged memory files; where they went."""
    from hermes_memory_builtin.memory_move import files_to_rows

    from hermes_core.sessions.postgres import masked_url

    rows = staged / MEMORY_ROWS
    if url is not None:
        try:
            files_to_rows(rows, url)
        except HermesMemoryError as exc:
            raise BackupError(
                f"Cannot restore the memory rows into {masked_url(url)}: {exc}"
            ) from exc
        return masked_url(url)
    memories = staged / MEMORY_DIR
    incoming = [p.relative_to(rows) for p in sorted(rows.rglob("*")) if p.is_file()]
    clash = next((p for p in incoming if (memories / p).exists()), None)
    if clash is not None:
        raise BackupError(
            f"The archive holds {clash} both as a file and as memory rows, and no memory.url "
            "names a database for the rows; nothing was changed. Set memory.url (or pass "
            "--memory-url) to restore the rows there."
        )
    for relative in incoming:
        (memories / relative).parent.mkdir(parents=True, exist_ok=True)
        os.rename(rows / relative, memories / relative)
    return str(home / MEMORY_DIR)


def _restore_postgres(copy: Path, url: str) -> str:
    """Copy the archived sessions into the empty PostgreSQL store *url*; its masked URL."""
    from hermes_core.sessions.migration import migrate_store
    from hermes_core.sessions.postgres import masked_url

    try:
        report = migrate_store(copy, url)
    except HermesMemoryError as exc:
        raise BackupError(
            f"Cannot restore the sessions into {masked_url(url)}: {exc} Nothing was changed; "
            "restore into an empty database or schema (a restore never replaces rows there)."
        ) from exc
    return report.target


def _swap_in(staged: Path, home: Path, present: list[str]) -> Path | None:
    """Move the items of *home* that *staged* or *present* name aside, then *staged*'s in.

    Every move is a rename within the home's file system. When a move fails, the
    ones made are undone before the error is raised.
    """
    incoming = [item for item in RESTORED_ITEMS if (staged / item).exists()]
    outgoing = sorted(set(present) | {i for i in incoming if (home / i).exists()})
    if (home / "state.db").exists() or "state.db" in incoming:
        # A journal of the old database would be replayed into the new one.
        outgoing += [j for j in ("state.db-wal", "state.db-shm") if (home / j).exists()]
        outgoing += [
            j for j in ("state.db.vectors-wal", "state.db.vectors-shm") if (home / j).exists()
        ]
    stamp = time.strftime("%Y%m%d-%H%M%S")
    aside = home / f"restore-replaced-{stamp}" if outgoing else None
    moves: list[tuple[Path, Path]] = []
    try:
        if aside is not None:
            aside.mkdir(mode=0o700)
            for item in outgoing:
                os.rename(home / item, aside / item)
                moves.append((aside / item, home / item))
        for item in incoming:
            os.rename(staged / item, home / item)
            moves.append((home / item, staged / item))
    except OSError as exc:
        for moved, back in reversed(moves):
            with contextlib.suppress(OSError):
                os.rename(moved, back)
        if aside is not None:
            with contextlib.suppress(OSError):
                aside.rmdir()
        raise BackupError(
            f"Could not move the restored files into {home} ({exc.strerror or exc}); what was "
            "moved was put back. Check the folder's permissions and retry."
        ) from exc
    for item in (SECRETS_FILE, "state.db"):
        with contextlib.suppress(OSError):
            if (home / item).is_file():
                os.chmod(home / item, 0o600)
    return aside
