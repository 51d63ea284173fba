"""Ranking a question's hits by how much of the question their conversation covers.

:func:`rerank_by_session` puts first the conversations in which a person the
question names speaks, then those with a hit within the question's time span,
then those covering more of the question's rare words (summed inverse document
frequency; a rare typed word also counts inside a glued compound, see
:mod:`~hermes_core.sessions.compounds`), that order fused with the conversations' BM25 over
their candidates (:func:`pooled_scores`) and over all their messages
(:mod:`~hermes_core.sessions.convbm25`). :func:`with_replies` then brings the
reply to an asking turn next to it.
"""

from __future__ import annotations

import json
import logging
import math
import re
import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from hermes_core.sessions.cjk import contains_cjk
from hermes_core.sessions.compounds import (
    GLUED_WEIGHT,
    Glued,
    covered_scores,
    glued_cover,
    sqlite_words,
)
from hermes_core.sessions.connection import is_busy
from hermes_core.sessions.convbm25 import conversation_scores, sqlite_conversations
from hermes_core.sessions.fetch import SearchFilters, detail_columns
from hermes_core.sessions.gramqueue import tool_calls_text
from hermes_core.sessions.layout import Layout
from hermes_core.sessions.query import Term
from hermes_core.sessions.question import MESSAGE_FIRST_TERMS, stem, stem_regex
from hermes_core.sessions.routing import LIKE, fts_term, route_term
from hermes_core.sessions.timespan import near_span
from hermes_core.sessions.wordforms import lemma, number_forms

__all__ = [
    "asks_briefly",
    "bands",
    "by_conversation_hits",
    "covered_groups",
    "evidence_hits",
    "fuse_with_pooled",
    "hits_per_turn",
    "mostly_cjk",
    "pooled_scores",
    "rerank_by_session",
    "spread",
    "with_replies",
]

log = logging.getLogger(__name__)

REPLY_LOOKUP_HITS = 10
"""A question's first this many hits that end by asking bring their reply ahead of them."""
SESSION_EVIDENCE_HITS = 3
"""A conversation's coverage of a question is read from its best this many hits."""
CJK_SESSION_EVIDENCE_HITS = 8
"""The same for a question written in CJK (:func:`evidence_hits`)."""
COVERAGE_CHARS = 4_000
"""Characters of each candidate read to see which question words it covers."""
DF_CAP = 20_000
"""Document frequencies are counted up to this; commoner words all weigh the same."""

WORD_RE = re.compile(r"\w+", re.UNICODE)


def _weight(
    conn: sqlite3.Connection, layout: Layout, forms: Sequence[Term], rows: float
) -> tuple[float, int]:
    """The inverse document frequency of a word given as its *forms* (matches counted up to
    a cap): of the messages holding any of the forms; and that count.

    The forms of one word (*trip*, *travel*, *vacation*) are one word to a
    conversation; a question that says *journey* where the history says *trip*
    should not weigh the match as if it were the rare *journey*.
    """
    by_index: dict[str, list[Term]] = {}
    for form in forms:
        by_index.setdefault(route_term(form, layout), []).append(form)
    if LIKE in by_index:
        return 1.0, DF_CAP
    found = 0
    for index, same in by_index.items():  # forms on two indexes: their counts add up
        found += conn.execute(
            f"SELECT count(*) FROM (SELECT 1 FROM {index} WHERE {index} MATCH ? LIMIT {DF_CAP})",
            (" OR ".join(fts_term(form, index, layout) for form in same),),
        ).fetchone()[0]
    return math.log(1.0 + rows / max(1, found)), found


def _coverage_pattern(term: Term) -> re.Pattern[str]:
    """What a text must contain to cover *term*: a word starting with its stem, or the term."""
    # A word joined by "_" (DATABASE_URL) is several words to the stemmer: as written.
    if term.simple and "_" not in term.text and not term.substring and not contains_cjk(term.text):
        return re.compile(r"(?<!\w)" + stem_regex(stem(term.text)))
    # A compound's hyphen may be a space in the text: forty-five, forty five.
    return re.compile(re.escape(term.text.lower()).replace("\\-", "[-\\s]"))


def word_groups(terms: Sequence[Term]) -> dict[str, list[Term]]:
    """*terms* grouped by the word they are forms of (*buy*, *bought*; *trip*, *vacation*)."""
    groups: dict[str, list[Term]] = {}
    for term in terms:
        key = lemma(term.text) if term.simple or number_forms(term.text) else term.text.lower()
        groups.setdefault(key, []).append(term)
    return groups


def group_pattern(forms: Sequence[Term]) -> re.Pattern[str]:
    """What a lower-cased text must contain to hold any of *forms*."""
    return re.compile("|".join(_coverage_pattern(term).pattern for term in forms))


