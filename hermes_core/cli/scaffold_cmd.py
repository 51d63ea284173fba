"""``hermes-memory new-provider NAME``: render a new provider distribution from the template.

The template (``plugin_template/``) is a copier template, rendered here with
copier itself, so the new project records its answers in
``.copier-answers.yml`` and copier's own commands (``copier recopy``) can
re-render it later. copier is the optional ``scaffold`` extra of hermes-memory-core:
no other command needs it.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import re
import shutil
import tempfile
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import click

MAX_NAME_LENGTH = 40
RESERVED_NAMES = frozenset({"builtin", "honcho", "mem0", "supermemory"})
"""The providers of hermes-memory itself: their distributions and packages are taken."""
TEMPLATE_TOOL_SUFFIXES = ("remember", "search", "forget")
"""The template's tools are ``<tool prefix>_<suffix>`` (see plugin_template/.../provider.py)."""
_PREFIX_WORDS = ("hermes", "memory")


@dataclass(frozen=True)
class ProviderNames:
    """Every name a provider distribution needs, derived from one human name."""

    title: str
    provider: str

    @property
    def distribution(self) -> str:
        """``hermes-memory-team-notes``: the name on PyPI and in ``pip install``."""
        return f"hermes-memory-{self.provider}"

    @property
    def package(self) -> str:
        """``hermes_memory_team_notes``: the import package."""
        return f"hermes_memory_{self.provider.replace('-', '_')}"

    @property
    def class_name(self) -> str:
        """``TeamNotesMemoryProvider``."""
        return "".join(word.capitalize() for word in self.provider.split("-")) + "MemoryProvider"

    @property
    def tool_names(self) -> tuple[str, ...]:
        """``team_notes_remember``, ``team_notes_search``, ``team_notes_forget``."""
        prefix = self.provider.replace("-", "_")
        return tuple(f"{prefix}_{suffix}" for suffix in TEMPLATE_TOOL_SUFFIXES)


def one_line(text: str) -> str:
    """*text* with control characters and runs of whitespace collapsed to single spaces."""
    visible = "".join(" " if unicodedata.category(c) == "Cc" else c for c in text)
    return " ".join(visible.split())


def provider_names(raw: str) -> ProviderNames:
    """Derive the provider names from what the user typed (``"Team Notes"``, ``TeamNotes``…).

    Accents are folded, camel case and punctuation split words, and a leading
    ``hermes-memory-`` is dropped. Raises ``click.BadParameter`` saying what to
    type instead when nothing usable remains.
    """
    title = one_line(raw)
    ascii_text = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", " ", ascii_text)
    words = [w.lower() for w in re.findall(r"[A-Za-z0-9]+", spaced)]
    while len(words) > 1 and words[0] in _PREFIX_WORDS:
        words.pop(0)
    slug = "-".join(words)
    if not slug:
        raise click.BadParameter(
            f"{raw!r} has no ASCII letters or digits to build package names from; "
            "try e.g. 'team-notes'.",
            param_hint="NAME",
        )
    if not slug[0].isalpha():
        slug = f"p{slug}"
    if len(slug) > MAX_NAME_LENGTH:
        raise click.BadParameter(
            f"the provider name {slug!r} is longer than {MAX_NAME_LENGTH} characters "
            "(tool names built from it must stay under 64); choose a shorter name.",
            param_hint="NAME",
        )
    if slug in RESERVED_NAMES:
        raise click.BadParameter(
            f"{slug!r} is the name of one of hermes-memory's own providers "
            f"(hermes-memory-{slug}); choose another name.",
            param_hint="NAME",
        )
    from hermes_core.provider import is_core_memory_provider

    if is_core_memory_provider(slug):
        raise click.BadParameter(
            f"memory.provider: {slug} in config.yaml means the builtin store alone, so a "
            f"provider named {slug!r} could never be selected; choose another name "
            f"(e.g. '{slug}-notes').",
            param_hint="NAME",
        )
    names = ProviderNames(title=title, provider=slug)
    from hermes_core.toolschema import RESERVED_TOOL_NAMES

    taken = [tool for tool in names.tool_names if tool in RESERVED_TOOL_NAMES]
    if taken:
        raise click.BadParameter(
            f"the provider {slug!r} would get the tool {taken[0]!r}, which belongs to the host "
            "agent or the builtin provider; choose another name (e.g. "
            f"'{slug}-notes').",
            param_hint="NAME",
        )
    return names


