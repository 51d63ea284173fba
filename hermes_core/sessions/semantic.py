"""Semantic recall for session search: message vectors beside ``state.db``.

Full-text search finds the words a question shares with the history; a
question often says it otherwise ("the cat we adopted" for "a rescue tabby",
"my journey to the office" for "my commute"). When the encoder is
installed (:mod:`hermes_core.embeddings`), the user's and the assistant's
messages are embedded into a sidecar SQLite file, ``state.db.vectors``, and the
nearest messages to a question (or to two or more keywords) are fused with its
full-text hits
(:func:`~hermes_core.sessions.search.search_messages`, reciprocal rank fusion).
The same vectors are kept as one flat file, ``state.db.vectors.bin``
(:mod:`~hermes_core.sessions.vectorfile`), which a search maps into memory instead of
reading rows; the sidecar's transaction that writes rows stamps it, and a file that does
not match its stamp is written again from the sidecar.

The sidecar is a cache: ``state.db`` is never written for it (a Hermes
``state.db`` opened read-only gets one too), deleting it loses nothing but the
time to rebuild it, and vectors of messages that are gone or changed are
ignored. Messages are embedded newest first, a bounded amount per search
(:meth:`SemanticIndex.catch_up`), after each turn by the builtin provider, or
all at once with ``hermes-memory sessions index``.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from hermes_core.embeddings import (
    STATIC_DIR,
    STATIC_INSTALL_HINT,
    Encoder,
    load_encoder,
    missing_encoder_requirements,
    model_name,
)
from hermes_core.errors import ConfigError
from hermes_core.sessions import vectorfile
from hermes_core.sessions.connection import is_busy, restrict_permissions
from hermes_core.sessions.layout import Layout
from hermes_core.sessions.neighbours import (
    BATCH,
    MAX_VECTORS,
    SPARE,
    Held,
    best,
    checksum,
    embedded_pieces,
    near_by_content,
    query_text,
    scores,
    source_text,
)
from hermes_core.sessions.vectorscan import nearest_records
from hermes_core.static_query import StaticQuery

__all__ = [
    "SEMANTIC_ENV",
    "SemanticIndex",
    "count_not_embedded",
    "forget_vectors",
    "semantic_available",
    "semantic_mode",
    "sidecar_path",
]

log = logging.getLogger(__name__)

T = TypeVar("T")
Reader = Callable[[Callable[[sqlite3.Connection], T]], T]
"""Runs a function on the session database's connection (the store's ``_read``)."""

SEMANTIC_ENV = "HERMES_SEMANTIC_SEARCH"
"""``auto`` (default: on when the encoder is installed), ``on`` or ``off``."""
MODES = ("auto", "on", "off")


def sidecar_path(db_path: str | os.PathLike[str]) -> Path:
    """Where the vectors of *db_path*'s messages are kept: ``<db>.vectors`` beside it."""
    path = Path(db_path)
    return path.with_name(path.name + ".vectors")


def semantic_mode(value: object = None) -> str:
    """``auto``, ``on`` or ``off`` from *value*, else from ``$HERMES_SEMANTIC_SEARCH``.

    ``True``/``False`` (a YAML boolean) mean ``on``/``off``. Anything else is a
    :class:`~hermes_core.errors.ConfigError` naming the accepted values.
    """
    if value is None:
        value = os.environ.get(SEMANTIC_ENV) or "auto"
    if value is True:
        return "on"
    if value is False:
        return "off"
    text = str(value).strip().lower()
    if text in ("true", "yes", "1"):
        return "on"
    if text in ("false", "no", "0"):
        return "off"
    if text not in MODES:
        raise ConfigError(
            f"semantic search is {value!r}; use one of auto, on, off "
            f"(session_search.semantic in config.yaml or ${SEMANTIC_ENV})."
        )
    return text


def semantic_available() -> bool:
    """True when the configured encoder (:func:`~hermes_core.embeddings.encoder_name`)
    can load (its libraries and, for MiniLM, its weights are installed) and simsimd, which
    scores the vectors, is installed (all of them the ``semantic`` extra)."""
    return not missing_encoder_requirements() and _has_simsimd()


def _has_simsimd() -> bool:
    return importlib.util.find_spec("simsimd") is not None


