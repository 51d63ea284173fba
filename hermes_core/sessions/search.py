"""Full-text search over messages: plan, route, rank, fuse, snippet.

:func:`search_messages` is what the store, the CLI and the ``session_search``
tool call. It never raises for a query string: anything is sanitised
(:mod:`~hermes_core.sessions.query`), planned for recall
(:mod:`~hermes_core.sessions.question`) and routed per term
(:mod:`~hermes_core.sessions.routing`); the candidates that pass the filters
are fetched by :mod:`~hermes_core.sessions.fetch`. Ranking is FTS5's BM25
(``rank``); for short questions, conversations that cover more of the question's
rare words come first (:mod:`~hermes_core.sessions.rerank`; a long one ranks its
messages by their own score, :func:`~hermes_core.sessions.question.message_first`),
and semantic neighbours, when given, are fused in. Hits carry their session's fields and a snippet.
"""

from __future__ import annotations

import json
import logging
import re
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from operator import itemgetter
from typing import Any

from hermes_core.sessions.cjk import contains_cjk
from hermes_core.sessions.compounds import as_substrings, sqlite_words
from hermes_core.sessions.connection import is_undecodable
from hermes_core.sessions.convbm25 import conversation_scores, sqlite_conversations
from hermes_core.sessions.fetch import SearchFilters, run, without_absent_sources
from hermes_core.sessions.hits import hit_dicts
from hermes_core.sessions.layout import Layout
from hermes_core.sessions.listing import last_activity
from hermes_core.sessions.query import Clause, ParsedQuery, Term, parse_query
from hermes_core.sessions.question import (
    Plan,
    is_passage,
    message_first,
    names_a_topic,
    plan_query,
    top_up,
)
from hermes_core.sessions.rerank import (
    by_conversation_hits,
    mostly_cjk,
    rerank_by_session,
    with_replies,
    word_groups,
)
from hermes_core.sessions.routing import Candidates, compile_query
from hermes_core.sessions.sessioninfo import SessionInfo
from hermes_core.sessions.ties import break_ties
from hermes_core.sessions.timespan import find_time_span_in_history

__all__ = [
    "SearchFilters",
    "asks_yes_or_no",
    "group_by_session",
    "meaning_depth",
    "meaning_weight",
    "plan_boosts",
    "reads_passages",
    "search_messages",
    "searched_by_meaning",
    "typed_words",
    "with_meaning",
]

log = logging.getLogger(__name__)

BOOST_ALL_TERMS = 0.6
"""Score bonus for a question's hit that contains every content word."""
BOOST_NEAR_PAIR = 0.4
"""Score bonus for a question's hit where two consecutive content words sit together."""
BOOST_QUOTED = 2.0
"""Score bonus for a question's hit holding a phrase the question quotes."""
QUESTION_CANDIDATES = 300
KEYWORD_TOP_UP_BELOW = 5
"""Keywords that all match fewer messages than this are topped up with partial matches."""
_GLUED_ROWS = 20
"""Messages read per word looked for inside compounds (the newest)."""


def _context(conn: sqlite3.Connection, hit: dict[str, Any]) -> list[dict[str, str]]:
    # CAST: a row another program stored as bytes (a BLOB) is read as text, like the rest.
    columns = "CAST(role AS TEXT), substr(CAST(content AS TEXT), 1, 200)"
    rows = []
    before = conn.execute(
        f"SELECT {columns} FROM messages WHERE session_id = ? AND id < ? ORDER BY id DESC LIMIT 1",
        (hit["session_id"], hit["id"]),
    ).fetchone()
    current = conn.execute(f"SELECT {columns} FROM messages WHERE id = ?", (hit["id"],)).fetchone()
    after = conn.execute(
        f"SELECT {columns} FROM messages WHERE session_id = ? AND id > ? ORDER BY id LIMIT 1",
        (hit["session_id"], hit["id"]),
    ).fetchone()
    for row in (before, current, after):
        if row is not None:
            rows.append({"role": row[0], "content": row[1] or ""})
    return rows


