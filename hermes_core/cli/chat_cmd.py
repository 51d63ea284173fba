"""``hermes-memory chat``: an interactive session with layered memory.

Talks to any OpenAI-compatible endpoint configured in ``config.yaml``
(``model.base_url``, ``model.model``, ``model.api_key_env``), the environment
(``HERMES_MODEL_BASE_URL``, ``HERMES_MODEL``, ``HERMES_API_KEY``) or the
options below. Inside the chat: ``/new`` starts a new session (the memory
written so far enters its system prompt), ``/compress [focus]`` compresses
now, ``/exit`` (or Ctrl-D) ends. Ctrl-C interrupts a running answer; at the
prompt it exits. Either way the session is ended cleanly.

On a terminal the prompt has line editing and a history (the arrow keys,
Ctrl-R) through the standard library's ``readline``, kept in
``$HERMES_HOME/chat_history``. Whatever the terminal sends that is not text
(escape sequences, control characters) is removed before a line reaches the
model or ``state.db``.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from hermes_core.cli.terminal import shown, typed
from hermes_core.config import get_hermes_home, load_config, set_config_value
from hermes_core.errors import HermesMemoryError, LLMError, LLMNotConfiguredError
from hermes_core.llm import ChatClient

HISTORY_FILE = "chat_history"
"""The prompt's history, in HERMES_HOME (mode 0600: it holds what was typed)."""
HISTORY_LINES = 1_000
"""Lines of history kept."""

HELP_TEXT = (
    "Commands: /new (start a new session), /compress [focus] (compress now), "
    "/help, /exit (or Ctrl-D)."
)


def _client(config: dict[str, Any], home: Path) -> ChatClient:
    client = ChatClient.from_config(config, hermes_home=home)
    if client is None:
        raise LLMNotConfiguredError(
            "No model endpoint is configured. Pass --base-url and --model, set model.base_url "
            f"and model.model in {home / 'config.yaml'}, or set HERMES_MODEL_BASE_URL and "
            "HERMES_MODEL. `hermes-memory demo` runs offline without one."
        )
    return client


@contextlib.contextmanager
def line_editing(home: Path) -> Iterator[None]:
    """Within the block, ``input()`` edits lines and recalls the history of *home*.

    Only when stdin and stdout are a terminal and ``readline`` is available
    (not on Windows): piped input is read as it is.
    """
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        yield
        return
    try:
        import readline
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    history = home / HISTORY_FILE
    readline.set_history_length(HISTORY_LINES)
    with contextlib.suppress(OSError):
        readline.read_history_file(history)
    before = readline.get_current_history_length()
    try:
        yield
    finally:
        added = readline.get_current_history_length() - before
        with contextlib.suppress(OSError):
            if not history.exists():
                history.touch(mode=0o600)
            readline.append_history_file(max(added, 0), history)
            if before + added > HISTORY_LINES:  # trim what earlier chats appended
                readline.write_history_file(history)


def _clean_history(line: str, clean: str) -> None:
    """Keep *clean*, not the raw *line*, in the prompt's history."""
    if line == clean or "readline" not in sys.modules:
        return
    import readline

    last = readline.get_current_history_length()
    if last and readline.get_history_item(last) == line:
        if clean.strip():
            readline.replace_history_item(last - 1, clean)
        else:
            readline.remove_history_item(last - 1)


def _print_tool(run: Any) -> None:
    args = ", ".join(f"{k}={v!r}" for k, v in run.arguments.items())
    click.secho(shown(f"\n  [tool {run.name}({args[:120]})]"), fg="cyan", err=True)