def rerank_by_session(
    conn: sqlite3.Connection,
    layout: Layout,
    rows: list[tuple[Any, ...]],
    terms: Sequence[Term],
    prefer_recent: bool = False,
    span: tuple[float, float] | None = None,
    glued: Glued | None = None,
    typed: frozenset[str] = frozenset(),
    quoted: frozenset[str] = frozenset(),
) -> Ranked:
    """Rank hits by how much of the question their whole conversation covers.

    An answer is usually spread over a few turns (the question, the fix, the
    confirmation), each matching some of the words. A conversation scores the
    summed inverse document frequency of the question's words it contains: more
    of the question's rare words counts, repeating one common word in many
    messages does not. Conversations in which a person the question names
    speaks come first ("Where does Ben work?"), then those holding a phrase the
    question quotes (*quoted*: *When did she read "Dune"?*), then those with a hit within
    the question's time *span* ("What did Tom bake in February?": the
    conversation of February, which may not say so), then, for a short span, those
    with a hit in the days around it (:func:`~hermes_core.sessions.timespan.near_span`:
    the plan before the day, the story after it), then hits rank by that
    score, then (when *prefer_recent*) by their conversation's latest hit,
    then, between conversations covering the question equally, by how much
    the conversation talks about it (its hits summed by BM25 rank, see
    :data:`TALK_K`), then by their own BM25 score. The sessions of the first two tiers come back
    too, so that hits fused in later keep behind them.
    """
    if not rows or (len(terms) < 2 and not prefer_recent and span is None and not quoted):
        return Ranked(rows)
    score: dict[str, float] = {}
    pooled: dict[str, float] = {}
    named: dict[str, set[str]] = {}
    total = 0.0
    if len(terms) >= 2:
        try:
            named = _with_named_speaker(conn, layout, rows, terms)
            score, extra, total, pooled = _coverage(conn, layout, rows, terms, named, glued, typed)
            seen = {row[0] for row in rows}
            for row in extra:
                if row[0] not in seen:
                    seen.add(row[0])
                    rows = [*rows, row]
        except sqlite3.OperationalError as exc:
            if is_busy(exc):
                raise
            log.warning("ranking by conversation failed in SQLite (%s); keeping BM25 order", exc)
            return Ranked(rows)
    name_only = _matched_by_name_only(conn, rows, terms, named) if named else set()
    conversation: dict[str, float] = {}
    if len(terms) >= 2:
        source = sqlite_conversations(conn, layout)
        conversation = conversation_scores(source, rows, word_groups(terms), named)
    return order_by_conversation(
        rows,
        score,
        total,
        named,
        name_only,
        terms,
        prefer_recent,
        span,
        quoted,
        pooled,
        conversation,
    )


def order_by_conversation(
    rows: list[tuple[Any, ...]],
    score: dict[str, float],
    total: float,
    named: dict[str, set[str]],
    name_only: set[int],
    terms: Sequence[Term],
    prefer_recent: bool,
    span: tuple[float, float] | None,
    quoted: frozenset[str],
    pooled: dict[str, float] | None = None,
    conversation: dict[str, float] | None = None,
) -> Ranked:
    """*rows* (best first) in the conversation tiers both backends share: named speaker,
    quoted phrase, dated, near the date (:func:`~hermes_core.sessions.timespan.near_span`),
    coverage *score* (of *total*), recency, how much the conversation
    talks about the question (:func:`_talk`), name-only hits last; within the tiers that
    order is fused with the conversations' orders by *pooled* and by *conversation* (their
    BM25 over all their messages) (:func:`fuse_with_pooled`);
    then dealt out (:func:`spread`, :func:`hits_per_turn` of the question's *terms* at a
    time)."""
    term_count = len(terms)
    latest: dict[str, float] = {}
    if prefer_recent:
        for row in rows:
            latest[row[3]] = max(latest.get(row[3], 0.0), float(row[5] or 0.0))
    dated = _sessions_within(rows, span)
    near = _sessions_within(rows, None if span is None else near_span(span))
    bm25_order = {row[0]: n for n, row in enumerate(rows)}  # rows arrive best first
    talk = _talk(rows, name_only)
    first_hit: dict[str, int] = {}
    for n, row in enumerate(rows):
        first_hit.setdefault(row[3], n)
    by_coverage = sorted(
        first_hit,
        key=lambda sid: (
            -score.get(sid, 0.0),
            -latest.get(sid, 0.0),
            -talk.get(sid, 0.0),
            first_hit[sid],
        ),
    )
    place = fuse_with_pooled(
        by_coverage, pooled or {}, more=((conversation or {}, CONVERSATION_WEIGHT),)
    )
    ranked = sorted(
        rows,
        key=lambda row: (
            row[3] not in named,
            row[3] not in quoted,
            row[3] not in dated,
            row[3] not in near,
            place[row[3]],
            row[0] in name_only,
            bm25_order[row[0]],
        ),
    )
    share = max(score.values(), default=0.0) / total if term_count >= 2 and total > 0 else 0.0
    return Ranked(
        spread(ranked, score, hits_per_turn(terms), band_lead(terms)),
        frozenset(named),
        frozenset(dated),
        share,
        frozenset(name_only),
    )