def _worth_trigram_retry(query: ParsedQuery) -> bool:
    """True when a Latin word may hide inside CJK text and the trigram index can see it.

    Every term needs 3+ characters (the trigram index's minimum); a query of CJK
    terms only is already answered in full by the gram index.
    """
    terms = [term for clause in query.clauses for term in clause.include + clause.exclude]
    return all(len(term.text) >= 3 for term in terms) and not all(
        contains_cjk(term.text) for term in terms
    )


TIME_HINT = re.compile(
    r"\d|ago|day|night|week|month|year|today|tonight|morning|afternoon|evening|since"
    r"|Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec|weekend|[\u4e00-\u9fff]"
    r"|(?i:christmas|xmas|year|valentine|hallowe|thanksgiving)"
)
"""Cheap pre-test: text without any of these names no time span."""

CALENDAR = re.compile(r"\d|[A-Z][a-z]")


BEST_MESSAGES_KEPT = 2
"""A question's best messages by their own (boosted BM25) score that keep a place among its
first hits, whatever the conversation ranking says: the n-th of them is moved up to position
:data:`BEST_MESSAGES_BY` + n at the latest. On REALTALK's dev half, turn R@5 0.42 → 0.46;
three of them lost 4 points of message R@5 on the project's assistant-memory set."""
BEST_MESSAGES_BY = 2


def keep_best_messages(
    rows: list[tuple[Any, ...]], best: Sequence[tuple[Any, ...]]
) -> list[tuple[Any, ...]]:
    """*rows* with each of *best* (the best messages by their own score) moved up to within
    :data:`BEST_MESSAGES_BY` positions of the top, when the conversation ranking put it lower."""
    for n, row in enumerate(best):
        at = next((i for i, r in enumerate(rows) if r[0] == row[0]), None)
        limit = BEST_MESSAGES_BY + n
        if at is not None and at >= limit:
            rows = [*rows[: limit - 1], rows[at], *rows[limit - 1 : at], *rows[at + 1 :]]
    return rows


def plan_boosts(plan: Plan) -> tuple[tuple[ParsedQuery, float], ...]:
    """The boosts of *plan*'s hits (all words, then near pairs), with their weights; none for
    a question ranked message first (:func:`~hermes_core.sessions.question.message_first`)."""
    if message_first(plan):
        return ()
    return tuple(
        (boost, BOOST_ALL_TERMS if n == 0 else BOOST_NEAR_PAIR)
        for n, boost in enumerate(plan.boosts)
    )


def _any_term(query: ParsedQuery, terms: tuple[Term, ...]) -> ParsedQuery | None:
    """A query for any of *terms*, shaped like *query*; ``None`` when there are none."""
    if not terms:
        return None
    clauses = tuple(Clause((term,)) for term in terms)
    return query._replace(clauses=clauses, terms=terms)


def typed_words(query: ParsedQuery, plan: Plan) -> frozenset[str]:
    """The words of a question's query that were typed (not added forms nor substrings)."""
    return frozenset(term.text.lower() for term in query.terms if not term.substring) - plan.extras


