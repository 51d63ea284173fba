"""Shared by the runtime tests: third-party-style providers and session wiring.

:class:`RecordingProvider` is written the way an outside author would write a
provider (subclass the ABC, implement every hook) and records each call, so
tests can assert hook order and arguments. :class:`FaultyProvider` misbehaves
in every hook in one chosen way. Sessions run against a real
:class:`FakeOpenAIServer` over loopback HTTP.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

from hermes_core.llm import ChatClient
from hermes_core.manager import MemoryManager
from hermes_core.plugins import load_builtin_provider
from hermes_core.provider import MemoryProvider
from hermes_core.runtime.compression import CompressionSettings
from hermes_core.runtime.session import AgentSession, RuntimeSettings
from hermes_core.sessions import SessionStore
from hermes_core.testing.openai_fake import FakeOpenAIServer

NOTE_TOOL = {
    "name": "recorder_note",
    "description": "Store a note with the recorder provider.",
    "parameters": {"type": "object", "properties": {"text": {"type": "string"}}},
}


class RecordingProvider(MemoryProvider):
    """An external provider that records every hook call as ``(hook, args, kwargs)``."""

    def __init__(
        self,
        *,
        recall: str = "",
        block: str = "",
        pre_compress: str = "",
        tools: list[dict[str, Any]] | None = None,
    ) -> None:
        self.recall = recall
        self.block = block
        self.pre_compress = pre_compress
        self.tools = tools if tools is not None else [NOTE_TOOL]
        self.calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []
        self._lock = threading.Lock()

    def _record(self, hook: str, *args: Any, **kwargs: Any) -> None:
        with self._lock:
            self.calls.append((hook, args, kwargs))

    def hooks(self) -> list[str]:
        """The hook names called so far, in order."""
        with self._lock:
            return [name for name, _, _ in self.calls]

    def calls_to(self, hook: str) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
        """``(args, kwargs)`` of every call to *hook*."""
        with self._lock:
            return [(args, kwargs) for name, args, kwargs in self.calls if name == hook]

    @property
    def name(self) -> str:
        return "recorder"

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        self._record("initialize", session_id, **kwargs)

    def system_prompt_block(self) -> str:
        self._record("system_prompt_block")
        return self.block

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        self._record("prefetch", query, session_id=session_id)
        return self.recall

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        self._record("queue_prefetch", query, session_id=session_id)

    def sync_turn(
        self,
        user_content: str,
        assistant_content: str,
        *,
        session_id: str = "",
        messages: list[dict[str, Any]] | None = None,
    ) -> None:
        self._record(
            "sync_turn", user_content, assistant_content, session_id=session_id, messages=messages
        )

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return list(self.tools)

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        self._record("handle_tool_call", tool_name, args, **kwargs)
        return json.dumps({"success": True, "stored": args})

    def shutdown(self) -> None:
        self._record("shutdown")

    def on_turn_start(self, turn_number: int, message: str, **kwargs: Any) -> None:
        self._record("on_turn_start", turn_number, message, **kwargs)

    def on_turn_end(self, turn_number: int, **kwargs: Any) -> None:
        self._record("on_turn_end", turn_number, **kwargs)

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        self._record("on_session_end", messages)

    def on_session_switch(
        self,
        new_session_id: str,
        *,
        parent_session_id: str = "",
        reset: bool = False,
        rewound: bool = False,
        **kwargs: Any,
    ) -> None:
        self._record(
            "on_session_switch",
            new_session_id,
            parent_session_id=parent_session_id,
            reset=reset,
            **kwargs,
        )

    def on_pre_compress(self, messages: list[dict[str, Any]]) -> str:
        self._record("on_pre_compress", messages)
        return self.pre_compress

    def on_delegation(
        self, task: str, result: str, *, child_session_id: str = "", **kwargs: Any
    ) -> None:
        self._record("on_delegation", task, result, child_session_id=child_session_id, **kwargs)

    def on_memory_write(
        self,
        action: str,
        target: str,
        content: str,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        self._record("on_memory_write", action, target, content, metadata=metadata)


FAULTY_HOOKS = (
    "initialize",
    "system_prompt_block",
    "prefetch",
    "queue_prefetch",
    "sync_turn",
    "handle_tool_call",
    "shutdown",
    "on_turn_start",
    "on_turn_end",
    "on_session_end",
    "on_session_switch",
    "on_pre_compress",
    "on_delegation",
    "on_memory_write",
)

JUNK: dict[str, Any] = {
    "system_prompt_block": {"not": "text"},
    "prefetch": 42,
    "handle_tool_call": {"raw": object()},
    "on_pre_compress": ["a", "list"],
}


class FaultyProvider(MemoryProvider):
    """An external provider that raises, hangs, is slow or returns junk in every hook.

    ``hang`` blocks until :attr:`release` is set (tests set it at teardown).
    Tool schemas are valid at registration so the provider gets registered.
    """

    def __init__(self, mode: str, *, slow_seconds: float = 0.2) -> None:
        assert mode in ("raise", "hang", "slow", "junk")
        self.mode = mode
        self.slow_seconds = slow_seconds
        self.release = threading.Event()
        self.entered: list[str] = []

    @property
    def name(self) -> str:
        return f"faulty-{self.mode}"

    def is_available(self) -> bool:
        return True

    def _misbehave(self, hook: str, normal: Any = None) -> Any:
        self.entered.append(hook)
        if self.mode == "raise":
            raise RuntimeError(f"boom in {hook}")
        if self.mode == "hang":
            self.release.wait(60)
            return normal
        if self.mode == "slow":
            time.sleep(self.slow_seconds)
            return normal
        return JUNK.get(hook, normal)

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return [{**NOTE_TOOL, "name": "faulty_note"}]

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        self._misbehave("initialize")

    def system_prompt_block(self) -> str:
        return self._misbehave("system_prompt_block", "FAULTY-BLOCK")  # type: ignore[no-any-return]

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        return self._misbehave("prefetch", "slow recall")  # type: ignore[no-any-return]

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        self._misbehave("queue_prefetch")

    def sync_turn(
        self,
        user_content: str,
        assistant_content: str,
        *,
        session_id: str = "",
        messages: list[dict[str, Any]] | None = None,
    ) -> None:
        self._misbehave("sync_turn")

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        return self._misbehave("handle_tool_call", '{"ok": true}')  # type: ignore[no-any-return]

    def shutdown(self) -> None:
        self._misbehave("shutdown")

    def on_turn_start(self, turn_number: int, message: str, **kwargs: Any) -> None:
        self._misbehave("on_turn_start")

    def on_turn_end(self, turn_number: int, **kwargs: Any) -> None:
        self._misbehave("on_turn_end")

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        self._misbehave("on_session_end")

    def on_session_switch(
        self,
        new_session_id: str,
        *,
        parent_session_id: str = "",
        reset: bool = False,
        rewound: bool = False,
        **kwargs: Any,
    ) -> None:
        self._misbehave("on_session_switch")

    def on_pre_compress(self, messages: list[dict[str, Any]]) -> str:
        return self._misbehave("on_pre_compress", "")  # type: ignore[no-any-return]

    def on_delegation(
        self, task: str, result: str, *, child_session_id: str = "", **kwargs: Any
    ) -> None:
        self._misbehave("on_delegation")

    def on_memory_write(
        self, action: str, target: str, content: str, metadata: dict[str, Any] | None = None
    ) -> None:
        self._misbehave("on_memory_write")


def build_session(
    home: Path,
    server: FakeOpenAIServer,
    *externals: MemoryProvider,
    settings: RuntimeSettings | None = None,
    compression: CompressionSettings | None = None,
    title: str | None = None,
    drain_timeout: float = 5.0,
    prefetch_timeout: float = 8.0,
) -> AgentSession:
    """An AgentSession with the real builtin provider, *externals*, state.db and the server."""
    manager = MemoryManager(external_prefetch_timeout=prefetch_timeout, drain_timeout=drain_timeout)
    manager.add_provider(load_builtin_provider())
    for provider in externals:
        manager.add_provider(provider)
    store = SessionStore(home / "state.db")
    client = ChatClient(server.base_url, server.model, max_retries=1, timeout=10.0)
    return AgentSession(
        manager,
        store,
        client,
        hermes_home=home,
        settings=settings or RuntimeSettings(),
        compression=compression,
        title=title,
    )


def system_prompts(server: FakeOpenAIServer) -> list[str]:
    """The system message of every chat request the server received."""
    return [r.messages[0]["content"] for r in server.chat_requests]
