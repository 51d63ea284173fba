"""``hermes-memory setup [PROVIDER]``: configure a provider from its ``get_config_schema()``.

Each field of the schema is asked in a terminal (with its description, default
and choices) or given as ``--set KEY=VALUE``. Every value is checked before
anything is written; then secrets go to ``$HERMES_HOME/.env`` (mode 0600, other
lines kept) under the field's ``env_var``, the rest to the provider's own
``save_config`` (which edits ``config.yaml`` in place). ``--activate`` sets
``memory.provider``. The command ends with the provider's availability check.
"""

from __future__ import annotations

import contextlib
import math
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from hermes_core.errors import ConfigError

TRUE_WORDS = frozenset({"true", "yes", "on", "1", "y"})
FALSE_WORDS = frozenset({"false", "no", "off", "0", "n"})
TYPES = ("text", "integer", "number", "boolean")


@dataclass(frozen=True)
class Field:
    """One entry of a provider's ``get_config_schema()``."""

    key: str
    description: str = ""
    type: str = "text"
    secret: bool = False
    required: bool = False
    default: Any = None
    choices: tuple[Any, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    env_var: str | None = None
    url: str | None = None
    when: Mapping[str, Any] = field(default_factory=dict)
    default_from: Mapping[str, Any] | None = None

    @classmethod
    def from_schema(cls, entry: Any, provider: str) -> Field:
        """A field from a schema entry; :class:`ConfigError` naming what is malformed."""
        if not isinstance(entry, Mapping) or not isinstance(entry.get("key"), str):
            raise ConfigError(
                f"The provider {provider!r} declares a setting that is not a mapping with a "
                f"'key' ({entry!r:.80}) in get_config_schema(); report it to its authors."
            )
        kind = str(entry.get("type") or "text")
        if kind not in TYPES:
            kind = "text"
        when = entry.get("when")
        default_from = entry.get("default_from")
        return cls(
            key=entry["key"],
            description=str(entry.get("description") or ""),
            type=kind,
            secret=bool(entry.get("secret", False)),
            required=bool(entry.get("required", False)),
            default=entry.get("default"),
            choices=tuple(entry.get("choices") or ()),
            minimum=_number(entry.get("minimum")),
            maximum=_number(entry.get("maximum")),
            env_var=entry.get("env_var") or None,
            url=entry.get("url") or None,
            when=when if isinstance(when, Mapping) else {},
            default_from=default_from if isinstance(default_from, Mapping) else None,
        )

    def shown(self, values: Mapping[str, Any]) -> bool:
        """Whether the field applies, given the values chosen so far (its ``when``)."""
        return all(values.get(key) == wanted for key, wanted in self.when.items())

    def default_for(self, values: Mapping[str, Any]) -> Any:
        """The default, or ``default_from``'s mapped value for the referenced field."""
        if self.default_from:
            source = values.get(str(self.default_from.get("field")))
            mapping = self.default_from.get("map")
            if isinstance(mapping, Mapping) and source in mapping:
                return mapping[source]
        return self.default

    def parse(self, raw: str) -> Any:
        """*raw* (typed, or given to ``--set``) as this field's value; ``ValueError`` if not."""
        text = raw.strip()
        value: Any
        if self.type == "boolean":
            if text.lower() in TRUE_WORDS:
                value = True
            elif text.lower() in FALSE_WORDS:
                value = False
            else:
                raise ValueError("must be true or false (yes/no, on/off, 1/0)")
        elif self.type == "integer":
            try:
                value = int(text)
            except ValueError:
                raise ValueError("must be a whole number") from None
        elif self.type == "number":
            try:
                value = float(text)
            except ValueError:
                raise ValueError("must be a number") from None
            if not math.isfinite(value):
                raise ValueError("must be a finite number")
        else:
            value = text
            if any(not ch.isprintable() for ch in value):
                raise ValueError("must be one line of printable characters")
        if self.choices and value not in self.choices:
            raise ValueError(f"must be one of {', '.join(str(c) for c in self.choices)}")
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if self.minimum is not None and value < self.minimum:
                raise ValueError(f"must be at least {self.minimum}")
            if self.maximum is not None and value > self.maximum:
                raise ValueError(f"must be at most {self.maximum}")
        return value

    def secret_variable(self, provider: str) -> str:
        """The ``.env`` variable a secret field is kept in."""
        if self.env_var:
            return self.env_var
        return re.sub(r"[^A-Z0-9_]", "_", f"{provider}_{self.key}".upper())


def _number(value: Any) -> float | None:
    """A schema bound, or ``None`` when it is not a number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value


def parse_assignments(pairs: tuple[str, ...], fields: list[Field], provider: str) -> dict[str, Any]:
    """``--set KEY=VALUE`` pairs checked against *fields*; one :class:`ConfigError` naming every
    unknown key and unusable value."""
    from hermes_core.cli.provider_hints import close_names

    by_key = {f.key: f for f in fields}
    values: dict[str, Any] = {}
    problems = []
    for pair in pairs:
        key, equals, raw = pair.partition("=")
        key = key.strip()
        if not equals or not key:
            problems.append(f"--set {pair!r} is not KEY=VALUE")
            continue
        found = by_key.get(key)
        if found is None:
            close = close_names(key, by_key)
            hint = f" (did you mean {' or '.join(close)}?)" if close else ""
            problems.append(f"{provider} has no setting {key!r}{hint}")
            continue
        try:
            values[key] = found.parse(raw)
        except ValueError as exc:
            shown = "the value given" if found.secret else f"{raw.strip()!r:.60}"
            problems.append(f"{key}: {shown} {exc}")
    if problems:
        keys = ", ".join(by_key) or "none"
        raise ConfigError(
            "Nothing was written: "
            + "; ".join(problems)
            + f". The settings of {provider} are: {keys} (`hermes-memory setup {provider} "
            "--help-settings` describes them)."
        )
    return values


def current_values(fields: list[Field], provider: str, home: Path) -> dict[str, Any]:
    """What each field holds now: ``config.yaml``'s ``<provider>.<key>``, or whether its secret
    is set (``True``), so prompts can offer to keep it."""
    from hermes_core.config import cfg_get, load_config
    from hermes_core.secrets import get_secret

    config = load_config(home)
    values: dict[str, Any] = {}
    for item in fields:
        if item.secret:
            try:
                values[item.key] = bool(
                    get_secret(item.secret_variable(provider), hermes_home=home)
                )
            except ConfigError:
                values[item.key] = False
            continue
        value = cfg_get(config, f"{provider}.{item.key}")
        if value is not None:
            values[item.key] = value
    return values


def _prompt(item: Field, default: Any, secret_is_set: bool) -> Any:
    """Ask for one field in the terminal until its answer parses."""
    click.echo()
    click.secho(f"{item.key}", bold=True, nl=False)
    click.echo(f" - {item.description}" if item.description else "")
    if item.url:
        click.echo(f"  get one at {item.url}")
    if item.choices:
        click.echo(f"  choices: {', '.join(str(c) for c in item.choices)}")
    if item.secret:
        hint = "Enter keeps the current one" if secret_is_set else "input is hidden"
        while True:
            raw = click.prompt(
                f"  {item.key} ({hint})", default="", show_default=False, hide_input=True
            )
            if not raw.strip():
                if secret_is_set or not item.required:
                    return None
                click.echo("  required: type it, or press Ctrl-C to stop")
                continue
            try:
                return item.parse(raw)
            except ValueError as exc:
                click.echo(f"  {exc}")
    shown_default = "" if default is None else _as_text(default)
    while True:
        raw = click.prompt(f"  {item.key}", default=shown_default, show_default=True)
        if not str(raw).strip():
            if item.required:
                click.echo("  required: type a value, or press Ctrl-C to stop")
                continue
            return None
        try:
            return item.parse(str(raw))
        except ValueError as exc:
            click.echo(f"  {exc}")


def _as_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def collect(
    fields: list[Field],
    given: dict[str, Any],
    current: dict[str, Any],
    provider: str,
    *,
    interactive: bool,
) -> dict[str, Any]:
    """The values to save: *given* (``--set``), and in a terminal the answers that change
    something. Raises :class:`ConfigError` for a required field left without a value."""
    chosen: dict[str, Any] = {}
    effective: dict[str, Any] = {}  # what `when` conditions compare with
    missing = []
    for item in fields:
        now = current.get(item.key)
        if not item.secret:
            effective[item.key] = now if now is not None else item.default_for(effective)
        if item.key in given:  # saved even where `when` would not ask for it: it was asked for
            chosen[item.key] = given[item.key]
        elif not item.shown(effective):
            continue
        elif interactive:
            default = None if item.secret else effective.get(item.key)
            answer = _prompt(item, default, bool(now) if item.secret else False)
            if answer is not None and (item.secret or answer != effective.get(item.key)):
                chosen[item.key] = answer
        if item.key in chosen and not item.secret:
            effective[item.key] = chosen[item.key]
        has_value = item.key in chosen or (bool(now) if item.secret else now is not None)
        if item.required and not has_value and item.default_for(effective) in (None, ""):
            where = f" (or set {item.secret_variable(provider)})" if item.secret else ""
            missing.append(f"{item.key}: --set {item.key}=…{where}")
    if missing:
        raise ConfigError(f"Nothing was written: {provider} needs " + "; ".join(missing) + ".")
    return chosen


def _find_provider(name: str | None, home: Path, interactive: bool) -> tuple[str, Any]:
    """(name, fresh instance) of the provider to set up; :class:`ConfigError` when there is none."""
    from hermes_core.cli.provider_hints import not_installed
    from hermes_core.config import load_config, selected_provider
    from hermes_core.plugins import discover_providers, load_memory_provider, selected_entry

    with contextlib.redirect_stdout(sys.stderr):  # a plugin printing while it loads
        listing = discover_providers(home)
    names = [info.name for info in listing if info.name != "builtin"]
    if name is None:
        name = selected_provider(load_config(home))
    if name is None and interactive and names:
        name = click.prompt("Provider to set up", type=click.Choice(names))
    if name is None:
        raise ConfigError(
            "Name the provider to set up: hermes-memory setup NAME (installed: "
            f"{', '.join(names) or 'none besides builtin'}; `hermes-memory plugins` lists them)."
        )
    entry = selected_entry(listing, name)
    if entry is None:
        raise ConfigError(f"Nothing was written: {not_installed(name, names)}.")
    if entry.error:
        raise ConfigError(f"The provider {entry.name!r} is broken: {entry.error}")
    with contextlib.redirect_stdout(sys.stderr):
        provider = load_memory_provider(entry.name, home)
    if provider is None:
        raise ConfigError(f"The provider {entry.name!r} could not be loaded (-v says why).")
    return entry.name, provider


def _describe_settings(fields: list[Field]) -> None:
    for item in fields:
        notes = [item.type]
        if item.secret:
            notes.append(f"secret, kept in .env as {item.env_var or '(derived name)'}")
        if item.required:
            notes.append("required")
        if item.choices:
            notes.append("one of " + ", ".join(str(c) for c in item.choices))
        if item.default not in (None, "") and not item.secret:
            notes.append(f"default {_as_text(item.default)}")
        if item.when:
            notes.append("when " + ", ".join(f"{k}={v}" for k, v in item.when.items()))
        click.echo(f"{item.key}  ({'; '.join(notes)})")
        if item.description:
            click.echo(f"    {item.description}")


@click.command()
@click.argument("provider", required=False)
@click.option(
    "--set",
    "assignments",
    multiple=True,
    metavar="KEY=VALUE",
    help="Set one setting (repeatable); KEY is a key of the provider's schema.",
)
@click.option(
    "--non-interactive",
    is_flag=True,
    help="Ask nothing: save only the --set values (the default when not in a terminal).",
)
@click.option("--activate", is_flag=True, help="Also select the provider as memory.provider.")
@click.option(
    "--help-settings", is_flag=True, help="List the provider's settings and exit, writing nothing."
)
@click.pass_context
def setup(
    ctx: click.Context,
    provider: str | None,
    assignments: tuple[str, ...],
    non_interactive: bool,
    activate: bool,
    help_settings: bool,
) -> None:
    """Configure a memory provider from its settings schema, then check it.

    In a terminal each setting is asked with its description and default; in a
    script give them with --set KEY=VALUE. Secrets (API keys) go to
    $HERMES_HOME/.env (mode 0600), everything else to config.yaml through the
    provider, keeping the file's comments. Nothing is written unless every
    value is usable. PROVIDER defaults to memory.provider.
    """
    try:
        _setup(ctx, provider, assignments, non_interactive, activate, help_settings)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from exc


def _setup(
    ctx: click.Context,
    provider: str | None,
    assignments: tuple[str, ...],
    non_interactive: bool,
    activate: bool,
    help_settings: bool,
) -> None:
    from hermes_core.config import get_hermes_home

    home = get_hermes_home()
    if not home.is_dir():
        home.mkdir(parents=True, exist_ok=True)
    interactive = not non_interactive and sys.stdin.isatty() and not help_settings
    name, instance = _find_provider(provider, home, interactive)
    try:
        _configure(ctx, home, name, instance, assignments, interactive, activate, help_settings)
    finally:
        _shut_down(instance)


def _configure(
    ctx: click.Context,
    home: Path,
    name: str,
    instance: Any,
    assignments: tuple[str, ...],
    interactive: bool,
    activate: bool,
    help_settings: bool,
) -> None:
    from hermes_core.config import set_config_value, update_config
    from hermes_core.plugins import discover_providers, selected_entry
    from hermes_core.secrets import dotenv_path, write_dotenv

    fields = [Field.from_schema(entry, name) for entry in instance.get_config_schema() or []]
    if help_settings:
        _describe_settings(fields) if fields else click.echo(f"{name} declares no settings.")
        return
    given = parse_assignments(assignments, fields, name)
    if interactive and fields:
        click.echo(f"Setting up {name} in {home} (Ctrl-C stops without writing).")
    chosen = collect(
        fields, given, current_values(fields, name, home), name, interactive=interactive
    )
    secret_keys = {f.key: f.secret_variable(name) for f in fields if f.secret}
    secrets = {secret_keys[k]: str(v) for k, v in chosen.items() if k in secret_keys}
    settings = {k: v for k, v in chosen.items() if k not in secret_keys}
    if settings:
        try:
            instance.save_config(settings, str(home))
        except (ValueError, TypeError) as exc:
            raise ConfigError(f"Nothing was written: {name} refused the settings: {exc}") from exc
        click.echo(f"Saved {', '.join(settings)} for {name} in {home / 'config.yaml'}.")
    if secrets:
        write_dotenv(secrets, home)
        # A Hermes-style plugin's loading put the old .env into os.environ; read it anew.
        from hermes_core.hermes_compat.dotenv import restore_environ

        restore_environ()
        click.echo(f"Saved {', '.join(secrets)} in {dotenv_path(home)} (mode 0600).")
    if not chosen:
        click.echo(f"No setting of {name} changed.")
    if activate:
        update_config(lambda config: set_config_value(config, "memory.provider", name), home)
        click.echo(f"memory.provider is now {name}.")
    entry = selected_entry(discover_providers(home), name)
    if entry is not None and entry.available:
        click.echo(f"{name} is available.")
        if not activate:
            click.echo(f"To use it: hermes-memory setup {name} --activate")
        return
    reason = (entry.error or entry.unavailable_reason) if entry is not None else "not found"
    click.echo(
        f"{name} is not available yet: {reason or 'it gives no reason'}.\n"
        f"Fix that (hermes-memory setup {name} --set KEY=VALUE; --help-settings lists the keys), "
        "then run hermes-memory doctor.",
        err=True,
    )
    ctx.exit(1)


def _shut_down(instance: Any) -> None:
    """Release what a provider made when created (it was never initialised)."""
    with contextlib.suppress(Exception):  # then it has nothing to release
        instance.shutdown()