class _Search:
    def __init__(
        self,
        conn: sqlite3.Connection,
        layout: Layout,
        filters: SearchFilters,
        pending_grams: bool,
        snippets: bool,
    ) -> None:
        self.conn = conn
        self.layout = layout
        self.filters = filters
        self.pending_grams = pending_grams
        self.snippets = snippets
        self.share = 0.0
        """How much of a question its best conversation covers (see ``Ranked.share``)."""
        self.first: tuple[frozenset[str], ...] = ()
        """The sessions a question's ranking put first: a named person speaks there; one
        holds a quoted phrase; a hit is within its time span (see
        :func:`~hermes_core.sessions.rerank.rerank_by_session`)."""

    def rows(
        self,
        query: ParsedQuery,
        need: int,
        boosts: tuple[tuple[ParsedQuery, float], ...] = (),
        by_session: bool = False,
        prefer_recent: bool = False,
        span: tuple[float, float] | None = None,
        typed: frozenset[str] = frozenset(),
        phrases: tuple[Term, ...] = (),
        bounded: bool = False,
        by_hits: bool = False,
    ) -> list[tuple[Any, ...]]:
        if query.empty or need <= 0:
            return []
        quoted = _any_term(query, phrases)
        if quoted is not None:
            boosts = (*boosts, (quoted, BOOST_QUOTED))
        # FTS5 computes a snippet for every candidate it returns, so it is only
        # asked when the candidates are the hits; otherwise text snippets follow.
        candidates = compile_query(
            query,
            self.layout,
            pending_grams=self.pending_grams,
            boosts=boosts,
            snippets=self.snippets
            and not boosts
            and not by_session
            and not by_hits
            and not self.filters.active,
            bounded=bounded,
        )
        pool = max(need, QUESTION_CANDIDATES) if boosts or by_session or by_hits else need
        rows = break_ties(
            run(self.conn, candidates, self.layout, self.filters, pool, self.snippets)
        )
        quoted_sessions: frozenset[str] = frozenset()
        if quoted is not None and by_session:
            # The quoted phrase's own hits join the candidates: its conversations rank first.
            found = self.rows(quoted, pool)
            seen = {row[0] for row in rows}
            rows += [row for row in found if row[0] not in seen]
            quoted_sessions = frozenset(row[3] for row in found)
        if by_session:
            ranked = rerank_by_session(
                self.conn,
                self.layout,
                rows,
                query.terms,
                prefer_recent,
                span,
                self._glued if self.layout.trigram is not None else None,
                typed,
                quoted_sessions,
            )
            best = [row for row in rows if row[0] not in ranked.name_only][:BEST_MESSAGES_KEPT]
            rows, self.first = ranked.rows, (ranked.named, quoted_sessions, ranked.dated)
            self.share = ranked.share
            rows = keep_best_messages(rows, best)
        elif by_hits:
            source = sqlite_conversations(self.conn, self.layout)
            conversation = conversation_scores(source, rows, word_groups(query.terms))
            rows = by_conversation_hits(rows, query.terms, conversation)
        return rows[:need]

    def nearest_rows(self, nearest: Nearest, text: str, need: int) -> list[tuple[Any, ...]]:
        """The semantic neighbours of *text* that pass the filters, as hit rows."""
        ids = [int(mid) for mid in nearest(text, max(need, NEAREST_CANDIDATES))]
        if not ids:
            return []
        candidates = Candidates(
            "SELECT value AS id, NULL AS score, NULL AS snippet FROM json_each(:ids) "
            "ORDER BY key LIMIT :k",
            {"ids": json.dumps(ids)},
            bare=True,
        )
        return run(self.conn, candidates, self.layout, self.filters, len(ids), self.snippets)

    def _glued(self, cut: str) -> list[tuple[Any, ...]]:
        """The newest rows (with text) of the trigram index holding *cut* after a letter."""
        trigram = self.layout.trigram
        if trigram is None:
            return []
        candidates = Candidates(
            f"SELECT rowid AS id, NULL AS score, NULL AS snippet FROM {trigram.name} "
            f"WHERE {trigram.name} MATCH :glued ORDER BY rowid DESC LIMIT :k",
            {"glued": " OR ".join(f'"{letter}{cut}"' for letter in "abcdefghijklmnopqrstuvwxyz")},
            bare=True,
        )
        return run(self.conn, candidates, self.layout, self.filters, _GLUED_ROWS, True)

    def _unknown_words_as_substrings(
        self, query: ParsedQuery, extras: frozenset[str] = frozenset()
    ) -> ParsedQuery:
        """Words the word index has never seen are looked up inside other words (the trigram
        index), see :func:`~hermes_core.sessions.compounds.as_substrings`."""
        if self.layout.word is None or self.layout.trigram is None:
            return query
        return as_substrings(query, sqlite_words(self.conn, self.layout), extras)

    def plan_rows(
        self, plan: Plan, need: int, span: tuple[float, float] | None = None
    ) -> list[tuple[Any, ...]]:
        by_session = plan.mode == "question" and not message_first(plan)
        boosts = plan_boosts(plan)
        primary = plan.primary
        # Keywords and explicit syntax rank a bounded set of their matches (the newest): a
        # question's candidates are ranked in full, since its conversation ranking reads them.
        bounded = plan.mode != "question"
        if plan.mode == "question":
            primary = self._unknown_words_as_substrings(primary, plan.extras)
        rows = self.rows(
            primary,
            need,
            boosts,
            by_session=by_session,
            prefer_recent=plan.prefer_recent,
            span=span,
            typed=typed_words(primary, plan) if plan.mode == "question" else frozenset(),
            phrases=plan.phrases if by_session else (),
            bounded=bounded,
            by_hits=plan.mode == "question" and not by_session and not mostly_cjk(primary.terms),
        )
        fallback = plan.fallback if len(rows) < min(need, KEYWORD_TOP_UP_BELOW) else None
        if fallback is not None:
            seen = {row[0] for row in rows}
            extra = self.rows(top_up(plan, fallback), need + len(seen), bounded=True)
            rows += [row for row in extra if row[0] not in seen][: need - len(rows)]
        if plan.mode == "question" and rows and not self.filters.roles:
            rows = with_replies(
                self.conn, self.layout, rows, need, self.snippets, self.filters, primary.terms
            )
        if not rows and self.layout.trigram is not None and self.layout.word is not None:
            # A Latin word glued to CJK text ('修改youer服务端') is one unicode61
            # token; the trigram index still finds it as a substring.
            retry = fallback or plan.primary
            if _worth_trigram_retry(retry):
                trigram_layout = Layout(
                    ours=self.layout.ours,
                    version=self.layout.version,
                    message_columns=self.layout.message_columns,
                    session_columns=self.layout.session_columns,
                    indexes={self.layout.trigram.name: self.layout.trigram},
                    has_pending_grams=False,
                )
                rows = _Search(self.conn, trigram_layout, self.filters, False, self.snippets).rows(
                    retry, need, bounded=bounded
                )
        return rows


