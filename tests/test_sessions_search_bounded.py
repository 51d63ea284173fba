"""Keywords and explicit syntax rank a bounded set of their matches: the newest ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_core.sessions import SessionStore
from hermes_core.sessions.backends import open_session_store
from hermes_core.sessions.routing import RANKED_CANDIDATES


def filled(store: SessionStore, old: str, note: str, newer: int) -> SessionStore:
    """*store* holding one old message *old*, then *newer* messages *note* (numbered), the
    newer ones in two later sessions."""
    filler = [{"role": "user", "content": note.format(n=n)} for n in range(newer)]
    store.import_sessions(
        [
            {"id": "old", "started_at": 1_000.0, "messages": [{"role": "user", "content": old}]},
            {"id": "newer", "started_at": 2_000.0, "messages": filler[: newer // 2]},
            {"id": "newest", "started_at": 3_000.0, "messages": filler[newer // 2 :]},
        ]
    )
    return store


def history(path: Path, newer: int) -> SessionStore:
    """One old message saying *kestrel* three times, then *newer* messages saying it once."""
    store = SessionStore(path, semantic="off")
    note = "note {n}: a kestrel flew over the long field by the barn"
    return filled(store, "kestrel kestrel kestrel", note, newer)


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


def cjk_history(where: str, newer: int) -> SessionStore:
    """One old message saying 部署回滚 three times, then *newer* messages saying it once."""
    store = open_session_store(where, semantic="off")
    note = "第{n}次记录：今天的部署回滚已经完成，服务恢复正常运行"
    return filled(store, "部署回滚，部署回滚，部署回滚", note, newer)


@pytest.mark.parametrize("newer", [RANKED_CANDIDATES // 2])
def test_within_the_bound_one_cjk_gram_ranks_every_match(session_backend: str, newer: int) -> None:
    with cjk_history(session_backend, newer) as store:
        assert store.search_messages("回滚", limit=5)[0]["session_id"] == "old"


def test_one_cjk_gram_is_bounded_like_a_word(session_backend: str) -> None:
    with cjk_history(session_backend, RANKED_CANDIDATES + 10) as store:
        hits = store.search_messages("回滚", limit=50)
        assert len(hits) == 50 and "old" not in {hit["session_id"] for hit in hits}
        assert store.search_messages("回滚", limit=5) == hits[:5]
        newer = ["newer", "newest"]
        only_old = store.search_messages("回滚", limit=5, exclude_session_ids=newer)
        assert [hit["session_id"] for hit in only_old] == ["old"]
        # A phrase of grams (four characters) still has every match ranked.
        assert store.search_messages("部署回滚", limit=5)[0]["session_id"] == "old"
