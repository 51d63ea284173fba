"""Multi-process reliability: contending writers lose nothing, killed writers tear nothing.

These run real processes against real files. They use a tmpfs folder when the
machine has one: flock, rename and the page cache behave exactly as on disk
(a SIGKILL does not lose written pages), only fsync is free, which keeps the
2000 locked writes quick.

The full-size runs (2000 contending writes, 200 kills) are the ``soak`` nox session's
(``-m slow``); the default run makes the same checks at a quarter of the size.
"""

from __future__ import annotations

import multiprocessing
import os
import random
import re
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Iterator
from multiprocessing.synchronize import Event
from pathlib import Path
from typing import Any

import pytest
from hermes_memory_builtin import files
from hermes_memory_builtin.entries import join_entries, parse_entries
from hermes_memory_builtin.files import TEMP_PREFIX, read_memory_file
from hermes_memory_builtin.store import MemoryStore
from hermes_memory_builtin.threats import scan_for_threats
from memory_support import MemoryBackend

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs fork and SIGKILL (POSIX)")

FORK = multiprocessing.get_context("fork") if sys.platform != "win32" else None
ROOMY = 10_000_000
WRITERS = 8
# Adds per writer: the default run's, and the soak run's (``-m slow``).
ADDS_PER_WRITER = [60, pytest.param(250, marks=pytest.mark.slow)]
READERS = 2
ENTRY = re.compile(r"w\d-\d{3}")


@pytest.fixture
def fast_dir(tmp_path: Path) -> Iterator[Path]:
    """A fresh folder on tmpfs when available, else under pytest's tmp_path."""
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        folder = Path(tempfile.mkdtemp(prefix="hermes-l1-", dir=shm))
        try:
            yield folder
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    else:
        yield tmp_path


def _writer(memory_dir: Path, number: int, adds: int, go: Event) -> None:
    store = MemoryStore(memory_dir, memory_char_limit=ROOMY)
    go.wait(30)
    for i in range(adds):
        result = store.add("memory", f"w{number}-{i:03d}")
        if not result["success"]:
            print(f"writer {number}: {result}", file=sys.stderr)
            os._exit(3)


def _reader(path: Path, go: Event, stop: Event, reads: Any) -> None:
    go.wait(30)
    seen = 0
    count = 0
    while not stop.is_set():
        read = read_memory_file(path)
        entries = parse_entries(read.text)
        problem = None
        if not read.ok:
            problem = f"unreadable: {read.error}"
        elif read.text != join_entries(entries):
            problem = "text is not a clean list of entries"
        elif not all(ENTRY.fullmatch(entry) for entry in entries):
            problem = "torn entry"
        elif len(set(entries)) != len(entries):
            problem = "duplicated entry"
        elif len(entries) < seen:
            problem = f"entries went backwards: {seen} -> {len(entries)}"
        if problem:
            print(f"reader: {problem}", file=sys.stderr)
            os._exit(4)
        seen = len(entries)
        count += 1
        time.sleep(0.001)  # leave the CPU to the writers between reads
    reads.value = count


@pytest.mark.timeout(900)
@pytest.mark.parametrize("adds", ADDS_PER_WRITER)
def test_contending_writers_lose_nothing_and_readers_always_parse(
    fast_dir: Path, adds: int
) -> None:
    assert FORK is not None
    path = fast_dir / "MEMORY.md"
    go, stop = FORK.Event(), FORK.Event()
    reads = [FORK.Value("i", 0) for _ in range(READERS)]
    readers = [FORK.Process(target=_reader, args=(path, go, stop, r)) for r in reads]
    writers = [FORK.Process(target=_writer, args=(fast_dir, n, adds, go)) for n in range(WRITERS)]
    for process in [*readers, *writers]:
        process.start()
    go.set()
    for writer in writers:
        writer.join(timeout=800)
        assert writer.exitcode == 0, f"a writer failed (exit code {writer.exitcode})"
    stop.set()
    for reader in readers:
        reader.join(timeout=60)
        assert reader.exitcode == 0, f"a reader saw a bad file (exit code {reader.exitcode})"
    assert all(r.value > 0 for r in reads)

    entries = parse_entries(path.read_text(encoding="utf-8"))
    expected = {f"w{n}-{i:03d}" for n in range(WRITERS) for i in range(adds)}
    assert len(entries) == WRITERS * adds
    assert set(entries) == expected
    for n in range(WRITERS):  # each writer's entries stay in its own order
        own = [e for e in entries if e.startswith(f"w{n}-")]
        assert own == sorted(own)