_SCHEMA = """
CREATE TABLE IF NOT EXISTS vectors (
    message_id INTEGER NOT NULL,
    piece INTEGER NOT NULL,
    checksum INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (message_id, piece)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


_ROWS = "SELECT message_id, checksum, vector FROM vectors"
"""Every vector of the sidecar, as the vector file holds them."""

_BUMP_GENERATION = (
    "INSERT INTO meta VALUES ('generation', '1') ON CONFLICT(key) "
    "DO UPDATE SET value = CAST(value AS INTEGER) + 1"
)
"""Count a write to the sidecar, so indexes holding its vectors in memory reload them."""

_OUR_TABLES = {"vectors": ["message_id", "piece", "checksum", "vector"], "meta": ["key", "value"]}
"""The sidecar's tables and their columns."""


def _foreign(conn: sqlite3.Connection) -> str | None:
    """Why the SQLite file open on *conn* is another program's database, not a sidecar of
    ours (else ``None``).

    Only its schema is read: another program's database that happens to sit where the
    vectors go is never converted, added to or emptied. (A file that is no SQLite
    database at all is damage, and is rebuilt.)
    """
    tables = {
        name: [row[0] for row in conn.execute("SELECT name FROM pragma_table_info(?)", (name,))]
        for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' "
            "ESCAPE '\\'"
        )
    }
    other = sorted(name for name in tables if name not in _OUR_TABLES)
    if other:
        return f"it holds the table {other[0]!r}"
    for name, columns in tables.items():
        if columns != _OUR_TABLES[name]:
            return f"its table {name!r} has the columns {', '.join(columns)}"
    if "meta" in tables:
        keys = {row[0] for row in conn.execute("SELECT key FROM meta")}
        if keys and "model" not in keys:
            return "its table 'meta' names no embedding model"
    return None


class _Loaded:
    """The vectors of one sidecar in memory (its vector file mapped), shared by the
    process's indexes of it (a gateway with many chats open on one history maps it once).

    Up to :data:`~hermes_core.sessions.neighbours.MAX_VECTORS` records are scored without
    numpy (:mod:`~hermes_core.sessions.vectorscan`); beyond, numpy picks the newest of
    them (:class:`~hermes_core.sessions.neighbours.Held`), as PostgreSQL's index does."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.key: object = None  # the file's Stamp, or ("rows", generation) when read as rows
        self.records: vectorfile.Mapped | None = None
        self.many: Held | None = None

    def fresh(self, stamp: vectorfile.Stamp | None, generation: int, file: Path | None) -> bool:
        """Whether what is held is what the sidecar says now."""
        if isinstance(self.key, vectorfile.Stamp):
            return self.key == stamp and file is not None and vectorfile.unchanged(file, self.key)
        return self.key == ("rows", generation)

    def hold(self, key: object, records: vectorfile.Mapped) -> None:
        self.key, self.records, self.many = key, records, None
        if records.count > MAX_VECTORS:
            self.many = Held()
            self.many.set(*records.arrays())

    def nearest(self, query: Sequence[float], n: int) -> list[tuple[int, int]]:
        """The *n* messages nearest to *query* (by their best piece), best first:
        ``(message id, row)``."""
        assert self.records is not None
        if self.many is None:
            return nearest_records(self.records, query, n)
        import numpy as np

        return best(self.many, scores(self.many, np.asarray(query, dtype=np.float32)), n)


_SHARED: weakref.WeakValueDictionary[Path, _Loaded] = weakref.WeakValueDictionary()
_SHARED_LOCK = threading.Lock()


def _shared(path: Path) -> _Loaded:
    key = path.resolve()
    with _SHARED_LOCK:
        loaded = _SHARED.get(key)
        if loaded is None:
            loaded = _Loaded()
            _SHARED[key] = loaded
        return loaded


def _static_model(directory: Path) -> str | None:
    """The model name of the static encoder's files in *directory* (``None``: none there)."""
    try:
        manifest = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
        return str(manifest["encoder"])
    except (OSError, ValueError, KeyError):
        return None


def _embeddable(layout: Layout, alias: str) -> str:
    """A WHERE fragment: the messages semantic search embeds (user and assistant text)."""
    return (
        f"{alias}.role IN ('user', 'assistant') AND {layout.visible_rows_sql(alias)} "
        f"AND length(trim({alias}.content)) > 0"
    )


