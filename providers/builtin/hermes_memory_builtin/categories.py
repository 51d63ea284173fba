"""What kind of memory an entry is, and so which tier it belongs in.

Three categories, as the design proposes, plus the plain default:

- ``identity``: who the user is and how they like to work (name, role,
  preferences, "always"/"never" rules). Prompt tier; archived last.
- ``episodic``: something that happened at a time ("on 2024-05-02 we
  migrated…", "yesterday the deploy failed"). Archive tier: recalled when a
  turn is about it, not carried in every prompt.
- ``working``: task state ("TODO", "currently working on", "next step").
  Not memory at all: the curator moves it out of the prompt tier (to the
  archive, so nothing vanishes) and recall leaves it out.
- ``fact``: a durable fact about the environment or a project. Prompt tier
  while there is room, archived by value when there is not.

The classifier is a handful of regular expressions, deterministic and
cheap; it runs on every curation.
"""

from __future__ import annotations

import re

IDENTITY = "identity"
EPISODIC = "episodic"
WORKING = "working"
FACT = "fact"
CATEGORIES = (IDENTITY, FACT, EPISODIC, WORKING)

PROMPT_TIER = frozenset({IDENTITY, FACT})
"""Categories that belong in ``MEMORY.md`` / ``USER.md``; the others go to the archive."""

_WORKING = re.compile(
    r"^\s*(?:todo|wip|next step|in progress)\b|\b(?:currently (?:working on|debugging|fixing)|"
    r"working on (?:the|a|this) (?:task|ticket|bug)|in progress|next step[s]? (?:is|are)|"
    r"this session|right now i am|still need to|remaining tasks?)\b",
    re.IGNORECASE,
)
_EPISODIC = re.compile(
    r"\b(?:yesterday|last (?:week|month|night|friday|monday|tuesday|wednesday|thursday)|"
    r"this morning|earlier today|on \d{4}-\d{2}-\d{2}|"
    r"on (?:mon|tues|wednes|thurs|fri|satur|sun)day|"
    r"in (?:january|february|march|april|may|june|july|august|september|october|november|"
    r"december) \d{4}|we (?:fixed|shipped|deployed|migrated|discussed|decided|debugged)|"
    r"(?:happened|occurred|incident) on)\b",
    re.IGNORECASE,
)
_IDENTITY = re.compile(
    r"\b(?:user(?:'s)?|they|their|my|i)\b.*\b(?:name|prefers?|preferred|likes?|dislikes?|"
    r"wants?|role|timezone|time zone|pronouns?|language|style|editor|shell|lives|home city|"
    r"keyboard|works (?:at|for)|employer)\b|\b(?:always|never)\b",
    re.IGNORECASE,
)


def classify(text: str, *, target: str = "memory") -> str:
    """The category of the entry *text* (see the module docstring).

    Entries of ``USER.md`` (*target* ``user``) are identity unless they are
    clearly working state or an event.
    """
    if _WORKING.search(text):
        return WORKING
    if _EPISODIC.search(text):
        return EPISODIC
    if target == "user" or _IDENTITY.search(text):
        return IDENTITY
    return FACT
