"""Semantic recall for the PostgreSQL session store: message vectors in ``message_vectors``.

The server needs no extension (no pgvector): vectors are rows every machine writes
(schema 5, :mod:`~hermes_core.sessions.pgschema`), and similarity is computed in the
client with numpy, as for ``state.db`` (:mod:`~hermes_core.sessions.semantic`), from
the same pieces, checksums and neighbour picking (:mod:`~hermes_core.sessions.neighbours`):

* a row per piece of a message: the message id (``ON DELETE CASCADE``: deleting or
  pruning a conversation removes its vectors), the encoder (a row of
  ``message_vector_encoders``: its name and dimensions; another encoder's vectors are
  kept apart, never compared), the checksum of the text embedded and the vector
  (float16, little-endian: what the sidecar stores, so both backends score alike);
* a process reads an encoder's vectors once and then only the rows added since, by
  ``seq``: every write of vectors first updates its encoder's row (the embedded id
  range), which locks it until commit, so the writes of one encoder commit in ``seq``
  order and a reader that has seen ``seq`` n has seen every row below it. The
  encoder row's ``nonce`` (new whenever the row is) tells a process that the vectors
  it holds belong to a table emptied or restored since: it reads them all again;
* two processes embedding the same messages write each piece once (``ON CONFLICT DO
  NOTHING``); a message deleted meanwhile gets none (its row is locked, ``FOR KEY
  SHARE``, before its vectors are written).

What is embedded, and in which order, is SQLite's: user and assistant messages with text,
the newest first, a bounded amount per turn or all with ``sessions index``; the embedded
range of ids is kept (``low``..``high``) so counting what is left reads two id ranges.
Unlike one SQLite file, many writers commit out of id order: a message whose transaction
took its id before an indexer read and committed after sits inside the range unembedded,
so the newest :data:`RECHECK` ids of the range are checked for messages without vectors
on every catch-up and count, and a bulk import, whose transaction may hold thousands of
ids for long, moves the range's top below its ids once it committed (:func:`reopen_range`);
messages above the top that have vectors already are skipped, not embedded again.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from hermes_core.embeddings import (
    Encoder,
    load_encoder,
    missing_encoder_requirements,
    model_name,
)
from hermes_core.sessions.neighbours import (
    BATCH,
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
from hermes_core.sessions.pgvectorcache import Cached, VectorCache
from hermes_core.sessions.vectorfile import Stamp

__all__ = ["RECHECK", "PgSemanticIndex", "count_not_embedded", "reopen_range"]

log = logging.getLogger(__name__)

Reader = Callable[[Callable[[Any], Any]], Any]
"""Runs a function on a connection of the store, in a transaction (its ``_read`` or
``_write``)."""

BULK_BATCH = 256
"""Messages embedded per step without a time budget (``sessions index``): each step is three
round trips to the server, so bigger steps than a budgeted catch-up's (:data:`BATCH`)."""
CACHE_AFTER = 1_000
"""Rows held in memory after which they are appended to the local copy (so a process
holds at most about this many, 1.5 MB, beside the mapped file)."""
RECHECK = 2_000
"""The newest ids of the embedded range checked for messages committed after an indexer
read past them (see the module docstring)."""

EMBEDDABLE = "m.role IN ('user', 'assistant') AND length(trim(m.content)) > 0"
"""The messages semantic search embeds (as ``state.db``'s: user and assistant text)."""

_NO_VECTOR = (
    "NOT EXISTS (SELECT 1 FROM message_vectors AS v WHERE v.message_id = m.id "
    "AND v.encoder = %s AND v.piece = 0)"
)


class Encoding(NamedTuple):
    """An encoder's row of ``message_vector_encoders``."""

    id: int
    nonce: str
    low: int | None
    high: int | None


def _encoding(conn: Any, name: str) -> Encoding | None:
    row = conn.execute(
        "SELECT id, nonce, low, high FROM message_vector_encoders WHERE name = %s", (name,)
    ).fetchone()
    return None if row is None else Encoding(int(row[0]), str(row[1]), row[2], row[3])


