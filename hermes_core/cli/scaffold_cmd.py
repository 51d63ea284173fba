"""``hermes-memory new-provider NAME``: render a new provider distribution from the template.

The template (``plugin_template/``) is a copier template, rendered here with
copier itself, so the new project records its answers in
``.copier-answers.yml`` and copier's own commands (``copier recopy``) can
re-render it later. copier is the optional ``scaffold`` extra of hermes-core:
no other command needs it.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import click

MAX_NAME_LENGTH = 40
RESERVED_NAMES = frozenset({"builtin"})
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


def provider_names(raw: str) -> ProviderNames:
    """Derive the provider names from what the user typed (``"Team Notes"``, ``TeamNotes``…).

    Accents are folded, camel case and punctuation split words, and a leading
    ``hermes-memory-`` is dropped. Raises ``click.BadParameter`` saying what to
    type instead when nothing usable remains.
    """
    title = " ".join(raw.split())
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
            f"{slug!r} is reserved for hermes-memory's own provider; choose another name.",
            param_hint="NAME",
        )
    return ProviderNames(title=title, provider=slug)


def template_dir() -> Path:
    """The copier template: shipped in the wheel, or ``plugin_template/`` of a source checkout."""
    package_dir = Path(__file__).resolve().parent.parent
    for candidate in (package_dir / "_plugin_template", package_dir.parent / "plugin_template"):
        if (candidate / "copier.yml").is_file():
            return candidate
    raise click.ClickException(
        "The provider template is missing from this installation of hermes-core; "
        "reinstall it (pip install --force-reinstall 'hermes-core[scaffold]')."
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
    pip install 'hermes-core[scaffold]'.
    """
    names = provider_names(name)
    try:
        from copier import run_copy
    except ImportError:
        raise click.ClickException(
            "new-provider renders its template with copier, which is not installed. "
            "Install it with: pip install 'hermes-core[scaffold]'"
        ) from None
    target = (dest or Path.cwd() / names.distribution).expanduser().resolve()
    if target.exists() and any(target.iterdir()):
        raise click.ClickException(
            f"{target} already exists and is not empty; choose another --dest "
            "(`copier recopy` re-renders an existing project)."
        )
    answers = {"provider_title": names.title, "provider_name": names.provider}
    if description:
        answers["description"] = description
    if author:
        answers["author_name"] = author
    run_copy(str(template_dir()), target, data=answers, defaults=True, quiet=True)
    click.echo(f"Created {names.distribution} in {target}")
    click.echo(f"  provider name: {names.provider}   package: {names.package}")
    click.echo("Next steps:")
    click.echo(f"  cd {target}")
    click.echo("  pip install -e '.[test]'")
    click.echo("  pytest                      # its own tests and the conformance suite")
    click.echo(f"  hermes-memory plugins       # lists {names.provider}")
