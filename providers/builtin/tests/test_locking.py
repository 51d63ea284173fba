"""The lock file beside each memory file (beside the real file when it is a symbolic link)."""

from __future__ import annotations

import multiprocessing
import os
import stat
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hermes_memory_builtin.entries import parse_entries
from hermes_memory_builtin.locking import LockError, exclusive_lock, lock_path_for
from hermes_memory_builtin.origins import ledger_filename
from hermes_memory_builtin.store import MemoryStore
from memory_support import MemoryBackend

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


@pytest.mark.files_only("lock files exist only beside memory files")
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


# -- read-modify-write from several processes, on either backend ----------------------------

PROFILES = ("a", "b")
SHARED_WRITERS = 4
SHARED_ADDS = 40
COUNTING_WORKERS = 4
COUNTS_PER_WORKER = 15


def _count_up(backend: MemoryBackend, times: int, done: Any) -> None:
    """Raise the shared counter *times* by one, each time from a freshly read value."""
    store = backend.store(memory_char_limit=10_000)
    raised = 0
    while raised < times:
        [current] = [e for e in store.refresh("memory") if e.startswith("counter = ")]
        value = int(current.removeprefix("counter = "))
        result = store.replace("memory", current, f"counter = {value + 1:05d}")
        if result["success"]:
            raised += 1
        else:  # another process raised it first: read again
            assert "No entry matched" in result["error"], result
            store.reset_consolidation_failures()  # a miss here is a race, not a model loop
    done.put(raised)


def test_processes_raising_one_counter_lose_no_update(backend: MemoryBackend) -> None:
    """Every replace is decided on the value as it is now (under the file lock, or the
    row lock on PostgreSQL): the counter ends at exactly the number of successes."""
    store = backend.store(memory_char_limit=10_000)
    assert store.add("memory", "counter = 00000")["success"]
    context = multiprocessing.get_context("fork")
    done = context.Queue()
    workers = [
        context.Process(target=_count_up, args=(backend, COUNTS_PER_WORKER, done))
        for _ in range(COUNTING_WORKERS)
    ]
    for worker in workers:
        worker.start()
    raised = [done.get(timeout=120) for _ in workers]
    for worker in workers:
        worker.join(timeout=60)
        assert worker.exitcode == 0
    assert sum(raised) == COUNTING_WORKERS * COUNTS_PER_WORKER
    assert backend.entries("memory") == [f"counter = {COUNTING_WORKERS * COUNTS_PER_WORKER:05d}"]


def _add_own(backend: MemoryBackend, number: int, go: Any) -> None:
    store = backend.store(memory_char_limit=100_000)
    go.wait(30)
    for i in range(SHARED_ADDS):
        result = store.add("memory", f"process {number} fact {i:02d}")
        assert result["success"], result


def test_processes_adding_at_once_lose_no_entry(backend: MemoryBackend) -> None:
    context = multiprocessing.get_context("fork")
    go = context.Event()
    workers = [
        context.Process(target=_add_own, args=(backend, n, go)) for n in range(SHARED_WRITERS)
    ]
    for worker in workers:
        worker.start()
    go.set()
    for worker in workers:
        worker.join(timeout=120)
        assert worker.exitcode == 0
    expected = {
        f"process {n} fact {i:02d}" for n in range(SHARED_WRITERS) for i in range(SHARED_ADDS)
    }
    entries = backend.entries("memory")
    assert len(entries) == len(expected) and set(entries) == expected


# -- two profiles sharing one MEMORY.md through symbolic links --------------------------------


def _two_linked_homes(tmp_path: Path) -> tuple[Path, list[Path]]:
    """``shared/MEMORY.md`` and two homes whose ``memories/MEMORY.md`` link to it."""
    shared = tmp_path / "shared" / "MEMORY.md"
    shared.parent.mkdir()
    shared.write_bytes(b"")
    memory_dirs = []
    for profile in PROFILES:
        memory_dir = tmp_path / profile / "memories"
        memory_dir.mkdir(parents=True)
        (memory_dir / "MEMORY.md").symlink_to(shared)
        memory_dirs.append(memory_dir)
    return shared, memory_dirs


