"""``hermes-memory demo``: the whole runtime end to end, offline.

A temporary ``HERMES_HOME``, the builtin provider, SQLite and a scripted local
model served over loopback HTTP (:class:`~hermes_core.runtime.scripted.ScriptedModel`
behind :class:`~hermes_core.testing.openai_fake.FakeOpenAIServer`) run two
sessions and one compression through :class:`~hermes_core.runtime.session.AgentSession`,
printing what each layer does and checking it:

1. session 1 writes two memories with real ``memory`` tool calls; the files change
   at once but the system prompt stays byte-identical for every model call;
2. session 2 starts with a new snapshot that holds them, finds session 1 with a
   real ``session_search`` call, and grows until compression splits it into a child
   with ``parent_session_id``, a numbered title and a compression tip.

The command exits with status 1 if any check fails.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from hermes_core.config import save_config

CONVERSATION_BUDGET = 500
"""Tokens of conversation session 2 may hold before it compresses (keeps the demo short)."""

SESSION_ONE = [
    "Hi! Please remember that my name is Ada and I prefer short, direct answers.",
    "Remember that the staging deploy uses blue-green releases behind port 8443.",
    "thanks!",
]
SESSION_TWO_OPENING = [
    "What do you know about me?",
    "How did we set up the staging deploy last time?",
]
SESSION_TWO_PLANNING = [
    "Let's plan the next release. The checkout service needs the new tax rules, the "
    "mobile client must pin API version 3, and the migration for invoices has to run "
    "before the feature flag flips. Keep a list of these constraints.",
    "Second, the on-call rotation changes next week: Priya covers Monday to Wednesday, "
    "Tom covers Thursday and Friday, and weekends go to the platform team. Nothing "
    "ships on Friday afternoons.",
    "Third, the load test last night showed p99 latency of 840 ms on the search "
    "endpoint, mostly in the ranking step; the target is 400 ms before launch, and the "
    "cache warm-up script should run after every deploy.",
    "Fourth, legal asked for a data-retention review of the analytics events; anything "
    "with an email address must be dropped after 30 days, and the export job needs an "
    "audit log entry for every run.",
    "Fifth, the design team wants the new onboarding flow behind an experiment with a "
    "10 percent rollout, measured on activation after seven days, with a kill switch.",
    "Sixth, finance needs the usage report by the 5th of each month, as CSV, "
    "with one row per workspace and the plan name in the second column.",
]
FINAL_QUESTION = "Which of these constraints is the most urgent?"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


class _Report:
    """Prints the demo's narration and keeps score of its checks."""

    def __init__(self) -> None:
        self.failed: list[str] = []
        self.passed = 0

    def heading(self, text: str) -> None:
        click.echo()
        click.secho(f"== {text} ==", bold=True)

    def layer(self, tag: str, text: str) -> None:
        click.echo(f"  [{tag}] {text}")

    def check(self, ok: bool, text: str) -> None:
        if ok:
            self.passed += 1
            click.secho(f"    ok   {text}", fg="green")
        else:
            self.failed.append(text)
            click.secho(f"    FAIL {text}", fg="red")

    def user(self, text: str) -> None:
        click.echo()
        click.secho(f"you> {text}", fg="cyan")

    def assistant(self, text: str) -> None:
        click.secho(f"assistant> {text}", fg="magenta")


@contextmanager
def _hermes_home(home: Path | None, keep: bool) -> Iterator[Path]:
    temporary = home is None
    path = Path(tempfile.mkdtemp(prefix="hermes-demo-")) if home is None else home
    path.mkdir(parents=True, exist_ok=True)
    previous = os.environ.get("HERMES_HOME")
    os.environ["HERMES_HOME"] = str(path)
    try:
        yield path
    finally:
        if previous is None:
            os.environ.pop("HERMES_HOME", None)
        else:
            os.environ["HERMES_HOME"] = previous
        if temporary and not keep:
            shutil.rmtree(path, ignore_errors=True)