Nearest = Callable[[str, int], Sequence[int]]
"""Semantic neighbours: (question, k) → the ids of the k nearest messages, best first."""
NEAREST_CANDIDATES = 50
"""Semantic neighbours fused with a question's full-text hits (at least)."""
FUSION_K = 60
"""Reciprocal rank fusion's constant: a hit at rank r scores 1 / (FUSION_K + r)."""


def searched_by_meaning(parsed: ParsedQuery, plan: Plan, passages: bool = False) -> bool:
    """Whether semantic neighbours join the hits of *parsed*: a question of one sentence, or two
    or more keywords (a topic described, as a model's tool call often does); one word, quotes,
    operators and prefixes stay literal, and so does a passage unless the encoder reads
    passages (*passages*, :func:`reads_passages`).

    A passage (several sentences, :func:`~hermes_core.sessions.question.is_passage`: a pasted
    turn, a request explained at length, long or short) names many things, and BM25 over all
    its words finds the messages sharing most of them; meaning reads the paragraph as one
    blur. On RealMem's dev half (``bench/calibrate_semantic.py``) meaning's vote on its 395 long
    passages won 12 questions at turn R@5 and lost 7 (sign test p 0.18) and lost on the test
    half; on its 27 short ones (a greeting and a request) it won 3 questions and lost 1. A
    mostly-CJK question stays literal too (the store's ``_meaning_applies``). All of this was
    measured with the static encoder, whose nearest messages find a RealMem query's evidence
    half as often as its words do; MiniLM's find it more often than the words
    (:data:`PASSAGE_MODELS`).
    """
    if plan.mode == "question":
        return passages or not is_passage(parsed.text)
    return plan.mode == "keywords" and len(plan.keywords) >= 2


PASSAGE_MODELS = frozenset({"all-MiniLM-L6-v2"})
"""The encoders (the name their vectors carry) that search a passage by meaning: its own
nearest messages join its hits below the first (:func:`with_meaning`), as a question's do
where its words find little. RealMem's queries are passages (a user's next turn; the
evidence, a turn of an earlier session, shares its topic more than its words). On the first
persona of its dev half (87 questions; embedding three more with MiniLM did not fit the
session) the MiniLM transformer's nearest messages hold the evidence among their first 5
for 42.5 % of the questions against the words' 33.3 % (the static encoder's: 23.0 %), and
so searched, turn R@5 went 0.333 -> 0.437 (10 won, 1 lost), session R@5 0.701 -> 0.759
(9, 4); on the second persona (87) session R@10 0.655 -> 0.759 (11, 2), turn R@5 0.287 ->
0.299 (5, 4), no cell below the default on either. The static encoder's find it for
15.7 % over the whole dev half (the words: 32.9 %): it reads a persona's many sessions
about the same topics as alike, and no way of taking its neighbours in helped there
(docs/benchmarks.md, *Meaning by conversation*)."""