def _count_missing(conn: Any, encoding: Encoding | None) -> int:
    """Embeddable messages without vectors of *encoding*: outside its embedded id range,
    and those of the range's newest :data:`RECHECK` ids that have none."""
    if encoding is None or encoding.low is None or encoding.high is None:
        return int(
            conn.execute(f"SELECT count(*) FROM messages AS m WHERE {EMBEDDABLE}").fetchone()[0]
        )
    row = conn.execute(
        f"SELECT (SELECT count(*) FROM messages AS m WHERE m.id > %s AND {EMBEDDABLE} "
        f"AND {_NO_VECTOR}) "
        f"+ (SELECT count(*) FROM messages AS m WHERE m.id < %s AND {EMBEDDABLE}) "
        f"+ (SELECT count(*) FROM messages AS m WHERE m.id > %s AND m.id <= %s "
        f"AND m.id >= %s AND {EMBEDDABLE} AND {_NO_VECTOR})",
        (
            encoding.high,
            encoding.id,
            encoding.low,
            encoding.high - RECHECK,
            encoding.high,
            encoding.low,
            encoding.id,
        ),
    ).fetchone()
    return int(row[0])


def reopen_range(conn: Any, below: int) -> None:
    """Mark every id above *below* as not embedded yet, for every encoder: what a bulk
    import calls once it committed, since its many rows may have committed after an
    indexer read past their ids (vectors already written there are kept, not redone)."""
    conn.execute("UPDATE message_vector_encoders SET high = %s WHERE high > %s", (below, below))


def count_not_embedded(read: Reader) -> int:
    """How many messages have no vectors of the configured encoder yet, without loading it
    or writing anything."""
    name = model_name()
    return int(read(lambda conn: _count_missing(conn, _encoding(conn, name))))


