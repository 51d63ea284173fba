"""Background recall: searches run off the turn path and their results wait in a cache."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass

from hermes_core.workers import BackgroundWorker
from hermes_memory_mem0.backend import MemoryHit

__all__ = ["Recall", "RecallCache"]


@dataclass(frozen=True)
class Recall:
    """The memories found for one query."""

    query: str
    hits: tuple[MemoryHit, ...]


class RecallCache:
    """Start searches on a worker and hand back finished results without waiting.

    Results are keyed by the whitespace-normalised, case-folded query. A write
    calls :meth:`invalidate`: results of searches started before it are no
    longer served for their query, which is searched again. The most recent
    finished result is kept apart (whatever its age) so a turn can be served
    instantly while the search for its own message is still running.
    """

    def __init__(
        self,
        worker: BackgroundWorker,
        search: Callable[[str], list[MemoryHit]],
        *,
        capacity: int = 32,
    ) -> None:
        self._worker = worker
        self._search = search
        self._capacity = capacity
        self._lock = threading.Lock()
        self._entries: OrderedDict[str, tuple[int, Future[Recall]]] = OrderedDict()
        self._generation = 0
        self._latest: Recall | None = None

    def start(self, query: str) -> Future[Recall] | None:
        """Search for *query* in the background unless that search is pending or done."""
        key = _key(query)
        with self._lock:
            future = self._current(key)
            if future is not None and not (future.done() and future.exception() is not None):
                self._entries.move_to_end(key)
                return future
            try:
                future = self._worker.submit("recall", lambda: self._run(query))
            except RuntimeError:  # the backlog is full or the worker stopped
                return None
            self._entries[key] = (self._generation, future)
            while len(self._entries) > self._capacity:
                self._entries.popitem(last=False)
        return future

    def ready(self, query: str) -> Recall | None:
        """The finished, current result for *query*; ``None`` if pending, failed, stale or new."""
        with self._lock:
            future = self._current(_key(query))
        if future is None or not future.done() or future.exception() is not None:
            return None
        return future.result()

    def invalidate(self) -> None:
        """Memory changed: searches started before now are not served for their query again."""
        with self._lock:
            self._generation += 1

    def _current(self, key: str) -> Future[Recall] | None:
        entry = self._entries.get(key)
        if entry is None or entry[0] != self._generation:
            return None
        return entry[1]

    def wait(self, query: str, timeout: float) -> Recall | None:
        """Start (if needed) and wait up to *timeout* seconds for *query*'s result."""
        future = self.start(query)
        if future is None:
            return None
        try:
            return future.result(timeout=timeout)
        except (FutureTimeout, Exception):
            return None

    def latest(self) -> Recall | None:
        """The most recently finished successful search."""
        with self._lock:
            return self._latest

    def clear(self) -> None:
        """Forget every result (pending searches still run, but are not served)."""
        with self._lock:
            self._entries.clear()
            self._latest = None

    def _run(self, query: str) -> Recall:
        recall = Recall(query=query, hits=tuple(self._search(query)))
        with self._lock:
            if _key(query) in self._entries:  # not cleared meanwhile
                self._latest = recall
        return recall


def _key(query: str) -> str:
    return " ".join(query.split()).casefold()