def reads_passages(model: str) -> bool:
    """Whether vectors of *model* (an index's ``model``) search passages by meaning
    (:data:`PASSAGE_MODELS`)."""
    return model in PASSAGE_MODELS


ASKS_YES_OR_NO = re.compile(
    r"\W*(?:is|are|was|were|am|do|does|did|can|could|would|will|should|shall|has|have|had"
    r"|might|must)(?:n't|n\u2019t)?\b",
    re.IGNORECASE,
)
QUESTION_WORD = re.compile(r"\b(?:what|who|whom|whose|where|which|why|how|when)\b", re.IGNORECASE)


def asks_yes_or_no(text: str) -> bool:
    """Whether *text* asks yes or no: it begins with an auxiliary verb (*Does*, *Is*, *Can*,
    *Didn't*) and holds no question word (*Do you remember what we decided?* asks what).

    Such a question (*Does Nebraas run regularly?*, *Can Vanessa be considered an ambitious
    person?*) states a claim to check: the turn settling it seldom says it the way the claim
    does, and the claim's nearest turns are those of the people it names. Meaning therefore
    only votes on its hits below the first (:data:`KEPT_BEFORE_MEANING`, as on any question)
    and adds no message of its own (:func:`with_meaning`). On REALTALK's dev half (54 such
    questions) voting over all its hits, as on other short questions, won 2 questions at
    session R@1 and lost 3 (turn R@1 3 and 3); below the first hit it loses none there, and
    keeps the vote's gains further down (turn R@10 +4 -0) and on the project's LoCoMo-shaped
    set (*Is Tom likely to become a keen birdwatcher?*, its answer at turn R@5 only with the
    vote). Fusing its hits with meaning's own messages where the words find little, as other
    questions do, lost a question at session R@10 there (2026-12-04)."""
    return ASKS_YES_OR_NO.match(text) is not None and QUESTION_WORD.search(text) is None


MEANING_BELOW_SHARE = 0.2
"""Messages found only by meaning join a question's hits only when its best conversation covers
less than this share of the question's words (by weight): where the words are found, such
messages mostly displace the evidence. On RealMem's dev half adding them below 0.5 (the rule
before) lowered turn R@5 by 1.4 points; below 0.2 it changed nothing there and on REALTALK's dev
half lost one question of 343 at session R@5 (bench/calibrate_semantic.py)."""
MEANING_WEIGHT = 0.1
"""Meaning's vote when it reorders a question's full-text hits: a hit at full-text rank r that is
also the n-th nearest message scores 1 / (FUSION_K + r) + MEANING_WEIGHT / (FUSION_K + n). On
REALTALK's dev half (335 short questions, bench/calibrate_semantic.py) 0.1 won 14 questions at
turn R@5 and lost 4, 19 for 6 at turn R@1; 0.15 to 0.25 won more at turn R@5 (20 to 25) but
lost more at R@1 and session R@5 (0.25: 8 at session R@5), and 1 lost about as many as it won."""
KEPT_BEFORE_MEANING = 1
"""A question's first full-text hits that meaning leaves in place, whatever its kind: its vote
and its own messages (:func:`with_meaning`) come below them. Over the default ranking with the
conversations' BM25 vote, the first full-text conversation is right about as often as
meaning's choice: on REALTALK's dev half (bench/calibrate_semantic.py, 2026-12-04) meaning
over all of a short question's hits turned session R@1 +16 -13 against full text (and the
test half of that rule lost 4 questions there) and turn R@1 +17 -4; below the first hit both
are full text's by construction, and turn R@5 (+18 -4) and session R@5 (+6 -1) keep their
gains. Letting meaning choose the first hit among its conversation's messages won turn R@1
+10 -2 on REALTALK but lost a question on RealMem; keeping the first two won one more
question at turn R@5 (a fitted constant, not taken). First applied to long questions
(RealMem, at d48cf35: the vote over all hits lowered turn R@1 from 0.115 to 0.087, keeping
the first kept it) and to yes-or-no questions (:func:`asks_yes_or_no`). A search of keywords,
ranked by its messages' own BM25 and absent from the public sets, is fused over all its hits
as before."""
MEANING_WEIGHT_WHEN = 0.2
"""Meaning's vote on a short question asking *when* (in place of :data:`MEANING_WEIGHT`): its
words name an event only, and the turn telling of it often says it otherwise ("I had an exam
today" for "When did Paola have an exam?"). On REALTALK's dev half (80 such questions, with
named neighbours of little text left out, :data:`~hermes_core.sessions.neighbours.NAMED_MIN_CHARS`)
0.2 against 0.1 turned turn R@5 from +13 -2 questions against full text to +17 -2 in the
*when* category, session R@1 +6 to +8, and left the rest alone; 0.3 won one more, and the
same weight on every question lost "what" questions (turn R@5 +3 -5 at 0.15). On the test
half, read once after choosing, it lost one question at turn R@5 and two at R@1. Reconsidered
on dev (2026-12-03, with yes-or-no questions voted below their first hit): against 0.1 it
wins turn R@5 by 4 questions to 0 (p 0.06), session R@1 and R@5 by 1 to 0 (turn R@1 1 and
1); it stays."""
ASKS_WHEN = re.compile(r"\W*when\b", re.IGNORECASE)
AGREEMENT_NEIGHBOURS = 400
"""Nearest messages read for the vote: a full-text hit not among them gets none."""