class _Loaded(Held):
    """One encoder's vectors of one database, shared by the process's indexes of it: the
    local copy mapped (:attr:`file`, shared with every process of the machine that maps it)
    and in memory only the rows read after it (the tail), grown by the rows added since
    (``seq`` above :attr:`seen`). Without a local copy the tail holds every row."""

    def __init__(self) -> None:
        super().__init__()
        self.lock = threading.Lock()
        self.encoding: tuple[int, str] | None = None  # (encoder row id, nonce) held
        self.seen = 0  # the highest seq held
        self.rows = 0  # rows held: the file's and the tail's
        self.cached = False  # whether the rows first held came from a local copy
        self.messages = 0  # distinct messages held, for telling when to read all again
        self.read_rows = 0  # vector rows this process read from the server
        self.file: Cached | None = None  # the local copy mapped
        self.rewrite = False  # write the local copy anew (not append to it)
        self.retry = 0  # tail rows at which keeping the copy is tried again after a failure
        self.parts: tuple[Any, ...] = ()  # the matrices searched, in row order
        self.tail = 0  # rows in memory (the arrays' capacity may be larger)
        self._seqs: Any = None
        self._ids: Any = None
        self._checksums: Any = None
        self._matrix: Any = None

    def reset(self, encoding: tuple[int, str] | None, dims: int) -> None:
        import numpy as np

        self.encoding, self.seen, self.messages, self.tail = encoding, 0, 0, 0
        self.cached, self.file, self.rewrite, self.retry = False, None, False, 0
        self._seqs = np.zeros(0, np.int64)
        self._ids = np.zeros(0, np.int64)
        self._checksums = np.zeros(0, np.uint32)
        self._matrix = np.zeros((0, dims), np.float32)
        self._publish()

    def held_tail(self) -> tuple[Any, Any, Any]:
        """The rows in memory: ids, checksums, matrix."""
        t = self.tail
        return self._ids[:t], self._checksums[:t], self._matrix[:t]

    def everything(self) -> tuple[Any, Any, Any]:
        """Every row held, the file's then the tail's (a copy when both have rows)."""
        import numpy as np

        tail = self.held_tail()
        if self.file is None or not len(self.file.ids):
            return tail
        if not self.tail:
            return self.file.ids, self.file.checksums, self.file.matrix
        mapped = (self.file.ids, self.file.checksums, self.file.matrix)
        ids, checksums, matrix = (np.concatenate(pair) for pair in zip(mapped, tail, strict=True))
        return ids, checksums, matrix

    def use_file(self, cached: Cached) -> None:
        """Search the mapped *cached* from now on: the tail keeps only the rows after it."""
        import numpy as np

        drop = int(np.searchsorted(self._seqs[: self.tail], cached.seen, side="right"))
        kept, size = self.tail - drop, max(self.tail - drop, 1_024)
        arrays = []  # new ones: a search may still be reading the old (and memory goes back)
        for array in (self._seqs, self._ids, self._checksums, self._matrix):
            fresh = np.zeros((size, *array.shape[1:]), array.dtype)
            fresh[:kept] = array[drop : self.tail]
            arrays.append(fresh)
        self._seqs, self._ids, self._checksums, self._matrix = arrays
        self.tail = kept
        self.file = cached
        self.seen = max(self.seen, cached.seen)
        self._publish()
        self.messages = len(np.unique(self.ids))

    def reserve(self, rows: int, dims: int) -> None:
        """Make room for *rows* more rows in memory."""
        import numpy as np

        need = self.tail + rows
        if need > len(self._ids):
            self._seqs = np.resize(self._seqs, need)
            self._ids = np.resize(self._ids, need)
            self._checksums = np.resize(self._checksums, need)
            matrix = np.zeros((need, dims), np.float32)
            matrix[: self.tail] = self._matrix[: self.tail]
            self._matrix = matrix

    def extend(self, rows: Sequence[tuple[Any, ...]], dims: int) -> None:
        """Add *rows* (seq, message id, checksum, float16 vector, piece) after those held."""
        import numpy as np

        rows = [row for row in rows if row[0] > self.seen]  # none twice, a read retried
        self.read_rows += len(rows)
        if rows:
            self.seen = int(rows[-1][0])
        rows = [row for row in rows if row[3]]  # a message without text has an empty row
        if not rows:
            return
        n = len(rows)
        need = self.tail + n
        if need > len(self._ids):  # grow by doubling: a search adds a few rows at a time
            self.reserve(max(need, 2 * len(self._ids), 1_024) - self.tail, dims)
        at = slice(self.tail, need)
        self._seqs[at] = np.fromiter((row[0] for row in rows), np.int64, n)
        self._ids[at] = np.fromiter((row[1] for row in rows), np.int64, n)
        self._checksums[at] = np.fromiter((row[2] & 0xFFFFFFFF for row in rows), np.uint32, n)
        halves = np.frombuffer(b"".join(bytes(row[3]) for row in rows), dtype="<f2")
        self._matrix[at] = halves.reshape(n, dims)
        self.tail = need
        self.messages += sum(1 for row in rows if row[4] == 0)
        self._publish()

    def _publish(self) -> None:
        """What a search reads: the file's rows then the tail's (their ids and checksums
        side by side; the matrices apart, so the file's is never copied)."""
        import numpy as np

        tail = self.held_tail()
        parts = (
            [tail]
            if self.file is None
            else [(self.file.ids, self.file.checksums, self.file.matrix), tail]
        )
        parts = [part for part in parts if len(part[0])] or [tail]
        if len(parts) == 1:
            ids, checksums = parts[0][0], parts[0][1]
        else:
            ids = np.concatenate([part[0] for part in parts])
            checksums = np.concatenate([part[1] for part in parts])
        self.set(ids, checksums, parts[0][2] if len(parts) == 1 else None)
        self.parts = tuple(part[2] for part in parts)
        self.rows = len(ids)


def _newer(loaded: _Loaded, found: Cached, top: int) -> bool:
    """Whether the local copy *found* holds more than the one *loaded* maps, and no row
    above *top* (the database's newest): a copy of a table restored to fewer rows is not."""
    if found.seen > top:
        return False
    if loaded.file is None:
        return True
    return found.stamp != loaded.file.stamp and found.seen >= loaded.file.seen


def _stamp(loaded: _Loaded) -> Stamp | None:
    """The stamp of the copy *loaded* maps (its records were checked when mapped)."""
    return None if loaded.file is None else loaded.file.stamp


