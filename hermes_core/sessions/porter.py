"""The word index's own stems: SQLite's FTS5 ``porter`` tokenizer asked directly.

Its Porter is the reference C version (``-bli`` → ``-ble``, ``-logi`` → ``-log``), not
the original paper's that stemming libraries ship (Snowball's ``porter`` says
``possibli`` where the index says ``possibl``; PostgreSQL's ``english`` says
``pain`` where it says ``painfulli``): asking the tokenizer itself makes a
disagreement impossible. Both backends stem with it: SQLite's word index is
that tokenizer, and the PostgreSQL store keeps :func:`index_stems` of each
message in its ``stems`` column, the stemmed part of its ``tsvector``
(:mod:`~hermes_core.sessions.pgschema`).
"""

from __future__ import annotations

import functools
import sqlite3
import threading
from collections.abc import Sequence

from hermes_core.sessions.schema import WORD_TOKENIZER

__all__ = ["index_stems", "porter_stem", "text_stems"]

_BATCH = 500
"""Texts tokenized per round trip through the in-memory index."""


class _IndexStemmer:
    """An in-memory FTS5 table tokenizing as the word index, read back token by token."""

    def __init__(self) -> None:
        self._conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        self._conn.execute(
            f"CREATE VIRTUAL TABLE words USING fts5(word, content='', tokenize='{WORD_TOKENIZER}')"
        )
        self._conn.execute("CREATE VIRTUAL TABLE tokens USING fts5vocab(words, instance)")
        self._lock = threading.Lock()

    def tokens(self, texts: Sequence[str]) -> list[list[str]]:
        """Each text's tokens, in order (repeats kept)."""
        found: list[list[str]] = [[] for _ in texts]
        with self._lock:
            for start in range(0, len(texts), _BATCH):
                chunk = texts[start : start + _BATCH]
                self._conn.execute("BEGIN")
                try:
                    self._conn.executemany(
                        "INSERT INTO words(rowid, word) VALUES (?, ?)",
                        ((start + n, text) for n, text in enumerate(chunk)),
                    )
                    for doc, term in self._conn.execute(
                        "SELECT doc, term FROM tokens ORDER BY doc, offset"
                    ):
                        found[doc].append(term)
                    self._conn.execute("INSERT INTO words(words) VALUES ('delete-all')")
                finally:
                    self._conn.execute("COMMIT")
        return found


_STEMMER = _IndexStemmer()


def index_stems(texts: Sequence[str]) -> list[str]:
    """The tokens the word index stores for each of *texts*, space-separated, in order:
    ``"Deployed it painfully"`` → ``"deploi it painfulli"``."""
    return [" ".join(tokens) for tokens in _STEMMER.tokens(texts)]


@functools.lru_cache(maxsize=16_384)
def text_stems(text: str) -> tuple[str, ...]:
    """The tokens the word index stores for one *text* (a query's word or phrase), in order."""
    return tuple(_STEMMER.tokens([text])[0])


@functools.lru_cache(maxsize=65_536)
def porter_stem(word: str) -> str:
    """The token the word index stores for *word*: ``deployments`` → ``deploy``,
    ``deployed`` → ``deploi``, ``possibly`` → ``possibl`` (lower-cased; *word* itself
    when the tokenizer keeps nothing of it)."""
    tokens = text_stems(word)
    return tokens[0] if tokens else word.lower()
