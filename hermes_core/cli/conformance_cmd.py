"""``hermes-memory conformance PROVIDER``: the conformance suite against an installed provider."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:  # pragma: no cover
    from hermes_core.discovery.info import ProviderInfo
    from hermes_core.plugins import UnreadEntryPoint
    from hermes_core.testing.capabilities import Capability
    from hermes_core.testing.report import ConformanceReport


NOT_CHECKED_HERE = {
    "forget": "it needs the forget() helper of the provider's own conformance test class",
}
"""Capabilities a generic run cannot exercise, and why."""


@contextmanager
def _scratch_home(config_from: Path | None, provider: str) -> Iterator[tuple[Path, list[str]]]:
    """An empty HERMES_HOME (seeded with *config_from*'s configuration), active meanwhile.

    Yields the home and the files copied into it.
    """
    from hermes_core.testing.home import seed_home

    previous = os.environ.get("HERMES_HOME")
    with tempfile.TemporaryDirectory(prefix="hermes-conformance-home-") as tmp:
        home = Path(tmp)
        copied = seed_home(config_from, home, provider) if config_from is not None else []
        os.environ["HERMES_HOME"] = str(home)
        try:
            yield home, copied
        finally:
            if previous is None:
                os.environ.pop("HERMES_HOME", None)
            else:
                os.environ["HERMES_HOME"] = previous


def _find_provider(name: str) -> ProviderInfo:
    from hermes_core.plugins import (
        HERMES_ENTRY_POINT_GROUP,
        discover_providers,
        misplaced_plugins,
        non_provider_folders,
        selected_entry,
    )

    found = discover_providers()
    info = selected_entry(found, name)
    if info is not None:
        if info.error:
            raise click.ClickException(
                f"The provider {name!r} is installed but broken: {info.error}\n"
                "Run `hermes-memory plugins --all` for details."
            )
        return info
    names = ", ".join(sorted(i.name for i in found)) or "none"
    elsewhere = _unread_entry_point(name)
    if elsewhere is not None and elsewhere.provider:
        raise click.ClickException(
            f"{name!r} is installed, but under the wrong entry-point group: "
            f"{elsewhere.describe()} declares a memory provider under {elsewhere.group}, "
            f"which no memory loader reads (hermes-memory and Hermes' memory loader read "
            f"{HERMES_ENTRY_POINT_GROUP} and hermes_memory).\n"
            f"Move the entry point to the group {HERMES_ENTRY_POINT_GROUP} in the package's "
            "pyproject.toml and reinstall it (or run the package's own installer, or copy its "
            f"plugin folder to $HERMES_HOME/plugins/{name}/), then run the suite again. "
            f"Installed memory providers: {names}."
        )
    if elsewhere is not None:
        raise click.ClickException(
            f"{name!r} is not a memory provider: {elsewhere.describe()} is a general Hermes "
            "plugin (hooks, tools or commands; its code names no MemoryProvider), which Hermes "
            "Agent runs from plugins.enabled and the conformance suite does not check.\n"
            f"Pick a memory provider instead (installed: {names})."
        )
    general = next(
        (path for path in non_provider_folders() if _folded(Path(path).name) == _folded(name)), None
    )
    if general is not None:
        raise click.ClickException(
            f"{name!r} is not a memory provider: the folder {general} offers none (its "
            "__init__.py names neither MemoryProvider nor register_memory_provider), so it is "
            "a general Hermes plugin, which Hermes Agent runs from plugins.enabled and the "
            "conformance suite does not check.\n"
            f"Pick a memory provider instead (installed: {names})."
        )
    misplaced = next(
        (path for n, path in misplaced_plugins().items() if _folded(n) == _folded(name)), None
    )
    if misplaced is not None:
        raise click.ClickException(
            f"No memory provider named {name!r} was found (installed: {names}), but a plugin "
            f"folder of that name is at {misplaced}, where no scan looks.\n"
            f"Copy or move it to $HERMES_HOME/plugins/{Path(misplaced).name}/, then run the "
            "suite again."
        )
    hint = "Install its distribution (pip install ...), or check `hermes-memory plugins --all`."
    if "/" in name or os.sep in name or name.startswith("."):
        hint = (
            "PROVIDER is a provider's name as `hermes-memory plugins` lists it, not a path: "
            "install the distribution (pip install -e DIR), or copy a folder plugin into "
            "$HERMES_HOME/plugins/, then pass its name."
        )
    raise click.ClickException(
        f"No memory provider named {name!r} was found (installed: {names}).\n{hint}"
    )


def _folded(text: str) -> str:
    """A plugin name as the loaders compare it: ``-`` and ``_`` and case read alike."""
    return text.strip().lower().replace("-", "_")


def _unread_entry_point(name: str) -> UnreadEntryPoint | None:
    """An installed entry point called *name* that no memory loader reads (a misfiled
    provider first, then a general Hermes plugin); ``-`` and ``_`` and case read alike."""
    from hermes_core.plugins import unread_entry_points

    points = [point for point in unread_entry_points() if _folded(point.name) == _folded(name)]
    return next((p for p in points if p.provider), points[0] if points else None)


def _capabilities_in_force(
    name: str, given: tuple[str, ...], config_from: Path | None, plugins_dir: Path | None
) -> tuple[frozenset[Capability], str]:
    """The capabilities the run will hold the provider to, and where they come from.

    Fails when the provider cannot run in an empty home (configured from
    *config_from*): the suite would then prove nothing.
    """
    from hermes_core.discovery.extract import unavailable_reason_of
    from hermes_core.plugins import load_memory_provider
    from hermes_core.testing.capabilities import (
        declared_capabilities,
        inferred_capabilities,
        parse_capabilities,
    )

    try:
        chosen = parse_capabilities(given) if given else None
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--capability") from None
    with _scratch_home(config_from, name) as (home, copied):
        if plugins_dir is not None:
            (home / "plugins").symlink_to(plugins_dir, target_is_directory=True)
        provider = load_memory_provider(name, home)
        if provider is None:
            raise click.ClickException(
                f"Discovery could not load the provider {name!r} in the test home: any "
                "warning above says why, and `hermes-memory -v plugins --all` shows what "
                "discovery sees."
            )
        if load_memory_provider(name, home) is provider:
            raise click.ClickException(
                f"The provider {name!r} is one shared instance: loading it twice gave the same "
                "object, so each test would inherit the previous test's state. Create the "
                "instance inside register(ctx) (ctx.register_memory_provider(MyProvider())) "
                "rather than at module level."
            )
        if not provider.is_available():
            reason = unavailable_reason_of(provider) or "no reason given"
            hint = (
                "Pass --config-from ~/.hermes (or another configured HERMES_HOME) to run with "
                "its config.yaml and .env; the tests then write to the backend it configures."
                if config_from is None
                else f"The test home got {', '.join(copied) or 'nothing'} from {config_from}. "
                "If the provider is available there, it keeps settings in a file or folder "
                f"of that home not named after it (only {name}.json-style files and a "
                f"{name}/ folder are copied, - and _ read alike): set them in the environment "
                f"for the run instead; otherwise fix the configuration in {config_from}."
            )
            raise click.ClickException(
                f"The provider {name!r} is not available in the test home: {reason}\n{hint}"
            )
        if chosen is not None:
            return chosen, "given with --capability"
        try:
            declared = declared_capabilities(provider)
        except ValueError as exc:
            raise click.ClickException(
                f"The provider {name!r} declares capabilities the suite cannot hold it to: {exc}"
            ) from None
        if declared is not None:
            return declared, "declared by the provider (conformance_capabilities)"
        return inferred_capabilities(provider), (
            "inferred from its hooks; declare more in conformance_capabilities or --capability"
        )


def _positive_seconds(value: float) -> float:
    if not 0 < value < float("inf"):
        raise click.BadParameter(f"must be a positive number of seconds, got {value}.")
    return value


_SUITE_OWNED_INIT = {
    "session_id": "the suite chooses a session id for every provider it starts",
    "hermes_home": "each test gets its own empty HERMES_HOME (seed it with --config-from)",
}
"""``initialize`` arguments ``--init`` may not replace, and why."""


def _init_pairs(values: tuple[str, ...]) -> dict[str, str]:
    pairs = {}
    for value in values:
        key, sep, given = value.partition("=")
        key = key.strip()
        if not sep or not key.isidentifier():
            raise click.BadParameter(
                f"{value!r} is not KEY=VALUE with KEY a keyword name (e.g. user_id=u-42).",
                param_hint="--init",
            )
        if key in _SUITE_OWNED_INIT:
            raise click.BadParameter(
                f"{key} cannot be set: {_SUITE_OWNED_INIT[key]}.", param_hint="--init"
            )
        pairs[key] = given
    return pairs


@click.command()
@click.argument("provider")
@click.option(
    "--capability",
    "-c",
    "capabilities",
    multiple=True,
    metavar="NAME",
    help="Hold the provider to this capability (repeatable); replaces its own declaration.",
)
@click.option(
    "--config-from",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help=(
        "Copy config.yaml, .env and the provider's own settings files from this "
        "HERMES_HOME into every test's empty home."
    ),
)
@click.option(
    "--init",
    "init_values",
    multiple=True,
    metavar="KEY=VALUE",
    help=(
        "Pass KEY=VALUE to every initialize() call (repeatable), e.g. --init user_id=u-42 "
        "for a provider that needs what a gateway passes."
    ),
)
@click.option("-k", "select", metavar="EXPR", help="Only run tests matching this -k expression.")
@click.option(
    "--timeout",
    type=float,
    default=900.0,
    show_default=True,
    callback=lambda ctx, param, value: _positive_seconds(value),
    help="Seconds the whole run may take.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
@click.option("--full", is_flag=True, help="Show complete failure messages.")
def conformance(
    provider: str,
    capabilities: tuple[str, ...],
    config_from: Path | None,
    init_values: tuple[str, ...],
    select: str | None,
    timeout: float,
    as_json: bool,
    full: bool,
) -> None:
    """Run the provider conformance suite against the installed PROVIDER.

    Each test gets an empty HERMES_HOME; the report lists what passed, what was
    skipped (and why) and what failed (and what to fix). Exits non-zero on a
    failure. Needs the testing extra: pip install 'hermes-memory-core[testing]'.
    """
    from hermes_core.config import get_hermes_home
    from hermes_core.testing.runner import missing_test_requirements, run_conformance

    init_kwargs = _init_pairs(init_values)
    missing = missing_test_requirements()
    if missing:
        raise click.ClickException(
            f"The conformance suite needs {' and '.join(missing)}, which "
            f"{'is' if len(missing) == 1 else 'are'} not installed. Install the testing "
            "extra: pip install 'hermes-memory-core[testing]'"
        )
    # Provider code runs here (discovery, is_available): what it prints must not mix into
    # the report, least of all into --json.
    with contextlib.redirect_stdout(sys.stderr):
        info = _find_provider(provider)
        plugins_dir = get_hermes_home().absolute() / "plugins"  # linked from scratch homes
        plugins = plugins_dir if plugins_dir.is_dir() else None
        in_force, origin = _capabilities_in_force(provider, capabilities, config_from, plugins)
    unchecked = {c: why for c, why in NOT_CHECKED_HERE.items() if c in in_force}
    in_force = in_force - set(unchecked)
    run = run_conformance(
        provider,
        capabilities=[c.value for c in in_force],
        config_from=config_from,
        plugins_from=plugins,
        select=select,
        timeout=timeout,
        init_kwargs=init_kwargs,
    )
    report = run.report
    if report is None or (not report.results and report.exitstatus not in (0, 5, None)):
        click.echo(run.output[-4000:], err=True)
        status = "no report" if report is None else f"exit status {report.exitstatus}"
        raise click.ClickException(
            f"pytest could not run the suite ({status}); its output is above."
        )
    if as_json:
        click.echo(
            json.dumps(
                {
                    "provider": provider,
                    "capabilities": sorted(c.value for c in in_force),
                    "ok": report.ok,
                    "summary": report.summary(),
                    "results": [asdict(r) for r in report.results],
                },
                indent=2,
                ensure_ascii=False,
            )
        )
    else:
        origin_text = f" ({info.distribution} {info.version})" if info.distribution else ""
        click.echo(f"Conformance suite: provider {provider!r}{origin_text}")
        shown = ", ".join(sorted(c.value for c in in_force)) or "none"
        click.echo(f"Capabilities: {shown} - {origin}")
        for capability, why in unchecked.items():
            click.echo(f"Not checked here: {capability} ({why})")
        click.echo("")
        click.echo(report.render(verbose=full))
    if not report.ok:
        explanation = _why_not_ok(report, select, timeout, run.ended)
        if explanation and not as_json:
            click.echo(explanation)
        raise SystemExit(1)


def _why_not_ok(
    report: ConformanceReport, select: str | None, timeout: float, ended: str = "finished"
) -> str | None:
    """Why a run that is not ok failed, when the rendered results do not already say it."""
    if ended == "timeout":
        return (
            f"The run was stopped at its time limit ({timeout:g}s, --timeout); "
            "the results above are those of the tests that finished."
        )
    if ended == "crashed":
        return (
            "The test process ended in the middle of the run (see the error above); "
            "the results above are those of the tests that finished."
        )
    if report.failed:
        return None
    if report.exitstatus not in (0, 5):
        return (
            f"pytest ended the run early (exit status {report.exitstatus}), so not every "
            "test ran; rerun to check, and see `pytest` in the provider's own project."
        )
    if not report.results:
        if select:
            return f"No test matched -k {select!r}, so nothing was checked; fix the expression."
        return "pytest collected no test, so nothing was checked."
    return "No test passed, so nothing was shown to conform (all were skipped)."
