"""What both stores' semantic indexes share: what of a message is embedded, and the nearest
vectors to a question among those held in memory.

:class:`~hermes_core.sessions.semantic.SemanticIndex` (``state.db``'s sidecar) and
:class:`~hermes_core.sessions.pgsemantic.PgSemanticIndex` (PostgreSQL's
``message_vectors``) cut a message into the same pieces, checksum the same text and
pick neighbours from their matrix the same way, so both backends find the same
messages by meaning. numpy is imported by the functions that need it.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from typing import Any

__all__ = [
    "BATCH",
    "CHUNK_CHARS",
    "MAX_CHUNKS",
    "MAX_VECTORS",
    "NAMED_MIN_CHARS",
    "SPARE",
    "Held",
    "best",
    "best_messages",
    "checksum",
    "embedded_pieces",
    "encodable",
    "near_by_content",
    "pieces",
    "query_text",
    "scores",
    "source_text",
]

CHUNK_CHARS = 1_000
"""A message is embedded in pieces of about this many characters (the model reads 256
tokens, roughly 1,000 characters of English)."""
MAX_CHUNKS = 2
"""Pieces embedded per message: a long answer's first 2,000 characters (the encoder reads
about 1,500-3,000 tokens a second on two cores, so every piece counts)."""
BATCH = 16
"""Messages embedded per step; a catch-up's time budget is checked between steps."""
MAX_VECTORS = 300_000
"""Vectors searched at most (the newest)."""
_BLOCK = 16_384
"""Rows gathered and multiplied at once when only the newest :data:`MAX_VECTORS` are read."""
SPARE = 32
"""Neighbours read beyond the number asked for, in case some are gone or changed."""


