"""``agent.async_utils``: handing a coroutine to an event loop that runs on another thread.

``asyncio.run_coroutine_threadsafe`` raises when the loop is gone (closed during
shutdown), and the coroutine it was given is then never awaited: Python warns
"coroutine ... was never awaited". Plugins that keep their own loop on a
background thread (an async SDK driven from synchronous hooks) schedule through
:func:`safe_schedule_threadsafe`, which closes the coroutine instead and returns
``None``, as in Hermes Agent.
"""

import asyncio
import concurrent.futures
import contextlib
import logging
from collections.abc import Coroutine
from typing import Any, NoReturn

from hermes_core.hermes_compat.finder import missing_attribute

__hermes_compat__ = True

__all__ = ["consume_detached_task_result", "safe_schedule_threadsafe"]

_logger = logging.getLogger("hermes_core.hermes_compat")


def safe_schedule_threadsafe(
    coro: Coroutine[Any, Any, Any],
    loop: asyncio.AbstractEventLoop | None,
    *,
    logger: logging.Logger | None = None,
    log_message: str = "Failed to schedule coroutine on loop",
    log_level: int = logging.DEBUG,
) -> "concurrent.futures.Future[Any] | None":
    """Schedule *coro* on *loop* from any thread; ``None`` (and *coro* closed) when it cannot run.

    A missing loop or a scheduling error is logged at *log_level* on *logger*.
    Once scheduled, the returned future is the caller's: its result or error is
    not handled here.
    """
    try:
        if loop is None:
            raise RuntimeError("no event loop")
        return asyncio.run_coroutine_threadsafe(coro, loop)
    except Exception as exc:
        if asyncio.iscoroutine(coro):
            coro.close()
        (logger or _logger).log(log_level, "%s: %s", log_message, exc)
        return None


def consume_detached_task_result(task: "asyncio.Future[Any]") -> None:
    """A done-callback for a task nobody awaits: read its outcome so asyncio logs nothing."""
    with contextlib.suppress(asyncio.CancelledError, Exception):
        task.exception()


def __getattr__(name: str) -> NoReturn:
    raise missing_attribute(__name__, name, __all__)