def meaning_depth(
    nearest: Nearest | None, parsed: ParsedQuery, plan: Plan, need: int, passages: bool = False
) -> int:
    """How deep the full-text ranking of *parsed* is read: with meaning, as deep as its
    neighbours (:data:`NEAREST_CANDIDATES`) whatever the limit, so that a page of 5 is the
    first 5 of a page of 50."""
    by_meaning = nearest is not None and searched_by_meaning(parsed, plan, passages)
    return max(need, NEAREST_CANDIDATES) if by_meaning else need


Rows = list[tuple[Any, ...]]


def with_meaning(
    rows: Rows,
    parsed: ParsedQuery,
    plan: Plan,
    share: float,
    first: tuple[frozenset[str], ...],
    nearest: Nearest | None,
    neighbour_rows: Callable[[Nearest, str, int], Rows],
    depth: int,
    passages: bool = False,
) -> tuple[Rows, bool, bool]:
    """The full-text *rows* of *parsed* with meaning taken in, as both backends rank:
    ``(rows, by_meaning, fused)``.

    Meaning takes part only in the searches :func:`searched_by_meaning` names (a passage
    keeps its full-text ranking exactly), and never moves a question's first full-text hit
    (:data:`KEPT_BEFORE_MEANING`): below it, it votes on the order of what the words found
    (:func:`_agreeing`, weighing :func:`meaning_weight`), and only where the best conversation
    covers less than :data:`MEANING_BELOW_SHARE` of the question (*share*) do the nearest
    messages (*neighbour_rows*: the neighbours that pass the search's filters, as hit rows)
    join them (:func:`_fused`). A long question of one sentence, ranked message first, has no
    coverage measured, and a yes-or-no question (:func:`asks_yes_or_no`) states a claim:
    meaning only votes there. A passage is searched by meaning only where the encoder reads
    passages (*passages*, :data:`PASSAGE_MODELS`): its nearest messages then join its hits
    below the first, as where the words find little (a long text has no coverage measured).
    The sessions the full-text ranking put *first* stay first.
    A named message of little text is no neighbour
    (:func:`~hermes_core.sessions.neighbours.near_by_content`).
    """
    by_meaning = nearest is not None and searched_by_meaning(parsed, plan, passages)
    passage = passages and is_passage(parsed.text)
    votes_only = (message_first(plan) and not passage) or asks_yes_or_no(parsed.text)
    fused = by_meaning and not votes_only and share < MEANING_BELOW_SHARE
    held_first = KEPT_BEFORE_MEANING if plan.mode == "question" else 0
    kept, below = rows[:held_first], rows[held_first:]
    if nearest is not None and fused:
        held = {row[0] for row in kept}
        found = neighbour_rows(nearest, parsed.text, depth)
        semantic = [row for row in found if row[0] not in held]
        rows = kept + _fused(below, semantic, depth - len(kept), first)
    elif nearest is not None and by_meaning:
        weight = meaning_weight(parsed, plan)
        rows = kept + _agreeing(below, nearest(parsed.text, AGREEMENT_NEIGHBOURS), first, weight)
    return rows, by_meaning, fused


