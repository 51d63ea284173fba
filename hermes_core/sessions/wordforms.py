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

__all__ = ["lemma", "word_forms"]

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
work job career employer workplace; live apartment flat house moved;
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


def word_forms(word: str) -> tuple[str, ...]:
    """Every form of *word* (lower-cased) if it is irregular or listed, else ``(word,)``.

    The base form comes first: ``word_forms("bought") == ("buy", "bought", "purchase")``.
    """
    lowered = word.lower()
    return _FORMS.get(lowered, (lowered,))


def lemma(word: str) -> str:
    """The base form of *word* (``went`` → ``go``, ``job`` → ``work``), else *word* lower-cased."""
    return word_forms(word)[0]
