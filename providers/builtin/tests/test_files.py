"""Reading (BOM, strict UTF-8) and atomically replacing memory files."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from hermes_memory_builtin import files
from hermes_memory_builtin.files import (
    TEMP_PREFIX,
    atomic_write_text,
    read_memory_file,
    temp_prefix_for,
)
from hermes_memory_builtin.store import MemoryStore
from memory_support import MemoryBackend, read_entries, write_entries, write_file

from hermes_core.errors import MemoryStoreError


def test_a_missing_file_reads_as_empty_and_fine(tmp_path: Path) -> None:
    read = read_memory_file(tmp_path / "MEMORY.md")
    assert (read.text, read.exists, read.ok) == ("", False, True)


def test_a_byte_order_mark_is_stripped(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    write_file(path, "\ufeffFirst fact.")
    read = read_memory_file(path)
    assert (read.text, read.ok) == ("First fact.", True)


def test_invalid_utf8_is_unreadable_not_mangled(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    write_file(path, b"caf\xe9 au lait")
    read = read_memory_file(path)
    assert read.text == ""
    assert read.exists and not read.ok
    assert "UTF-8" in (read.error or "")


def test_a_directory_in_place_of_the_file_is_unreadable(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").mkdir()
    read = read_memory_file(tmp_path / "MEMORY.md")
    assert read.exists and not read.ok


def test_atomic_write_leaves_exactly_the_text_and_no_temp_file(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "MEMORY.md"
    atomic_write_text(path, "first\n§\nsecond")
    assert path.read_bytes() == "first\n§\nsecond".encode()
    assert [p.name for p in path.parent.iterdir()] == ["MEMORY.md"]


def test_a_failed_replace_keeps_the_target_and_removes_the_temp(tmp_path: Path) -> None:
    target = tmp_path / "MEMORY.md"
    target.mkdir()
    (target / "keep").write_text("x", encoding="utf-8")
    with pytest.raises(MemoryStoreError, match="Failed to write memory file"):
        atomic_write_text(target, "new")
    assert (target / "keep").read_text(encoding="utf-8") == "x"
    assert not list(tmp_path.glob(TEMP_PREFIX + "*"))


def test_bom_file_loads_clean_and_is_rewritten_without_bom(
    store: MemoryStore, backend: MemoryBackend
) -> None:
    backend.put("memory", "\ufeffFirst fact.")
    store.load_from_disk()
    assert store.memory_entries == ["First fact."]
    assert store.add("memory", "Second fact.")["success"] is True
    assert backend.raw("memory") == "First fact.\n§\nSecond fact."


@pytest.mark.files_only("temporary files of the atomic rename")
def test_temp_files_left_by_a_killed_writer_are_cleaned_under_the_lock(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(files, "STALE_TEMP_SECONDS", 0.0)  # as if left there long ago
    path = store.path("memory")
    stale = path.parent / f"{temp_prefix_for(path)}abc123.tmp"
    other = path.parent / f"{temp_prefix_for(store.path('user'))}abc123.tmp"
    write_file(stale, "half a write")
    write_file(other, "belongs to USER.md")
    assert store.add("memory", "A fact")["success"] is True
    assert not stale.exists()
    assert other.exists()


def test_the_cleanup_never_deletes_a_live_writers_temp_file(tmp_path: Path) -> None:
    """Another profile's writer has its temporary file beside the shared real file,
    written and fsynced but not yet renamed, when a cleanup of the same file runs
    (reached through a different link). The file must survive, and the write land."""
    shared = tmp_path / "shared" / "MEMORY.md"
    write_entries(shared, ["old"])
    links = []
    for profile in ("a", "b"):
        link = tmp_path / profile / "memories" / "MEMORY.md"
        link.parent.mkdir(parents=True)
        link.symlink_to(shared)
        links.append(link)
    live, _ = files._write_temp(shared, "old\n§\nnew", None)  # what a writer of a/ holds
    assert live.parent == shared.parent

    for link in (*links, shared):
        assert files.remove_stale_temp_files(link) == []
    assert live.read_text(encoding="utf-8") == "old\n§\nnew"

    os.replace(live, shared)  # the writer of a/ finishes
    assert read_entries(links[1]) == ["old", "new"]
    assert links[0].is_symlink() and links[1].is_symlink()


def test_the_cleanup_removes_only_old_regular_temp_files_of_the_real_file(tmp_path: Path) -> None:
    shared = tmp_path / "shared" / "MEMORY.md"
    write_entries(shared, ["kept"])
    link = tmp_path / "home" / "MEMORY.md"
    link.parent.mkdir()
    link.symlink_to(shared)
    killed = shared.parent / f"{temp_prefix_for(shared)}dead1234.tmp"
    beside_link = link.parent / f"{temp_prefix_for(link)}other12.tmp"  # not this lock's
    a_folder = shared.parent / f"{temp_prefix_for(shared)}folder12.tmp"
    write_file(killed, "half a write")
    write_file(beside_link, "another writer's, under another lock")
    a_folder.mkdir()
    assert files.remove_stale_temp_files(link, min_age=0.0) == [killed]
    assert beside_link.exists() and a_folder.is_dir()
    assert shared.read_text(encoding="utf-8") == "kept"


# -- an exchange (Linux renameat2) racing other programs: every answer tells the truth ----

needs_exchange = pytest.mark.skipif(
    files._renameat2() is None, reason="needs renameat2 (Linux, glibc 2.28+)"
)


def _patch_exchange(monkeypatch: pytest.MonkeyPatch, step) -> list[int]:  # type: ignore[no-untyped-def]
    """Run *step(call_number, source, destination)* on every RENAME_EXCHANGE a write makes;
    it returns None to let the exchange run, or raises."""
    real = files._rename_with_flags
    calls: list[int] = []

    def patched(source: Path, destination: Path, flags: int) -> bool:
        if flags == files._RENAME_EXCHANGE:
            calls.append(flags)
            step(len(calls), source, destination)
        return real(source, destination, flags)

    monkeypatch.setattr(files, "_rename_with_flags", patched)
    return calls


def _editor_save(path: Path, entries: list[str]) -> None:
    """Another program saving *path* by rename (no lock)."""
    swap = path.with_name("editor.swp")
    write_entries(swap, entries)
    os.replace(swap, path)


@needs_exchange
@pytest.mark.files_only("the rename exchange of the file store")
def test_a_write_whose_displaced_file_vanishes_is_reported_saved(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cleaner outside the lock deletes the displaced old version at its temporary name
    right after the exchange: the new text is in place, so the answer is success."""
    path = store.path("memory")
    write_entries(path, ["old"])
    real = files._rename_with_flags
    lost: list[Path] = []

    def exchange_then_lose_the_displaced_file(source: Path, destination: Path, flags: int) -> bool:
        done = real(source, destination, flags)
        if flags == files._RENAME_EXCHANGE and not lost:
            source.unlink()
            lost.append(source)
        return done

    monkeypatch.setattr(files, "_rename_with_flags", exchange_then_lose_the_displaced_file)
    result = store.add("memory", "new")
    assert lost, "the exchange did not run"
    assert result["success"] is True, result
    assert read_entries(path) == ["old", "new"]
    assert not list(path.parent.glob(TEMP_PREFIX + "*"))


