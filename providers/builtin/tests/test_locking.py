"""The lock file beside each memory file."""

from __future__ import annotations

import multiprocessing
import os
import stat
import sys
import threading
import time
from pathlib import Path

import pytest
from hermes_memory_builtin.locking import LockError, exclusive_lock, lock_path_for
from hermes_memory_builtin.store import MemoryStore

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions and fork")


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_lock_file_is_private_even_under_a_loose_umask(tmp_path: Path) -> None:
    data = tmp_path / "MEMORY.md"
    old = os.umask(0o002)
    try:
        with exclusive_lock(data) as lock_path:
            assert lock_path == lock_path_for(data) == tmp_path / "MEMORY.md.lock"
    finally:
        os.umask(old)
    assert _mode(tmp_path / "MEMORY.md.lock") == 0o600


def test_a_loose_existing_lock_file_is_tightened(tmp_path: Path) -> None:
    lock = tmp_path / "MEMORY.md.lock"
    lock.write_bytes(b"")
    lock.chmod(0o664)
    with exclusive_lock(tmp_path / "MEMORY.md"):
        pass
    assert _mode(lock) == 0o600


def test_a_symlinked_lock_file_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.txt"
    outside.write_text("precious", encoding="utf-8")
    outside.chmod(0o644)
    (tmp_path / "MEMORY.md.lock").symlink_to(outside)
    with pytest.raises(LockError, match="symbolic link"), exclusive_lock(tmp_path / "MEMORY.md"):
        pass
    assert outside.read_text(encoding="utf-8") == "precious"
    assert _mode(outside) == 0o644


def test_a_store_write_behind_a_symlinked_lock_fails_cleanly(store: MemoryStore) -> None:
    outside = store.memory_dir / "elsewhere.txt"
    outside.write_text("precious", encoding="utf-8")
    lock_path_for(store.path("memory")).symlink_to(outside)
    result = store.add("memory", "A fact")
    assert result["success"] is False
    assert "symbolic link" in result["error"]
    assert not store.path("memory").exists()
    assert outside.read_text(encoding="utf-8") == "precious"


def _increment(counter: Path, times: int) -> None:
    for _ in range(times):
        with exclusive_lock(counter):
            value = int(counter.read_text(encoding="utf-8"))
            time.sleep(0)  # invite a switch between the read and the write
            counter.write_text(str(value + 1), encoding="utf-8")


def test_processes_exclude_each_other(tmp_path: Path) -> None:
    counter = tmp_path / "counter"
    counter.write_text("0", encoding="utf-8")
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_increment, args=(counter, 150)) for _ in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)
        assert worker.exitcode == 0
    assert counter.read_text(encoding="utf-8") == "450"


def test_threads_of_one_process_exclude_each_other(tmp_path: Path) -> None:
    counter = tmp_path / "counter"
    counter.write_text("0", encoding="utf-8")
    threads = [threading.Thread(target=_increment, args=(counter, 150)) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert counter.read_text(encoding="utf-8") == "450"