@click.command()
@click.option(
    "--home",
    type=click.Path(file_okay=False, path_type=Path),
    help="Run in this new or empty HERMES_HOME (kept afterwards) instead of a temporary one.",
)
@click.option("--keep", is_flag=True, help="Keep the temporary HERMES_HOME and print its path.")
def demo(home: Path | None, keep: bool) -> None:
    """Run the memory layers end to end, offline: two sessions, tool calls, a compression."""
    from hermes_core.runtime.scripted import ScriptedModel
    from hermes_core.testing.openai_fake import FakeOpenAIServer

    if home is not None:
        home = home.expanduser()  # a quoted or `--home=~/x` tilde: never a folder named "~"
        _refuse_a_used_home(home)
    report = _Report()
    with (
        _hermes_home(home, keep) as path,
        FakeOpenAIServer(ScriptedModel(), model="scripted-local") as server,
    ):
        click.secho("hermes-memory demo — layered memory, end to end, no network", bold=True)
        click.echo(f"HERMES_HOME  {path}" + ("" if home or keep else "  (temporary)"))
        click.echo(f"model        scripted local model at {server.base_url} (loopback HTTP)")
        save_config({"model": {"base_url": server.base_url, "model": "scripted-local"}}, path)
        first_id = _session_one(report, path, server)
        _session_two(report, path, server, first_id)
        if keep and home is None:
            click.echo(f"\nKept HERMES_HOME at {path}")
    click.echo()
    if report.failed:
        click.secho(f"{len(report.failed)} check(s) failed: {report.failed}", fg="red", bold=True)
        raise SystemExit(1)
    click.secho(f"All {report.passed} checks passed.", fg="green", bold=True)


def _refuse_a_used_home(home: Path) -> None:
    """Stop before the demo overwrites a real home's config.yaml, memories or sessions."""
    try:
        used = home.exists() and any(home.iterdir())
    except OSError as exc:
        raise click.ClickException(f"Cannot use --home {home}: {exc}") from exc
    if used:
        raise click.ClickException(
            f"--home {home} is not empty. The demo writes its own config.yaml, memories and "
            "state.db there and would overwrite or add to what is there; pass a new or empty "
            "directory, or leave out --home to run in a temporary one."
        )


def _open(path: Path, title: str) -> Any:
    from hermes_core.runtime.session import AgentSession

    return AgentSession.open(path, title=title, platform="demo", stream=True)


def _say(report: _Report, session: Any, text: str) -> Any:
    report.user(text)
    streamed: list[str] = []

    def on_tool(run: Any) -> None:
        args = json.dumps(run.arguments, ensure_ascii=False)
        report.layer("tool", f"{run.name}({args}) -> {run.result[:160]}")

    result = session.run_turn(text, on_text=streamed.append, on_tool=on_tool)
    if not result.recalled and text.strip().lower().startswith("thanks"):
        report.layer("L0", "trivial prompt: recall (prefetch) skipped for this turn")
    report.assistant("".join(streamed))
    return result


def _system_prompts(server: Any, start: int) -> list[str]:
    return [r.messages[0]["content"] for r in server.chat_requests[start:] if r.messages]


def _session_one(report: _Report, path: Path, server: Any) -> str:
    report.heading("Session 1: memory writes persist at once, the prompt stays frozen")
    first_request = len(server.chat_requests)
    session = _open(path, "Getting to know Ada")
    with session:
        prompt = session.system_prompt
        report.layer(
            "L0",
            f"system prompt assembled once: {len(prompt)} chars, sha256 {_digest(prompt)}; "
            f"tools: {', '.join(t['name'] for t in session.tool_schemas)}",
        )
        for text in SESSION_ONE:
            _say(report, session, text)
        user_md = path / "memories" / "USER.md"
        memory_md = path / "memories" / "MEMORY.md"
        user_text = user_md.read_text(encoding="utf-8") if user_md.exists() else ""
        memory_text = memory_md.read_text(encoding="utf-8") if memory_md.exists() else ""
        report.layer("L1", f"USER.md on disk: {user_text.strip()!r}")
        report.layer("L1", f"MEMORY.md on disk: {memory_text.strip()!r}")
        report.check("Ada" in user_text, "the memory tool wrote USER.md")
        report.check("8443" in memory_text, "the memory tool wrote MEMORY.md")
        report.check(
            session.system_prompt == prompt and "Ada" not in prompt,
            "the cached system prompt did not change after the writes (frozen snapshot)",
        )
        prompts = _system_prompts(server, first_request)
        report.check(
            len(prompts) >= 4 and len(set(prompts)) == 1,
            f"all {len(prompts)} model calls of session 1 sent the same system prompt bytes",
        )
        session_id: str = session.session_id
    report.layer("end", "on_session_end(messages) and shutdown_all() ran; session 1 closed")
    return session_id


