"""Query normalisation: FTS5 needs quoted tokens OR-joined for natural-language recall."""

import re

_STOP = {"what", "which", "that", "this", "with", "from", "have", "does", "about", "your", "tell"}
_TOKEN = re.compile(r"[A-Za-z0-9]{3,}")


def fts_query(text: str) -> str:
    tokens = [t.lower() for t in _TOKEN.findall(text or "") if t.lower() not in _STOP]
    return " OR ".join(f'"{t}"' for t in dict.fromkeys(tokens))


def clip(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