def _similarity(parts: Sequence[Any], newest: Any, query: Any) -> Any:
    """Each held row's similarity to *query*, part by part (only the newest rows', when
    *newest* names them), as :func:`~hermes_core.sessions.neighbours.scores` of one matrix."""
    import numpy as np

    out, start = [], 0
    for part in parts:
        held = Held()
        held.matrix = part
        if newest is not None:
            low, high = np.searchsorted(newest, [start, start + len(part)])
            held.newest = newest[low:high] - start
        out.append(scores(held, query))
        start += len(part)
    return out[0] if len(out) == 1 else np.concatenate(out)


_SHARED: weakref.WeakValueDictionary[tuple[str, str], _Loaded] = weakref.WeakValueDictionary()
_SHARED_LOCK = threading.Lock()


def _shared(url: str, name: str) -> _Loaded:
    with _SHARED_LOCK:
        loaded = _SHARED.get((url, name))
        if loaded is None:
            loaded = _Loaded()
            _SHARED[(url, name)] = loaded
        return loaded


_READ_ROWS = (
    "SELECT seq, message_id, checksum, vector, piece FROM message_vectors "
    "WHERE encoder = %s AND seq > %s ORDER BY seq LIMIT %s"
)
PAGE = 10_000
"""Vector rows read from the server per statement."""