# A ~220 KB file whose big entries never change: each write of the flipping
# entry rewrites (and fsyncs) all of it, so most kills land mid-write.
KEPT = [(f"kept entry {n}: " + "lorem ipsum dolor sit amet " * 2000).strip() for n in range(4)]
STATE_A = "state A: the build uses make"
STATE_B = "state B: the build uses ninja"
# Kills of a writer: the default run's, and the soak run's (``-m slow``).
KILLS = [50, pytest.param(200, marks=pytest.mark.slow)]


def _flip_forever(memory_dir: Path, ready: Event) -> None:
    store = MemoryStore(memory_dir, memory_char_limit=ROOMY)
    ready.set()
    while True:
        for old, new in (("state A", STATE_B), ("state B", STATE_A)):
            result = store.replace("memory", old, new)
            if not result["success"] and "No entry matched" not in result["error"]:
                os._exit(5)


@pytest.mark.timeout(900)
@pytest.mark.parametrize("kills", KILLS)
def test_a_killed_writer_leaves_the_old_or_the_new_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kills: int
) -> None:
    assert FORK is not None
    path = tmp_path / "MEMORY.md"
    path.write_text(join_entries([*KEPT, STATE_A]), encoding="utf-8")
    valid = {
        join_entries([*KEPT, STATE_A]).encode(): "A",
        join_entries([*KEPT, STATE_B]).encode(): "B",
    }
    scan_for_threats("warm-up", scope="strict")  # compile once; forked writers inherit it
    # One whole write first, in this process and on a copy: what a write loads lazily (the
    # detector's weights, the lock library) is then inherited, and its duration sets how
    # long a writer runs before it is killed, so some kills land after a finished write
    # however loaded the machine is.
    warm = tmp_path / "warm"
    warm.mkdir()
    (warm / "MEMORY.md").write_text(join_entries([*KEPT, STATE_A]), encoding="utf-8")
    began = time.perf_counter()
    assert MemoryStore(warm, memory_char_limit=ROOMY).replace("memory", "state A", STATE_B)[
        "success"
    ]
    window = max(0.02, 3 * (time.perf_counter() - began))
    rng = random.Random(20_260_501)
    observed = {"A": 0, "B": 0}
    last = "A"
    for _ in range(kills):
        ready = FORK.Event()
        child = FORK.Process(target=_flip_forever, args=(tmp_path, ready))
        child.start()
        assert ready.wait(30), "the writer process did not start"
        time.sleep(rng.uniform(0.0, window))
        assert child.pid is not None
        os.kill(child.pid, signal.SIGKILL)
        child.join(timeout=30)
        assert child.exitcode == -signal.SIGKILL
        content = path.read_bytes()
        assert content in valid, f"torn file of {len(content)} bytes"
        last = valid[content]
        observed[last] += 1
    assert observed["A"] and observed["B"], f"the writer never got to write: {observed}"

    # The lock died with its holder, and the next writer sweeps up killed writers' temp
    # files once they are old enough to be nobody's live write (here: at once).
    monkeypatch.setattr(files, "STALE_TEMP_SECONDS", 0.0)
    store = MemoryStore(tmp_path, memory_char_limit=ROOMY)
    assert store.replace("memory", f"state {last}", "final state")["success"] is True
    assert parse_entries(path.read_text(encoding="utf-8")) == [*KEPT, "final state"]
    assert not list(tmp_path.glob(TEMP_PREFIX + "*"))


# -- the same on PostgreSQL rows: one transaction per change -----------------------------------

ROW_WRITERS = 4
ROW_ADDS = 40
ROW_KILLS = 40