def _sessions_within(
    rows: Sequence[tuple[Any, ...]], window: tuple[float, float] | None
) -> set[str]:
    """The sessions of *rows* with a hit timed within *window* (none without one)."""
    if window is None:
        return set()
    return {
        row[3]
        for row in rows
        if isinstance(row[5], (int, float)) and window[0] <= row[5] < window[1]
    }


TALK_K = 60
"""How a conversation's hits add up when coverage ties: the hit at BM25 rank r counts
1 / (TALK_K + r), as in reciprocal rank fusion. On the dev halves (REALTALK, MemDaily) 60 won
over 10 and over a plain count."""
TALK_HITS = 20
"""Only a question's best this many hits (BM25) count towards how much a conversation talks
about it. Counting all of them let a long generated conversation repeating the question's
words in weak matches beat the short one holding them all (the project's 50,000-message
haystacks lost a question each at session R@1); 20 kept those and most of the gain."""


def _talk(rows: Sequence[tuple[Any, ...]], name_only: set[int]) -> dict[str, float]:
    """How much each conversation of *rows* (best BM25 first) talks about the question: its
    hits with content (not matched only through a speaker's name) among the first
    :data:`TALK_HITS`, each by its BM25 rank."""
    talk: dict[str, float] = {}
    for rank, row in enumerate(rows[:TALK_HITS]):
        if row[0] not in name_only:
            talk[row[3]] = talk.get(row[3], 0.0) + 1.0 / (TALK_K + rank)
    return talk


POOLED_K1 = 1.2
"""Term-frequency saturation of :func:`pooled_scores` (BM25's k1): a conversation's n-th
candidate holding a word adds less than its first."""
POOLED_FUSION_K = 2
"""Rank fusion of the coverage order and the pooled order (:func:`fuse_with_pooled`): the
conversation at place r of an order counts 1 / (POOLED_FUSION_K + r)."""
CONVERSATION_WEIGHT = 1.0
"""The weight of the conversations' BM25 over all their messages
(:func:`~hermes_core.sessions.convbm25.conversation_bm25`) in the fusion of
:func:`fuse_with_pooled`, for short and long questions alike. On the dev halves: RealMem
(long queries) session R@5 0.678 → 0.711, turn R@10 0.437 → 0.465; REALTALK session R@1
0.528 → 0.571, session R@5 0.869 → 0.875; MemDaily session R@5 0.694 → 0.697. 0.5 gained
less (REALTALK session R@5 unchanged), 2 lost RealMem's session R@5 (0.688) for its turn R@5."""
POOLED_WEIGHT = 1.0
"""The pooled order's weight in that fusion (the coverage order's is 1). Weighing it double won
more on the dev halves (REALTALK session R@1 0.525 → 0.569, MemDaily 0.403 → 0.423) but lost
R@1 on the project's generated haystacks (`bench_sessions_recall.py --quick`: technical 0.91
→ 0.88, everyday 0.88 → 0.84, two named people 0.85 → 0.80): their long generated
conversations repeat the question's words in many weak candidates."""


def pooled_scores(
    rows: Sequence[tuple[Any, ...]],
    texts: dict[Any, str],
    patterns: Sequence[re.Pattern[str]],
    weights: Sequence[float],
    names: Sequence[bool] = (),
    compound: Mapping[str, set[int]] | None = None,
) -> dict[str, float]:
    """Each conversation's BM25 over its candidates (*rows*, their lower-cased *texts*): for
    each of the question's word groups (*patterns*, their IDF *weights*), the number n of
    the conversation's candidates holding it, saturated as n (k1 + 1) / (n + k1)
    (:data:`POOLED_K1`); the groups *names* marks (a person speaking in a candidate
    conversation) do not count, and a group only a glued compound of a conversation holds
    (*compound*, from :func:`~hermes_core.sessions.compounds.glued_cover`) counts at
    :data:`~hermes_core.sessions.compounds.GLUED_WEIGHT` of its weight, as in coverage.

    Coverage reads a conversation's best few hits and asks only whether a word is there;
    this reads all its candidates and counts how many hold each word, so the conversation
    that keeps talking about the question's rare words outranks one that says them once.
    A person the question names is covered by the conversations they speak in, said or not
    (:func:`_coverage`): whether the other greets them by name is chance, so their name adds
    nothing here either.
    """
    counted = [n for n in range(len(patterns)) if not (n < len(names) and names[n])]
    counts: dict[str, list[int]] = {}
    for row in rows:
        text = texts.get(row[0], "")
        per = counts.setdefault(row[3], [0] * len(patterns))
        for n in counted:
            if patterns[n].search(text):
                per[n] += 1
    pooled = {
        sid: sum(
            weight * held * (POOLED_K1 + 1) / (held + POOLED_K1)
            for weight, held in zip(weights, per, strict=True)
            if held
        )
        for sid, per in counts.items()
    }
    for sid, groups in (compound or {}).items():
        held_by = counts.get(sid)
        halves = [n for n in groups if held_by is None or not held_by[n]]
        pooled[sid] = pooled.get(sid, 0.0) + sum(GLUED_WEIGHT * weights[n] for n in halves)
    return pooled