class PgSemanticIndex:
    """The vectors of one PostgreSQL session database's messages, and the nearest ones to a
    question; the interface of :class:`~hermes_core.sessions.semantic.SemanticIndex`.

    *url* keys the process-wide copy of the vectors; *read* and *write* run a function in a
    read or write transaction of the store (the methods that take a *read* of their own
    read through it: a search's transaction). *user_id* (a scoped
    store) keeps the neighbours to that user's messages; *cache* is the local copy of the
    vectors a new process starts from (none: every vector is read from the server).
    Thread-safe.
    """

    def __init__(
        self,
        url: str,
        read: Reader,
        write: Reader,
        path: str,
        user_id: str | None = None,
        encoder: Encoder | None = None,
        cache: VectorCache | None = None,
    ) -> None:
        if encoder is None and missing_encoder_requirements():
            encoder = load_encoder()  # raises, saying what to install
        self._encoder = encoder
        self._model = encoder.name if encoder is not None else model_name()
        self._read = read
        self._write = write
        self.path = f"{path} (table message_vectors)"
        """Where the vectors are, as messages name it."""
        self.user_id = user_id
        self._loaded = _shared(url, self._model)
        self._embedded: int | None = None
        self._cache = cache

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

    def close(self) -> None:
        """Drop this index's hold on the shared vectors (they go when no index holds them)."""
        self._loaded = _Loaded()

    # -- the encoder's row --------------------------------------------------------------
    def _encoding(self, conn: Any, create: bool = False) -> Encoding | None:
        found = _encoding(conn, self._model)
        if found is not None or not create:
            return found
        conn.execute(
            "INSERT INTO message_vector_encoders(name, dims, nonce) VALUES (%s, %s, %s) "
            "ON CONFLICT (name) DO NOTHING",
            (self._model, self.encoder.dims, secrets.token_hex(8)),
        )
        return _encoding(conn, self._model)

    # -- embedding ----------------------------------------------------------------------
    def _pending(self, read: Reader, where: str, params: Sequence[Any], order: str, n: int) -> Any:
        sql = (
            f"SELECT m.id, m.content, m.name FROM messages AS m WHERE {where} AND {EMBEDDABLE} "
            f"ORDER BY m.id {order} LIMIT %s"
        )
        return read(lambda conn: conn.execute(sql, (*params, n)).fetchall())

    def _store(
        self, rows: Sequence[tuple[Any, ...]], low: int | None, high: int | None, threads: int
    ) -> int:
        """Embed *rows* (id, content, name) and write their vectors, widening the embedded
        range to *low* / *high*; how many messages got vectors (not those another process
        wrote first, nor those deleted meanwhile)."""
        import numpy as np

        pieces = embedded_pieces(rows)
        vectors = self.encoder.encode([p[3] for p in pieces], threads=threads) if pieces else []
        halves = np.asarray(vectors, dtype="<f2").reshape(len(pieces), self.encoder.dims)
        by_message: dict[int, list[tuple[int, int, bytes]]] = {int(row[0]): [] for row in rows}
        for (mid, n, check, _), half in zip(pieces, halves, strict=True):
            by_message[mid].append((n, check, half.tobytes()))
        for row in rows:  # a message without text to embed counts as embedded: an empty row
            if not by_message[int(row[0])]:
                by_message[int(row[0])].append((0, checksum(source_text(row[1], row[2])), b""))
        signed = [
            (mid, n, check - (1 << 32) if check >= 1 << 31 else check, vector)
            for mid, parts in by_message.items()
            for n, check, vector in parts
        ]

        def write(conn: Any) -> int:
            encoding = self._encoding(conn, create=True)
            assert encoding is not None
            # The encoder's row first: locked until commit, so its vector writes commit in
            # seq order (a reader past seq n has seen every row below it).
            conn.execute(
                "UPDATE message_vector_encoders SET low = LEAST(low, %s), "
                "high = GREATEST(high, %s) WHERE id = %s",
                (low, high, encoding.id),
            )
            alive = {
                row[0]
                for row in conn.execute(
                    "SELECT id FROM messages WHERE id = ANY(%s) FOR KEY SHARE", (list(by_message),)
                )
            }
            kept = [row for row in signed if row[0] in alive]
            if not kept:
                return 0
            with conn.cursor() as cur:
                cur.execute(
                    "INSERT INTO message_vectors(message_id, encoder, piece, checksum, vector) "
                    "SELECT u.m, %s, u.p, u.c, u.v FROM unnest(%s::bigint[], %s::smallint[], "
                    "%s::integer[], %s::bytea[]) AS u(m, p, c, v) "
                    "ON CONFLICT (message_id, encoder, piece) DO NOTHING RETURNING piece",
                    (
                        encoding.id,
                        [row[0] for row in kept],
                        [row[1] for row in kept],
                        [row[2] for row in kept],
                        [row[3] for row in kept],
                    ),
                )
                return sum(1 for (piece,) in cur.fetchall() if piece == 0)

        written = int(self._write(write))
        self._embedded = None
        return written

    def _marks(self) -> tuple[int | None, int | None]:
        """The embedded id range, read now (not in the snapshot the messages are read in)."""
        encoding = self._read(lambda conn: self._encoding(conn))
        return (None, None) if encoding is None else (encoding.low, encoding.high)

    def catch_up(
        self,
        read: Reader,
        budget: float | None = None,
        limit: int | None = None,
        progress: Callable[[int], None] | None = None,
        threads: int = 1,
    ) -> int:
        """Embed messages not embedded yet: new ones first, then those committed late inside
        the embedded range, then older ones, newest first (as
        :meth:`~hermes_core.sessions.semantic.SemanticIndex.catch_up`; :data:`BATCH` at a time
        within a *budget*, else :data:`BULK_BATCH`)."""
        deadline = None if budget is None else time.monotonic() + budget
        done = 0
        low, high = self._marks()
        if high is None:
            newest = read(lambda conn: conn.execute("SELECT max(id) FROM messages").fetchone()[0])
            if newest is None:
                return 0

            def start(conn: Any) -> None:
                encoding = self._encoding(conn, create=True)
                assert encoding is not None
                conn.execute(
                    "UPDATE message_vector_encoders SET low = %s, high = %s "
                    "WHERE id = %s AND high IS NULL",
                    (int(newest) + 1, int(newest), encoding.id),
                )

            self._write(start)
        phase = "new"
        encoder_id = None
        while limit is None or done < limit:
            if deadline is not None and time.monotonic() >= deadline:
                break
            size = BATCH if budget is not None else BULK_BATCH
            step = size if limit is None else min(size, limit - done)
            low, high = self._marks()  # another process may have moved them
            assert low is not None and high is not None
            if phase == "new":
                if encoder_id is None:
                    encoding = self._read(lambda conn: self._encoding(conn))
                    assert encoding is not None
                    encoder_id = encoding.id
                where = f"m.id > %s AND {_NO_VECTOR}"
                rows = self._pending(read, where, (high, encoder_id), "", step)
                if not rows:
                    phase = "late"
                    continue
                done += self._store(rows, None, max(int(row[0]) for row in rows), threads)
            elif phase == "late":
                rows = self._pending(
                    read,
                    f"m.id > %s AND m.id <= %s AND m.id >= %s AND {_NO_VECTOR}",
                    (high - RECHECK, high, low, encoder_id),
                    "DESC",
                    step,
                )
                if not rows:
                    phase = "old"
                    continue
                done += self._store(rows, None, None, threads)
            else:
                rows = self._pending(read, "m.id < %s", (low,), "DESC", step)
                if not rows:
                    break
                done += self._store(rows, min(int(row[0]) for row in rows), None, threads)
            if progress is not None:
                progress(done)
        return done

    # -- counting -------------------------------------------------------------------------
    def missing(self, read: Reader) -> int:
        """How many user/assistant messages are not embedded yet."""
        return int(read(lambda conn: _count_missing(conn, self._encoding(conn))))

    def _embedded_in(self, conn: Any, encoding: Encoding | None) -> int:
        if encoding is None:
            return 0
        row = conn.execute(
            "SELECT count(*) FROM message_vectors WHERE encoder = %s AND piece = 0",
            (encoding.id,),
        ).fetchone()
        self._embedded = int(row[0])
        return self._embedded

    def embedded(self) -> int:
        """How many messages have vectors (one count of the table's first pieces)."""
        return int(self._read(lambda conn: self._embedded_in(conn, self._encoding(conn))))

    def counts(self, read: Reader) -> tuple[int, int]:
        """(embedded, not embedded yet) user/assistant messages, in one transaction."""

        def count(conn: Any) -> tuple[int, int]:
            encoding = self._encoding(conn)
            return self._embedded_in(conn, encoding), _count_missing(conn, encoding)

        embedded, missing = read(count)
        return int(embedded), int(missing)

    def coverage(self, read: Reader) -> float:
        """The share of user/assistant messages embedded (1.0 for none at all)."""
        embedded, missing = self.counts(read)
        return embedded / (embedded + missing) if embedded + missing else 1.0

    # -- searching -------------------------------------------------------------------------
    def refresh(self, read: Reader) -> None:
        """Bring the vectors held up to date: the rows added since they were read, or all of
        them when the table was emptied or restored since (another ``nonce``, or fewer
        rows), or more than a tenth of the messages held are gone.

        With a local copy (:mod:`~hermes_core.sessions.pgvectorcache`) the rows come from
        it as far as the database agrees, mapped, not read: a copy another process of the
        machine extended is searched from then on; the rows read from the server are
        appended to it once there are :data:`CACHE_AFTER` (or written whole, the first
        time), so a process holds only those in memory.
        """
        loaded = self._loaded
        dims = self.encoder.dims
        cache = self._cache
        with loaded.lock:

            def fetch(conn: Any) -> tuple[tuple[int, str] | None, int]:
                encoding = self._encoding(conn)
                if encoding is None:
                    loaded.reset(None, dims)
                    return None, 0
                key = (encoding.id, encoding.nonce)
                top = conn.execute(
                    "SELECT COALESCE(max(seq), 0) FROM message_vectors WHERE encoder = %s",
                    (encoding.id,),
                ).fetchone()[0]
                stale = loaded.ids is None or loaded.encoding != key or top < loaded.seen
                gone = (
                    not stale
                    and self._embedded is not None
                    and loaded.messages > 1.1 * self._embedded + 100
                )
                if stale or gone:
                    loaded.reset(key, dims)
                    loaded.rewrite = gone  # the copy holds them too: read all, write anew
                if cache is not None and not loaded.rewrite and (stale or cache.changed()):
                    found = cache.load(key, _stamp(loaded))
                    if found is not None and _newer(loaded, found, top):
                        loaded.use_file(found)
                        loaded.cached = loaded.cached or stale
                if not loaded.seen:  # every row: room for them at once, not by doubling
                    count = conn.execute(
                        "SELECT count(*) FROM message_vectors WHERE encoder = %s AND seq > %s",
                        (encoding.id, loaded.seen),
                    ).fetchone()[0]
                    loaded.reserve(int(count), dims)
                while True:  # a page at a time: never every row as Python objects at once
                    rows = conn.execute(_READ_ROWS, (encoding.id, loaded.seen, PAGE)).fetchall()
                    loaded.extend(rows, dims)
                    if len(rows) < PAGE:
                        return key, top

            key, top = read(fetch)
            if key is not None and cache is not None:
                self._keep(cache, key, top)

    def _keep(self, cache: VectorCache, key: tuple[int, str], top: int) -> None:
        """Move the rows held in memory into the local copy, when there are enough: after
        the rows another process added to it meanwhile, appended, or the file written anew
        (the first time, or when it is not what this process mapped)."""
        loaded = self._loaded
        least = 0 if loaded.rewrite else 1 if loaded.file is None else CACHE_AFTER
        if loaded.tail < max(least, loaded.retry):
            return
        try:
            with cache.locked():
                current = loaded.file
                if loaded.rewrite:
                    current = None
                elif current is None or cache.changed():  # else what this process mapped
                    current = cache.load_locked(key, _stamp(loaded))
                if current is not None and current.seen > max(top, loaded.seen):
                    return  # written since this search's snapshot: taken up by the next
                if current is not None and _newer(loaded, current, max(top, loaded.seen)):
                    loaded.use_file(current)
                ids, checksums, matrix = loaded.held_tail()
                if not len(ids) and not loaded.rewrite:
                    return
                mapped = loaded.file
                if current is not None and mapped is not None and current.stamp == mapped.stamp:
                    written = cache.append(mapped, loaded.seen, ids, checksums, matrix)
                else:
                    written = cache.write(key, loaded.seen, *loaded.everything())
                if written is None:
                    raise OSError("the local copy changed while it was written")
        except OSError as exc:
            log.info("cannot keep a local copy of the message vectors in %s (%s)", cache.path, exc)
            loaded.retry = loaded.tail + CACHE_AFTER
            return
        loaded.use_file(written)
        loaded.rewrite, loaded.retry = False, 0

    def nearest(self, read: Reader, text: str, k: int) -> list[int]:
        """The ids of the *k* messages nearest to *text* (by their nearest piece), best first,
        among the vectors held (see :meth:`refresh`).

        Vectors whose message is gone, whose text changed since it was embedded, or (a
        scoped index) of another user's message are skipped.
        """
        import numpy as np

        if k <= 0:
            return []
        loaded = self._loaded
        if loaded.ids is None:
            self.refresh(read)
        query = self.encoder.encode([query_text(text)])[0]
        with loaded.lock:
            ids, checksums, parts, newest = (
                loaded.ids,
                loaded.checksums,
                loaded.parts,
                loaded.newest,
            )
        held = Held()
        held.ids, held.checksums, held.newest = ids, checksums, newest
        similarity = _similarity(parts, newest, query.astype(np.float32))
        want = k + SPARE
        while True:  # read a few more than k; more only when too many are gone or changed
            found = best(held, similarity, want)
            valid = self._still_valid(read, found, checksums)
            if len(valid) >= k or len(found) < want:
                return valid[:k]
            want *= 2

    def _still_valid(self, read: Reader, found: list[tuple[int, int]], checksums: Any) -> list[int]:
        """The ids of *found* (id, row) whose message still exists with the text that was
        embedded (and, scoped, is this user's); a named message of little text is left out
        (:func:`~hermes_core.sessions.neighbours.near_by_content`)."""
        if not found:
            return []
        sql = "SELECT m.id, m.content, m.name FROM messages AS m WHERE m.id = ANY(%s)"
        params: list[Any] = [[mid for mid, _ in found]]
        if self.user_id is not None:
            sql += " AND m.session_id IN (SELECT id FROM sessions WHERE user_id = %s)"
            params.append(self.user_id)
        current = {
            mid: checksum(source_text(content, speaker))
            for mid, content, speaker in read(lambda conn: conn.execute(sql, params).fetchall())
            if near_by_content(content, speaker)
        }
        return [mid for mid, row in found if current.get(mid) == int(checksums[row])]
