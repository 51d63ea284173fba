"""A partly embedded history: the tool says how much meaning covered, words find the rest,
and no search (tool or CLI) embeds anything itself."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from backend_kit import configured_store
from click.testing import CliRunner

from hermes_core.cli import cli
from hermes_core.sessions.backends import open_session_store
from hermes_core.sessions.semantic import semantic_available

needs_encoder = pytest.mark.skipif(not semantic_available(), reason="no encoder installed")

MEANING = "What did we name the cat we adopted?"  # the answer shares none of these words
WORDS = "Who fixed the leak under the kitchen sink?"
FILLERS = 17


def history(path: Path | str) -> None:
    """20 user/assistant messages; the oldest holds the plumbing answer."""
    with open_session_store(path, semantic="on") as store:
        store.create_session("plumbing")
        store.append_message("plumbing", "user", "The plumber fixed the kitchen sink leak.")
        store.create_session("pet")
        store.append_messages(
            "pet",
            [
                {"role": "user", "content": "We brought home a rescue tabby! She's Miso."},
                {"role": "assistant", "content": "Lovely. Young ones need four small meals."},
            ],
        )
        for n in range(FILLERS):
            store.create_session(f"train{n}")
            store.append_message(f"train{n}", "user", f"The train was {n + 3} minutes late.")


def embed(path: Path | str, count: int | None) -> int:
    """Embed the newest *count* messages (all when None); how many are left."""
    with open_session_store(path, semantic="on") as store:
        store.index_messages(limit=count)
        return store.messages_to_embed()


def ask(home: Path, query: str, semantic: str = "on") -> dict[str, Any]:
    from hermes_memory_builtin.session_search import SessionSearchTool

    tool = SessionSearchTool(home, {"session_search": {"semantic": semantic}})
    try:
        return json.loads(tool({"query": query, "limit": 5}))  # type: ignore[no-any-return]
    finally:
        tool.close()


def found(answer: dict[str, Any]) -> list[str]:
    return [result["session_id"] for result in answer["results"]]


@needs_encoder
def test_mostly_embedded_meaning_ranks_the_embedded_and_words_find_the_rest(
    hermes_home: Path, session_backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = configured_store(session_backend, hermes_home, monkeypatch)
    history(path)
    assert embed(path, 19) == 1  # newest first: the plumbing message is left
    by_words = ask(hermes_home, WORDS)
    assert found(by_words)[0] == "plumbing"  # not embedded, found by its words
    assert by_words["meaning"]["embedded"] == 19 and by_words["meaning"]["messages"] == 20
    assert by_words["meaning"]["note"].startswith("Meaning used for 19 of 20 messages")
    assert "sessions index" in by_words["meaning"]["note"]
    by_meaning = ask(hermes_home, MEANING)
    assert found(by_meaning)[0] == "pet"  # embedded: found by meaning alone
    assert by_meaning["meaning"]["embedded"] == 19


@needs_encoder
def test_barely_embedded_the_search_is_by_words_and_says_so(
    hermes_home: Path, session_backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = configured_store(session_backend, hermes_home, monkeypatch)
    history(path)
    assert embed(path, 5) == 15
    answer = ask(hermes_home, MEANING)
    assert "pet" not in found(answer)  # meaning is not used below 90 %
    assert answer["meaning"]["note"].startswith("Searched by words only: just 5 of 20")
    assert found(ask(hermes_home, WORDS))[0] == "plumbing"


@needs_encoder
def test_no_note_when_whole_when_meaning_cannot_apply_or_is_off(
    hermes_home: Path, session_backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = configured_store(session_backend, hermes_home, monkeypatch)
    history(path)
    assert embed(path, 10) == 10
    assert "meaning" not in ask(hermes_home, "sink")  # one word is searched literally
    assert "meaning" not in ask(hermes_home, WORDS, semantic="off")
    assert embed(path, None) == 0
    whole = ask(hermes_home, MEANING)
    assert "meaning" not in whole and found(whole)[0] == "pet"


@needs_encoder
def test_no_search_embeds_backlog(
    hermes_home: Path, session_backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = configured_store(session_backend, hermes_home, monkeypatch)
    history(path)
    assert embed(path, 19) == 1
    for query in (MEANING, WORDS, "cat adopted", ""):
        ask(hermes_home, query)
    result = CliRunner().invoke(
        cli, ["sessions", "search", MEANING, "--db", str(path), "--semantic", "--json"]
    )
    assert result.exit_code == 0, result.output
    with open_session_store(path, semantic="on") as store:
        assert store.messages_to_embed() == 1  # left to the turns and to `sessions index`


def test_the_tool_answers_on_either_backend(hermes_home: Path, session_backend: str) -> None:
    from hermes_memory_builtin.session_search import SessionSearchTool

    from hermes_core.sessions.backends import open_session_store

    sqlite = session_backend.endswith(".db")
    with open_session_store(session_backend, semantic="off") as store:
        store.create_session("plumbing")
        store.append_message("plumbing", "user", "The plumber fixed the kitchen sink leak.")
    config: dict[str, Any] = {"session_search": {"semantic": "auto"}}
    if not sqlite:
        config["sessions"] = {"url": session_backend}
    tool = SessionSearchTool(Path(session_backend).parent if sqlite else hermes_home, config)
    try:
        answer = json.loads(tool({"query": WORDS}))
    finally:
        tool.close()
    assert answer["success"] and found(answer) == ["plumbing"]
    if semantic_available():  # nothing embedded yet: searched by words, and said
        assert answer["meaning"]["note"].startswith("Searched by words only: just 0 of 1")
    else:  # no search by meaning, nor anything to say of it
        assert "meaning" not in answer
