"""Irregular English word forms and a few everyday near-synonyms, searched as one word.

The word index is porter-stemmed, which joins *deploy*, *deployed* and
*deploying* but not *buy* and *bought*, *go* and *went*, *child* and
*children*. People ask about the past in the present tense ("What camera did I
buy?") while the conversation said "I finally bought a Fujifilm", so a question
searches every form of its irregular words, and a conversation covering any
form covers the word.

Verbs that are only stop words here (*be*, *have*, *do*, *say*, *get*…) are left
out, as are forms that are mostly other words or tokens (*saw*, *rose*, *felt*,
*bit*, *led*, *won* as in *won't*), and forms the porter stemmer already joins to
another word (*lives* → *live*, *leaves* → *leave*).

The same goes for a short list of words people use interchangeably about their
own lives, where a question and the conversation it asks about often differ
("Where do I work now?" against "I just started a new job at Globex"): work and
job, live and moved, trip and vacation, partner and wife. The list stays small
and unambiguous: no word that is also common technical vocabulary (*home*,
*class*) or another part of speech (*book*).
"""

from __future__ import annotations

__all__ = ["lemma", "number_forms", "word_forms"]

_GROUPS = """
arise arose arisen; awake awoke awoken; bear bore borne; beat beaten; become became;
begin began begun; bend bent; bite bitten; bleed bled; blow blew blown;
break broke broken; breed bred; bring brought; build built; burn burnt; buy bought;
catch caught; choose chose chosen; cling clung; come came; creep crept; deal dealt;
dig dug; draw drew drawn; dream dreamt; drink drank drunk; drive drove driven;
eat ate eaten; fall fell fallen; feed fed; fight fought; find found; flee fled;
fly flew flown; forbid forbade forbidden; forget forgot forgotten;
forgive forgave forgiven; freeze froze frozen; go went gone; grow grew grown;
hang hung; hear heard; hide hid hidden; hold held; keep kept; kneel knelt;
leave left; lend lent; light lit; lose lost; make made; mean meant; meet met;
mislead misled; mistake mistook mistaken; overcome overcame; overtake overtook overtaken;
pay paid; rebuild rebuilt; redo redid redone; rewrite rewrote rewritten;
ride rode ridden; ring rang rung; rise risen; run ran; seek sought; sell sold;
send sent; sew sewn; shake shook shaken; shine shone; shoot shot; show shown;
shrink shrank shrunk; sing sang sung; sink sank sunk; sit sat; sleep slept;
slide slid; speak spoke spoken; speed sped; spend spent; spin spun; spring sprang sprung;
stand stood; steal stole stolen; stick stuck; sting stung; stink stank stunk;
strike struck; strive strove striven; swear swore sworn; sweep swept; swim swam swum;
swing swung; take took taken; teach taught; tear tore torn; throw threw thrown;
understand understood; undertake undertook undertaken; undo undid undone;
wake woke woken; wear wore worn; weave wove woven; weep wept; withdraw withdrew withdrawn;
write wrote written;
child children; person people; man men; woman women; wife wives; knife knives;
wolf wolves; shelf shelves; half halves; foot feet; tooth teeth; mouse mice;
goose geese; crisis crises; analysis analyses; criterion criteria; phenomenon phenomena
"""

_NEAR_SYNONYMS = """
work job career employer workplace; live apartment flat house moved relocate;
trip travel vacation holiday journey; car vehicle; kid child; movie film; sick ill;
mom mother mum; dad father; exercise workout gym; wedding married marry;
partner boyfriend girlfriend husband wife spouse; salary pay income;
doctor physician; friend buddy; purchase buy
"""

_FORMS: dict[str, tuple[str, ...]] = {}
for _group in _GROUPS.split(";") + _NEAR_SYNONYMS.split(";"):
    _words = tuple(_group.split())
    for _word in _words:  # a word in two groups joins them, the first group's base first
        _words = tuple(dict.fromkeys(_FORMS.get(_word, ()) + _words))
    for _word in _words:
        _FORMS[_word] = _words
del _group, _words, _word


_UNITS = """
    zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen
    fifteen sixteen seventeen eighteen nineteen
""".split()  # noqa: SIM905
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()  # noqa: SIM905
_NUMBER_WORDS = {word: n for n, word in enumerate(_UNITS)} | {
    word: 20 + 10 * n for n, word in enumerate(_TENS)
}
_SPELLED_FROM = 3
"""Numbers below this are not spelled out or read back: *one* and *two* are stop words."""


def _number_value(text: str) -> int | None:
    """The value of a number from 0 to 99 in digits or English words (``forty-five``)."""
    if text.isascii() and text.isdigit():
        return int(text) if len(text) <= 2 else None
    parts = text.lower().split("-")
    if len(parts) == 1:
        return _NUMBER_WORDS.get(parts[0])
    if len(parts) == 2 and parts[0] in _TENS and parts[1] in _UNITS[1:10]:
        return _NUMBER_WORDS[parts[0]] + _NUMBER_WORDS[parts[1]]
    return None


def _spelled(n: int) -> str:
    if n < 20:
        return _UNITS[n]
    tens, units = divmod(n, 10)
    return _TENS[tens - 2] + (f"-{_UNITS[units]}" if units else "")


def number_forms(text: str) -> tuple[str, ...]:
    """A number from 3 to 99 in digits and in words (``18``, ``eighteen``), else ``()``.

    People write numbers both ways ("a 12-week plan", "twelve weeks"); the word
    index sees ``forty-five`` as the two words *forty five*. A compound led by
    a number (``12-week``, ``forty-five-day``) gets its other spelling too.
    """
    value = _number_value(text)
    if value is not None:
        return (str(value), _spelled(value)) if value >= _SPELLED_FROM else ()
    head, sep, rest = text.rpartition("-")
    for number, tail in ((head, rest), (text.partition("-")[0], text.partition("-")[2])):
        if not sep or not tail:
            continue
        value = _number_value(number)
        if value is not None and value >= _SPELLED_FROM:
            return (f"{value}-{tail}", f"{_spelled(value)}-{tail}")
    return ()


def word_forms(word: str) -> tuple[str, ...]:
    """Every form of *word* (lower-cased) if it is irregular or listed, else ``(word,)``.

    The base form comes first: ``word_forms("bought") == ("buy", "bought", "purchase")``.
    """
    lowered = word.lower()
    return _FORMS.get(lowered, (lowered,))


def lemma(word: str) -> str:
    """The base form of *word* (``went`` → ``go``, ``job`` → ``work``, ``eighteen`` → ``18``),
    else *word* lower-cased."""
    numbers = number_forms(word)
    return numbers[0] if numbers else word_forms(word)[0]
