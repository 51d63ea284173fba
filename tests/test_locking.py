"""The one cross-process lock (hermes_core.locking), as config.yaml and .env writers use it."""

from __future__ import annotations

import multiprocessing
import stat
import sys
from pathlib import Path

import pytest

from hermes_core.config import load_config, update_config
from hermes_core.errors import ConfigError, LockError
from hermes_core.locking import exclusive_lock, lock_path_beside

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions and fork")


def test_the_lock_file_sits_beside_the_file_is_private_and_stays(tmp_path: Path) -> None:
    lock_path = lock_path_beside(tmp_path / "config.yaml")
    assert lock_path == tmp_path / "config.yaml.lock"
    with exclusive_lock(lock_path) as held:
        assert held == lock_path
    assert stat.S_IMODE(lock_path.stat().st_mode) == 0o600
    assert lock_path.exists()  # every waiter locks the same file


def test_a_symlinked_lock_file_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    target = tmp_path / "precious.txt"
    target.write_text("keep")
    target.chmod(0o644)
    (tmp_path / "config.yaml.lock").symlink_to(target)
    with (
        pytest.raises(LockError, match="symbolic link"),
        exclusive_lock(tmp_path / "config.yaml.lock"),
    ):
        pass
    with pytest.raises(ConfigError, match="symbolic link"):
        update_config(lambda config: config.update(a=1), tmp_path)
    assert target.read_text() == "keep"
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
    assert not (tmp_path / "config.yaml").exists()


def _add_keys(home: str, worker: int, count: int) -> None:
    for i in range(count):
        update_config(lambda config, key=f"w{worker}_{i}", n=i: config.update({key: n}), home)


def test_processes_updating_config_yaml_at_once_lose_no_setting(tmp_path: Path) -> None:
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_add_keys, args=(str(tmp_path), w, 15)) for w in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
        assert worker.exitcode == 0
    assert len(load_config(tmp_path)) == 45
