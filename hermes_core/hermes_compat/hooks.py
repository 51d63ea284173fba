"""The turn and session hooks a Hermes memory plugin registers with ``ctx.register_hook``.

Some memory plugins do their recall or capture in Hermes' general plugin hooks
rather than in provider methods: ``pre_llm_call`` returns context for the
turn, ``post_llm_call`` sees the finished exchange. hermes-memory runs these
four with the plugin's provider, at the matching provider hook, so such a
plugin keeps working:

* ``on_session_start(session_id, model, platform)`` — after ``initialize``;
* ``pre_llm_call(session_id, task_id, turn_id, user_message,
  conversation_history, is_first_turn, model, platform, parent_session_id,
  sender_id)`` — first thing every turn, before the provider's
  ``on_turn_start`` and ``prefetch``, as in Hermes; ``conversation_history``
  is the transcript as of the last synced turn plus this turn's user message,
  as in Hermes; a returned string, or the ``"context"`` of a returned dict, is
  added to the provider's recall for the turn (fenced in ``<memory-context>``
  like all recall; a turn whose prompt is trivial, such as ``ok``, gets no
  recall, so none of it). A host that calls ``prefetch`` without
  ``on_turn_start`` gets the hooks run from ``prefetch``;
* ``post_llm_call(session_id, task_id, turn_id, user_message,
  assistant_response, conversation_history, model, platform)`` — after
  ``sync_turn``, on the background writer, with the ``turn_id`` its
  ``pre_llm_call`` had;
* ``on_session_end(session_id, completed, interrupted, model, platform)`` —
  after ``on_session_end``.

``task_id`` is the session id (hermes-memory runs no separate tasks).
Each callback gets the keyword arguments its signature names (all of them
with ``**kwargs``); an async callback is awaited; one that raises is logged
and skipped. Other hook names
(tool, API and approval hooks) have no counterpart here and are ignored with
a logged reason.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hermes_core.errors import contain, describe_exception
from hermes_core.signatures import keyword_names, only_accepted, with_session_id

__all__ = ["SUPPORTED_HOOKS", "attach_hooks", "run_awaitable"]

logger = logging.getLogger("hermes_core.plugins")

SUPPORTED_HOOKS = frozenset({"on_session_start", "pre_llm_call", "post_llm_call", "on_session_end"})

Hooks = Mapping[str, Sequence[Callable[..., Any]]]


def run_awaitable(awaitable: Any) -> Any:
    """The result of *awaitable*, run to completion from synchronous code (any thread)."""

    async def wait() -> Any:
        return await awaitable

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(wait())
    outcome: dict[str, Any] = {}

    def run() -> None:  # this thread already runs a loop: use a fresh one elsewhere
        try:
            outcome["value"] = asyncio.run(wait())
        except BaseException as exc:
            outcome["error"] = exc

    worker = threading.Thread(target=run, name="hermes-compat-async-tool", daemon=True)
    worker.start()
    worker.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


class _HookRunner:
    """Calls a plugin's hooks with what its provider has learned about the session."""

    def __init__(self, hooks: Hooks, label: str) -> None:
        self.hooks = {name: list(callbacks) for name, callbacks in hooks.items() if callbacks}
        self.label = label
        self.session_id = ""
        self.model = ""
        self.platform = ""
        self.sender_id = ""
        self.parent_session_id = ""
        self._turns: dict[str, int] = {}
        self._history: tuple[str, list[Any]] = ("", [])
        self._turn_id = ""
        self._turn_context: list[str] | None = None
        self._lock = threading.Lock()

    def run(self, name: str, **values: Any) -> list[Any]:
        results = []
        for callback in self.hooks.get(name, ()):
            try:
                result = contain(callback, **only_accepted(keyword_names(callback), values))
                results.append(
                    contain(run_awaitable, result) if inspect.isawaitable(result) else result
                )
            except Exception as exc:
                logger.warning("%s: %s hook raised %s", self.label, name, describe_exception(exc))
        return results

    def session(self, session_id: str) -> dict[str, Any]:
        session_id = session_id or self.session_id
        return {
            "session_id": session_id,
            "task_id": session_id,
            "model": self.model,
            "platform": self.platform,
            "parent_session_id": self.parent_session_id,
        }

    def start_turn(self, session_id: str) -> tuple[bool, str]:
        """Whether this is *session_id*'s first turn, and a new id for the turn."""
        with self._lock:
            seen = self._turns.get(session_id, 0)
            self._turns[session_id] = seen + 1
            self._turn_id = uuid.uuid4().hex
            return seen == 0, self._turn_id

    def turn_id(self) -> str:
        """The id ``pre_llm_call`` got for the turn being synced (a new one if it never ran)."""
        with self._lock:
            turn_id, self._turn_id = self._turn_id or uuid.uuid4().hex, ""
            return turn_id

    def set_turn_context(self, contexts: list[str]) -> None:
        """Keep what this turn's ``pre_llm_call`` hooks returned for the provider's recall."""
        with self._lock:
            self._turn_context = contexts

    def take_turn_context(self) -> list[str] | None:
        """This turn's hook context, once; ``None`` when no hook ran since the last recall."""
        with self._lock:
            contexts, self._turn_context = self._turn_context, None
            return contexts

    def remember(self, session_id: str, messages: list[Any]) -> None:
        """Keep the transcript the last synced turn ended with, for the next ``pre_llm_call``."""
        with self._lock:
            self._history = (session_id, messages)

    def history(self, session_id: str) -> list[Any]:
        """*session_id*'s transcript as of its last synced turn (``[]`` for another session)."""
        with self._lock:
            known, messages = self._history
            return list(messages) if known == session_id else []


