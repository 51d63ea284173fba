"""The host API for asyncio: :class:`AsyncMemory`, the twin of :class:`~.host.Memory`.

Providers and ``state.db`` are synchronous, so every call that reaches them
runs on the session's own worker thread and the event loop only awaits it:
a slow or hung provider (bounded by the hook timeouts) never stalls other
tasks. One worker per session keeps a session's calls in order::

    async with await AsyncMemory.open(user_id="alice") as memory:
        api = await memory.prepare(messages)
        ...
        await memory.record_turn(user_text, answer)
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from hermes_core.fencing import StreamingContextScrubber, scrub_context_spans
from hermes_core.runtime.host import Memory, Recall

__all__ = ["AsyncMemory"]

_T = TypeVar("_T")


class AsyncMemory:
    """One memory session for an asyncio agent loop; the methods of :class:`Memory`, awaited.

    Build it with ``await AsyncMemory.open(...)`` (same arguments as
    :meth:`Memory.open`) or wrap a :class:`Memory` you built; ``async with``
    closes it.
    """

    def __init__(self, memory: Memory, *, executor: ThreadPoolExecutor | None = None) -> None:
        self.memory = memory
        """The synchronous session underneath (use it only from the worker, via :meth:`run`)."""
        self._executor = executor or ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="hermes-memory-async"
        )

    @classmethod
    async def open(cls, hermes_home: str | Path | None = None, **options: Any) -> AsyncMemory:
        """:meth:`Memory.open` on a worker thread; the loop keeps running meanwhile."""
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hermes-memory-async")
        loop = asyncio.get_running_loop()
        try:
            memory = await loop.run_in_executor(
                executor, functools.partial(Memory.open, hermes_home, **options)
            )
        except BaseException:
            executor.shutdown(wait=False)
            raise
        return cls(memory, executor=executor)

    async def __aenter__(self) -> AsyncMemory:
        await self.run(self.memory.start)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def run(self, fn: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
        """Await ``fn(*args, **kwargs)`` on this session's worker thread."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, functools.partial(fn, *args, **kwargs))

    # -- views (no I/O: the session is started by open() or ``async with``) -------------
    @property
    def session_id(self) -> str:
        """The session's id in ``state.db``."""
        return self.memory.session_id

    def system_prompt(self) -> str:
        """The frozen memory block (see :meth:`Memory.system_prompt`)."""
        return self.memory.system_prompt()

    def tool_schemas(self) -> list[dict[str, Any]]:
        """The memory tools as providers declare them."""
        return self.memory.tool_schemas()

    def tools(self) -> list[dict[str, Any]]:
        """The memory tools as OpenAI ``tools`` entries."""
        return self.memory.tools()

    # -- a turn ------------------------------------------------------------------------
    async def prepare(self, messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """:meth:`Memory.prepare`: the API copy with recall fenced into the last user message."""
        return await self.run(self.memory.prepare, list(messages))

    async def call_tool(
        self, name: str, arguments: str | Mapping[str, Any] | None = None, *, call_id: str = ""
    ) -> str:
        """:meth:`Memory.call_tool`: the tool's JSON result text."""
        return await self.run(self.memory.call_tool, name, arguments, call_id=call_id)

    async def begin_turn(self, user_message: str, **turn_info: Any) -> Recall:
        """:meth:`Memory.begin_turn`: ``on_turn_start``, then recall for *user_message*."""
        return await self.run(self.memory.begin_turn, user_message, **turn_info)

    async def note_tool_result(self, name: str, result: Any, *, next_turn: bool = False) -> None:
        """:meth:`Memory.note_tool_result`: a tool result of this turn, as untrusted text."""
        await self.run(self.memory.note_tool_result, name, result, next_turn=next_turn)

    async def record(self, messages: Iterable[Mapping[str, Any]]) -> None:
        """:meth:`Memory.record`: store a finished turn, end it, then sync it (background)."""
        await self.run(self.memory.record, list(messages))

    async def record_turn(
        self, user: str, assistant: str, *, tool_calls: Sequence[Mapping[str, Any]] = ()
    ) -> None:
        """:meth:`Memory.record_turn`: store one exchange given as text."""
        await self.run(self.memory.record_turn, user, assistant, tool_calls=list(tool_calls))

    @staticmethod
    def scrub(text: str) -> str:
        """*text* without ``<memory-context>`` spans a model echoed back."""
        return scrub_context_spans(text)

    @staticmethod
    def scrubber() -> StreamingContextScrubber:
        """A scrubber for streamed output (``feed`` / ``flush``); pure computation."""
        return StreamingContextScrubber()

    async def close(self, end_reason: str = "user_exit") -> None:
        """:meth:`Memory.close` (``on_session_end``, bounded ``shutdown_all``), then the worker."""
        if self.memory.closed:
            return
        try:
            await self.run(self.memory.close, end_reason)
        finally:
            self._executor.shutdown(wait=False)
