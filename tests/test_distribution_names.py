"""Our distributions' names, licences and metadata (docs/install.md, "How the names were checked").

``nox -s wheelhouse`` builds and installs them; these checks read the sources and
so run with every ``pytest``.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent
PYPROJECTS = [ROOT / "pyproject.toml", *sorted(ROOT.glob("providers/*/pyproject.toml"))]
TAKEN = {"hermes-core", "hermes-memory", "hermes-memory-mcp"}
"""Names other projects hold on the public index (checked 2026-12-01)."""
REPOSITORY = "https://github.com/hermes-memory/hermes-memory"


def normalized(name: str) -> str:
    """The name as the index compares it (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def project(pyproject: Path) -> dict:
    return tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]


def requirement_names(requirements: list[str]) -> set[str]:
    return {normalized(re.split(r"[\s\[<>=!~;]", item, maxsplit=1)[0]) for item in requirements}


@pytest.fixture(scope="module")
def rendered_pyproject(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("copier")
    from hermes_core.cli import cli

    dest = tmp_path_factory.mktemp("names") / "project"
    result = CliRunner().invoke(cli, ["new-provider", "Team Notes", "--dest", str(dest)])
    assert result.exit_code == 0, result.output
    return dest / "pyproject.toml"


@pytest.mark.parametrize("pyproject", PYPROJECTS, ids=lambda p: p.parent.name)
def test_no_distribution_of_ours_takes_another_projects_name(pyproject: Path) -> None:
    name = normalized(project(pyproject)["name"])
    assert name not in TAKEN
    assert name.startswith("hermes-memory-")


def test_the_rendered_provider_project_is_named_freely_and_pins_the_core(
    rendered_pyproject: Path,
) -> None:
    meta = project(rendered_pyproject)
    assert normalized(meta["name"]) == "hermes-memory-team-notes"
    assert meta["dependencies"] == ["hermes-memory-core>=0.5,<0.6"]
    assert meta["license-files"] == ["LICENSE"]
    assert (rendered_pyproject.parent / "LICENSE").read_text().startswith("MIT License")


@pytest.mark.parametrize("pyproject", PYPROJECTS, ids=lambda p: p.parent.name)
def test_no_requirement_names_another_project(pyproject: Path) -> None:
    meta = project(pyproject)
    requirements = list(meta.get("dependencies", []))
    for extra in meta.get("optional-dependencies", {}).values():
        requirements += extra
    assert not requirement_names(requirements) & TAKEN


@pytest.mark.parametrize("pyproject", PYPROJECTS, ids=lambda p: p.parent.name)
def test_each_distribution_ships_the_licence_and_a_changelog(pyproject: Path) -> None:
    folder = pyproject.parent
    assert (folder / "LICENSE").read_text() == (ROOT / "LICENSE").read_text()
    assert (folder / "CHANGELOG.md").is_file()
    meta = project(pyproject)
    # The core also ships the static encoder's data, derived from an Apache-2.0 model.
    assert meta["license"] in {"MIT", "MIT AND Apache-2.0"}
    assert meta["license-files"][0] == "LICENSE"
    for extra in meta["license-files"][1:]:
        assert (folder / extra).is_file()
    sdist = tomllib.loads(pyproject.read_text())["tool"]["hatch"]["build"]["targets"]["sdist"]
    assert {"LICENSE", "CHANGELOG.md", "README.md"} <= set(sdist["include"])


@pytest.mark.parametrize("pyproject", PYPROJECTS, ids=lambda p: p.parent.name)
def test_each_distribution_names_the_one_repository(pyproject: Path) -> None:
    meta = project(pyproject)
    urls = meta["urls"]
    assert urls["Homepage"] == REPOSITORY
    assert all(url.startswith(REPOSITORY) for url in urls.values())
    assert "License :: OSI Approved :: MIT License" in meta["classifiers"]
    version = meta["version"]
    changelog = (pyproject.parent / "CHANGELOG.md").read_text()
    assert f"## {version}" in changelog, f"CHANGELOG.md has no entry for {version}"


def test_docs_never_tell_users_to_install_another_projects_name() -> None:
    install = re.compile(r"pip install[^\n`&;|#]*?[ '\"](hermes-core|hermes-memory)(?![-\w])")
    texts = [*ROOT.glob("docs/*.md"), ROOT / "README.md", *ROOT.glob("providers/*/README.md")]
    texts += [p for p in (ROOT / "hermes_core").rglob("*.py")]
    for path in texts:
        found = install.search(path.read_text(encoding="utf-8"))
        assert found is None, f"{path.relative_to(ROOT)}: {found.group(0)!r}"