def _count_missing(read: Reader[Any], layout: Layout, low: int | None, high: int | None) -> int:
    """Embeddable messages outside the embedded id range *low*..*high* (all, for none)."""
    where = _embeddable(layout, "m")
    if high is None or low is None:
        sql, params = f"SELECT count(*) FROM messages AS m WHERE {where}", ()
    else:  # two id ranges, each read through the primary key
        sql = (
            f"SELECT (SELECT count(*) FROM messages AS m WHERE m.id > ? AND {where}) "
            f"+ (SELECT count(*) FROM messages AS m WHERE m.id < ? AND {where})"
        )
        params = (high, low)  # type: ignore[assignment]
    return int(read(lambda conn: conn.execute(sql, params).fetchone()[0]))


def count_not_embedded(db_path: str | os.PathLike[str], layout: Layout, read: Reader[Any]) -> int:
    """How many messages of *db_path* have no vectors yet, without loading the encoder
    or writing anything: the sidecar is only read, and may not exist yet."""
    low = high = None
    sidecar = sidecar_path(db_path)
    if sidecar.is_file():
        try:
            conn = sqlite3.connect(f"{sidecar.resolve().as_uri()}?mode=ro", uri=True)
            try:
                meta = dict(conn.execute("SELECT key, value FROM meta"))
            finally:
                conn.close()
        except sqlite3.Error:  # damaged or foreign: rebuilt on first use, so nothing counts
            meta = {}
        if meta.get("model") == model_name():  # another model's vectors are dropped on first use
            low = int(meta["low"]) if meta.get("low") is not None else None
            high = int(meta["high"]) if meta.get("high") is not None else None
    return _count_missing(read, layout, low, high)


def forget_vectors(db_path: str | os.PathLike[str], message_ids: Sequence[int]) -> int:
    """Drop the vectors of deleted messages from *db_path*'s sidecar, when it exists.

    Returns how many of *message_ids* had vectors. Loads no encoder. A sidecar that
    cannot be written keeps them (a search skips vectors of messages that are gone);
    that is logged.
    """
    sidecar = sidecar_path(db_path)
    if not message_ids or not sidecar.is_file():
        return 0
    ids = json.dumps([int(mid) for mid in message_ids])
    chosen = "message_id IN (SELECT value FROM json_each(?))"
    try:
        conn = sqlite3.connect(sidecar, timeout=5.0)
        try:
            if _foreign(conn) is not None:
                return 0  # another program's file: it holds no vectors of ours
            with conn:
                conn.execute("BEGIN IMMEDIATE")
                sql = f"SELECT count(DISTINCT message_id) FROM vectors WHERE {chosen}"
                gone = int(conn.execute(sql, (ids,)).fetchone()[0])
                if gone:
                    conn.execute(f"DELETE FROM vectors WHERE {chosen}", (ids,))
                    # Their vectors leave the flat file too; it is written again on next use.
                    vectorfile.erase(vectorfile.vector_file_path(sidecar), set(message_ids))
                    conn.execute("DELETE FROM meta WHERE key = 'file'")
                    conn.execute(
                        "UPDATE meta SET value = max(CAST(value AS INTEGER) - ?, 0) "
                        "WHERE key = 'embedded'",
                        (gone,),
                    )
                    conn.execute(_BUMP_GENERATION)  # other processes reload their copy
        finally:
            conn.close()
    except sqlite3.Error as exc:
        log.warning(
            "could not drop the vectors of %d deleted message(s) from %s (%s); searches "
            "skip them, and deleting the file drops them all",
            len(message_ids),
            sidecar,
            exc,
        )
        return 0
    return gone