def fuse_with_pooled(
    order: Sequence[str],
    pooled: dict[str, float],
    weight: float = POOLED_WEIGHT,
    more: Sequence[tuple[dict[str, float], float]] = (),
) -> dict[str, float]:
    """Each conversation's place (lower first): its place in *order* (by coverage) fused with
    its place by *pooled* score (ties in *order*'s order), the place
    r of an order counting 1 / (:data:`POOLED_FUSION_K` + r), the pooled order weighing
    *weight* (:data:`POOLED_WEIGHT`), and each further order by the scores of *more* (scores,
    weight) alike (the conversations' BM25 over all their messages,
    :data:`CONVERSATION_WEIGHT`); with no scores, *order* itself.

    Coverage tells which conversations hold the question's words, the pooled score which
    talk about them most; neither alone orders the first five as well as both. On the dev
    halves: REALTALK session R@5 0.854 → 0.869 (7 questions won, 2 lost), turn R@5 0.484 →
    0.496; MemDaily session R@5 0.686 → 0.694 (25 won, 13 lost), turn R@5 0.652 → 0.657;
    RealMem's short questions one lost. Equal pooled scores keep *order*, so a question about
    the present keeps its newest conversation first.
    """
    at = {sid: n for n, sid in enumerate(order)}
    votes = [(scores, w) for scores, w in ((pooled, weight), *more) if scores and w]
    if not votes:
        return {sid: float(n) for sid, n in at.items()}
    fused = {sid: 1.0 / (POOLED_FUSION_K + n) for sid, n in at.items()}
    for scores, w in votes:
        by_score = sorted(order, key=lambda sid: (-scores.get(sid, 0.0), at[sid]))
        for n, sid in enumerate(by_score):
            fused[sid] += w / (POOLED_FUSION_K + n)
    ranked = sorted(order, key=lambda sid: (-fused[sid], at[sid]))
    return {sid: float(n) for n, sid in enumerate(ranked)}


HITS_K = 2
"""How a long question's hits add up to their conversation's score: the hit at BM25 rank r
counts 1 / (HITS_K + r) (:func:`by_conversation_hits`)."""


def by_conversation_hits(
    rows: Sequence[tuple[Any, ...]],
    terms: Sequence[Term],
    conversation: dict[str, float] | None = None,
) -> list[tuple[Any, ...]]:
    """*rows* (best BM25 first) of a long question in words, ranked by conversation after
    its best message: each conversation scores its hits among the first :data:`TALK_HITS`,
    the hit at rank r counting 1 / (:data:`HITS_K` + r), that order fused with the
    conversations' order by *conversation* (their BM25 over all their messages,
    :func:`~hermes_core.sessions.convbm25.conversation_bm25`; :func:`fuse_with_pooled`), and
    its hits are dealt out as a short question's are (:func:`spread`).

    A long question (a pasted turn, a request explained at length) is ranked by BM25 over
    its words, message by message (:func:`~hermes_core.sessions.question.message_first`):
    coverage does not tell its conversations apart. How many strong hits one holds does:
    the conversation the question continues matches it in several turns, a lookalike in
    one. The best message stays first (the turn a long question's rare words find). On
    RealMem's dev half (395 of 426 queries long): session R@5 0.662 → 0.681 (13 questions
    won, 5 lost), turn R@5 0.315 → 0.326 (18, 13), turn R@10 0.408 → 0.437 (35, 23);
    letting the best conversation's first hit lead instead won session R@1 too (16, 5) but
    buried the turn the question's rare words find under a conversation sharing its common
    words; HITS_K 1 or 5 changed R@5 by a question or two. A question written in CJK keeps
    its message order (:func:`mostly_cjk`, decided by the caller): its character pairs are
    shared by every conversation, and on MemDaily's dev half counting its hits lost turn
    R@5 (0.627 → 0.603, 3 won, 40 lost). The conversation's own BM25 sees the turns the
    candidates miss: a conversation the question continues comes back to its rare words in
    many turns, while the best 20 hits are often one lookalike's (RealMem's dev half:
    session R@5 0.678 → 0.709, turn R@10 0.437 → 0.465).
    """
    if not rows:
        return []
    score: dict[str, float] = {}
    for rank, row in enumerate(rows[:TALK_HITS]):
        score[row[3]] = score.get(row[3], 0.0) + 1.0 / (HITS_K + rank)
    order = {row[0]: n for n, row in enumerate(rows)}
    by_hits = sorted(dict.fromkeys(row[3] for row in rows), key=lambda sid: -score.get(sid, 0.0))
    place = fuse_with_pooled(by_hits, {}, more=((conversation or {}, CONVERSATION_WEIGHT),))
    ranked = sorted(rows[1:], key=lambda row: (place[row[3]], order[row[0]]))
    return [rows[0], *spread(ranked, score, hits_per_turn(terms), band_lead(terms))]


