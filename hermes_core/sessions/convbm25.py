"""Conversations ranked by BM25 over their whole history of messages.

A question's candidates (its best few hundred messages) are what the conversation ranking
of :mod:`~hermes_core.sessions.rerank` reads. This module reads the conversations
themselves: for each of the question's word groups, how many messages of each conversation
hold it (from the word indexes' postings, not the text), scored as BM25 does a document's
terms, the conversation being the document and its messages its length. A conversation that
keeps coming back to the question's rare words across many turns scores above one that
says them in one turn, wherever those turns rank as messages.

The counts come from the backend (:data:`Counts`); the scoring is shared, so both backends
rank alike.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from hermes_core.sessions.layout import Layout
from hermes_core.sessions.query import Term
from hermes_core.sessions.routing import LIKE, fts_term, route_term

__all__ = [
    "CONVERSATION_CAP",
    "Conversations",
    "Counts",
    "Sizes",
    "conversation_bm25",
    "conversation_scores",
    "sqlite_conversations",
]

CONVERSATION_CAP = 2_000
"""A word group held by more messages than this is left out of the conversations' BM25: it
weighs little (it is everywhere), and counting its postings would grow with the history."""
CONV_K1 = 1.2
"""Saturation of a conversation's messages holding a word (BM25's k1)."""
CONV_B = 0.75
"""Length normalisation by the conversation's messages (BM25's b)."""

Counts = Callable[[Sequence[Term], int], dict[str, int] | None]
"""(forms of a word, cap) → messages holding any of them per session, or ``None`` when more
than *cap* messages hold them (or the backend cannot count them from an index)."""
Sizes = Callable[[Sequence[str]], tuple[dict[str, int], int, int]]
"""Sessions → the messages of each, and the store's sessions and messages (its highest id)."""


class Conversations(NamedTuple):
    """Where a backend reads the conversations' BM25 from."""

    counts: Counts
    sizes: Sizes


def conversation_scores(
    source: Conversations,
    rows: Sequence[tuple[Any, ...]],
    groups: Mapping[str, Sequence[Term]],
    named: Mapping[str, set[str]] | None = None,
) -> dict[str, float]:
    """The conversations of *rows* (hit rows, session id at 3) by BM25 over all their messages
    for the question's word *groups* (key → forms), read from *source*; a group naming a
    person who speaks in one of them (*named*) does not count, as in the pooled score."""
    sessions = list(dict.fromkeys(row[3] for row in rows))
    if not sessions or not groups:
        return {}
    sizes, total_sessions, total_messages = source.sizes(sessions)
    speaking = set().union(*named.values()) if named else set()
    return conversation_bm25(
        groups.values(),
        source.counts,
        sizes,
        total_sessions,
        total_messages,
        [key in speaking for key in groups],
    )


def conversation_bm25(
    groups: Iterable[Sequence[Term]],
    counts: Counts,
    sizes: Mapping[str, int],
    sessions: int,
    messages: int,
    skip: Sequence[bool] = (),
) -> dict[str, float]:
    """BM25 of the conversations in *sizes* (session → its messages) for the question's
    word *groups*: each group that at most :data:`CONVERSATION_CAP` messages hold (*counts*)
    adds idf · n (k1 + 1) / (n + k1 (1 − b + b · len / avg)), n the conversation's messages
    holding it, idf over the conversations (of *sessions*, holding *messages* in all). A
    group *skip* marks adds nothing."""
    average = max(1.0, messages / max(1, sessions))
    scores: dict[str, float] = {}
    for n, forms in enumerate(groups):
        if n < len(skip) and skip[n]:
            continue
        per_session = counts(forms, CONVERSATION_CAP)
        if not per_session:
            continue
        held_by = len(per_session)
        idf = math.log(1.0 + (max(sessions, held_by) - held_by + 0.5) / (held_by + 0.5))
        for sid, size in sizes.items():
            held = per_session.get(sid, 0)
            if held:
                norm = CONV_K1 * (1.0 - CONV_B + CONV_B * size / average)
                scores[sid] = scores.get(sid, 0.0) + idf * held * (CONV_K1 + 1) / (held + norm)
    return scores


def sqlite_conversations(conn: sqlite3.Connection, layout: Layout) -> Conversations:
    """:class:`Conversations` read from a SQLite store: each form's postings in its index."""

    def counts(forms: Sequence[Term], cap: int) -> dict[str, int] | None:
        by_index: dict[str, list[Term]] = {}
        for form in forms:
            by_index.setdefault(route_term(form, layout), []).append(form)
        if LIKE in by_index:
            return None
        ids: set[int] = set()
        for index, same in by_index.items():
            ids.update(
                row[0]
                for row in conn.execute(
                    f"SELECT rowid FROM {index} WHERE {index} MATCH ? LIMIT {cap + 1}",
                    (" OR ".join(fts_term(form, index, layout) for form in same),),
                )
            )
            if len(ids) > cap:
                return None
        if not ids:
            return {}
        return dict(
            conn.execute(
                "SELECT session_id, count(*) FROM messages "
                "WHERE id IN (SELECT value FROM json_each(?)) GROUP BY session_id",
                (json.dumps(sorted(ids)),),
            ).fetchall()
        )

    def sizes(sessions: Sequence[str]) -> tuple[dict[str, int], int, int]:
        found = dict(
            conn.execute(
                "SELECT session_id, count(*) FROM messages "
                "WHERE session_id IN (SELECT value FROM json_each(?)) GROUP BY session_id",
                (json.dumps(list(sessions)),),
            ).fetchall()
        )
        total_sessions = conn.execute("SELECT count(*) FROM sessions").fetchone()[0]
        total_messages = conn.execute("SELECT max(id) FROM messages").fetchone()[0] or 0
        return found, int(total_sessions), int(total_messages)

    return Conversations(counts, sizes)