@click.command()
@click.option(
    "--home",
    type=click.Path(file_okay=False, path_type=Path),
    help="HERMES_HOME to use (default: $HERMES_HOME or ~/.hermes).",
)
@click.option("--base-url", help="OpenAI-compatible endpoint, e.g. http://localhost:8000/v1.")
@click.option("--model", "model_name", help="Model name at that endpoint.")
@click.option("--api-key-env", help="Environment variable that holds the API key.")
@click.option("--context-window", type=int, help="Model context window in tokens.")
@click.option("--title", help="Title of the new session.")
@click.option(
    "--cwd",
    "working_dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=".",
    show_default=True,
    help="Directory whose AGENTS.md / CLAUDE.md enter the system prompt.",
)
@click.option("--no-stream", is_flag=True, help="Wait for whole answers instead of streaming.")
def chat(
    home: Path | None,
    base_url: str | None,
    model_name: str | None,
    api_key_env: str | None,
    context_window: int | None,
    title: str | None,
    working_dir: Path,
    no_stream: bool,
) -> None:
    """Chat with a model that has layered memory (/new, /compress, /exit)."""
    from hermes_core.cli.sessions_cmd import finish_upgrade
    from hermes_core.runtime.session import AgentSession
    from hermes_core.sessions.backends import sessions_url

    if home is not None:
        os.environ["HERMES_HOME"] = str(home)  # providers resolve the home from it too
    home = get_hermes_home()
    config = load_config(home)
    for key, value in (
        ("model.base_url", base_url),
        ("model.model", model_name),
        ("model.api_key_env", api_key_env),
        ("model.context_window", context_window),
    ):
        if value is not None:
            set_config_value(config, key, value)
    client = _client(config, home)
    url = sessions_url(config)  # a store to upgrade shows a bar, not a pause
    finish_upgrade(home / "state.db" if url is None else url)
    session = AgentSession.open(
        home,
        config=config,
        client=client,
        title=title,
        working_dir=working_dir.resolve(),
        stream=not no_stream,
    )
    try:
        session.start()
        providers = ", ".join(session.manager.provider_names)
        click.secho(
            shown(
                f"hermes-memory chat — session {session.session_id}\n"
                f"  home:      {home}\n"
                f"  model:     {client.model} at {client.base_url}\n"
                f"  providers: {providers}"
            ),
            fg="green",
            err=True,
        )
        click.secho(HELP_TEXT, dim=True, err=True)
        with line_editing(home):
            _loop(session)
    finally:
        click.secho("Ending the session…", dim=True, err=True)
        try:
            session.close()
        except KeyboardInterrupt:  # the session row is ended; providers were not waited for
            click.secho("Interrupted: ended the session without waiting for providers.", err=True)
            raise SystemExit(130) from None


def _loop(session: Any) -> None:
    while True:
        try:
            line = input("you> ")
        except EOFError:
            click.echo(err=True)
            return
        except KeyboardInterrupt:
            click.echo(err=True)
            return
        clean = typed(line)
        _clean_history(line, clean)
        if clean != line and not clean.strip():
            click.secho("[only control characters or escape sequences: not sent]", err=True)
            continue
        line = clean
        text = line.strip()
        if not text:
            continue
        if text in ("/exit", "/quit"):
            return
        if text == "/help":
            click.echo(HELP_TEXT)
            continue
        word = text.split()[0]
        if word == "/new" and text != "/new":
            click.echo("/new takes no arguments: type /new alone to start a new session.")
            continue
        if word in ("/new", "/compress"):
            _command(session, text)
            continue
        if word.startswith("/") and "/" not in word[1:]:  # /usr/bin/python … is a message
            click.echo(f"Unknown command {word}. {HELP_TEXT}")
            continue
        _turn(session, line)


def _command(session: Any, text: str) -> None:
    """Run /new or /compress; a Ctrl-C or a store failure ends the command, not the chat."""
    try:
        if text == "/new":
            click.secho(f"Started session {session.new_session()}.", fg="green", err=True)
            return
        focus = text[len("/compress") :].strip() or None
        outcome = session.compress(focus=focus)
    except KeyboardInterrupt:
        click.secho("\n[interrupted]", err=True)
        return
    except HermesMemoryError as exc:
        click.secho(f"[error] {exc}", fg="red", err=True)
        return
    if outcome is None:
        click.secho("Nothing to compress yet.", err=True)
    else:
        click.secho(
            f"Compressed: {outcome.old_session_id} → {outcome.new_session_id} "
            f"({outcome.dropped} messages summarised).",
            fg="green",
            err=True,
        )


def _turn(session: Any, line: str) -> None:
    click.echo("assistant> ", nl=False)
    try:
        result = session.run_turn(
            line, on_text=lambda text: click.echo(shown(text), nl=False), on_tool=_print_tool
        )
    except KeyboardInterrupt:
        click.secho("\n[interrupted — your message is saved; the answer was not]", err=True)
        return
    except LLMError as exc:
        click.secho(f"\n[model error] {exc}", fg="red", err=True)
        return
    except HermesMemoryError as exc:  # e.g. state.db full or locked: the chat goes on
        click.secho(f"\n[error] {exc}", fg="red", err=True)
        return
    click.echo()
    if result.notice:
        click.secho(f"[{result.notice}]", fg="yellow", err=True)
    if result.recall_status:
        click.secho(result.recall_status, dim=True, err=True)
    if result.compression is not None:
        c = result.compression
        click.secho(
            f"[context compressed: {c.old_session_id} → {c.new_session_id}]", dim=True, err=True
        )