def _refuse_installed(names: ProviderNames) -> None:
    """Refuse names an installed distribution or package already uses."""
    try:
        installed = importlib.metadata.distribution(names.distribution)
    except importlib.metadata.PackageNotFoundError:
        installed = None
    if installed is not None:
        raise click.ClickException(
            f"A distribution named {names.distribution} is already installed "
            f"(version {installed.version}); a second one would replace it. Choose another "
            f"name, or `pip uninstall {names.distribution}` first."
        )
    if importlib.util.find_spec(names.package) is not None:
        raise click.ClickException(
            f"A Python package named {names.package} is already importable; the new project's "
            "package would clash with it. Choose another name."
        )


def _check_destination(target: Path) -> None:
    """Refuse a destination that is not empty, or whose nearest existing folder is unusable."""
    if target.is_dir():
        if any(target.iterdir()):
            raise click.ClickException(
                f"{target} already exists and is not empty; choose another --dest "
                "(`copier recopy` re-renders an existing project)."
            )
        return
    if target.exists() or target.is_symlink():
        raise click.ClickException(
            f"{target} exists and is not a directory; choose another --dest."
        )
    ancestor = target.parent
    while not ancestor.exists():
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise click.ClickException(
            f"{ancestor} is a file, so {target} cannot be created; choose another --dest."
        )
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise click.ClickException(
            f"{ancestor} is not writable by you, so {target} cannot be created there; "
            "choose another --dest."
        )


def _render(answers: dict[str, str], target: Path) -> None:
    """Render the template into *target* all at once: on any failure nothing is left behind.

    copier renders into a hidden staging folder inside *target*; the finished
    files are then moved up (renames within one folder). A failed or
    interrupted render removes what it made, and *target* itself when this
    command created it.
    """
    from copier import run_copy

    created = not target.exists()
    target.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".hermes-memory-render-", dir=target))
    moved: list[Path] = []
    try:
        run_copy(str(template_dir()), staging / "project", data=answers, defaults=True, quiet=True)
        for entry in sorted((staging / "project").iterdir()):
            moved.append(entry.rename(target / entry.name))
    except BaseException:
        if created:
            shutil.rmtree(target, ignore_errors=True)
        else:
            for path in moved:
                if path.is_dir():
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    path.unlink(missing_ok=True)
        raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def template_dir() -> Path:
    """The copier template: shipped in the wheel, or ``plugin_template/`` of a source checkout."""
    package_dir = Path(__file__).resolve().parent.parent
    for candidate in (package_dir / "_plugin_template", package_dir.parent / "plugin_template"):
        if (candidate / "copier.yml").is_file():
            return candidate
    raise click.ClickException(
        "The provider template is missing from this installation of hermes-memory-core; "
        "reinstall it (pip install --force-reinstall 'hermes-memory-core[scaffold]')."
    )


@click.command("new-provider")
@click.argument("name")
@click.option(
    "--dest",
    type=click.Path(file_okay=False, path_type=Path),
    help="Directory to create (default: ./hermes-memory-<name>).",
)
@click.option("--description", help="One sentence saying what the provider remembers.")
@click.option("--author", help="Author or maintainer named in pyproject.toml.")
def new_provider(name: str, dest: Path | None, description: str | None, author: str | None) -> None:
    """Create a new provider distribution NAME from the template.

    The project installs with pip, is found by `hermes-memory plugins`, and
    passes the conformance suite unchanged: a per-user JSON notes store under
    HERMES_HOME with a tool, prefetch and sync. Needs copier:
    pip install 'hermes-memory-core[scaffold]'.
    """
    names = provider_names(name)
    if importlib.util.find_spec("copier") is None:
        raise click.ClickException(
            "new-provider renders its template with copier, which is not installed. "
            "Install it with: pip install 'hermes-memory-core[scaffold]'"
        )
    _refuse_installed(names)
    # realpath, not resolve(): a symlink loop must reach _check_destination, not raise.
    target = Path(os.path.realpath((dest or Path.cwd() / names.distribution).expanduser()))
    _check_destination(target)
    answers = {"provider_title": names.title, "provider_name": names.provider}
    # pyproject.toml needs one-line values (core metadata headers cannot hold a newline).
    if description and one_line(description):
        answers["description"] = one_line(description)
    if author and one_line(author):
        answers["author_name"] = one_line(author)
    _render(answers, target)
    click.echo(f"Created {names.distribution} in {target}")
    click.echo(f"  provider name: {names.provider}   package: {names.package}")
    click.echo("Next steps:")
    click.echo(f"  cd {target}")
    click.echo("  pip install -e '.[test]'")
    click.echo("  pytest                      # its own tests and the conformance suite")
    click.echo(f"  hermes-memory plugins       # lists {names.provider}")