@needs_exchange
@pytest.mark.files_only("the rename exchange of the file store")
def test_a_failed_put_back_after_the_exchange_says_the_change_was_saved(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = store.path("memory")
    write_entries(path, ["old"])

    def step(number: int, source: Path, destination: Path) -> None:
        if number == 1:
            _editor_save(destination, ["old", "saved by an editor"])  # after the check
        else:
            raise OSError(errno.EIO, os.strerror(errno.EIO), str(destination))

    _patch_exchange(monkeypatch, step)
    result = store.add("memory", "new")
    assert result["success"] is False
    assert "left unchanged" not in result["error"]
    assert "WAS saved" in result["error"]
    assert read_entries(path) == ["old", "new"]
    (kept,) = path.parent.glob(TEMP_PREFIX + "*")
    assert str(kept) in result["error"]
    assert read_entries(kept) == ["old", "saved by an editor"]


@needs_exchange
@pytest.mark.files_only("the rename exchange of the file store")
def test_a_save_made_between_the_check_and_the_exchange_is_put_back_and_kept(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = store.path("memory")
    write_entries(path, ["old"])

    def step(number: int, source: Path, destination: Path) -> None:
        if number == 1:
            _editor_save(destination, ["old", "saved by an editor"])

    calls = _patch_exchange(monkeypatch, step)
    assert store.add("memory", "new")["success"] is True
    assert len(calls) == 3  # exchange, put back, then the retry's exchange
    assert read_entries(path) == ["old", "saved by an editor", "new"]
    assert not list(path.parent.glob(TEMP_PREFIX + "*"))


@needs_exchange
@pytest.mark.files_only("the rename exchange of the file store")
def test_a_save_made_during_the_put_back_is_kept_as_a_conflict_copy(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = store.path("memory")
    write_entries(path, ["old"])

    def step(number: int, source: Path, destination: Path) -> None:
        if number == 1:
            _editor_save(destination, ["old", "first editor save"])
        elif number == 2:
            _editor_save(destination, ["old", "second editor save"])  # over this write

    _patch_exchange(monkeypatch, step)
    assert store.add("memory", "new")["success"] is True
    assert read_entries(path) == ["old", "first editor save", "new"]
    (conflict,) = path.parent.glob("MEMORY.md.conflict.*")
    assert read_entries(conflict) == ["old", "second editor save"]
    assert not list(path.parent.glob(TEMP_PREFIX + "*"))
