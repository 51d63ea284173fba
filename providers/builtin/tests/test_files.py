"""Reading (BOM, strict UTF-8) and atomically replacing memory files."""

from __future__ import annotations

from pathlib import Path

import pytest
from hermes_memory_builtin.files import (
    TEMP_PREFIX,
    atomic_write_text,
    read_memory_file,
    temp_prefix_for,
)
from hermes_memory_builtin.store import MemoryStore
from memory_support import write_file

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


def test_bom_file_loads_clean_and_is_rewritten_without_bom(store: MemoryStore) -> None:
    write_file(store.path("memory"), "\ufeffFirst fact.")
    store.load_from_disk()
    assert store.memory_entries == ["First fact."]
    assert store.add("memory", "Second fact.")["success"] is True
    assert store.path("memory").read_bytes() == "First fact.\n§\nSecond fact.".encode()


def test_temp_files_left_by_a_killed_writer_are_cleaned_under_the_lock(
    store: MemoryStore,
) -> None:
    path = store.path("memory")
    stale = path.parent / f"{temp_prefix_for(path)}abc123.tmp"
    other = path.parent / f"{temp_prefix_for(store.path('user'))}abc123.tmp"
    write_file(stale, "half a write")
    write_file(other, "belongs to USER.md")
    assert store.add("memory", "A fact")["success"] is True
    assert not stale.exists()
    assert other.exists()