def _meta(conn: sqlite3.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return str(row[0]) if row is not None else None


class _ForeignFile(Exception):
    """The sidecar's path holds another program's file."""


class SemanticIndex:
    """The vectors of one session database's messages, and the nearest ones to a question.

    Thread-safe. *encoder* defaults to the configured process-wide encoder
    (:func:`~hermes_core.embeddings.load_encoder`; one that is not installed raises
    :class:`~hermes_core.errors.ConfigError` naming what to install), loaded when
    first needed: counting what is embedded needs none, so a search of a history
    not embedded enough to use meaning never loads it. *user_id* (a scoped store)
    keeps the neighbours to that user's messages, as PostgreSQL's index does.
    """

    def __init__(
        self,
        db_path: str | os.PathLike[str],
        layout: Layout,
        encoder: Encoder | None = None,
        user_id: str | None = None,
    ) -> None:
        self.path = sidecar_path(db_path)
        self.db_path = Path(db_path)
        self.layout = layout
        self.user_id = user_id
        if encoder is None and missing_encoder_requirements():
            encoder = load_encoder()  # raises, saying what to install
        if not _has_simsimd():
            raise ConfigError(
                "Semantic search cannot score message vectors: simsimd is not installed. "
                f"Install it with: {STATIC_INSTALL_HINT}"
            )
        self._encoder = encoder
        self._model = encoder.name if encoder is not None else model_name()
        self._lock = threading.Lock()
        self._in_memory = False
        self._conn = self._open()
        self._loaded = _Loaded() if self._in_memory else _shared(self.path)
        self.file = None if self._in_memory else vectorfile.vector_file_path(self.path)
        """The vector file (``None`` where the vectors last for this process only)."""

    @property
    def model(self) -> str:
        """The name the vectors carry (their encoder's)."""
        return self._model

    @property
    def encoder(self) -> Encoder:
        """The encoder, loaded on first use."""
        if self._encoder is None:
            self._encoder = load_encoder()
        return self._encoder

    # -- the sidecar file ---------------------------------------------------------------
    def _open(self, rebuild: bool = True) -> sqlite3.Connection:
        """The sidecar (rebuilt once when damaged), or an in-memory one when it cannot be
        written."""
        try:
            created = not self.path.exists()
            conn = sqlite3.connect(self.path, timeout=5.0, check_same_thread=False)
            if created:  # vectors of private conversations: as private as state.db
                restrict_permissions(self.path)
            reason = None if created else _foreign(conn)
            if reason is not None:
                conn.close()
                raise _ForeignFile(reason)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.executescript(_SCHEMA)
            self._check_model(conn)
            return conn
        except _ForeignFile as exc:
            log.warning(
                "%s is not a file of hermes-memory's (%s), so it was left as it is; message "
                "vectors last for this process only. Move it aside to keep them.",
                self.path,
                exc,
            )
            return self._in_memory_sidecar()
        except sqlite3.DatabaseError as exc:
            damaged = "not a database" in str(exc).lower() or "malformed" in str(exc).lower()
            if damaged and rebuild:
                log.warning("%s is damaged (%s); rebuilding it", self.path, exc)
                for suffix in ("", "-wal", "-shm"):
                    Path(f"{self.path}{suffix}").unlink(missing_ok=True)
                return self._open(rebuild=False)
            log.warning(
                "cannot keep message vectors in %s (%s); they last for this process only",
                self.path,
                exc,
            )
            return self._in_memory_sidecar()

    def _in_memory_sidecar(self) -> sqlite3.Connection:
        self._in_memory = True
        conn = sqlite3.connect(":memory:", check_same_thread=False)
        conn.executescript(_SCHEMA)
        self._check_model(conn)
        return conn

    def _check_model(self, conn: sqlite3.Connection) -> None:
        """Vectors of another model are dropped (they are not comparable)."""
        model = self._model
        row = conn.execute("SELECT value FROM meta WHERE key = 'model'").fetchone()
        if row is not None and row[0] == model:
            return
        with conn:
            conn.execute("DELETE FROM vectors")
            conn.execute("DELETE FROM meta")
            conn.execute("INSERT INTO meta VALUES ('model', ?)", (model,))

    def close(self) -> None:
        """Close the sidecar (idempotent)."""
        with self._lock:
            self._conn.close()
            self._loaded = _Loaded()  # the shared rows go when no index holds them

    def _still_stored(self, ids: Sequence[int]) -> set[int]:
        """Which of *ids* the session database holds now.

        Read on a connection of its own, not the store's: the index's lock is held
        here, and a search holds the store's lock while it takes the index's.
        """
        if not ids:
            return set()
        try:
            conn = sqlite3.connect(f"{self.db_path.resolve().as_uri()}?mode=ro", uri=True)
            try:
                rows = conn.execute(
                    "SELECT id FROM messages WHERE id IN (SELECT value FROM json_each(?))",
                    (json.dumps(list(ids)),),
                ).fetchall()
            finally:
                conn.close()
        except sqlite3.Error as exc:  # cannot tell: keep them (searches skip vectors of the gone)
            log.debug("could not check which messages %s still holds: %s", self.db_path, exc)
            return set(ids)
        return {row[0] for row in rows}

    def _marks(self) -> tuple[int | None, int | None]:
        rows = dict(self._conn.execute("SELECT key, value FROM meta WHERE key IN ('low', 'high')"))
        low, high = rows.get("low"), rows.get("high")
        return (int(low) if low is not None else None, int(high) if high is not None else None)

    # -- embedding --------------------------------------------------------------------
    def _pending(
        self, read: Reader[list[tuple[Any, ...]]], after: int | None, before: int | None, n: int
    ) -> list[tuple[Any, ...]]:
        """The next *n* user/assistant messages after *after* (oldest first) or before
        *before* (newest first)."""
        if after is not None:
            side, order, bound = "m.id > ?", "m.id", after
        else:
            side, order, bound = "m.id < ?", "m.id DESC", before if before is not None else 0
        sql = (
            f"SELECT m.id, m.content, {self._name_column('m')} FROM messages AS m "
            f"WHERE {side} AND {self._embeddable('m')} ORDER BY {order} LIMIT ?"
        )
        return read(lambda conn: conn.execute(sql, (bound, n)).fetchall())

    def _embeddable(self, alias: str) -> str:
        """A WHERE fragment: the messages this index embeds (user and assistant text)."""
        return _embeddable(self.layout, alias)

    def _name_column(self, alias: str) -> str:
        """The speaker's name column, or NULL for a file without one."""
        return f"{alias}.name" if "name" in self.layout.message_columns else "NULL"

    def _store(self, rows: Sequence[tuple[Any, ...]], low: int, high: int, threads: int = 1) -> int:
        """Embed *rows* (id, content, name) and save them, widening the embedded id range to
        *low*..*high*. Rows another process embedded meanwhile are not written again."""
        pieces = embedded_pieces(rows)
        texts = [piece for *_, piece in pieces]
        vectors = self.encoder.encode(texts, threads=threads) if pieces else []
        import numpy as np

        with self._lock, self._conn:
            self._conn.execute("BEGIN IMMEDIATE")  # marks read and widened in one transaction
            now_low, now_high = self._marks()

            def fresh(mid: int) -> bool:
                return now_low is None or now_high is None or not now_low <= mid <= now_high

            # A message deleted while it was embedded (delete_conversation, which then
            # drops vectors under this same write lock) gets none.
            stored = self._still_stored([int(row[0]) for row in rows])

            def wanted(mid: int) -> bool:
                return fresh(mid) and mid in stored

            kept = [(piece, vector) for piece, vector in zip(pieces, vectors, strict=True)]
            kept = [(piece, vector) for piece, vector in kept if wanted(piece[0])]
            written = sum(1 for row in rows if wanted(int(row[0])))
            halves = np.asarray([vector for _, vector in kept], dtype=np.float16)
            self._conn.executemany(
                "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)",
                [
                    (mid, n, check, half.tobytes())
                    for ((mid, n, check, _), _), half in zip(kept, halves, strict=True)
                ],
            )
            self._conn.executemany(
                "INSERT OR REPLACE INTO meta VALUES (?, ?)",
                [
                    ("low", str(min(low, now_low) if now_low is not None else low)),
                    ("high", str(max(high, now_high) if now_high is not None else high)),
                ],
            )
            self._conn.execute(_BUMP_GENERATION)
            self._conn.execute(
                "INSERT INTO meta VALUES ('embedded', ?) ON CONFLICT(key) "
                "DO UPDATE SET value = CAST(value AS INTEGER) + excluded.value",
                (written,),
            )
            ids = np.array([piece[0] for piece, _ in kept], dtype=np.int64)
            checksums = np.array([piece[2] for piece, _ in kept], dtype=np.uint32)
            self._extend_file(ids, checksums, halves.reshape(len(kept), self.encoder.dims))
        return written

    # -- the vector file ----------------------------------------------------------------
    def _stamp(self) -> vectorfile.Stamp | None:
        return vectorfile.Stamp.from_json(_meta(self._conn, "file"))

    def _extend_file(self, ids: Any, checksums: Any, halves: Any) -> None:
        """Add the vectors just written (*halves*, float16) to the vector file, in the
        caller's write transaction; a file not as stamped is written again whole."""
        if self.file is None:
            return
        stamp = self._stamp()
        if stamp is not None and stamp.dims == self.encoder.dims:
            if len(ids) == 0:
                return
            grown = vectorfile.append(self.file, stamp, ids, checksums, halves.astype("<f4"))
            if grown is not None:
                self._conn.execute(
                    "UPDATE meta SET value = ? WHERE key = 'file'", (grown.to_json(),)
                )
                return
        self._write_file()

    def _arrays(self, rows: Sequence[tuple[int, int, bytes]]) -> tuple[Any, Any, Any]:
        """The sidecar's *rows* (message id, checksum, float16 vector) as arrays: ids,
        checksums and a float32 matrix."""
        import numpy as np

        ids = np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))
        checksums = np.fromiter((row[1] for row in rows), dtype=np.uint32, count=len(rows))
        halves = np.frombuffer(b"".join(row[2] for row in rows), dtype=np.float16)
        return ids, checksums, halves.reshape(len(rows), self.encoder.dims).astype(np.float32)

    def _in_memory_records(self, rows: Sequence[tuple[int, int, bytes]]) -> vectorfile.Mapped:
        """The sidecar's *rows* as records held in memory."""
        return vectorfile.from_rows(*self._arrays(rows), self.encoder.dims)

    def _write_file(self) -> tuple[object, vectorfile.Mapped]:
        """Write the vector file from the sidecar's rows, in the caller's write transaction,
        and stamp it: ``(stamp, records)``. Where it cannot be written the rows are held in
        memory, keyed by the sidecar's generation, and the stamp is dropped."""
        rows = self._conn.execute(_ROWS).fetchall()
        ids, checksums, matrix = self._arrays(rows)
        if self.file is not None:
            try:
                stamp = vectorfile.write(self.file, self.encoder.dims, ids, checksums, matrix)
            except OSError as exc:
                log.warning(
                    "cannot write message vectors to %s (%s); searches read them from %s",
                    self.file,
                    exc,
                    self.path,
                )
                self.file = None  # not tried again by this index
            else:
                self._conn.execute(
                    "INSERT OR REPLACE INTO meta VALUES ('file', ?)", (stamp.to_json(),)
                )
                mapped = vectorfile.map_file(self.file, stamp)
                if mapped is not None:
                    return stamp, mapped
        self._conn.execute("DELETE FROM meta WHERE key = 'file'")
        records = vectorfile.from_rows(ids, checksums, matrix, self.encoder.dims)
        return ("rows", self._generation()), records

    def _generation(self) -> int:
        row = self._conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
        return int(row[0]) if row else 0

    def catch_up(
        self,
        read: Reader[Any],
        budget: float | None = None,
        limit: int | None = None,
        progress: Callable[[int], None] | None = None,
        threads: int = 1,
    ) -> int:
        """Embed messages not embedded yet: new ones first, then older ones, newest first.

        Stops after *budget* seconds (checked between batches of
        :data:`BATCH`) or *limit* messages; returns how many were embedded.
        *progress* is called with the running count; the encoder uses *threads*
        BLAS threads (see :meth:`~hermes_core.embeddings.MiniLMEncoder.encode`; the static
        encoder uses none).
        """
        deadline = None if budget is None else time.monotonic() + budget
        done = 0
        with self._lock:
            low, high = self._marks()
        if high is None:
            newest = read(lambda conn: conn.execute("SELECT max(id) FROM messages").fetchone()[0])
            if newest is None:
                return 0
            low, high = int(newest) + 1, int(newest)
            with self._lock, self._conn:
                self._conn.executemany(
                    "INSERT OR REPLACE INTO meta VALUES (?, ?)",
                    [("low", str(low)), ("high", str(high))],
                )
        forward = True
        while limit is None or done < limit:
            if deadline is not None and time.monotonic() >= deadline:
                break
            step = BATCH if limit is None else min(BATCH, limit - done)
            with self._lock:  # another process may have moved them
                low, high = self._marks()
            assert low is not None and high is not None
            if forward:
                rows = self._pending(read, high, None, step)
                if not rows:
                    forward = False
                    continue
                done += self._store(rows, low, max(int(row[0]) for row in rows), threads)
            else:
                rows = self._pending(read, None, low, step)
                if not rows:
                    break
                done += self._store(rows, min(int(row[0]) for row in rows), high, threads)
            if progress is not None:
                progress(done)
        return done

    def missing(self, read: Reader[Any]) -> int:
        """How many user/assistant messages are not embedded yet."""
        with self._lock:
            low, high = self._marks()
        return _count_missing(read, self.layout, low, high)

    def embedded(self) -> int:
        """How many messages have vectors (one read of the sidecar, none of the database)."""
        with self._lock:
            row = self._conn.execute("SELECT value FROM meta WHERE key = 'embedded'").fetchone()
        return int(row[0]) if row else 0

    def counts(self, read: Reader[Any]) -> tuple[int, int]:
        """(embedded, not embedded yet) user/assistant messages."""
        return self.embedded(), self.missing(read)

    def coverage(self, read: Reader[Any]) -> float:
        """The share of user/assistant messages embedded (1.0 for none at all)."""
        embedded, missing = self.counts(read)
        return embedded / (embedded + missing) if embedded + missing else 1.0

    # -- searching ----------------------------------------------------------------------
    def _load(self) -> _Loaded:
        """The vectors in memory: the vector file mapped again when the sidecar's stamp or
        the file changed, written first when it is missing or not as stamped."""
        with self._lock:
            stamp, generation = self._stamp(), self._generation()
        loaded = self._loaded
        with loaded.lock:
            if loaded.fresh(stamp, generation, self.file):
                return loaded
            mapped = None
            if stamp is not None and self.file is not None:
                mapped = vectorfile.map_file(self.file, stamp)
            if mapped is not None:
                loaded.hold(mapped.stamp, mapped)
            else:
                loaded.hold(*self._rewrite())
            return loaded

    def _rewrite(self) -> tuple[object, vectorfile.Mapped]:
        """The vectors from the file another writer just stamped, else from the sidecar's
        rows, written to the file again (see :meth:`_write_file`)."""
        with self._lock, self._conn:
            if self.file is not None:
                try:
                    self._conn.execute("BEGIN IMMEDIATE")  # no writer appends meanwhile
                except sqlite3.OperationalError as exc:
                    if not is_busy(exc):
                        raise
                    # A writer holds the sidecar: read its rows now, write the file later.
                    rows = self._conn.execute(_ROWS).fetchall()
                    return ("rows", self._generation()), self._in_memory_records(rows)
                stamp = self._stamp()
                mapped = vectorfile.map_file(self.file, stamp) if stamp is not None else None
                if mapped is not None:
                    return mapped.stamp, mapped
                log.info("writing the message vectors of %s to %s", self.path, self.file)
            return self._write_file()

    def nearest(self, read: Reader[Any], text: str, k: int) -> list[int]:
        """The ids of the *k* messages nearest to *text* (by their nearest piece), best first.

        Vectors whose message is gone, or whose text changed since it was
        embedded, are skipped.
        """
        if k <= 0:
            return []
        query = self._query_vector(query_text(text))
        loaded = self._load()
        want = k + SPARE
        while True:  # read a few more than k; more only when too many are gone or changed
            found = loaded.nearest(query, want)
            assert loaded.records is not None
            valid = self._still_valid(read, found, loaded.records)
            if len(valid) >= k or len(found) < want:
                return valid[:k]
            want *= 2

    def _query_vector(self, text: str) -> Sequence[float]:
        """*text*'s vector: in pure Python for the shipped static encoder (no numpy imported,
        the same bits as :meth:`~hermes_core.embeddings.StaticEncoder.encode`), else by the
        encoder."""
        encoder = self._encoder
        directory = getattr(encoder, "directory", None) if encoder is not None else STATIC_DIR
        if isinstance(directory, Path) and self._model == _static_model(directory):
            return StaticQuery.load(directory).vector(text)
        return list(self.encoder.encode([text])[0])

    def _still_valid(
        self, read: Reader[Any], found: list[tuple[int, int]], records: vectorfile.Mapped
    ) -> list[int]:
        """The ids of *found* (id, row) whose message still exists with the text that was
        embedded (the row's checksum) and, scoped, is this user's; a named message of little text
        is left out (:func:`~hermes_core.sessions.neighbours.near_by_content`)."""
        if not found:
            return []
        sql = (
            f"SELECT m.id, m.content, {self._name_column('m')} FROM messages AS m "
            f"WHERE m.id IN (SELECT value FROM json_each(?))"
        )
        params: tuple[Any, ...] = (json.dumps([mid for mid, _ in found]),)
        if self.user_id is not None:
            sql += " AND m.session_id IN (SELECT id FROM sessions WHERE user_id = ?)"
            params = (*params, self.user_id)
        current = {
            mid: checksum(source_text(content, speaker))
            for mid, content, speaker in read(lambda conn: conn.execute(sql, params).fetchall())
            if near_by_content(content, speaker)
        }
        return [mid for mid, row in found if current.get(mid) == records.tail(row)[1]]