HITS_PER_SESSION_IN_TURN = 2
"""How many hits of one conversation come before the next conversation's best ones."""
CJK_HITS_PER_SESSION_IN_TURN = 1
"""The same for a question written in CJK (:func:`hits_per_turn`)."""


def hits_per_turn(terms: Sequence[Term]) -> int:
    """How many hits of a conversation :func:`spread` deals at a time for a question of *terms*:
    :data:`CJK_HITS_PER_SESSION_IN_TURN` when most of its terms hold CJK, else
    :data:`HITS_PER_SESSION_IN_TURN`.

    A question's words in English are few and each is a topic: a conversation's second hit
    shares one with the question, and is often the rest of the answer. A CJK question is
    searched by its character pairs (no spaces, so no words), most of them shared by many
    messages of every conversation (``那个``, ``小区``, ``怎么样``): conversations cover it
    about equally, and a conversation's second hit mostly shares a pair or two with it. Two
    hits each then spent the first ten places on five lookalike conversations; one each
    reaches the evidence of twice as many (MemDaily's dev half: turn R@5 0.585 → 0.627,
    turn R@10 0.691 → 0.725, against 0.560 and 0.707 for BM25 over CJK bigrams).
    """
    return CJK_HITS_PER_SESSION_IN_TURN if mostly_cjk(terms) else HITS_PER_SESSION_IN_TURN


def mostly_cjk(terms: Sequence[Term]) -> bool:
    """Whether most of a question's *terms* hold CJK (a question written in CJK)."""
    return 2 * sum(1 for term in terms if contains_cjk(term.text)) > len(terms)


def evidence_hits(terms: Sequence[Term]) -> int:
    """How many of a conversation's best hits its coverage of a question of *terms* is read
    from: :data:`CJK_SESSION_EVIDENCE_HITS` for a question written in CJK
    (:func:`mostly_cjk`), else :data:`SESSION_EVIDENCE_HITS`.

    A question in words names a few topics, each a word: a conversation's best three hits
    hold what it shares with the question, and reading more lets a long conversation cover
    more by volume (REALTALK's dev half: 8 hits lost 6 questions at session R@1, 9 won, 15
    lost). A CJK question is searched by its character pairs, and one answer's pairs sit in
    several of its conversation's messages (the place in one, its name in the next), while a
    lookalike conversation repeats a few of them in each: on MemDaily's dev half reading 8
    hits won session R@1 0.374 → 0.403 (60 questions won, 17 lost), session R@5 0.661 →
    0.685 (52, 16), session R@10 0.771 → 0.797 (41, 3), turn R@5 0.627 → 0.643 (41, 17);
    4 hits won about half of that, 12 the same as 8.
    """
    return CJK_SESSION_EVIDENCE_HITS if mostly_cjk(terms) else SESSION_EVIDENCE_HITS


CLEAR_LEAD = 0.75
"""A conversation leads clearly when a later one covers less than this share of its score."""
CJK_CLEAR_LEAD = 0.5
"""The same for a question written in CJK (:func:`band_lead`)."""
HITS_DEALT_BY_BAND = 6
"""A conversation's first this many hits are dealt within its band; the rest come after every
conversation's first ones. On REALTALK's dev half bands without this bound lost 3 points of
session R@10 (a strong band's long tails pushed later conversations out of the pool)."""


def band_lead(terms: Sequence[Term]) -> float:
    """The share of a band's first score that keeps a conversation in its band for a question
    of *terms*: :data:`CJK_CLEAR_LEAD` when most of its terms hold CJK, else
    :data:`CLEAR_LEAD`.

    A CJK question's character pairs are shared by most conversations, so a lookalike
    conversation often scores well above the one holding the answer; a wider band deals the
    answer's conversation its first hits sooner (MemDaily's dev half: turn R@5 0.643 → 0.652,
    turn R@10 0.743 → 0.751, session R@k unchanged). For a question in words the same wider
    band lowered REALTALK's dev turn R@5 0.484 → 0.475 and RealMem's 0.326 → 0.324.
    """
    return CJK_CLEAR_LEAD if mostly_cjk(terms) else CLEAR_LEAD


