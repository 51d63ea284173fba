"""Turning what someone typed into a recall-oriented search plan.

An agent asks ``What did I decide about the deploy script?``. FTS5's default
(every word must match) finds nothing for that: *what*, *did*, *I* and *the*
rarely sit in the same message as the answer. The plan therefore:

* keeps explicit FTS syntax (quotes, ``AND``/``OR``/``NOT``, ``prefix*``) as typed,
  except a phrase quoted inside a question (*When did she read "Dune"?*): that is
  planned as a question, the phrase a preference (:attr:`Plan.phrases`), and syntax
  inside prose (:func:`is_prose`: a pasted turn's ``**bold**``), which is not syntax;
* treats a short keyword query (``docker networking``) as AND, topped up with
  OR matches when AND finds almost nothing (fewer than 5 messages);
* treats a question or sentence as a bag of content words: stop words,
  conversational filler (*remember*, *discussed*…) and possessives are removed,
  the rest are OR-ed so BM25 ranks by how many rare words a message shares, and
  messages that contain every word, or consecutive words close together, are
  boosted; words that only frame the question (*how long*, the unit of *how
  many days*, *these days*) are dropped; a phrasal verb also brings its
  one-word spelling (*roll back*: *rollback*), an irregular word its other
  forms (*buy*: *bought*) and a number its other spelling (*18*: *eighteen*);
  a question about the present (*now*, *currently*, *these days*) prefers the
  newest of equally good conversations;
* splits a run of three or more Chinese/Japanese/Korean letters (no spaces, so
  no words) into its bigrams, minus function characters, when the exact run is
  (almost) not found.

The word index is porter-stemmed, so *deployed*, *deploying* and *deployment*
all meet *deploy* without any work here; text read outside the index is cut
with the same stemmer (:func:`~hermes_core.sessions.porter.porter_stem`, :func:`stem`).
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Sequence
from typing import NamedTuple

from hermes_core.sessions.cjk import CJK_CLASS, cjk_runs, contains_cjk, only_cjk
from hermes_core.sessions.porter import porter_stem
from hermes_core.sessions.query import Clause, ParsedQuery, Term, parse_query
from hermes_core.sessions.wordforms import number_forms, word_forms

__all__ = [
    "STOP_WORDS",
    "Plan",
    "is_passage",
    "is_prose",
    "is_stop_word",
    "message_first",
    "names_a_topic",
    "plan_query",
    "stem",
    "stem_regex",
    "top_up",
]

STOP_WORDS = frozenset(
    """
    a about above after again against all am an and any are aren't as at be because been
    before being below between both but by can can't cannot could couldn't did didn't do
    does doesn't doing don't down during each few for from further had hadn't has hasn't
    have haven't having he he'd he'll he's her here here's hers herself him himself his how
    how's i i'd i'll i'm i've if in into is isn't it it's its itself let's me more most
    mustn't my myself no nor not of off on once only or other ought our ours ourselves out
    over own same shan't she she'd she'll she's should shouldn't so some such than that
    that's the their theirs them themselves then there there's these they they'd they'll
    they're they've this those through to too under until up very was wasn't we we'd we'll
    we're we've were weren't what what's when when's where where's which while who who's
    whom why why's will with won't would wouldn't you you'd you'll you're you've your yours
    yourself yourselves also just really quite maybe perhaps please thanks thank ok okay yes
    yeah hey hi hello would've could've should've whats wheres whos hows remember remembered
    recall recalled discuss discussed discussion talk talked talking mention mentioned say
    said tell told ask asked asking know knew think thought thing things stuff something
    anything everything someone anyone ever earlier previously last time times ago before
    again back already still got get getting use used using want wanted need needed like one
    two way lot lots kind sort now today every
    """.split()  # noqa: SIM905
)
"""English function words and conversational filler that carry no topic."""

# Chinese function characters; bigrams made only of these are dropped.
_CJK_FUNCTION_CHARS = frozenset(
    "的了是在我你他她它们吗呢吧啊么什怎如何为哪这那个之前后有和与就都也还要会能把被给对从到说过于"
)

_RECENCY_CUES = frozenset(
    {"now", "current", "currently", "latest", "recent", "recently", "anymore", "nowadays"}
)
"""Words asking for the present state: the newest answer is the one wanted."""

_RECENCY_PHRASES = (
    ("these", "days"),
    ("at", "the", "moment"),
    ("at", "present"),
    ("right", "now"),
    ("any", "more"),
    ("as", "of", "now"),
    ("so", "far"),
)
"""Several-word ways of asking about the present; their words are dropped from the search."""

_HOW_FRAMES = frozenset({"long", "often", "far", "soon"})
"""Words that with *how* ask for a quantity (how long, how often) and name no topic."""

_TIME_UNITS = frozenset(
    """
    second seconds minute minutes hour hours day days week weeks weekend weekends fortnight
    fortnights month months year years
    """.split()  # noqa: SIM905
)
_ELAPSED = frozenset({"passed", "elapsed", "apart", "take", "took", "taken", "lasted"})
"""In a question counting time (how many days…, how long…), the words of its frame."""

_PARTICLES = frozenset({"back", "up", "down", "in", "out", "off", "over", "on", "away"})
"""Second words of phrasal verbs that are also written as one word (roll back: rollback)."""

_LONG_CJK_RUN = 3
"""CJK runs at least this long are also searched as their bigrams (words are not delimited)."""


class Plan(NamedTuple):
    """How to search: a primary query, an optional top-up, optional boosts."""

    primary: ParsedQuery
    boosts: tuple[ParsedQuery, ...] = ()
    """Hits of the primary that also match one of these rank higher."""
    mode: str = "literal"
    """``literal`` (explicit syntax), ``keywords`` or ``question``."""
    prefer_recent: bool = False
    """The question asks for the current state (*now*, *currently*, *latest*…): among
    conversations that answer equally well, the most recent comes first."""
    keywords: tuple[Term, ...] = ()
    """The words typed, in ``keywords`` mode: the top-up query is made from them."""
    phrases: tuple[Term, ...] = ()
    """Phrases quoted inside a question (*When did she read "nothing is impossible"?*): a
    strong preference (conversations holding one rank first, its messages are boosted),
    never a filter: the question is still searched by its words."""
    extras: frozenset[str] = frozenset()
    """Words a question's plan added (one-word spellings, other forms; lower-case): one the
    word index has never seen is dropped, not looked up inside other words as a typed one is."""

    @property
    def fallback(self) -> ParsedQuery | None:
        """Run when the primary query finds almost nothing; its hits rank after.

        Built on demand: most keyword searches never need it.
        """
        if not self.keywords:
            return None
        expanded = _expanded(list(self.keywords), _content_words(self.keywords))
        return _any_of(self.primary, expanded) if len(expanded) > 1 else None


def top_up(plan: Plan, fallback: ParsedQuery) -> ParsedQuery:
    """*plan*'s :attr:`~Plan.fallback` without the one keyword that is the whole primary query.

    The primary has found every message holding that keyword already (``记忆断裂``, the
    phrase of its bigrams), so the top-up need only ask for its parts (``记忆``, ``断裂``):
    the same messages in the same order (a row's BM25 score is a sum over the phrases it
    matches), one phrase fewer for the index to match.
    """
    whole = plan.primary.clauses[0].include if len(plan.primary.clauses) == 1 else ()
    if len(whole) != 1:
        return fallback
    return _any_of(fallback, [term for term in fallback.terms if term != whole[0]])


def stem(word: str) -> str:
    """*word* lower-cased, cut to the start its Porter family shares: a prefix to find in raw text.

    The word index is porter-stemmed (:func:`porter_stem`); places that read
    text directly (snippets, conversation coverage, transcript windows) look
    for the start of the word that its stem keeps: ``deployments`` and
    ``deployed`` → ``deploy`` (Porter's ``deploi`` with its ``y`` back),
    ``fixes`` → ``fix``, ``notes`` → ``note``. At least three letters are kept;
    a possessive goes first (``grace's`` → ``grace``).
    """
    word = word.lower()
    if word.endswith("'s") and len(word) > 2:
        word = word[:-2]
    word = word.rstrip("'")
    porter = porter_stem(word)
    if porter.endswith("i") and word.startswith(porter[:-1] + "y"):
        porter = porter[:-1] + "y"  # happi(ness) -> happy, deploi(ed) -> deploy
    shared = next((n for n, (a, b) in enumerate(zip(word, porter, strict=False)) if a != b), None)
    cut = porter if shared is None else porter[:shared]
    return cut if len(cut) >= 3 else word


_SILENT_E_ENDINGS = "(?:e|ing|ion|ation|able)"


def stem_regex(cut: str) -> str:
    """A regular expression for the start of the words *cut* (a :func:`stem`) stands for.

    A stem ending in a silent ``e`` loses it before a suffix: ``save`` starts
    ``saves`` and ``saved`` but not ``saving``, ``practise`` not ``practising``,
    ``relocate`` not ``relocation``; so its ``e`` may also be one of those
    suffixes. A stem ending in a consonant's ``y`` or ``i`` stands for both,
    since English turns the one into the other before a suffix: ``hobbies``
    (``hobbi``) covers "my hobby", ``party`` covers "parties". Any other stem
    is matched as written.
    """
    if len(cut) >= 4 and cut[-2] not in "aeiouy" and cut.isalpha():
        if cut.endswith("e"):
            return re.escape(cut[:-1]) + _SILENT_E_ENDINGS
        if cut[-1] in "iy":
            return re.escape(cut[:-1]) + "[iy]"
    return re.escape(cut)


def _strip_possessive(term: Term) -> Term:
    text = term.text
    lowered = text.lower()
    if lowered.endswith("'s") and len(text) > 2:
        return Term(text[:-2], prefix=term.prefix)
    if lowered.endswith("s'") and len(text) > 2:
        return Term(text[:-1], prefix=term.prefix)
    return term


def is_stop_word(term: Term) -> bool:
    """True for a function word, filler word, or a contraction of one."""
    if term.quoted or term.prefix:
        return False
    lowered = term.text.lower()
    if lowered in STOP_WORDS:
        return True
    head, sep, _ = lowered.partition("'")
    return bool(sep) and head in STOP_WORDS


_ACTIVITY_WORDS = frozenset(
    {
        *("work", "worked", "working", "chat", "chatted", "chatting"),
        *("conversation", "conversations", "happen", "happened", "happening", "go", "went"),
    }
)
"""Words that ask what went on rather than about what ("what did we work on?")."""
_CJK_FILLER = (
    *("我们", "你们", "咱们", "讨论", "聊天", "聊了"),
    *("说了", "做了", "干了", "什么", "哪些"),
)


def names_a_topic(question: str) -> bool:
    """True when *question* asks about something, not only what went on ("what did we do?").

    ``session_search`` lists the conversations of a time span for a question
    that names a time and no topic.
    """
    for term in parse_query(question).terms:
        if is_stop_word(term) or term.text.lower() in _ACTIVITY_WORDS:
            continue
        text = term.text
        if contains_cjk(text):
            for filler in _CJK_FILLER:
                text = text.replace(filler, "")
            if all(c in _CJK_FUNCTION_CHARS or not c.strip() for c in text):
                continue
        return True
    return False


def _cjk_bigram_terms(run: str) -> list[Term]:
    grams = dict.fromkeys(
        run[i : i + 2]
        for i in range(len(run) - 1)
        if run[i] not in _CJK_FUNCTION_CHARS or run[i + 1] not in _CJK_FUNCTION_CHARS
    )
    return [Term(gram) for gram in grams]


def _frame(words: Sequence[Term]) -> tuple[set[int], bool]:
    """(positions of the words that only frame the question, whether it asks about the present).

    *How long*, *how often* and *how many days* ask for a quantity: *long*,
    *often*, the count and unit and the verbs of counting time (*passed*, *take*) are not
    what the conversation talks about, and in a small store they are rare
    enough to outweigh the topic (a bare *how much* stays: "How much was it?"
    in the history asks what the question asks). *These days*, *at the moment*, *so far* ask
    for the present state, like *now*.
    """
    lowered = [word.text.lower() if word.simple else "" for word in words]
    drop: set[int] = set()
    recent = False
    for phrase in _RECENCY_PHRASES:
        size = len(phrase)
        for i in range(len(lowered) - size + 1):
            if tuple(lowered[i : i + size]) == phrase:
                drop.update(range(i, i + size))
                recent = True
    counting = False
    for i, word in enumerate(lowered[:-1]):
        if word != "how":
            continue
        if lowered[i + 1] in _HOW_FRAMES:
            drop.add(i + 1)
            counting = counting or lowered[i + 1] == "long"
        elif lowered[i + 1] in ("many", "much") and set(lowered[i + 2 : i + 3]) & _TIME_UNITS:
            drop.update((i + 1, i + 2))
            counting = True
    if counting:
        drop.update(i for i, word in enumerate(lowered) if word in _ELAPSED)
    return drop, recent


def _compounds(words: list[Term]) -> list[Term]:
    """One-word spellings of phrasal verbs: ``roll back`` → ``rollback``, ``log in`` → ``login``."""
    compounds = []
    for left, right in itertools.pairwise(words):
        if (
            right.text.lower() in _PARTICLES
            and left.text.isalpha()
            and left.text.isascii()
            and not is_stop_word(left)
            and not left.prefix
        ):
            compounds.append(Term(left.text.lower() + right.text.lower()))
    return compounds


def _other_forms(words: list[Term]) -> list[Term]:
    """The other forms of irregular words (``buy`` → ``bought``, ``children`` → ``child``)
    and of numbers (``18`` → ``eighteen``, ``twelve-week`` → ``12-week``)."""
    forms: list[Term] = []
    for word in words:
        if word.quoted or word.prefix:
            continue
        lowered = word.text.lower()
        found = number_forms(lowered) or (word_forms(lowered) if word.simple else ())
        forms.extend(Term(form) for form in found if form != lowered)
    return forms


def _query(parsed: ParsedQuery, clauses: list[Clause]) -> ParsedQuery:
    terms = tuple(itertools.chain.from_iterable(clause.include for clause in clauses))
    return ParsedQuery(
        clauses=tuple(clauses),
        explicit=parsed.explicit,
        text=parsed.text,
        question=parsed.question,
        terms=terms,
    )


def _any_of(parsed: ParsedQuery, terms: list[Term]) -> ParsedQuery:
    return _query(parsed, [Clause((term,)) for term in terms])


def _all_of(parsed: ParsedQuery, terms: list[Term]) -> ParsedQuery:
    return _query(parsed, [Clause(tuple(terms))])


def _near_pairs(parsed: ParsedQuery, terms: list[Term]) -> ParsedQuery:
    """Consecutive content words as phrases (adjacent in the text, stems allowed)."""
    pairs = []
    for left, right in itertools.pairwise(terms):
        if contains_cjk(left.text) or contains_cjk(right.text):
            continue
        pairs.append(Term(f"{left.text} {right.text}", quoted=True))
    return _any_of(parsed, pairs)


def _content_words(words: Sequence[Term]) -> list[Term]:
    return [_strip_possessive(w) for w in words if not is_stop_word(w)]


def _expanded(words: list[Term], content: list[Term]) -> list[Term]:
    """*content* plus CJK bigrams, one-word spellings of phrasal verbs and irregular forms."""
    expanded: list[Term] = []
    for term in dict.fromkeys(content):
        expanded.append(term)
        for run in cjk_runs(term.text):
            if len(run) >= _LONG_CJK_RUN:
                expanded.extend(_cjk_bigram_terms(run))
    seen = {term.text.lower() for term in expanded}
    for extra in _compounds(words) + _other_forms(content):
        if extra.text not in seen:
            seen.add(extra.text)
            expanded.append(extra)
    return expanded


_CJK_SPLIT = re.compile(f"([{CJK_CLASS}]+)")
_GLUED_MIN = 3
"""The trigram index's shortest substring: a shorter part glued to CJK keeps the letter after it."""
_CONNECTORS = "-._/\\:@#+'=&~%"
"""The query parser's connectors (``query._CONNECTORS``): not kept at the edge of a part."""


def _glued_to_cjk(content: Sequence[Term]) -> list[Term]:
    """The letters and digits of *content* written against CJK letters, as substrings.

    Chinese puts no space between a word and a number or a Latin name, so one term of a
    question (``电话号是18486487257的人``, ``30岁及以上``) and one token of the word index
    (``我叔叔的电话号是18486487257``) hold the number with different letters around it:
    neither the term nor its CJK bigrams meet the message. The number (the name, the
    e-mail address, the date) alone is what the question and the message share, and the
    trigram index finds it inside the message's text; a part shorter than three characters
    keeps the CJK letter after it (``30岁``), which is usually its unit.
    """
    parts: list[Term] = []
    for term in content:
        if term.quoted or not contains_cjk(term.text) or only_cjk(term.text):
            continue
        pieces = _CJK_SPLIT.split(term.text)  # other letters at even places, CJK at odd
        for n in range(0, len(pieces), 2):
            piece = pieces[n].strip(_CONNECTORS)
            if not any(char.isalnum() for char in piece):
                continue
            if len(piece) < _GLUED_MIN and n + 1 < len(pieces):
                piece += pieces[n + 1][0]
            if len(piece) >= _GLUED_MIN:
                parts.append(Term(piece, substring=True))
    return parts


PROSE_WORDS = 12
"""A query of at least this many words, a quarter of them or more stop words, is prose. On
RealMem's dev half 66 of 426 queries (users' turns) held markdown emphasis (``*only*``,
``**bold**``) and were searched as an AND of every word, finding nothing: as prose, session
R@5 0.533 → 0.610, turn R@5 0.275 → 0.293 (REALTALK's dev half: no query changed)."""
_PROSE_STOP_SHARE = 0.25
_WORD = re.compile(r"\w+")
_OPERATOR_WORD = re.compile(r"\b(AND|OR|NOT|NEAR)\b")


def is_prose(text: str) -> bool:
    """True for text written as sentences (a pasted turn, a long request), not as a query.

    Syntax in prose is not meant as FTS syntax: ``*in*`` and ``**bold**`` are markdown
    emphasis, not prefixes, a shouted *NOT* is a word; only a quoted phrase keeps a role
    (a preference, as inside a question).
    """
    words = _WORD.findall(text)
    if len(words) < PROSE_WORDS:
        return False
    stops = sum(1 for word in words if word.lower() in STOP_WORDS)
    return stops >= _PROSE_STOP_SHARE * len(words)


_SENTENCE_END = re.compile(r"[.!?][\"')\]]*\s+\S")


def is_passage(text: str) -> bool:
    """True for text of several sentences (a pasted turn, a request explained at length), not
    one question however long: a sentence ends (``.``, ``!``, ``?``) and another follows."""
    return _SENTENCE_END.search(text) is not None


def _without_syntax(text: str) -> str:
    """*text* with its ``*`` dropped and its upper-case operators read as words."""
    return _OPERATOR_WORD.sub(lambda m: m[1].lower(), text.replace("*", " "))


MESSAGE_FIRST_TERMS = 8
"""A question with this many content words or more (as typed: added forms do not count)
ranks messages first (see :func:`message_first`)."""


def message_first(plan: Plan) -> bool:
    """Whether a question's messages rank by their own score, not by their conversation.

    A long question (a pasted turn, a request of several sentences: at least
    :data:`MESSAGE_FIRST_TERMS` content words) names many things, most of them common
    in the history: every conversation covers some, so ranking conversations by coverage
    puts one conversation's turns first, and the turn answering it is lost among them.
    Its messages rank by BM25 over all its words instead, without the all-words,
    adjacency and quoted-phrase boosts (a long text's pairs of words and quotes are
    incidental). A short question keeps the conversation ranking (named speaker, quoted
    phrase, time span, coverage), which is what wins on short questions.
    """
    if plan.mode != "question":
        return False
    typed = {term.text.lower() for term in plan.primary.terms} - plan.extras
    return len(typed) >= MESSAGE_FIRST_TERMS


@functools.lru_cache(maxsize=512)
def plan_query(parsed: ParsedQuery, question: bool = False) -> Plan:
    """Choose literal, keyword or question handling for a sanitised query.

    *question* plans it as a question however short it is (what is left of one
    once its time phrase is taken out). Plans are immutable and remembered for
    the last few hundred queries.
    """
    prose = parsed.explicit and is_prose(parsed.text)
    if prose:
        parsed = parse_query(_without_syntax(parsed.text))
    if parsed.empty or len(parsed.clauses) != 1:
        return Plan(primary=parsed)
    words = list(parsed.clauses[0].include)
    phrases: tuple[Term, ...] = ()
    if parsed.explicit:
        if not prose and not _quotes_in_a_sentence(parsed):
            return Plan(primary=parsed)
        phrases = tuple(word for word in words if word.quoted)
        words = [w for word in words for w in (_phrase_words(word) if word.quoted else [word])]
        question = True
    content = _content_words(words)
    has_stops = len(content) < len(words)
    question = question or parsed.question or len(words) >= 4 or (len(words) >= 3 and has_stops)
    if not content:
        return Plan(primary=parsed)
    if not question:
        # Without stop words or possessives the words are the parsed query itself.
        primary = parsed if content == words else _all_of(parsed, content)
        return Plan(primary=primary, mode="keywords", keywords=tuple(words))
    framing, present = _frame(words)
    if framing:
        kept = [word for n, word in enumerate(words) if n not in framing]
        if _content_words(kept):  # a question made only of its frame keeps it
            words, content = kept, _content_words(kept)
    expanded = _expanded(words, content)
    seen = {term.text.lower() for term in expanded}
    expanded += [term for term in _glued_to_cjk(content) if term.text.lower() not in seen]
    primary = _any_of(parsed, expanded)
    typed = {term.text.lower() for term in content}
    extras = frozenset(term.text.lower() for term in expanded) - typed
    boosts: list[ParsedQuery] = []
    if len(content) > 1:
        boosts.append(_all_of(parsed, content))
        near = _near_pairs(parsed, content)
        if not near.empty:
            boosts.append(near)
    recent = present or any(word.text.lower() in _RECENCY_CUES for word in words)
    return Plan(
        primary=primary,
        boosts=tuple(boosts),
        mode="question",
        prefer_recent=recent,
        phrases=phrases,
        extras=extras,
    )


_SENTENCE_WORDS = 3
"""Words outside quotes that make a query with quotes a sentence rather than FTS syntax."""


def _quotes_in_a_sentence(parsed: ParsedQuery) -> bool:
    """True for a question or sentence that quotes a title or phrase, with no other syntax.

    ``When did she read the book "nothing is impossible"?`` asks a question; the
    quotes mark a title. ``"connection refused" nginx`` is FTS syntax, kept literal.
    """
    clause = parsed.clauses[0]
    if clause.exclude or any(term.prefix for term in clause.include):
        return False
    if any(word in ("AND", "OR", "NOT", "NEAR") for word in parsed.text.split()):
        return False
    plain = [term for term in clause.include if not term.quoted]
    if len(plain) == len(clause.include):
        return False
    return parsed.question or (
        len(plain) >= _SENTENCE_WORDS and any(is_stop_word(term) for term in plain)
    )


def _phrase_words(phrase: Term) -> list[Term]:
    """The words of a quoted phrase, searched like the question's other words."""
    return [term for term in parse_query(phrase.text).terms if not term.quoted]
