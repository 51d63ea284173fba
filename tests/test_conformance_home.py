"""Seeding a conformance test home copies configuration, never data."""

from __future__ import annotations

from pathlib import Path

from hermes_core.testing.home import SETTINGS_FILE_LIMIT, seed_home


def _write(path: Path, text: str = "x") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_configuration_and_the_providers_settings_are_copied_data_is_not(
    tmp_path: Path,
) -> None:
    source, home = tmp_path / "configured", tmp_path / "scratch"
    home.mkdir()
    for name in (
        "config.yaml",
        ".env",
        "hindsight.json",
        "hindsight/config.json",
        "hindsight/profile.toml",
        "hindsight/memory.db",  # data
        "hindsight/cache/index.json",  # a subfolder: data
        "honcho.json",  # another provider's
        "state.db",
        "MEMORY.md",
    ):
        _write(source / name)
    _write(source / "hindsight" / "huge.json", "x" * (SETTINGS_FILE_LIMIT + 1))
    copied = seed_home(source, home, "hindsight")
    assert sorted(copied) == [
        ".env",
        "config.yaml",
        "hindsight.json",
        "hindsight/config.json",
        "hindsight/profile.toml",
    ]
    kept = sorted(p.relative_to(home).as_posix() for p in home.rglob("*") if p.is_file())
    assert kept == sorted(copied)


def test_a_provider_name_that_is_not_a_plain_name_copies_only_the_configuration(
    tmp_path: Path,
) -> None:
    source, home = tmp_path / "configured", tmp_path / "scratch"
    home.mkdir()
    _write(source / "config.yaml")
    _write(tmp_path / "outside.json")
    _write(source / "x" / "y.json")
    for name in ("../outside", "x/y", "..", ".", ""):
        assert seed_home(source, home, name) == ["config.yaml"]
    assert seed_home(source, home) == ["config.yaml"]


def test_a_linked_settings_folder_is_not_followed(tmp_path: Path) -> None:
    source, home = tmp_path / "configured", tmp_path / "scratch"
    home.mkdir()
    _write(tmp_path / "elsewhere" / "config.json")
    source.mkdir()
    (source / "notes").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    assert seed_home(source, home, "notes") == []


def test_settings_named_with_the_other_separator_are_copied(tmp_path: Path) -> None:
    source, home = tmp_path / "configured", tmp_path / "scratch"
    home.mkdir()
    for name in ("config.yaml", "vertex_memory.json", "vertex_memory/settings.yaml", "vertex.json"):
        _write(source / name)
    assert sorted(seed_home(source, home, "vertex-memory")) == [
        "config.yaml",
        "vertex_memory.json",
        "vertex_memory/settings.yaml",
    ]
    other = tmp_path / "other"
    other.mkdir()
    _write(source / "team-notes.yaml")
    assert sorted(seed_home(source, other, "team_notes")) == ["config.yaml", "team-notes.yaml"]