def pieces(text: str) -> list[str]:
    """*text* cut into at most :data:`MAX_CHUNKS` pieces of about :data:`CHUNK_CHARS`,
    at a sentence end or a space where one is near."""
    text = " ".join(text.split())
    out: list[str] = []
    while text and len(out) < MAX_CHUNKS:
        if len(text) <= CHUNK_CHARS:
            out.append(text)
            break
        cut = max(text.rfind(". ", CHUNK_CHARS // 2, CHUNK_CHARS) + 1, 0)
        if cut <= 0:
            cut = text.rfind(" ", CHUNK_CHARS // 2, CHUNK_CHARS)
        if cut <= 0:
            cut = CHUNK_CHARS
        out.append(text[:cut].strip())
        text = text[cut:].strip()
    return [piece for piece in out if piece]


def source_text(content: Any, name: Any) -> str:
    """What is embedded for a message: its text, after its speaker's name when stored."""
    text = content if isinstance(content, str) else ""
    if isinstance(name, str) and name.strip() and text.strip():
        return f"{name.strip()}: {text}"
    return text


NAMED_MIN_CHARS = 20
"""A message with a speaker's name and less text than this is no semantic neighbour: its vector
is mostly the name embedded before it (``Nicolas: Maybe``), so it is near any question naming
that person, whatever the question asks (issue 29: "semantic search follows the named
person"). On REALTALK's dev half (all turns named) leaving them out turned session R@5 from
+6 -3 questions against full text to +7 -1 and turn R@5 from +15 -4 to +16 -4
(``bench/calibrate_semantic.py``); 15 characters kept a loss, 25 and more lost session R@1.
On the test half, read once after choosing: session R@5 +1 question, turn R@5 -1."""


def near_by_content(content: Any, name: Any) -> bool:
    """Whether a message may be found by meaning: unnamed, or named with at least
    :data:`NAMED_MIN_CHARS` characters of text (see there)."""
    if not (isinstance(name, str) and name.strip()):
        return True
    return isinstance(content, str) and len(content.strip()) >= NAMED_MIN_CHARS


def encodable(text: str) -> str:
    """*text* with anything UTF-8 cannot carry (lone surrogates) replaced."""
    return text.encode("utf-8", "replace").decode("utf-8")


def checksum(text: str) -> int:
    """The CRC-32 of *text* as embedded: a vector whose message now says otherwise is skipped."""
    return zlib.crc32(text.encode("utf-8", "surrogatepass"))


def embedded_pieces(rows: Any) -> list[tuple[int, int, int, str]]:
    """``(message id, piece number, checksum, text)`` of each piece of *rows* (id, content,
    speaker name)."""
    out: list[tuple[int, int, int, str]] = []
    for mid, content, name in rows:
        text = source_text(content, name)
        check = checksum(text)
        out += [(int(mid), n, check, piece) for n, piece in enumerate(pieces(encodable(text)))]
    return out


def query_text(text: str) -> str:
    """What of a question is encoded: as much as a message's pieces hold."""
    return encodable(text)[: CHUNK_CHARS * MAX_CHUNKS]


class Held:
    """Vectors in memory: ``ids`` (int64 per row), ``checksums`` (uint32), ``matrix`` (unit
    vectors, float32, one row per piece) and ``newest`` (the rows of the newest
    :data:`MAX_VECTORS` when there are more, else ``None``)."""

    def __init__(self) -> None:
        self.ids: Any = None
        self.checksums: Any = None
        self.matrix: Any = None
        self.newest: Any = None

    def set(self, ids: Any, checksums: Any, matrix: Any) -> None:
        """Hold these arrays (and pick the newest rows when there are too many)."""
        import numpy as np

        self.ids, self.checksums, self.matrix = ids, checksums, matrix
        self.newest = None
        if len(ids) > MAX_VECTORS:
            self.newest = np.sort(np.argpartition(-ids, MAX_VECTORS - 1)[:MAX_VECTORS])


def scores(held: Held, query: Any) -> Any:
    """Each row's similarity to *query* (only the newest :data:`MAX_VECTORS` rows')."""
    import numpy as np

    matrix, rows = held.matrix, held.newest
    if rows is None:
        return matrix @ query
    out = np.empty(len(rows), dtype=np.float32)
    for start in range(0, len(rows), _BLOCK):
        out[start : start + _BLOCK] = matrix[rows[start : start + _BLOCK]] @ query
    return out


def best_messages(
    count: int,
    n: int,
    top: Callable[[int], Sequence[int]],
    message: Callable[[int], tuple[int, int]],
) -> list[tuple[int, int]]:
    """The *n* messages with the highest-scoring of *count* scored rows (each message by its
    best piece), best first: ``(message id, row)``.

    *top(take)* gives the indexes of at least the *take* highest scores (all when *take* is
    *count*), best first, ties in index order: the start of the whole order; *message(index)*
    the message id and row of one. Both backends' scorers pick through this."""
    take = min(count, n * MAX_CHUNKS)  # at most MAX_CHUNKS rows per message, mostly
    while take:
        found: list[tuple[int, int]] = []
        seen: set[int] = set()
        for index in top(take):
            mid, row = message(index)
            if mid not in seen:
                seen.add(mid)
                found.append((mid, row))
                if len(found) >= n:
                    return found
        if take >= count:
            return found
        take = min(count, 2 * take)
    return []


def best(held: Held, similarity: Any, n: int) -> list[tuple[int, int]]:
    """The *n* messages of *held* with the highest *similarity* (by their best piece), best
    first: ``(message id, row)``."""
    import numpy as np

    ids, rows = held.ids, held.newest

    def top(take: int) -> list[int]:
        if take < len(similarity):
            # Every row tied with the partition's last one too, so ties go by row order.
            cut = similarity[np.argpartition(-similarity, take - 1)[take - 1]]
            chosen = np.flatnonzero(similarity >= cut)
        else:
            chosen = np.arange(len(similarity))
        return list(chosen[np.lexsort((chosen, -similarity[chosen]))].tolist())

    def message(index: int) -> tuple[int, int]:
        row = index if rows is None else int(rows[index])
        return int(ids[row]), row

    return best_messages(len(similarity), n, top, message)
