"""Hostile memory files: whatever is on disk, memory never hangs, crashes or loses text.

Each test puts something a person, an editor or another program could leave
at ``MEMORY.md`` (or around it) and checks that loading and writing end
promptly with a clear error and that the bytes on disk stay as they were.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hermes_memory_builtin.entries import ENTRY_DELIMITER
from hermes_memory_builtin.store import MemoryStore
from hermes_memory_builtin.tool import MemoryTool
from memory_support import write_entries, write_file

pytestmark = pytest.mark.files_only(
    "pipes, folders, links, undecodable bytes and modes where MEMORY.md should be"
)


def _within(seconds: float, fn, *args):  # type: ignore[no-untyped-def]
    """Run *fn* on a thread; fail (instead of hanging the suite) if it does not return."""
    outcome: dict[str, object] = {}

    def run() -> None:
        outcome["value"] = fn(*args)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"{getattr(fn, '__name__', fn)} hung"
    return outcome.get("value")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_named_pipe_at_memory_md_neither_hangs_loading_nor_writing(
    store: MemoryStore,
) -> None:
    os.mkfifo(store.path("memory"))
    _within(10, store.load_from_disk)
    assert "not a regular file" in (store.read_error("memory") or "")
    result = _within(10, store.add, "memory", "a fact")
    assert result["success"] is False
    assert "MEMORY.md" in result["error"] and "not a regular file" in result["error"]
    assert store.path("memory").is_fifo()  # left as it was


def test_a_directory_named_memory_md_is_refused_clearly(store: MemoryStore) -> None:
    store.path("memory").mkdir()
    store.load_from_disk()
    result = store.add("memory", "a fact")
    assert result["success"] is False
    assert "directory" in result["error"]
    assert store.path("memory").is_dir()


def test_a_symlinked_memory_file_is_written_through_and_stays_a_link(
    store: MemoryStore, tmp_path: Path
) -> None:
    real = tmp_path / "dotfiles" / "MEMORY.md"
    write_entries(real, ["kept in dotfiles"])
    store.path("memory").parent.mkdir(parents=True, exist_ok=True)
    store.path("memory").symlink_to(real)
    store.load_from_disk()
    assert store.add("memory", "new fact")["success"] is True
    assert store.path("memory").is_symlink()
    assert real.read_text(encoding="utf-8") == ENTRY_DELIMITER.join(
        ["kept in dotfiles", "new fact"]
    )
    assert not [p for p in real.parent.iterdir() if p.name.endswith(".tmp")]


def test_a_dangling_symlink_is_reported_and_nothing_is_created(
    store: MemoryStore, tmp_path: Path
) -> None:
    missing = tmp_path / "not-checked-out" / "MEMORY.md"
    store.path("memory").parent.mkdir(parents=True, exist_ok=True)
    store.path("memory").symlink_to(missing)
    store.load_from_disk()
    assert str(missing) in (store.read_error("memory") or "")
    result = store.add("memory", "a fact")
    assert result["success"] is False and str(missing) in result["error"]
    assert not missing.exists() and store.path("memory").is_symlink()


def test_a_symlink_loop_is_reported_and_nothing_is_created(store: MemoryStore) -> None:
    path = store.path("memory")
    path.parent.mkdir(parents=True, exist_ok=True)
    other = path.with_name("loop.md")
    path.symlink_to(other.name)
    other.symlink_to(path.name)
    _within(10, store.load_from_disk)
    assert "symbolic links" in (store.read_error("memory") or "")
    result = _within(10, store.add, "memory", "a fact")
    assert result["success"] is False and "symbolic links" in result["error"]
    assert path.is_symlink() and other.is_symlink()
    # the lock stays beside the link: a loop leads to no real file to lock beside
    assert sorted(p.name for p in path.parent.iterdir()) == [
        "MEMORY.md",
        "MEMORY.md.lock",
        "loop.md",
    ]


def test_a_file_where_the_memories_folder_should_be(hermes_home: Path) -> None:
    folder = hermes_home / "memories"
    write_file(folder, "not a folder")
    store = MemoryStore(folder)
    store.load_from_disk()  # does not raise
    assert store.read_error("memory")
    result = MemoryTool(store).run({"action": "add", "target": "memory", "content": "x"})
    assert result["success"] is False
    assert str(folder) in result["error"] and "folder" in result["error"]
    assert folder.read_text(encoding="utf-8") == "not a folder"


def test_a_directory_where_the_lock_file_should_be_says_what_to_do(store: MemoryStore) -> None:
    lock = store.path("memory").with_name("MEMORY.md.lock")
    lock.mkdir(parents=True)
    result = store.add("memory", "a fact")
    assert result["success"] is False
    assert str(lock) in result["error"] and "retry" in result["error"]


@pytest.mark.parametrize(
    "content",
    [
        os.urandom(4096).replace(b"\xa7", b"").replace(b"\n", b"") + b"\xff",
        b"good entry\n\xc2\xa7\nbad \xff\xfe",
        "a\n\u00a7\nb".encode("latin-1"),
        "hello\n\u00a7\nworld".encode("utf-16"),
    ],
    ids=["binary", "invalid-utf8", "latin1", "utf16"],
)
def test_undecodable_files_are_never_rewritten(store: MemoryStore, content: bytes) -> None:
    write_file(store.path("memory"), content)
    store.load_from_disk()
    assert store.format_for_system_prompt("memory") is None
    for result in (
        store.add("memory", "x"),
        store.remove("memory", "good"),
        store.apply_batch("memory", [{"action": "add", "content": "y"}]),
    ):
        assert result["success"] is False and "UTF-8" in result["error"]
    assert store.path("memory").read_bytes() == content


def test_a_50_megabyte_file_keeps_prompt_and_tool_results_bounded(store: MemoryStore) -> None:
    entries = [f"hand-pasted line {i} " + "lorem ipsum " * 8 for i in range(480_000)]
    write_entries(store.path("memory"), entries)
    size = store.path("memory").stat().st_size
    assert size > 50_000_000
    store.load_from_disk()
    block = store.format_for_system_prompt("memory") or ""
    assert len(block) < 5 * store.char_limit("memory")
    assert "not shown" in block and "hermes-memory memory" in block
    refused = store.add("memory", "one more fact")
    assert refused["success"] is False
    assert len(json.dumps(refused)) < 40_000
    assert store.path("memory").stat().st_size == size


def test_a_rename_over_save_by_an_editor_is_never_overwritten(memory_dir: Path) -> None:
    """An editor that saves by writing a temp file and renaming it over MEMORY.md.

    Every version it saves re-reads the file first and adds one line, so
    nothing it saved may disappear, whatever the interleaving with tool writes.
    """
    store = MemoryStore(memory_dir, memory_char_limit=200_000)
    path = store.path("memory")
    write_entries(path, ["seed"])
    saves = 60
    stop = threading.Event()

    def editor() -> None:
        for number in range(saves):
            text = path.read_text(encoding="utf-8")
            temp = path.with_name(f"editor-{number}.swp")
            temp.write_text(text + ENTRY_DELIMITER + f"editor save {number}", encoding="utf-8")
            os.replace(temp, path)
            time.sleep(0.001)
        stop.set()

    thread = threading.Thread(target=editor)
    thread.start()
    writes = 0
    while not stop.is_set() and writes < 2_000:
        result = store.add("memory", f"tool {writes}")
        assert result["success"] is True or "retry" in result["error"], result
        writes += 1
    thread.join(30)
    final = path.read_text(encoding="utf-8").split(ENTRY_DELIMITER)
    assert [f"editor save {n}" for n in range(saves)] == [e for e in final if "editor" in e]


# -- permissions: root ignores file modes, so drop that privilege in a child process -----


def _unprivileged(tmp_path: Path) -> list[str]:
    """A command prefix that runs without the power to bypass file permissions."""
    if os.name != "posix":
        pytest.skip("POSIX permissions")
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv")
    caps = "-dac_override,-dac_read_search,-fowner"
    prefix = [setpriv, f"--bounding-set={caps}", f"--inh-caps={caps}"]
    probe = tmp_path / "probe"
    probe.write_text("x")
    probe.chmod(0)
    if subprocess.run([*prefix, "cat", str(probe)], capture_output=True).returncode == 0:
        pytest.skip("cannot drop the privilege to bypass permissions here")
    return prefix


def _run_with_mode(
    tmp_path: Path, target: Path, mode: int, restore: int, script: str, memory_dir: Path
) -> dict[str, Any]:
    """*script*'s JSON output, run without root's bypass while *target* has *mode*."""
    prefix = _unprivileged(tmp_path)
    target.chmod(mode)
    try:
        done = subprocess.run(
            [*prefix, sys.executable, "-c", script, str(memory_dir)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        target.chmod(restore)
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


_ADD_SCRIPT = """
import json, sys
from hermes_memory_builtin.store import MemoryStore
store = MemoryStore(sys.argv[1])
store.load_from_disk()
print(json.dumps({"error": store.read_error("memory"), "add": store.add("memory", "a fact")}))
"""


def test_an_unreadable_file_is_left_alone(memory_dir: Path, tmp_path: Path) -> None:
    write_entries(memory_dir / "MEMORY.md", ["private"])
    outcome = _run_with_mode(tmp_path, memory_dir / "MEMORY.md", 0, 0o600, _ADD_SCRIPT, memory_dir)
    assert "Permission denied" in outcome["error"]
    assert outcome["add"]["success"] is False and "Permission denied" in outcome["add"]["error"]
    assert (memory_dir / "MEMORY.md").read_text(encoding="utf-8") == "private"


def test_a_read_only_memory_folder_refuses_writes_and_says_what_to_fix(
    memory_dir: Path, tmp_path: Path
) -> None:
    write_entries(memory_dir / "MEMORY.md", ["kept"])
    add = _run_with_mode(tmp_path, memory_dir, 0o555, 0o755, _ADD_SCRIPT, memory_dir)["add"]
    assert add["success"] is False
    assert str(memory_dir) in add["error"] and "writable" in add["error"]
    assert (memory_dir / "MEMORY.md").read_text(encoding="utf-8") == "kept"
    assert sorted(p.name for p in memory_dir.iterdir()) == ["MEMORY.md"]


_LOAD_SCRIPT = """
import json, sys
from hermes_memory_builtin.store import MemoryStore
from hermes_memory_builtin.tool import MemoryTool
store = MemoryStore(sys.argv[1])
store.load_from_disk()
tool = MemoryTool(store)
print(json.dumps({
    "error": store.read_error("memory"),
    "prompt": store.format_for_system_prompt("memory"),
    "remove": json.loads(tool({"action": "remove", "target": "memory"})),
    "add": store.add("memory", "a fact"),
}))
"""


def test_a_memory_folder_without_search_permission_is_reported_not_a_crash(
    memory_dir: Path, tmp_path: Path
) -> None:
    write_entries(memory_dir / "MEMORY.md", ["kept"])
    # 0o600: a readable listing, but its files cannot be reached
    outcome = _run_with_mode(tmp_path, memory_dir, 0o600, 0o755, _LOAD_SCRIPT, memory_dir)
    assert "Permission denied" in outcome["error"]
    assert outcome["prompt"] is None
    assert outcome["remove"]["success"] is False
    assert outcome["add"]["success"] is False and "Permission denied" in outcome["add"]["error"]
    assert (memory_dir / "MEMORY.md").read_text(encoding="utf-8") == "kept"


def test_a_read_only_memory_file_is_not_replaced(memory_dir: Path, tmp_path: Path) -> None:
    write_entries(memory_dir / "MEMORY.md", ["frozen on purpose"])
    path = memory_dir / "MEMORY.md"
    add = _run_with_mode(tmp_path, path, 0o444, 0o644, _ADD_SCRIPT, memory_dir)["add"]
    assert add["success"] is False
    assert "read-only" in add["error"] and "chmod u+w" in add["error"]
    assert (memory_dir / "MEMORY.md").read_text(encoding="utf-8") == "frozen on purpose"
    assert sorted(p.name for p in memory_dir.iterdir()) == ["MEMORY.md", "MEMORY.md.lock"]


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
def test_a_write_keeps_the_permissions_of_the_file_it_replaces(store: MemoryStore) -> None:
    path = store.path("memory")
    write_entries(path, ["shared with the group"])
    path.chmod(0o640)
    assert store.add("memory", "a second fact")["success"] is True
    assert path.stat().st_mode & 0o777 == 0o640
    assert store.add("user", "a new file")["success"] is True
    assert store.path("user").stat().st_mode & 0o777 == 0o600


def test_a_link_to_a_file_in_a_read_only_folder_says_which_folder_to_fix(
    memory_dir: Path, tmp_path: Path
) -> None:
    """The lock and the temporary file belong beside the real file; when its folder is
    not writable, the error names that folder (not the link's) and the link."""
    real = tmp_path / "dotfiles" / "MEMORY.md"
    write_entries(real, ["kept"])
    memory_dir.mkdir(parents=True, exist_ok=True)
    (memory_dir / "MEMORY.md").symlink_to(real)
    add = _run_with_mode(tmp_path, real.parent, 0o555, 0o755, _ADD_SCRIPT, memory_dir)["add"]
    assert add["success"] is False
    assert "symbolic link" in add["error"] and str(real) in add["error"]
    assert str(real.parent) in add["error"] and "writable" in add["error"]
    assert real.read_text(encoding="utf-8") == "kept"
    assert sorted(p.name for p in real.parent.iterdir()) == ["MEMORY.md"]
    assert (memory_dir / "MEMORY.md").is_symlink()


def test_a_link_whose_lock_exists_but_whose_folder_is_read_only_names_the_real_folder(
    memory_dir: Path, tmp_path: Path
) -> None:
    real = tmp_path / "dotfiles" / "MEMORY.md"
    write_entries(real, ["kept"])
    write_file(real.with_name("MEMORY.md.lock"), "")
    memory_dir.mkdir(parents=True, exist_ok=True)
    (memory_dir / "MEMORY.md").symlink_to(real)
    add = _run_with_mode(tmp_path, real.parent, 0o555, 0o755, _ADD_SCRIPT, memory_dir)["add"]
    assert add["success"] is False
    assert "left unchanged" in add["error"] and "symbolic link" in add["error"]
    assert f"Check that {real.parent} is a writable folder" in add["error"]
    assert real.read_text(encoding="utf-8") == "kept"
