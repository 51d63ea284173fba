"""The entry format and unique-substring matching."""

from __future__ import annotations

from hermes_memory_builtin.entries import (
    ENTRY_DELIMITER,
    dedupe,
    find_unique_match,
    join_entries,
    parse_entries,
)
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from memory_support import MemoryBackend


def test_parse_splits_on_the_delimiter_line_only() -> None:
    assert parse_entries("entry1\n§\nentry2") == ["entry1", "entry2"]
    assert parse_entries("price § 5\n§\nmulti\nline") == ["price § 5", "multi\nline"]
    assert parse_entries("") == []
    assert parse_entries("\n§\n\n§\n  \n") == []


def test_windows_line_endings_and_spacing_parse_like_our_own_output() -> None:
    ours = join_entries(["first fact", "second\nfact"])
    assert parse_entries(ours.replace("\n", "\r\n")) == ["first fact", "second\nfact"]
    assert parse_entries("first fact\n\n  §\t\n\nsecond\nfact\n") == ["first fact", "second\nfact"]
    assert parse_entries("§\nfirst fact\n§") == ["first fact"]


def test_join_writes_exactly_the_delimiter_between_entries() -> None:
    assert join_entries(["first", "second"]) == "first\n§\nsecond"
    assert join_entries([]) == ""
    assert ENTRY_DELIMITER == "\n§\n"


def test_dedupe_keeps_first_occurrences_in_order() -> None:
    assert dedupe(["b", "a", "b", "c", "a"]) == ["b", "a", "c"]


def test_an_exact_entry_wins_over_entries_containing_it() -> None:
    entries = ["test", "echo-reply tests pass on CI"]
    match = find_unique_match(entries, "test")
    assert match.found and match.index == 0


def test_ambiguous_and_missing_matches() -> None:
    entries = ["nginx on port 80", "nginx config in /etc", "redis"]
    ambiguous = find_unique_match(entries, "nginx")
    assert ambiguous.ambiguous and not ambiguous.found
    assert ambiguous.candidates == ("nginx on port 80", "nginx config in /etc")
    missing = find_unique_match(entries, "postgres")
    assert not missing.found and not missing.ambiguous


def test_identical_copies_are_one_match_and_the_first_is_used() -> None:
    match = find_unique_match(["same", "other", "same"], "sam")
    assert match.found and match.index == 0


ENTRY = (
    st.text(
        alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\r"), max_size=40
    )
    .map(str.strip)
    .filter(lambda text: text and "§" not in text)
)


@settings(max_examples=200, deadline=None)
@given(st.lists(ENTRY, max_size=8))
def test_entries_round_trip_through_the_file_format(entries: list[str]) -> None:
    assert parse_entries(join_entries(entries)) == entries


@settings(max_examples=300, deadline=None)
@given(st.lists(ENTRY, min_size=1, max_size=8), st.text(min_size=1, max_size=6))
def test_match_result_is_consistent_with_the_entries(entries: list[str], needle: str) -> None:
    match = find_unique_match(entries, needle)
    containing = {entry for entry in entries if needle in entry}
    if needle in entries:
        assert match.found and entries[match.index] == needle  # type: ignore[index]
        assert match.index == entries.index(needle)
    elif not containing:
        assert not match.found and not match.ambiguous
    elif len(containing) == 1:
        assert match.found and entries[match.index] in containing  # type: ignore[index]
        assert match.index == min(i for i, e in enumerate(entries) if e in containing)
    else:
        assert match.ambiguous and set(match.candidates) == containing


@settings(max_examples=300, deadline=None)
@given(st.lists(ENTRY, min_size=1, max_size=8), st.data())
def test_a_unique_substring_finds_its_entry(entries: list[str], data: st.DataObject) -> None:
    chosen = data.draw(st.integers(0, len(entries) - 1))
    entry = entries[chosen]
    start = data.draw(st.integers(0, len(entry) - 1))
    end = data.draw(st.integers(start + 1, len(entry)))
    needle = entry[start:end]
    assume(all(needle not in other for other in entries if other != entry))
    match = find_unique_match(entries, needle)
    assert match.found
    assert entries[match.index] == entry  # type: ignore[index]


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(ENTRY.filter(lambda text: "\x00" not in text), max_size=8))
def test_entries_round_trip_through_each_backend(
    backend: MemoryBackend, entries: list[str]
) -> None:
    """What a person writes in the format loads back as the same entries, file or row
    (without NUL, which a PostgreSQL text cannot hold and no memory write accepts)."""
    backend.put("memory", join_entries(entries))
    store = backend.store(memory_char_limit=100_000)
    store.load_from_disk()
    assert store.memory_entries == dedupe(entries)
