"""The flat vector file beside the sidecar: mapped by searches, never trusted when it is
torn, damaged or out of step with the sidecar, and never imported for a literal search."""

from __future__ import annotations

import os
import shutil
import sqlite3
import struct
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from vector_kit import cli_search, embedded_store

from hermes_core.sessions import SessionStore, semantic
from hermes_core.sessions.semantic import semantic_available, sidecar_path
from hermes_core.sessions.vectorfile import (
    HEADER_BYTES,
    TAIL_WORDS,
    Stamp,
    map_file,
    record_bytes,
    vector_file_path,
)

pytestmark = pytest.mark.skipif(not semantic_available(), reason="no encoder installed")

QUESTION = "Which instrument is my daughter learning?"
TOPICS = {
    "violin": "My daughter started violin lessons; she practises scales every evening.",
    "garden": "The tomatoes in the garden finally ripened after the heatwave.",
    "bank": "I moved my savings to an account with a better interest rate.",
    "trip": "We booked a ferry to the islands for the first week of August.",
    "oven": "The oven's thermostat broke, so the bread burned again.",
}
LONG = "The quarterly report covers revenue, hiring and the office move. " * 40  # two pieces


def history(path: Path) -> None:
    """Five conversations of two messages each (one of them long), all embedded."""
    embedded_store(
        path,
        {
            session: [{"role": "user", "content": text}, {"role": "assistant", "content": LONG}]
            for session, text in TOPICS.items()
        },
    )


def search(path: Path, query: str = QUESTION) -> list[tuple[str, int]]:
    """The hits of *query* in a store opened afresh, as a CLI search opens it."""
    with SessionStore(path, read_only=True, semantic="on") as store:
        return [(hit["session_id"], hit["id"]) for hit in store.search_messages(query, limit=10)]


def stamp_of(path: Path) -> Stamp | None:
    with sqlite3.connect(sidecar_path(path)) as raw:
        row = raw.execute("SELECT value FROM meta WHERE key = 'file'").fetchone()
    return Stamp.from_json(row[0] if row else None)


def file_of(path: Path) -> Path:
    return vector_file_path(sidecar_path(path))


def assert_file_matches_sidecar(path: Path) -> None:
    stamp = stamp_of(path)
    assert stamp is not None
    mapped = map_file(file_of(path), stamp)
    assert mapped is not None
    with sqlite3.connect(sidecar_path(path)) as raw:
        rows = raw.execute("SELECT message_id, checksum, vector FROM vectors").fetchall()
    held = [
        (int(mid), int(checksum), row.astype("<f2").tobytes())
        for mid, checksum, row in zip(*mapped.arrays(), strict=True)
    ]
    assert sorted(held) == sorted((mid, checksum, bytes(vector)) for mid, checksum, vector in rows)


@pytest.fixture(scope="module")
def intact(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[tuple[str, int]]]:
    """An embedded history and its hits for the question."""
    path = tmp_path_factory.mktemp("intact") / "state.db"
    history(path)
    hits = search(path)
    assert hits[0][0] == "violin"
    return path, hits


def copy_of(intact: Path, into: Path) -> Path:
    for name in ("state.db", "state.db.vectors", "state.db.vectors.bin"):
        shutil.copy2(intact.with_name(name), into / name)
    return into / "state.db"


def test_indexing_writes_the_file_and_searches_map_it_unchanged(
    intact: tuple[Path, list[tuple[str, int]]], tmp_path: Path
) -> None:
    path = copy_of(intact[0], tmp_path)
    assert_file_matches_sidecar(path)
    assert file_of(path).stat().st_mode & 0o777 == 0o600  # as private as state.db
    with sqlite3.connect(sidecar_path(path)) as raw:
        pieces = raw.execute("SELECT count(*) FROM vectors").fetchone()[0]
    assert pieces == 15  # five short messages, five long ones in two pieces
    before = os.stat(file_of(path))
    assert search(path) == intact[1]
    after = os.stat(file_of(path))
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


@pytest.mark.parametrize("keep", [0, 10, HEADER_BYTES, HEADER_BYTES + 700, -1])
def test_a_truncated_file_is_written_again(
    intact: tuple[Path, list[tuple[str, int]]], tmp_path: Path, keep: int
) -> None:
    path = copy_of(intact[0], tmp_path)
    size = file_of(path).stat().st_size
    with open(file_of(path), "r+b") as handle:
        handle.truncate(keep % size)
    assert search(path) == intact[1]
    assert_file_matches_sidecar(path)


@given(offset=st.integers(min_value=0), damage=st.binary(min_size=1, max_size=64))
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_damage_anywhere_is_caught_even_with_size_and_time_kept(
    intact: tuple[Path, list[tuple[str, int]]], tmp_path: Path, offset: int, damage: bytes
) -> None:
    path = copy_of(intact[0], tmp_path)
    status = os.stat(file_of(path))
    with open(file_of(path), "r+b") as handle:
        handle.seek(offset % (status.st_size - len(damage)))
        handle.write(damage)
    os.utime(file_of(path), ns=(status.st_atime_ns, status.st_mtime_ns))  # looks untouched
    assert search(path) == intact[1]
    assert_file_matches_sidecar(path)


