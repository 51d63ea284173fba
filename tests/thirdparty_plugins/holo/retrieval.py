"""Keyword retrieval for holo."""

import re

try:
    from .store import FactStore
except ImportError:
    from store import FactStore  # type: ignore[no-redef]

_STOP = {"what", "which", "about", "with", "that", "this", "like", "best", "remind"}


class Retriever:
    def __init__(self, store: FactStore):
        self.store = store

    @staticmethod
    def sanitize_fts_query(query):
        tokens = [t for t in re.findall(r"[a-z0-9]{3,}", (query or "").lower()) if t not in _STOP]
        return " OR ".join(f'"{t}"' for t in dict.fromkeys(tokens))

    def search(self, query, limit=5):
        return self.store.search_facts(query, limit=limit)