def _session_two(report: _Report, path: Path, server: Any, first_id: str) -> None:
    from hermes_core.runtime.summary import SUMMARY_PREFIX
    from hermes_core.sessions import SessionStore

    report.heading("Session 2: a new snapshot, on-demand search, compression with lineage")
    session = _open(path, "Deploy notes")
    with session:
        prompt = session.system_prompt
        report.layer("L0", f"new system prompt: {len(prompt)} chars, sha256 {_digest(prompt)}")
        report.check(
            "Ada" in prompt and "8443" in prompt,
            "the next session's snapshot holds what session 1 wrote",
        )
        answer = _say(report, session, SESSION_TWO_OPENING[0])
        report.check("Ada" in answer.content, "the model answers from the frozen snapshot")
        found = _say(report, session, SESSION_TWO_OPENING[1])
        searches = [r for r in found.tool_runs if r.name == "session_search"]
        report.check(
            bool(searches) and first_id in searches[0].result,
            "session_search found session 1 (FTS5 over state.db)",
        )
        base = session.context_tokens()
        settings = session.compressor.settings
        window = int((base + CONVERSATION_BUDGET) / settings.threshold)
        session.compressor.settings = replace(settings, context_window=window)
        report.layer(
            "compression",
            f"context is {base} tokens; demo window set to {window} tokens, so compression "
            f"triggers at {session.compressor.settings.threshold_tokens} "
            f"({settings.threshold:.0%})",
        )
        outcome = None
        for text in SESSION_TWO_PLANNING:
            result = _say(report, session, text)
            if result.compression is not None:
                outcome = result.compression
                break
        report.check(outcome is not None, "the context passed the threshold and was compressed")
        if outcome is None:
            return
        report.layer(
            "compression",
            f"{outcome.dropped} messages summarised ({outcome.summary_source} checkpoint), "
            f"~{outcome.tokens_before} -> ~{outcome.tokens_after} tokens; "
            f"{outcome.old_session_id} -> {outcome.new_session_id} titled {outcome.title!r}",
        )
        checkpoint = next(
            (str(m["content"]) for m in session.messages if SUMMARY_PREFIX in str(m["content"])),
            "",
        )
        body = checkpoint.split(SUMMARY_PREFIX, 1)[-1].strip().splitlines()
        excerpt = [line[:100] for line in body if line.strip()][:4]
        report.layer("compression", "checkpoint: " + " | ".join(excerpt))
        report.check(
            session.context_tokens() < session.compressor.settings.threshold_tokens,
            f"the child session's context ({session.context_tokens()} tokens) is under the "
            "threshold",
        )
        report.check(
            session.system_prompt == prompt,
            "the system prompt was rebuilt from disk for the child session (same bytes)",
        )
        _say(report, session, FINAL_QUESTION)
        tip_id = session.session_id
    store = SessionStore(path / "state.db", read_only=True)
    try:
        old = store.get_session(outcome.old_session_id) or {}
        new = store.get_session(outcome.new_session_id) or {}
        report.layer("L2", f"lineage of the tip: {' -> '.join(store.get_lineage(tip_id))}")
        report.check(old.get("end_reason") == "compression", "old session ended: compression")
        report.check(
            new.get("parent_session_id") == outcome.old_session_id,
            "the child session points to its parent (parent_session_id)",
        )
        report.check(new.get("title") == "Deploy notes #2", "the title was numbered: #2")
        report.check(
            store.get_compression_tip(outcome.old_session_id) == tip_id,
            "get_compression_tip(old) is the child",
        )
        listed = [row["id"] for row in store.list_sessions(limit=10)]
        report.layer("L2", f"session list (one entry per conversation): {listed}")
        report.check(
            tip_id in listed and outcome.old_session_id not in listed and first_id in listed,
            "the listing shows one entry per conversation (the compression tip)",
        )
    finally:
        store.close()