def meaning_weight(parsed: ParsedQuery, plan: Plan) -> float:
    """Meaning's vote on the order of *parsed*'s full-text hits: :data:`MEANING_WEIGHT_WHEN`
    for a short question asking *when*, else :data:`MEANING_WEIGHT`."""
    if not message_first(plan) and ASKS_WHEN.match(parsed.text):
        return MEANING_WEIGHT_WHEN
    return MEANING_WEIGHT


def _agreeing(
    lexical: Sequence[tuple[Any, ...]],
    nearest: Sequence[int],
    first: tuple[frozenset[str], ...] = (),
    weight: float = MEANING_WEIGHT,
) -> list[tuple[Any, ...]]:
    """*lexical* reordered by meaning's agreement: a hit that is also among the *nearest*
    messages moves up by its place there (reciprocal rank fusion, meaning weighing *weight*,
    see :func:`meaning_weight`); no message full text did not find is added. The sessions the
    full-text ranking put *first* stay first, as in :func:`_fused`."""
    place = {int(mid): n for n, mid in enumerate(nearest)}
    score = {
        row[0]: 1.0 / (FUSION_K + rank + 1)
        + (weight / (FUSION_K + place[row[0]] + 1) if row[0] in place else 0.0)
        for rank, row in enumerate(lexical)
    }
    order = {row[0]: n for n, row in enumerate(lexical)}
    return sorted(
        lexical,
        key=lambda row: (
            *(row[3] not in tier for tier in first),
            -score[row[0]],
            order[row[0]],
        ),
    )


def _fused(
    lexical: Sequence[tuple[Any, ...]],
    semantic: Sequence[tuple[Any, ...]],
    need: int,
    first: tuple[frozenset[str], ...] = (),
) -> list[tuple[Any, ...]]:
    """*lexical* and *semantic* hits in one ranking (reciprocal rank fusion).

    A message both rankings put high comes first; one found only by meaning
    ("a rescue tabby" for "the cat we adopted") ranks by its place among the
    neighbours. Ties keep the full-text order. The sessions the full-text
    ranking put *first* (a named person speaks there, then one quoting the
    question's phrase, then a hit within the question's time span) stay first:
    meaning knows none of these.
    """
    if not semantic:
        return list(lexical)
    score: dict[Any, float] = {}
    rows: dict[Any, tuple[Any, ...]] = {}
    for ranking in (lexical, semantic):
        for rank, row in enumerate(ranking):
            score[row[0]] = score.get(row[0], 0.0) + 1.0 / (FUSION_K + rank + 1)
            rows.setdefault(row[0], row)
    order = {mid: n for n, mid in enumerate(rows)}  # full-text hits first on ties
    ranked = sorted(
        rows,
        key=lambda mid: (
            *(rows[mid][3] not in tier for tier in first),
            -score[mid],
            order[mid],
        ),
    )
    return [rows[mid] for mid in ranked[:need]]


def _dated_plan(
    conn: sqlite3.Connection, layout: Layout, parsed: ParsedQuery, plan: Plan
) -> tuple[Plan, tuple[float, float] | None]:
    """A question's plan without its relative time phrase, and the span the phrase names.

    "What did Tom bake in February?" asks about the conversation of February,
    which may not say *February*: conversations within the span rank first
    (:func:`~hermes_core.sessions.rerank.rerank_by_session`). The words of a
    calendar date stay searched (a turn may say "on 16 March"); those of a
    relative phrase (*this year*, *last week*) do not, since a turn's *last
    week* is relative to its own day; nothing is filtered out, so a span that
    holds nothing changes nothing. The span is read against the stored
    history's dates when that ended before it (an imported benchmark): see
    :func:`find_time_span_in_history`.
    """
    if not TIME_HINT.search(parsed.text):  # most questions name no time: no regexes, no SQL
        return plan, None
    span, rest, _ = find_time_span_in_history(parsed.text, None)
    if span is None:
        return plan, None
    span, rest, _ = find_time_span_in_history(parsed.text, last_activity(conn, layout))
    if span is None:
        return plan, None
    if names_a_topic(rest) and not CALENDAR.search(span.phrase):
        dated = plan_query(parse_query(rest), question=True)
        if dated.mode == "question":
            plan = dated
    return plan, (span.since, span.until)


