"""``plugin_template`` and ``hermes-memory new-provider``: render, install, test, discover."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from hermes_core.cli import cli
from hermes_core.cli.scaffold_cmd import provider_names, template_dir

ROOT = Path(__file__).resolve().parent.parent
NAME = "Team Notes-Demo"


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dest = tmp_path_factory.mktemp("render") / "project"
    result = CliRunner().invoke(cli, ["new-provider", NAME, "--dest", str(dest)])
    assert result.exit_code == 0, result.output
    assert "provider name: team-notes-demo   package: hermes_memory_team_notes_demo" in (
        result.output
    )
    return dest


@pytest.mark.parametrize(
    ("typed", "provider", "package", "class_name"),
    [
        (
            "Team Notes-Demo",
            "team-notes-demo",
            "hermes_memory_team_notes_demo",
            "TeamNotesDemoMemoryProvider",
        ),
        ("TeamNotes", "team-notes", "hermes_memory_team_notes", "TeamNotesMemoryProvider"),
        ("HTTPCache", "http-cache", "hermes_memory_http_cache", "HttpCacheMemoryProvider"),
        (
            "hermes-memory-zep_graph",
            "zep-graph",
            "hermes_memory_zep_graph",
            "ZepGraphMemoryProvider",
        ),
        ("  Über   Notes! ", "uber-notes", "hermes_memory_uber_notes", "UberNotesMemoryProvider"),
        ("3D scenes", "p3d-scenes", "hermes_memory_p3d_scenes", "P3dScenesMemoryProvider"),
    ],
)
def test_names_map_to_valid_distribution_package_and_provider_names(
    typed: str, provider: str, package: str, class_name: str
) -> None:
    names = provider_names(typed)
    assert (names.provider, names.package, names.class_name) == (provider, package, class_name)
    assert names.distribution == f"hermes-memory-{provider}"
    assert package.isidentifier() and class_name.isidentifier()


@pytest.mark.parametrize(
    ("typed", "message"),
    [
        ("builtin", "is the name of one of hermes-memory's own providers"),
        ("Honcho", "is the name of one of hermes-memory's own providers (hermes-memory-honcho)"),
        ("hermes-memory-mem0", "is the name of one of hermes-memory's own providers"),
        ("supermemory", "is the name of one of hermes-memory's own providers"),
        ("web", "would get the tool 'web_search', which belongs to the host agent"),
        ("Session", "would get the tool 'session_search'"),
        ("!!!", "has no ASCII letters or digits"),
        ("   ", "has no ASCII letters or digits"),
        ("x" * 41, "longer than 40 characters"),
        # memory.provider values that mean "the builtin store alone": never selectable
        ("None", "means the builtin store alone"),
        ("Default", "means the builtin store alone"),
        ("built-in", "means the builtin store alone"),
    ],
)
def test_unusable_names_are_refused_with_a_suggestion(typed: str, message: str) -> None:
    result = CliRunner().invoke(cli, ["new-provider", typed, "--dest", "unused"])
    assert result.exit_code == 2
    assert message in result.output


def test_the_rendered_project_is_complete(rendered: Path) -> None:
    package = rendered / "hermes_memory_team_notes_demo"
    files = {p.relative_to(rendered).as_posix() for p in rendered.rglob("*") if p.is_file()}
    assert {
        "pyproject.toml",
        "README.md",
        "CHANGELOG.md",
        "LICENSE",
        ".gitignore",
        ".copier-answers.yml",
        ".github/workflows/test.yml",
        "tests/conftest.py",
        "tests/test_conformance.py",
        "tests/test_plugin_listed.py",
        "tests/test_store.py",
        "hermes_memory_team_notes_demo/__init__.py",
        "hermes_memory_team_notes_demo/plugin.py",
        "hermes_memory_team_notes_demo/provider.py",
        "hermes_memory_team_notes_demo/store.py",
        "hermes_memory_team_notes_demo/py.typed",
    } == files
    pyproject = (rendered / "pyproject.toml").read_text(encoding="utf-8")
    assert 'name = "hermes-memory-team-notes-demo"' in pyproject
    assert (
        "[project.entry-points.hermes_memory]\n"
        'team-notes-demo = "hermes_memory_team_notes_demo.plugin"'
    ) in pyproject
    provider = (package / "provider.py").read_text(encoding="utf-8")
    assert "class TeamNotesDemoMemoryProvider(MemoryProvider):" in provider
    assert 'REMEMBER_TOOL = "team_notes_demo_remember"' in provider
    workflow = (rendered / ".github/workflows/test.yml").read_text(encoding="utf-8")
    assert "${{ matrix.python-version }}" in workflow
    answers = (rendered / ".copier-answers.yml").read_text(encoding="utf-8")
    assert "provider_name: team-notes-demo" in answers and "_src_path:" in answers
    for path in package.glob("*.py"):
        compile(path.read_text(encoding="utf-8"), str(path), "exec")


def test_the_rendered_project_requires_the_core_series_it_was_made_with(rendered: Path) -> None:
    """Not an older core that lacks what the template uses, nor a newer series whose
    conformance suite the project was never run against."""
    from packaging.requirements import Requirement
    from packaging.version import Version

    core_project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    core = Version(core_project["version"])
    project = tomllib.loads((rendered / "pyproject.toml").read_text("utf-8"))["project"]
    (requirement,) = [Requirement(d) for d in project["dependencies"] if "hermes-memory-core" in d]
    assert requirement.specifier.contains(core), requirement
    if core.minor:
        older = Version(f"{core.major}.{core.minor - 1}.99")
        assert not requirement.specifier.contains(older), requirement
    newer = Version(f"{core.major}.{core.minor + 1}.0")
    assert not requirement.specifier.contains(newer), requirement


def test_awkward_titles_render_valid_python(tmp_path: Path) -> None:
    title = 'Ana\'s "Quick" Notes: Research Team Archive'
    dest = tmp_path / "project"
    result = CliRunner().invoke(
        cli, ["new-provider", title, "--dest", str(dest), "--description", 'Keeps "quoted" notes']
    )
    assert result.exit_code == 0, result.output
    package = dest / "hermes_memory_ana_s_quick_notes_research_team_archive"
    for path in [*package.glob("*.py"), *(dest / "tests").glob("*.py")]:
        compile(path.read_text(encoding="utf-8"), str(path), "exec")
    assert "Ana\\u0027s \\u0027Quick\\u0027 Notes" in (package / "provider.py").read_text(
        encoding="utf-8"
    )


def test_backslashes_and_line_breaks_in_answers_render_valid_files(tmp_path: Path) -> None:
    dest = tmp_path / "project"
    result = CliRunner().invoke(
        cli,
        [
            "new-provider",
            "C:\\Users Notes",
            "--dest",
            str(dest),
            "--description",
            "Notes kept in C:\\Users\\me\\notes\\\nand\ttabs\\",
            "--author",
            "Ann\nO'Neil \\ Team",
        ],
    )
    assert result.exit_code == 0, result.output
    package = dest / "hermes_memory_c_users_notes"
    for path in package.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        if path.name == "__init__.py":
            assert ast.get_docstring(tree) == "Notes kept in C:\\Users\\me\\notes\\ and tabs\\"
    pyproject = tomllib.loads((dest / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["project"]["description"] == "Notes kept in C:\\Users\\me\\notes\\ and tabs\\"
    assert pyproject["project"]["authors"] == [{"name": "Ann O'Neil \\ Team"}]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"provider_name": "honcho"}, "one of hermes-memory's own providers"),
        ({"provider_name": "web"}, "would clash with a tool of the host agent"),
        ({"provider_name": "none"}, "selects the builtin store alone"),
        ({"provider_name": "notes", "description": "two\nlines"}, "on one line"),
        ({"provider_name": "notes", "author_name": "two\nlines"}, "on one line"),
    ],
)
def test_copier_refuses_the_same_answers(
    tmp_path: Path, data: dict[str, str], message: str
) -> None:
    from copier import run_copy

    with pytest.raises(ValueError, match=message):
        run_copy(
            str(template_dir()),
            tmp_path / "p",
            data={"provider_title": "X", **data},
            defaults=True,
            quiet=True,
        )
    assert not (tmp_path / "p").exists()


def test_a_name_already_installed_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    info = site / "hermes_memory_team_wiki-2.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: hermes-memory-team-wiki\nVersion: 2.0\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(site))
    result = CliRunner().invoke(cli, ["new-provider", "Team Wiki", "--dest", str(tmp_path / "p")])
    assert result.exit_code == 1, result.output
    assert "hermes-memory-team-wiki is already installed (version 2.0)" in result.output
    assert "pip uninstall hermes-memory-team-wiki" in result.output
    assert not (tmp_path / "p").exists()


@pytest.mark.parametrize("kind", ["under-a-file", "symlink-loop"])
def test_an_unusable_destination_is_refused_before_rendering(tmp_path: Path, kind: str) -> None:
    if kind == "under-a-file":
        (tmp_path / "afile").write_text("mine", encoding="utf-8")
        dest, expected = tmp_path / "afile" / "project", "afile is a file, so"
    else:
        (tmp_path / "loop").symlink_to(tmp_path / "loop")
        dest, expected = tmp_path / "loop", "exists and is not a directory"
    before = sorted(p.name for p in tmp_path.iterdir())
    result = CliRunner().invoke(cli, ["new-provider", "notes", "--dest", str(dest)])
    assert result.exit_code == 1, result.output
    assert expected in result.output and "choose another --dest" in result.output
    assert "Traceback" not in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_rendering_into_an_empty_folder_leaves_no_staging_behind(tmp_path: Path) -> None:
    dest = tmp_path / "empty"
    dest.mkdir()
    result = CliRunner().invoke(cli, ["new-provider", "notes", "--dest", str(dest)])
    assert result.exit_code == 0, result.output
    assert [p.name for p in tmp_path.iterdir()] == ["empty"]
    assert not [p for p in dest.iterdir() if p.name.startswith(".hermes-memory-render-")]
    assert (dest / "hermes_memory_notes" / "provider.py").is_file()


@pytest.mark.parametrize("existing", [True, False], ids=["empty-dest", "new-dest"])
def test_an_interrupted_render_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, existing: bool
) -> None:
    import copier

    real_run_copy = copier.run_copy

    def render_then_interrupt(*args: object, **kwargs: object) -> None:
        real_run_copy(*args, **kwargs)  # every file written, then Ctrl-C
        raise KeyboardInterrupt

    monkeypatch.setattr(copier, "run_copy", render_then_interrupt)
    dest = tmp_path / "dest"
    if existing:
        dest.mkdir()
    result = CliRunner().invoke(cli, ["new-provider", "notes", "--dest", str(dest)])
    assert result.exit_code != 0
    if existing:
        assert list(dest.iterdir()) == []
    else:
        assert not dest.exists()


def test_copier_copy_renders_the_same_project(rendered: Path, tmp_path: Path) -> None:
    from copier import run_copy

    dest = tmp_path / "by-copier"
    data = {"provider_title": NAME, "provider_name": "team-notes-demo"}
    run_copy(str(template_dir()), dest, data=data, defaults=True, quiet=True)
    ours = {p.relative_to(rendered): p.read_bytes() for p in rendered.rglob("*") if p.is_file()}
    theirs = {p.relative_to(dest): p.read_bytes() for p in dest.rglob("*") if p.is_file()}
    assert ours == theirs


def test_copier_recopy_rerenders_a_project_from_its_answers(rendered: Path, tmp_path: Path) -> None:
    from copier import run_recopy

    project = tmp_path / "project"
    shutil.copytree(rendered, project)
    (project / "README.md").write_text("edited by hand\n", encoding="utf-8")
    run_recopy(project, defaults=True, overwrite=True, quiet=True)
    assert (project / "README.md").read_bytes() == (rendered / "README.md").read_bytes()


def test_new_provider_refuses_a_non_empty_destination(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine", encoding="utf-8")
    result = CliRunner().invoke(cli, ["new-provider", "notes", "--dest", str(tmp_path)])
    assert result.exit_code == 1
    assert "already exists and is not empty" in result.output
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]


def test_new_provider_without_copier_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "copier", None)  # as if it were not installed
    result = CliRunner().invoke(cli, ["new-provider", "notes", "--dest", str(tmp_path / "p")])
    assert result.exit_code == 1
    assert "pip install 'hermes-memory-core[scaffold]'" in result.output
    assert not (tmp_path / "p").exists()


def _fresh_environment(venv: Path) -> tuple[Path, list[str]]:
    """A new virtual environment and the install command for it (uv when available)."""
    uv = shutil.which("uv")
    if uv:
        subprocess.run([uv, "venv", "-q", "-p", sys.executable, str(venv)], check=True)
        python = venv / "bin" / "python"
        return python, [uv, "pip", "install", "-q", "--python", str(python)]
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    return python, [str(python), "-m", "pip", "install", "-q"]


def test_the_rendered_project_installs_passes_its_tests_and_is_listed(
    rendered: Path, tmp_path: Path
) -> None:
    project = tmp_path / "hermes-memory-team-notes-demo"
    shutil.copytree(rendered, project)
    python, install = _fresh_environment(tmp_path / "venv")
    subprocess.run([*install, "-e", f"{ROOT}[testing]", "-e", f"{project}[test]"], check=True)
    env = {**os.environ, "HERMES_HOME": str(tmp_path / "home")}
    tests = subprocess.run(
        [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert " passed" in tests.stdout and "failed" not in tests.stdout
    listing = subprocess.run(
        [str(python.parent / "hermes-memory"), "plugins"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "team-notes-demo (hermes-memory-team-notes-demo 0.1.0)" in listing.stdout
    assert "status: available" in listing.stdout

    # Step 4 of the tutorial: a backend that needs a key is unavailable until it is set.
    provider = project / "hermes_memory_team_notes_demo" / "provider.py"
    source = provider.read_text(encoding="utf-8")
    always = '"""Always available: the store is a local file (no network, no extra packages)."""'
    needs_key = source.replace(
        f"        {always}\n        return True\n",
        "        return False\n\n    def unavailable_reason(self) -> str:\n"
        '        return "Set TEAM_NOTES_API_KEY in the environment or in .env."\n',
    )
    assert needs_key != source
    provider.write_text(needs_key, encoding="utf-8")
    listed_test = "tests/test_plugin_listed.py"
    listed = subprocess.run(
        [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", listed_test],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert listed.returncode == 0, listed.stdout + listed.stderr