def test_links_to_one_file_share_the_lock_beside_the_real_file(tmp_path: Path) -> None:
    shared, memory_dirs = _two_linked_homes(tmp_path)
    relative = tmp_path / "c" / "notes.md"  # another name, a relative link, a chain
    relative.parent.mkdir()
    relative.symlink_to(Path("..") / "a" / "memories" / "MEMORY.md")
    expected = shared.with_name("MEMORY.md.lock")
    for path in (shared, relative, *(d / "MEMORY.md" for d in memory_dirs)):
        assert lock_path_for(path) == expected
        with exclusive_lock(path) as lock_path:
            assert lock_path == expected
    assert not [p for d in memory_dirs for p in d.iterdir() if p.name.endswith(".lock")]


def _shared_writer(memory_dir: Path, number: int, go: Any, answers: Any) -> None:
    store = MemoryStore(memory_dir, memory_char_limit=10_000_000)
    go.wait(30)
    for i in range(SHARED_ADDS):
        entry = f"p{number}-{i:02d}"
        result = store.add("memory", entry)
        answers.put((entry, result["success"], result.get("error", "")))


def test_profiles_sharing_one_file_through_links_lose_nothing_and_answer_truthfully(
    tmp_path: Path,
) -> None:
    """The audit's race: 4 processes, 2 profiles, one real file. Before the lock moved to
    the real file, adds were refused as 'kept changing', and some answered 'The file was
    left unchanged' although their entry had landed (the other profile's temp-file cleanup
    deleted the file displaced by the exchange)."""
    shared, memory_dirs = _two_linked_homes(tmp_path)
    context = multiprocessing.get_context("fork")
    go = context.Event()
    answers = context.Queue()
    workers = [
        context.Process(
            target=_shared_writer, args=(memory_dirs[n % len(PROFILES)], n, go, answers)
        )
        for n in range(SHARED_WRITERS)
    ]
    for worker in workers:
        worker.start()
    go.set()
    results = [answers.get(timeout=60) for _ in range(SHARED_WRITERS * SHARED_ADDS)]
    for worker in workers:
        worker.join(timeout=60)
        assert worker.exitcode == 0

    on_disk = set(parse_entries(shared.read_text(encoding="utf-8")))
    succeeded = {entry for entry, ok, _error in results if ok}
    failed = {entry: error for entry, ok, error in results if not ok}
    assert succeeded <= on_disk, f"answered success, missing: {sorted(succeeded - on_disk)}"
    landed = {entry: error for entry, error in failed.items() if entry in on_disk}
    assert not landed, f"answered failure, yet in the file: {landed}"
    assert failed == {}, f"{len(failed)} adds refused, e.g. {next(iter(failed.items()))}"
    assert on_disk == succeeded
    assert len(on_disk) == SHARED_WRITERS * SHARED_ADDS
    assert all((d / "MEMORY.md").is_symlink() for d in memory_dirs)
    assert sorted(p.name for p in shared.parent.iterdir()) == ["MEMORY.md", "MEMORY.md.lock"]
    # Each profile keeps its own origin ledger beside its link (written under the shared
    # file's lock, so it needs none of its own); no other file.
    ledger = ledger_filename("MEMORY.md")
    assert all(sorted(p.name for p in d.iterdir()) == ["MEMORY.md", ledger] for d in memory_dirs)


def _add_in_child(store: MemoryStore) -> None:
    assert store.add("memory", "from the child")["success"]


def test_a_forked_child_leaves_the_parents_database_session_alone(
    postgres_backend: MemoryBackend,
) -> None:
    """A store opened before a fork: the child opens its own connection, and the parent's
    session (its connection) survives the child's exit."""
    store = postgres_backend.store()
    assert store.add("memory", "from the parent")["success"]
    documents = store.documents
    assert documents is not None
    with documents.connection() as conn:
        session = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
    child = multiprocessing.get_context("fork").Process(target=_add_in_child, args=(store,))
    child.start()
    child.join(timeout=60)
    assert child.exitcode == 0
    with documents.connection() as conn:
        assert conn.execute("SELECT pg_backend_pid()").fetchone()[0] == session
    assert store.add("memory", "the parent again")["success"]
    assert postgres_backend.entries("memory") == [
        "from the parent",
        "from the child",
        "the parent again",
    ]