def _context_of(result: Any) -> str:
    if isinstance(result, Mapping):
        result = result.get("context")
    return result.strip() if isinstance(result, str) else ""


def attach_hooks(provider: Any, hooks: Hooks, label: str) -> None:
    """Run *hooks* (name → callbacks) around *provider*'s matching methods."""
    runner = _HookRunner({name: hooks[name] for name in SUPPORTED_HOOKS if name in hooks}, label)
    if not runner.hooks:
        return
    originals = {
        name: getattr(provider, name, None)
        for name in (
            "initialize",
            "prefetch",
            "on_turn_start",
            "on_session_switch",
            "sync_turn",
            "on_session_end",
        )
    }
    wrappers: dict[str, Callable[..., Any]] = {}

    initialize = originals["initialize"]
    if initialize is not None:  # learn the session, model and platform every hook is given

        def initialize_then_start(session_id: str, **kwargs: Any) -> Any:
            runner.session_id = session_id
            runner.platform = str(kwargs.get("platform") or "")
            runner.model = str(kwargs.get("model") or "")
            runner.sender_id = str(kwargs.get("user_id") or "")
            runner.parent_session_id = str(kwargs.get("parent_session_id") or "")
            try:
                return initialize(session_id, **kwargs)
            finally:
                runner.run("on_session_start", **runner.session(session_id))

        wrappers["initialize"] = initialize_then_start

    if "pre_llm_call" in runner.hooks:
        prefetch = originals["prefetch"]
        own_prefetch = with_session_id(prefetch) if prefetch is not None else None
        turn_start = originals["on_turn_start"]
        turn_start_takes = keyword_names(turn_start, skip=2) if turn_start is not None else None
        switch = originals["on_session_switch"]

        def pre_llm_call(message: str, session_id: str) -> list[str]:
            values = runner.session(session_id)
            first, turn_id = runner.start_turn(values["session_id"])
            values.update(
                turn_id=turn_id,
                user_message=message,
                conversation_history=[
                    *runner.history(values["session_id"]),
                    {"role": "user", "content": message},
                ],
                is_first_turn=first,
                sender_id=runner.sender_id,
            )
            return [text for text in map(_context_of, runner.run("pre_llm_call", **values)) if text]

        def turn_start_then_provider(turn_number: int, message: str, **kwargs: Any) -> Any:
            # Hermes runs pre_llm_call first on every turn, then on_turn_start, then recall.
            runner.set_turn_context(pre_llm_call(message, ""))
            if turn_start is None:
                return None
            return turn_start(turn_number, message, **only_accepted(turn_start_takes, kwargs))

        def prefetch_with_hooks(query: str, *, session_id: str = "") -> str:
            own: Any = ""
            if own_prefetch is not None:
                try:
                    own = contain(own_prefetch, query, session_id)
                except Exception as exc:  # its hooks may still recall something
                    logger.debug("%s: prefetch raised %s", label, describe_exception(exc))
            parts = [own.strip()] if isinstance(own, str) and own.strip() else []
            hooked = runner.take_turn_context()
            if hooked is None:  # a host that calls prefetch without on_turn_start
                hooked = pre_llm_call(query, session_id)
            return "\n\n".join(parts + hooked)

        def switch_then_provider(new_session_id: str, **kwargs: Any) -> Any:
            runner.session_id = str(new_session_id or runner.session_id)
            if "parent_session_id" in kwargs:
                runner.parent_session_id = str(kwargs.get("parent_session_id") or "")
            if switch is None:
                return None
            return switch(new_session_id, **kwargs)

        wrappers["on_turn_start"] = turn_start_then_provider
        wrappers["prefetch"] = prefetch_with_hooks
        wrappers["on_session_switch"] = switch_then_provider

    sync_turn = originals["sync_turn"]
    if sync_turn is not None and runner.hooks.keys() & {"pre_llm_call", "post_llm_call"}:
        sync_takes = keyword_names(sync_turn, skip=2)

        def sync_turn_with_hooks(user_content: str, assistant_content: str, **kwargs: Any) -> Any:
            session_id = str(kwargs.get("session_id") or "")
            history = list(kwargs.get("messages") or [])
            runner.remember(session_id or runner.session_id, history)
            try:
                return sync_turn(
                    user_content, assistant_content, **only_accepted(sync_takes, kwargs)
                )
            finally:
                if "post_llm_call" in runner.hooks:
                    values = runner.session(session_id)
                    values.update(
                        turn_id=runner.turn_id(),
                        user_message=user_content,
                        assistant_response=assistant_content,
                        conversation_history=history,
                    )
                    runner.run("post_llm_call", **values)

        wrappers["sync_turn"] = sync_turn_with_hooks

    end = originals["on_session_end"]
    if end is not None and "on_session_end" in runner.hooks:

        def end_with_hooks(messages: Any) -> Any:
            try:
                return end(messages)
            finally:
                runner.run(
                    "on_session_end", completed=True, interrupted=False, **runner.session("")
                )

        wrappers["on_session_end"] = end_with_hooks

    for name, wrapper in wrappers.items():
        try:
            setattr(provider, name, wrapper)
        except AttributeError:
            logger.warning("%s: cannot run its %s hooks with its provider", label, name)