def bands(order: Sequence[Any], score: dict[str, float], lead: float = CLEAR_LEAD) -> list[int]:
    """The band of each conversation of *order* (best first): a band is a conversation and the
    ones after it scoring at least *lead* of its *score*; the first below starts the next."""
    found: list[int] = []
    start: Any = None
    for sid in order:
        if start is None or score.get(sid, 0.0) < lead * score.get(start, 0.0):
            start = sid
        found.append(found[-1] + (start == sid) if found else 0)
    return found


def spread(
    rows: Sequence[tuple[Any, ...]],
    score: dict[str, float] | None = None,
    per_session: int = HITS_PER_SESSION_IN_TURN,
    lead: float = CLEAR_LEAD,
) -> list[tuple[Any, ...]]:
    """*rows* (grouped best conversation first) dealt out a few hits per conversation at a time.

    The conversations keep their order and the first hit stays first. They
    fall into bands by their *score* (:func:`bands`): conversations covering
    the question about as well as the band's first are dealt together, only
    :data:`HITS_PER_SESSION_IN_TURN` of each before the next one's best, so
    that when the first conversation is the wrong one the evidence of the next
    still reaches the first positions, and an answer spread over several
    conversations is seen whole. A conversation covering clearly less (below
    :data:`CLEAR_LEAD` of the band's first) waits for the band's first
    :data:`HITS_DEALT_BY_BAND` hits each; a clear leader is a band of its own
    and keeps those together.
    """
    if per_session <= 0:
        return list(rows)
    score = score or {}
    order = list(dict.fromkeys(row[3] for row in rows))
    band = dict(zip(order, bands(order, score, lead), strict=True))
    session_rank = {sid: n for n, sid in enumerate(order)}
    within: dict[Any, int] = {}
    keys = []
    for n, row in enumerate(rows):
        k = within.get(row[3], 0)
        within[row[3]] = k + 1
        deal = (k // per_session, session_rank[row[3]], n)
        keys.append((0, band[row[3]], *deal) if k < HITS_DEALT_BY_BAND else (1, 0, *deal))
    return [rows[key[-1]] for key in sorted(keys)]


def _matched_by_name_only(
    conn: sqlite3.Connection,
    rows: Sequence[tuple[Any, ...]],
    terms: Sequence[Term],
    named: dict[str, set[str]],
) -> set[Any]:
    """The hits of sessions with a named speaker whose text holds none of the question's other
    words: the index matched them through the speaker's name alone."""
    groups = word_groups(terms)
    ids = [row[0] for row in rows if row[3] in named]
    if not ids:
        return set()
    texts = dict(
        conn.execute(
            f"SELECT id, lower(substr(COALESCE(content, ''), 1, {COVERAGE_CHARS})) "
            "FROM messages WHERE id IN (SELECT value FROM json_each(?))",
            (json.dumps(ids),),
        )
    )
    session_of = {row[0]: row[3] for row in rows}
    patterns = {key: group_pattern(forms) for key, forms in groups.items()}
    found = set()
    for mid in ids:
        speakers = named.get(session_of[mid], set())
        content = [p for key, p in patterns.items() if key not in speakers]
        text = texts.get(mid) or ""
        if not any(pattern.search(text) for pattern in content):
            found.add(mid)
    return found


class Ranked(NamedTuple):
    """Hits ranked by conversation, and the sessions ranked first for a reason of their own."""

    rows: list[tuple[Any, ...]]
    named: frozenset[str] = frozenset()
    """Sessions where a person the question names speaks."""
    dated: frozenset[str] = frozenset()
    """Sessions with a hit within the question's time span."""
    share: float = 0.0
    """How much of the question the best conversation covers: its summed word weights over
    those of all the question's words (0 when not measured)."""
    name_only: frozenset[Any] = frozenset()
    """Hits that matched only through a speaker's name (ids)."""


_SENTENCE_END = re.compile(r"[.!?。！？…](?=[\s\"')]|$)")


def tells_more_than_it_asks(content: Any, patterns: Sequence[re.Pattern[str]]) -> bool:
    """True when the question's words sit more in what a turn states than in its last question.

    "My sister gave me a ukulele for my birthday! What should I learn first?"
    answers "what did I get for my birthday?" by itself; "What did you make?"
    only points at the reply.
    """
    if not isinstance(content, str) or not patterns:
        return False
    text = content.rstrip(" \t\r\n\"')").lower()
    ends = [m.end() for m in _SENTENCE_END.finditer(text, 0, max(0, len(text) - 1))]
    if not ends:
        return False
    stated, asked = text[: ends[-1]], text[ends[-1] :]
    in_stated = sum(1 for pattern in patterns if pattern.search(stated))
    in_asked = sum(1 for pattern in patterns if pattern.search(asked))
    return in_stated > in_asked


def asks_briefly(terms: Sequence[Term]) -> bool:
    """Whether a question of *terms* names fewer than
    :data:`~hermes_core.sessions.question.MESSAGE_FIRST_TERMS` words (the forms of one word
    counted once): then an asking turn that states more of it than it asks answers it by
    itself, whoever speaks (see :func:`with_replies`)."""
    return len(word_groups(terms)) < MESSAGE_FIRST_TERMS


def with_replies(
    conn: sqlite3.Connection,
    layout: Layout,
    rows: list[tuple[Any, ...]],
    need: int,
    text: bool,
    filters: SearchFilters,
    terms: Sequence[Term] = (),
) -> list[tuple[Any, ...]]:
    """*rows* with the reply to each of the first asking turns placed next to it.

    In a conversation a question is answered by the next turn, which rarely
    repeats its words: "What did you make?" matches "What did Ana make in her
    first pottery lesson?", "A very lopsided bowl." does not. So each of the
    first :data:`REPLY_LOOKUP_HITS` hits that ends by asking something (its
    last character is ``?``) brings the next message of its session, when
    someone else says it, ahead of itself: the asking turn points at the
    answer. A user's message to an assistant, though, usually states its
    context before asking for help: when it states more of the question's
    *terms* than its last question asks ("We adopted a kitten and called her
    Miso! What food is best?" for "what did we name the cat?"), the turn
    answers by itself and the reply follows it. Between named speakers (a
    transcript of two friends) the same holds for a short question
    (:func:`asks_briefly`: "I had an exam today, which I did great on. How about
    you?" answers "When did Paola have an exam?"); for a long one (a pasted turn)
    the asking turn always points at its reply. A question in the middle of a turn is
    usually rhetorical. A reply is in its question's session, so it passes the
    session and source filters; the time filters apply to it too.
    """
    asking = [row[0] for row in rows[:REPLY_LOOKUP_HITS]]
    if not asking:
        return rows
    params: dict[str, Any] = {"ids": json.dumps(asking)}
    within = ""
    if filters.since is not None:
        params["since"] = float(filters.since)
        within += " AND n.timestamp >= :since"
    if filters.until is not None:
        params["until"] = float(filters.until)
        within += " AND n.timestamp < :until"
    other_speaker = "r.role <> m.role"
    if "name" in layout.message_columns:
        other_speaker += " OR COALESCE(r.name, '') <> COALESCE(m.name, '')"
    # Between named people (a transcript of friends) a question is put to the other;
    # a user's unnamed message to an assistant states its context, then asks for help.
    to_assistant = "m.role = 'user' AND r.role = 'assistant'"
    if "name" in layout.message_columns:
        to_assistant += " AND m.name IS NULL"
    if asks_briefly(terms):  # a short question: a friend's stating turn answers it too
        to_assistant = "1"
    sql = (
        f"SELECT m.id, CASE WHEN {to_assistant} THEN substr(m.content, 1, {COVERAGE_CHARS}) "
        "END, "
        f"r.id, NULL, NULL, {detail_columns(layout, text, 'r')} "
        "FROM messages AS m JOIN messages AS r ON r.id = ("
        "SELECT n.id FROM messages AS n WHERE n.session_id = m.session_id AND n.id > m.id "
        f"AND n.role IN ('user', 'assistant') AND {layout.visible_rows_sql('n')}{within} "
        "ORDER BY n.id LIMIT 1) "
        "WHERE m.id IN (SELECT value FROM json_each(:ids)) "
        "AND substr(rtrim(m.content, char(9, 10, 13, 32, 34, 39, 41)), -1) IN ('?', '？') "
        f"AND ({other_speaker})"
    )
    try:
        found = conn.execute(sql, params).fetchall()
    except sqlite3.OperationalError as exc:
        if is_busy(exc):
            raise
        log.warning("looking up replies failed in SQLite (%s); keeping the hits", exc)
        return rows
    patterns = [group_pattern(forms) for forms in word_groups(terms).values()]
    replies: dict[Any, tuple[Any, ...]] = {}
    after: set[Any] = set()
    for row in found:
        replies[row[0]] = row[2:]
        if tells_more_than_it_asks(row[1], patterns):
            after.add(row[0])
    merged: list[tuple[Any, ...]] = []
    seen: set[Any] = set()
    for row in rows:
        reply = replies.get(row[0])
        for item in (row, reply) if row[0] in after else (reply, row):
            if item is not None and item[0] not in seen:
                seen.add(item[0])
                merged.append(item)
    return merged[:need]


def _with_named_speaker(
    conn: sqlite3.Connection, layout: Layout, rows: list[tuple[Any, ...]], terms: Sequence[Term]
) -> dict[str, set[str]]:
    """The sessions of *rows* where someone speaks whose name is one of the words of *terms*,
    each with those words (lower-case).

    Read from the partial index of speaker names, so sessions without named
    speakers (the usual one-user history) cost nothing.
    """
    if "name" not in layout.message_columns:
        return {}
    words = {term.text.lower() for term in terms if term.simple}
    found = conn.execute(
        "SELECT DISTINCT session_id, name FROM messages "
        "WHERE session_id IN (SELECT value FROM json_each(?)) AND name IS NOT NULL",
        (json.dumps(list(dict.fromkeys(row[3] for row in rows))),),
    )
    named: dict[str, set[str]] = {}
    for session_id, name in found:
        said = words & set(WORD_RE.findall(name.lower())) if isinstance(name, str) else set()
        if said:
            named.setdefault(session_id, set()).update(said)
    return named


CALLS_READ = 4 * COVERAGE_CHARS
"""Characters of a candidate's tool calls read; longer ones are read as written."""


def calls_text(calls: Any) -> str | None:
    """A candidate's tool calls for coverage: decoded when whole within the read, else raw."""
    if not isinstance(calls, str) or not calls:
        return None
    if len(calls) > CALLS_READ:  # cut: not JSON any more, and decoding it all is costly
        return calls[:COVERAGE_CHARS]
    return tool_calls_text(calls)[:COVERAGE_CHARS]


def covered_groups(
    evidence: dict[str, list[int]],
    texts: dict[int, str],
    patterns: Sequence[re.Pattern[str]],
    keys: Sequence[str],
    named: dict[str, set[str]],
) -> dict[str, set[int]]:
    """For each session, the positions of the word groups (their *patterns*) the *texts* of its
    best hits (*evidence*) contain, and those whose key names a speaker there (*named*)."""
    covered: dict[str, set[int]] = {}
    for session_id, hits in evidence.items():
        covered[session_id] = {
            n
            for mid in hits
            for n, pattern in enumerate(patterns)
            if pattern.search(texts.get(mid, ""))
        }
        speakers = named.get(session_id)
        if speakers:
            covered[session_id].update(n for n, key in enumerate(keys) if key in speakers)
    return covered


def _coverage(
    conn: sqlite3.Connection,
    layout: Layout,
    rows: list[tuple[Any, ...]],
    terms: Sequence[Term],
    named: dict[str, set[str]] | None = None,
    glued: Glued | None = None,
    typed: frozenset[str] = frozenset(),
) -> tuple[dict[str, float], list[tuple[Any, ...]], float, dict[str, float]]:
    """Each conversation's summed weight of the *terms* its best hits contain, the rows found
    inside compounds, the summed weight of all the terms, and how much each conversation's
    candidates talk about the question (:func:`pooled_scores`).

    A person's name is covered by a conversation they speak in (*named*: session ->
    the question's words that name a speaker there), said or not: between two
    friends nobody says their own name, and whether the other does is chance.

    A rare word the question typed (*typed*) is also looked for as the head of a
    glued compound (*gym* in "FlexGym", *plants* in "houseplants"): see
    :func:`~hermes_core.sessions.compounds.glued_matches`. Such a match covers
    the word at half its weight, and its rows are returned to join the hits
    (after them).
    """
    evidence: dict[str, list[int]] = {}
    read = evidence_hits(terms)
    for row in rows:  # best BM25 first; a long conversation does not cover more by volume
        hits = evidence.setdefault(row[3], [])
        if len(hits) < read:
            hits.append(row[0])
    tool_calls = "tool_calls" if "tool_calls" in layout.message_columns else "NULL"
    texts = {
        mid: " ".join(
            part for part in (content, name, calls_text(calls)) if isinstance(part, str)
        ).lower()
        for mid, content, name, calls in conn.execute(
            f"SELECT id, substr(content, 1, {COVERAGE_CHARS}), tool_name, "
            f"substr({tool_calls}, 1, {CALLS_READ + 1}) "
            "FROM messages WHERE id IN (SELECT value FROM json_each(?))",
            (json.dumps([row[0] for row in rows]),),  # every candidate: see pooled_scores
        )
    }
    total = float(conn.execute("SELECT max(id) FROM messages").fetchone()[0] or 1)
    # The forms of one word (buy, bought) are one word to cover, weighed by the
    # messages holding any of them.
    groups = word_groups(terms)
    counted = [_weight(conn, layout, forms, total) for forms in groups.values()]
    weights = [weight for weight, _ in counted]
    patterns = [group_pattern(forms) for forms in groups.values()]
    keys = list(groups)
    speaking = set().union(*named.values()) if named else set()
    compound: dict[str, set[int]] = {}
    glued_rows: list[tuple[Any, ...]] = []
    if glued is not None:
        compound, glued_rows = glued_cover(
            glued,
            sqlite_words(conn, layout),
            groups,
            [found for _, found in counted],
            total,
            speaking,
            typed,
        )
    covered = covered_groups(evidence, texts, patterns, keys, named or {})
    scores = covered_scores(covered, compound, weights)
    names = [key in speaking for key in keys]
    pooled = pooled_scores(rows, texts, patterns, weights, names, compound)
    return scores, glued_rows, sum(weights), pooled
