"""hermes-memory backup / restore: one consistent archive of a home that agents keep writing."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import tarfile
import textwrap
from pathlib import Path

import pytest
from child_kit import Child
from click.testing import CliRunner
from hermes_memory_builtin.store import MemoryStore
from history_kit import dump, history

from hermes_core.cli import cli
from hermes_core.sessions import SessionStore


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def files_of(home: Path) -> dict[str, bytes]:
    """Every file of *home* but lock files, by relative path."""
    return {
        p.relative_to(home).as_posix(): p.read_bytes()
        for p in sorted(home.rglob("*"))
        if p.is_file() and not p.name.endswith(".lock")
    }


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    history(home / "state.db")
    memory = MemoryStore(home / "memories")
    assert memory.add("memory", "The deploy script lives in /srv/deploy.sh")["success"]
    assert memory.add("user", "Prefers short answers")["success"]
    (home / "config.yaml").write_text("# my settings\nmemory:\n  provider: builtin\n")
    (home / ".env").write_text("OPENAI_API_KEY=sk-secret\n")
    return home


def test_backup_then_restore_into_an_empty_home_reproduces_it(home: Path, tmp_path: Path) -> None:
    archive = tmp_path / "b.tar.gz"
    code, out = run("backup", str(archive), "--home", str(home))
    assert code == 0, out
    assert "5 session(s), 8 message(s)" in out and "with .env" not in out
    assert oct(archive.stat().st_mode & 0o777) == "0o600"
    with tarfile.open(archive) as tar:
        names = set(tar.getnames())
    assert ".env" not in names and {"state.db", "memories/MEMORY.md", "config.yaml"} <= names
    empty = tmp_path / "new"
    code, out = run("restore", str(archive), "--home", str(empty))
    assert code == 0, out
    assert dump(empty / "state.db") == dump(home / "state.db")
    original = files_of(home)
    for name in ("memories/MEMORY.md", "memories/USER.md", "config.yaml"):
        assert (empty / name).read_bytes() == original[name]
    assert not (empty / ".env").exists()
    assert MemoryStore(empty / "memories").refresh("memory") == [
        "The deploy script lives in /srv/deploy.sh"
    ]
    with SessionStore(empty / "state.db") as store:  # usable: searched and written
        assert store.search_messages("deploy")
        store.append_message("s2", "user", "after the restore")


def test_secrets_only_when_asked(home: Path, tmp_path: Path) -> None:
    archive = tmp_path / "s.tar.gz"
    code, out = run("backup", str(archive), "--home", str(home), "--include-secrets")
    assert code == 0 and "with .env" in out
    target = tmp_path / "new"
    assert run("restore", str(archive), "--home", str(target))[0] == 0
    assert (target / ".env").read_text() == "OPENAI_API_KEY=sk-secret\n"
    assert oct((target / ".env").stat().st_mode & 0o777) == "0o600"


def test_backup_path_may_be_a_folder(home: Path, tmp_path: Path) -> None:
    folder = tmp_path / "backups"
    folder.mkdir()
    code, out = run("backup", str(folder), "--home", str(home), "--quiet")
    assert code == 0, out
    (made,) = folder.iterdir()
    assert made.name.startswith("hermes-backup-") and made.name.endswith(".tar.gz")


def test_restore_refuses_a_home_in_use_unless_forced(home: Path, tmp_path: Path) -> None:
    archive = tmp_path / "b.tar.gz"
    assert run("backup", str(archive), "--home", str(home))[0] == 0
    with SessionStore(home / "state.db") as store:
        store.create_session("later", source="cli")
        store.append_message("later", "user", "written after the backup")
    before = files_of(home)
    code, out = run("restore", str(archive), "--home", str(home))
    assert code == 1 and "already holds state.db" in out and "--force" in out
    assert files_of(home) == before
    code, out = run("restore", str(archive), "--home", str(home), "--force")
    assert code == 0, out
    assert "What it replaced is in" in out
    with SessionStore(home / "state.db", read_only=True) as store:
        assert store.get_session("later") is None and store.get_session("s1") is not None
    (aside,) = home.glob("restore-replaced-*")
    with SessionStore(aside / "state.db", read_only=True) as store:
        assert store.get_session("later") is not None  # nothing lost
    assert (aside / ".env").exists() and not (home / ".env").exists()
    assert not list(home.glob(".hermes-restore-*"))


def _rewrite(archive: Path, target: Path, change: dict[str, bytes], manifest: bool) -> None:
    """A copy of *archive* with members replaced, its manifest updated when *manifest*."""
    with tarfile.open(archive) as tar:
        members = {m.name: tar.extractfile(m).read() for m in tar.getmembers()}  # type: ignore[union-attr]
    members.update(change)
    if manifest:
        data = json.loads(members["manifest.json"])
        for name in change:
            data["files"][name] = {
                "size": len(members[name]),
                "sha256": hashlib.sha256(members[name]).hexdigest(),
            }
        members["manifest.json"] = json.dumps(data).encode()
    with tarfile.open(target, "w:gz") as tar:
        for name, body in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(body)
            tar.addfile(info, io.BytesIO(body))


def _damaged_db(archive: Path) -> bytes:
    with tarfile.open(archive) as tar:
        data = bytearray(tar.extractfile("state.db").read())  # type: ignore[union-attr]
    middle = len(data) // 2
    data[middle : middle + 4096] = b"\xde\xad\xbe\xef" * 1024
    return bytes(data)


@pytest.mark.parametrize("damage", ["bytes", "member", "database", "escape", "truncated"])
def test_a_damaged_archive_is_refused_and_nothing_changes(
    home: Path, tmp_path: Path, damage: str
) -> None:
    archive = tmp_path / "b.tar.gz"
    assert run("backup", str(archive), "--home", str(home))[0] == 0
    bad = tmp_path / "bad.tar.gz"
    if damage == "bytes":  # bits flipped inside the compressed stream
        data = bytearray(archive.read_bytes())
        data[len(data) // 2] ^= 0xFF
        bad.write_bytes(bytes(data))
    elif damage == "member":  # state.db changed, the manifest not
        _rewrite(archive, bad, {"state.db": _damaged_db(archive)}, manifest=False)
    elif damage == "database":  # a damaged state.db whose hash the manifest agrees with
        _rewrite(archive, bad, {"state.db": _damaged_db(archive)}, manifest=True)
    elif damage == "escape":  # a member that would land outside the home
        _rewrite(archive, bad, {"../escape.txt": b"x"}, manifest=True)
    else:
        bad.write_bytes(archive.read_bytes()[: archive.stat().st_size // 2])
    before = files_of(home)
    code, out = run("restore", str(bad), "--home", str(home), "--force")
    assert code == 1, out
    assert "not a usable hermes-memory backup" in out and "Nothing was changed" in out
    assert files_of(home) == before
    assert not list(home.glob("restore-replaced-*")) and not list(home.glob(".hermes-restore-*"))
    empty = tmp_path / "empty"
    assert run("restore", str(bad), "--home", str(empty))[0] == 1
    assert not empty.exists() or not any(p for p in empty.iterdir())


def test_a_failed_backup_leaves_no_archive(home: Path, tmp_path: Path) -> None:
    (home / "state.db.vectors").write_bytes(b"not a database at all" * 100)
    archive = tmp_path / "b.tar.gz"
    code, out = run("backup", str(archive), "--home", str(home))
    assert code == 1 and "state.db.vectors" in out
    assert list(tmp_path.iterdir()) == [home]


WRITER = textwrap.dedent(
    """
    import os, sys
    from hermes_core.sessions import SessionStore
    from hermes_memory_builtin.store import MemoryStore
    home, stop = sys.argv[1], sys.argv[2]
    memory = MemoryStore(os.path.join(home, "memories"), memory_char_limit=10**6)
    with SessionStore(os.path.join(home, "state.db")) as store:
        store.create_session("w", source="cli")
        n = 0
        while not os.path.exists(stop) or n < 40:
            n += 1
            store.append_message("w", "user", f"message {n}")
            if n % 5 == 0:
                assert memory.add("memory", f"fact {n} " + "x" * 2000)["success"]
            if n == 20:
                open(os.path.join(home, "ready"), "w").close()
    """
)


def test_backup_while_another_process_writes_is_consistent(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    stop = tmp_path / "stop"
    with Child(WRITER, home, stop, stderr=tmp_path / "writer.err") as writer:
        writer.wait_for(home / "ready")
        for attempt in range(3):
            archive = tmp_path / f"b{attempt}.tar.gz"
            code, out = run("backup", str(archive), "--home", str(home))
            assert code == 0, out
            restored = tmp_path / f"r{attempt}"
            code, out = run("restore", str(archive), "--home", str(restored))
            assert code == 0, out
            with SessionStore(restored / "state.db", read_only=True) as store:
                assert store.check() == []
                numbers = [int(m["content"].split()[1]) for m in store.get_messages("w")]
            assert numbers == list(range(1, len(numbers) + 1)) and len(numbers) >= 20
            entries = MemoryStore(restored / "memories").refresh("memory")
            assert entries and all(
                e.startswith("fact ") and e.endswith("x" * 2000) for e in entries
            )
        stop.touch()
        writer.finish()


def test_gzip_damage_is_reported_not_raised(tmp_path: Path) -> None:
    bad = tmp_path / "x.tar.gz"
    bad.write_bytes(gzip.compress(b"not a tar"))
    code, out = run("restore", str(bad), "--home", str(tmp_path / "h"))
    assert code == 1 and "not a usable hermes-memory backup" in out
    assert os.listdir(tmp_path) == ["x.tar.gz"] or not any((tmp_path / "h").iterdir())