def _row_writer(backend: MemoryBackend, number: int, go: Event) -> None:
    store = backend.store(memory_char_limit=ROOMY)
    go.wait(30)
    for i in range(ROW_ADDS):
        result = store.add("memory", f"w{number}-{i:03d}")
        if not result["success"]:
            print(f"writer {number}: {result}", file=sys.stderr)
            os._exit(3)


def _row_reader(backend: MemoryBackend, go: Event, stop: Event, reads: Any) -> None:
    go.wait(30)
    seen = count = 0
    while not stop.is_set():
        entries = parse_entries(backend.raw("memory") or "")
        if not all(ENTRY.fullmatch(e) for e in entries) or len(set(entries)) != len(entries):
            os._exit(4)
        if len(entries) < seen:
            os._exit(5)
        seen = len(entries)
        count += 1
        time.sleep(0.005)
    reads.value = count


@pytest.mark.timeout(900)
def test_contending_row_writers_lose_nothing_and_readers_always_parse(
    postgres_backend: MemoryBackend,
) -> None:
    assert FORK is not None
    backend = postgres_backend
    backend.store().load_from_disk()  # the schema exists before the readers look
    go, stop = FORK.Event(), FORK.Event()
    reads = [FORK.Value("i", 0) for _ in range(READERS)]
    readers = [FORK.Process(target=_row_reader, args=(backend, go, stop, r)) for r in reads]
    writers = [FORK.Process(target=_row_writer, args=(backend, n, go)) for n in range(ROW_WRITERS)]
    for process in [*readers, *writers]:
        process.start()
    go.set()
    for writer in writers:
        writer.join(timeout=800)
        assert writer.exitcode == 0, f"a writer failed (exit code {writer.exitcode})"
    stop.set()
    for reader in readers:
        reader.join(timeout=60)
        assert reader.exitcode == 0, f"a reader saw a bad document (exit code {reader.exitcode})"
    assert all(r.value > 0 for r in reads)
    entries = backend.entries("memory")
    assert set(entries) == {f"w{n}-{i:03d}" for n in range(ROW_WRITERS) for i in range(ROW_ADDS)}
    assert len(entries) == ROW_WRITERS * ROW_ADDS
    for n in range(ROW_WRITERS):
        own = [e for e in entries if e.startswith(f"w{n}-")]
        assert own == sorted(own)


def _flip_rows_forever(backend: MemoryBackend, ready: Event) -> None:
    store = backend.store(memory_char_limit=ROOMY)
    while True:
        for old, new in (("state A", STATE_B), ("state B", STATE_A)):
            result = store.replace("memory", old, new)
            if not result["success"] and "No entry matched" not in result["error"]:
                os._exit(5)
            ready.set()  # after a first change: on a loaded machine the kill comes mid-flip


@pytest.mark.timeout(900)
def test_a_killed_row_writer_leaves_the_old_or_the_new_document(
    postgres_backend: MemoryBackend,
) -> None:
    """SIGKILL mid-change: the server rolls the open transaction back."""
    assert FORK is not None
    backend = postgres_backend
    backend.put("memory", join_entries([*KEPT, STATE_A]))
    valid = {join_entries([*KEPT, STATE_A]): "A", join_entries([*KEPT, STATE_B]): "B"}
    scan_for_threats("warm-up", scope="strict")
    rng = random.Random(20_260_502)
    observed = {"A": 0, "B": 0}
    last = "A"
    for _ in range(ROW_KILLS):
        ready = FORK.Event()
        child = FORK.Process(target=_flip_rows_forever, args=(backend, ready))
        child.start()
        assert ready.wait(30), "the writer process did not start"
        time.sleep(rng.uniform(0.0, 0.05))
        assert child.pid is not None
        os.kill(child.pid, signal.SIGKILL)
        child.join(timeout=30)
        assert child.exitcode == -signal.SIGKILL
        content = backend.raw("memory")
        assert content in valid, f"torn document of {len(content or '')} characters"
        last = valid[content]
        observed[last] += 1
    assert observed["A"] and observed["B"], f"the writer never got to write: {observed}"
    store = backend.store(memory_char_limit=ROOMY)
    assert store.replace("memory", f"state {last}", "final state")["success"] is True
    assert backend.entries("memory") == [*KEPT, "final state"]