def search_messages(
    conn: sqlite3.Connection,
    layout: Layout,
    query: object,
    *,
    filters: SearchFilters | None = None,
    limit: int = 20,
    offset: int = 0,
    context: bool = False,
    snippets: bool = True,
    pending_grams: bool = False,
    session_info: SessionInfo | None = None,
    nearest: Nearest | None = None,
    explain: dict[str, Any] | None = None,
    passages: bool = False,
) -> list[dict[str, Any]]:
    """Messages matching *query*, best first; ``[]`` for an empty or unusable query.

    Each hit has ``id``, ``session_id``, ``role``, ``name`` (who spoke, when
    stored), ``snippet`` (matches marked
    ``>>>…<<<``), ``timestamp``, ``tool_name``, ``source``, ``model``,
    ``session_started``, ``session_title`` and ``rank`` (0 for the best hit), plus
    ``context`` (the previous message, the hit, the next message of the same
    session, 200 characters each) when *context* is true. *session_info* caches
    the session fields across calls on the same connection; call its
    :meth:`~hermes_core.sessions.sessioninfo.SessionInfo.sync` before each search.
    *nearest* (text, k → message ids, best first) adds semantic recall to
    questions: its messages are fused with the full-text hits (see
    :mod:`~hermes_core.sessions.semantic`); *passages* says the encoder reads passages
    (:func:`reads_passages`). *explain*, when given, is filled with how the
    ranking was made: ``lexical`` (the full-text ranking, ``(id, session id)`` pairs),
    ``share`` (how much of a question its best conversation covers), ``first`` (the
    session tiers that rank first), ``by_meaning`` (whether meaning takes part: it reorders
    the full-text hits) and ``fused`` (whether messages found only by meaning joined them).
    """
    parsed = parse_query(query)
    if parsed.empty or limit <= 0:
        return []
    plan = plan_query(parsed)
    need = max(0, int(offset)) + int(limit)
    filters = without_absent_sources(conn, filters or SearchFilters())
    search = _Search(conn, layout, filters, pending_grams, snippets)
    try:
        span = None
        if plan.mode == "question":
            plan, span = _dated_plan(conn, layout, parsed, plan)
        depth = meaning_depth(nearest, parsed, plan, need, passages)
        rows = search.plan_rows(plan, depth, span)
        lexical = [(row[0], row[3]) for row in rows]
        rows, by_meaning, fused = with_meaning(
            rows,
            parsed,
            plan,
            search.share,
            search.first,
            nearest,
            search.nearest_rows,
            depth,
            passages,
        )
        if explain is not None:
            explain.update(
                lexical=lexical,
                share=search.share,
                first=search.first,
                by_meaning=by_meaning,
                fused=fused,
            )
    except sqlite3.OperationalError as exc:
        if "locked" in str(exc).lower() or is_undecodable(exc):
            raise  # the store retries, or reads the bad text leniently
        log.warning("search for %r failed in SQLite (%s); returning no hits", parsed.text, exc)
        return []
    rows = rows[offset:need]
    info = session_info or SessionInfo(layout)
    sessions = info.fields(conn, map(itemgetter(3), rows)) if rows else {}
    hits = hit_dicts(rows, sessions, plan.primary.terms, snippets, offset)
    if context:
        for hit in hits:
            hit["context"] = _context(conn, hit)
    return hits


def group_by_session(hits: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Hits grouped by session, sessions in the order of their best hit.

    Each group is the session's best hit plus ``matches`` (how many of the hits
    are in that session) and ``message_ids`` (their ids, best first).
    """
    groups: dict[str, dict[str, Any]] = {}
    for hit in hits:
        group = groups.get(hit["session_id"])
        if group is None:
            groups[hit["session_id"]] = {**hit, "matches": 1, "message_ids": [hit["id"]]}
        else:
            group["matches"] += 1
            group["message_ids"].append(hit["id"])
    return list(groups.values())
