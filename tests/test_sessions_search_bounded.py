"""Keywords and explicit syntax rank a bounded set of their matches: the newest ones."""

from __future__ import annotations

from pathlib import Path

from hermes_core.sessions import SessionStore
from hermes_core.sessions.routing import RANKED_CANDIDATES


def history(path: Path, newer: int) -> SessionStore:
    """One old message saying *kestrel* three times, then *newer* messages saying it once."""
    store = SessionStore(path, semantic="off")
    old = [{"role": "user", "content": "kestrel kestrel kestrel"}]
    filler = [
        {"role": "user", "content": f"note {n}: a kestrel flew over the long field by the barn"}
        for n in range(newer)
    ]
    store.import_sessions(
        [
            {"id": "old", "started_at": 1_000.0, "messages": old},
            {"id": "newer", "started_at": 2_000.0, "messages": filler[: newer // 2]},
            {"id": "newest", "started_at": 3_000.0, "messages": filler[newer // 2 :]},
        ]
    )
    return store


def test_within_the_bound_every_match_is_ranked(tmp_path: Path) -> None:
    with history(tmp_path / "state.db", RANKED_CANDIDATES // 2) as store:
        assert store.search_messages("kestrel", limit=5)[0]["session_id"] == "old"
        assert store.search_messages('"kestrel kestrel"', limit=5)[0]["session_id"] == "old"


def test_beyond_the_bound_the_newest_matches_are_ranked(tmp_path: Path) -> None:
    with history(tmp_path / "state.db", RANKED_CANDIDATES + 10) as store:
        hits = store.search_messages("kestrel", limit=50)
        assert len(hits) == 50 and "old" not in {hit["session_id"] for hit in hits}
        assert store.search_messages("kestrel", limit=5) == hits[:5]  # pages agree
        # Filters still find every match: the pool grows past the bound when they reject.
        newer = ["newer", "newest"]
        only_old = store.search_messages("kestrel", limit=5, exclude_session_ids=newer)
        assert [hit["session_id"] for hit in only_old] == ["old"]
        assert store.search_messages("kestrel", limit=5, session_ids=["old"])[0]["id"] == 1
        # A question's candidates are ranked in full: the old message's three mentions win.
        assert store.search_messages("where was the kestrel?", limit=5)[0]["session_id"] == "old"
        # Asked for more than the bound, the bound grows with the page.
        assert len(store.search_messages("kestrel", limit=RANKED_CANDIDATES + 11)) == (
            RANKED_CANDIDATES + 11
        )
