"""Finding the git checkout a session runs in, without running git."""

from __future__ import annotations

from pathlib import Path

from hermes_core.runtime.workspace import git_root


def test_the_checkout_root_is_found_from_any_folder_inside_it(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "a" / "b").mkdir(parents=True)
    assert git_root(repo) == str(repo)
    assert git_root(repo / "a" / "b") == str(repo)
    assert git_root(repo / "a" / "missing") == str(repo)  # not created yet: still inside


def test_a_worktree_or_submodule_has_a_git_file(tmp_path: Path) -> None:
    inner = tmp_path / "outer" / "vendored"
    inner.mkdir(parents=True)
    (tmp_path / "outer" / ".git").mkdir()
    (inner / ".git").write_text("gitdir: ../.git/modules/vendored\n", encoding="utf-8")
    assert git_root(inner) == str(inner)  # the nearest checkout, not the outer one


def test_outside_any_checkout_there_is_none(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    assert git_root(plain) is None  # pytest's temporary folders are in no checkout
    assert git_root("\0bad") is None  # a path no system can hold