def test_a_file_from_an_earlier_state_is_not_used(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    history(path)
    earlier = file_of(path).read_bytes()
    with SessionStore(path, semantic="on") as store:
        store.create_session("cello")
        store.append_message("cello", "user", "Our son wants to take up the cello next year.")
        store.index_messages()
    file_of(path).write_bytes(earlier)  # a backup of the folder restored over the file alone
    assert "cello" in {session for session, _ in search(path, "Which instrument will my son play?")}
    assert_file_matches_sidecar(path)


def test_records_of_a_write_that_did_not_commit_are_not_used(
    intact: tuple[Path, list[tuple[str, int]]], tmp_path: Path
) -> None:
    path = copy_of(intact[0], tmp_path)
    with open(file_of(path), "ab") as handle:  # a writer died between its append and commit
        handle.write(file_of(path).read_bytes()[HEADER_BYTES:])
    assert search(path) == intact[1]
    assert_file_matches_sidecar(path)


def test_new_vectors_are_appended(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    history(path)
    first = stamp_of(path)
    with SessionStore(path, semantic="on") as store:
        store.create_session("cello")
        store.append_message("cello", "user", "Our son wants to take up the cello next year.")
        store.index_messages()
    grown = stamp_of(path)
    assert first is not None and grown is not None
    assert (grown.nonce, grown.records) == (first.nonce, 16)  # appended, not rewritten
    assert_file_matches_sidecar(path)


def test_deleted_messages_leave_the_file_at_once(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    history(path)
    with SessionStore(path, semantic="on") as store:
        gone = [message["id"] for message in store.get_messages("violin")]
        store.delete_session("violin")
    assert stamp_of(path) is None  # written again on next use
    data = file_of(path).read_bytes()
    dims = (len(data) - HEADER_BYTES) // 15 // 4 - TAIL_WORDS
    width = record_bytes(dims)
    records = [data[at : at + width] for at in range(HEADER_BYTES, len(data), width)]
    ids = [
        int(sum(int(w) << 22 * n for n, w in enumerate(struct.unpack_from("<3f", r, 4 * dims))))
        for r in records
    ]
    erased = [r for r, mid in zip(records, ids, strict=True) if mid in gone]
    assert len(erased) == 3  # no trace of them but their ids
    assert all(not any(r[: 4 * dims]) and not any(r[-8:]) for r in erased)
    assert "violin" not in {session for session, _ in search(path)}
    assert_file_matches_sidecar(path)  # written again without them


@pytest.mark.parametrize(
    ("query", "by_meaning"),
    [("violin", False), ('"violin lessons"', False), ("violin*", False), (QUESTION, True)],
)
def test_a_search_meaning_takes_no_part_in_imports_no_numpy(
    intact: tuple[Path, list[tuple[str, int]]], tmp_path: Path, query: str, by_meaning: bool
) -> None:
    path = copy_of(intact[0], tmp_path)
    answer = cli_search(path, query, tmp_path / "home")
    assert answer["hits"][0]["session_id"] == "violin"
    # An ASCII question's vector and the scores are worked out without either.
    assert answer["loaded"] == []


def test_enough_neighbours_are_found_when_most_of_the_nearest_changed(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    with SessionStore(path, semantic="on") as store:
        store.create_session("notes")
        for n in range(60):
            store.append_message("notes", "user", f"Violin practice note {n}: scales and bowing.")
        store.index_messages()
        layout = store.layout
    with sqlite3.connect(path) as raw:  # another program rewrites most of them
        raw.execute("UPDATE messages SET content = content || ' (edited)' WHERE id > 5")
        index = semantic.SemanticIndex(path, layout)
        try:
            found = index.nearest(lambda read: read(raw), "violin practice", 4)
        finally:
            index.close()
    assert len(found) == 4 and set(found) <= {1, 2, 3, 4, 5}  # four of the five unchanged


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    first=st.integers(0, 5),
    added=st.integers(1, 5),
    at=st.integers(0, 10_000),
    damage=st.binary(min_size=1, max_size=8),
)
def test_records_appended_after_checked_ones_are_checked(
    tmp_path: Path, first: int, added: int, at: int, damage: bytes
) -> None:
    # A process that checked a file maps it again after another appended: only the new
    # records are summed, and damage among them is still caught.
    import numpy as np

    from hermes_core.sessions.vectorfile import append, write

    path = tmp_path / f"v-{first}-{added}.bin"
    rng = np.random.default_rng(first * 10 + added)

    def rows(n: int, start: int) -> tuple[object, object, object]:
        return np.arange(start, start + n), np.arange(n, dtype=np.uint32), rng.random((n, 4))

    before = write(path, 4, *rows(first, 0))
    after = append(path, before, *rows(added, first))
    assert after is not None
    whole = map_file(path, after)
    assert whole is not None
    again = map_file(path, after, checked=before)
    assert again is not None and bytes(again.records) == bytes(whole.records)
    status = os.stat(path)
    span = added * record_bytes(4)
    with open(path, "r+b") as handle:
        handle.seek(HEADER_BYTES + first * record_bytes(4) + at % (span - len(damage) + 1))
        old = handle.read(len(damage))
        handle.seek(-len(damage), os.SEEK_CUR)
        handle.write(damage)
    os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns))
    if old != damage:
        assert map_file(path, after, checked=before) is None
    other = Stamp("00" * 16, 4, first, before.size, before.mtime_ns, before.total)
    if old != damage:  # a stamp of another file (nonce) checks everything
        assert map_file(path, after, checked=other) is None
