"""mem0's own engine (``mem0.Memory``), in-process and fully offline.

The vector store is qdrant's embedded mode (a directory under ``HERMES_HOME``,
no server), the history is SQLite beside it, the embedder is ours (MiniLM or
hashing), and telemetry is off. Without a configured model every write is
stored verbatim (``infer=False``); with one, mem0 extracts facts through it, and
the turn is stored verbatim when extraction fails (the model call fails, or its
answer is not the JSON mem0 needs), so nothing is lost. An answer that validly
lists no facts stores nothing.

qdrant's embedded mode locks its directory, so one ``QdrantClient`` per
directory is shared by every backend in the process (one collection per
embedder, named after it and its dimensions), and calls are serialised.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import uuid
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes_core.llm import ChatClient
from hermes_memory_mem0.backend import AddResult, MemoryHit, parse_hits
from hermes_memory_mem0.embedders import MINILM_DIMS
from hermes_memory_mem0.errors import (
    Mem0BackendError,
    Mem0ClientError,
    Mem0NotFoundError,
    UnusableExtractionError,
)
from hermes_memory_mem0.sdk import import_mem0
from hermes_memory_mem0.settings import Mem0Settings

__all__ = ["LocalBackend", "hold_mem0_logs"]

logger = logging.getLogger(__name__)

_MEM0_ENGINE_LOGGER = "mem0.memory.main"
"""The logger of mem0's ``Memory``: it logs a failed extraction (ERROR) before raising."""


class _HoldRecords(logging.Filter):
    """Keeps back the records of threads inside :func:`hold_mem0_logs`; others pass."""

    def __init__(self) -> None:
        super().__init__()
        self._local = threading.local()

    def filter(self, record: logging.LogRecord) -> bool:
        held: list[logging.LogRecord] | None = getattr(self._local, "records", None)
        if held is None:
            return True
        held.append(record)
        return False

    @contextmanager
    def hold(self) -> Iterator[list[logging.LogRecord]]:
        previous = getattr(self._local, "records", None)
        held: list[logging.LogRecord] = []
        self._local.records = held
        try:
            yield held
        finally:
            self._local.records = previous


_hold_records = _HoldRecords()


@contextmanager
def hold_mem0_logs() -> Iterator[list[logging.LogRecord]]:
    """Collect, instead of emitting, what mem0's engine logs on this thread inside the block.

    mem0 logs a failed extraction at ERROR on its own logger before we can handle it;
    in a chat that line lands in the middle of the conversation. A filter on that
    logger (not the handlers, not a level: mem0's other failures and other threads
    are untouched) keeps this thread's records back; the caller then logs them as
    they were (:func:`_release`) or, having handled the failure, at debug level.
    """
    mem0_logger = logging.getLogger(_MEM0_ENGINE_LOGGER)
    mem0_logger.addFilter(_hold_records)  # once: addFilter ignores a filter it has
    with _hold_records.hold() as held:
        yield held


def _release(records: Sequence[logging.LogRecord]) -> None:
    """Log held records as mem0 logged them (the hold has ended, so they pass)."""
    for record in records:
        logging.getLogger(record.name).handle(record)


@dataclass
class _SharedStore:
    client: Any
    lock: threading.RLock
    users: int = 0


_stores: dict[Path, _SharedStore] = {}
_stores_lock = threading.Lock()


def _acquire_store(path: Path) -> _SharedStore:
    with _stores_lock:
        store = _stores.get(path)
        if store is None:
            from qdrant_client import QdrantClient

            path.mkdir(parents=True, exist_ok=True)
            try:
                client = QdrantClient(path=str(path))
            except Exception as exc:  # e.g. the directory is locked by another process
                raise Mem0BackendError(
                    f"Cannot open the local mem0 store at {path}: {exc}. Another process may "
                    "be using it; local mode serves one process per HERMES_HOME."
                ) from exc
            store = _SharedStore(client=client, lock=threading.RLock())
            _stores[path] = store
        store.users += 1
        return store


def _release_store(path: Path) -> None:
    with _stores_lock:
        store = _stores.get(path)
        if store is None:
            return
        store.users -= 1
        if store.users <= 0:
            del _stores[path]
            with store.lock:
                store.client.close()


class LocalBackend:
    """mem0's local ``Memory`` engine with an embedded vector store under *data_dir*."""

    mode = "local"

    def __init__(
        self,
        settings: Mem0Settings,
        *,
        data_dir: str | Path,
        chat_client: ChatClient | None = None,
    ) -> None:
        self._settings = settings
        self._data_dir = Path(data_dir)
        self._chat_client = chat_client
        self._lock = threading.Lock()
        self._memory: Any = None
        self._store: _SharedStore | None = None
        self._warned: set[str] = set()
        local = settings.local
        self.dims = MINILM_DIMS if local.embedder == "minilm" else local.hash_dims
        self.collection = f"hermes_{local.embedder}_{self.dims}"

    @property
    def infers(self) -> bool:
        """Whether turn writes go through the model (``infer=True``)."""
        return self._chat_client is not None and self._settings.sync_infer

    def open(self) -> None:
        self._engine()

    def search(
        self,
        query: str,
        *,
        user_id: str,
        top_k: int,
        rerank: bool = False,
        threshold: float | None = None,
    ) -> list[MemoryHit]:
        options: dict[str, Any] = {"filters": {"user_id": user_id}, "top_k": top_k}
        if threshold is not None:
            options["threshold"] = threshold
        data = self._run(lambda memory: memory.search(query, **options))
        return parse_hits(data) or []

    def add(
        self,
        messages: Sequence[Mapping[str, str]],
        *,
        user_id: str,
        agent_id: str,
        infer: bool,
        metadata: Mapping[str, Any],
    ) -> AddResult:
        payload = [dict(message) for message in messages]
        options = {"user_id": user_id, "agent_id": agent_id, "metadata": dict(metadata)}
        if infer and self.infers:
            extracted = self._add_extracted(payload, options)
            if extracted is not None:
                return extracted
        # Verbatim: the duplicate check and the insert are one engine operation, so two
        # writers (the background writer and a tool call) cannot both store the same text.
        return AddResult(memory_ids=self._run(lambda memory: _add_new(memory, payload, options)))

    def _add_extracted(
        self, payload: list[dict[str, str]], options: Mapping[str, Any]
    ) -> AddResult | None:
        """mem0's fact extraction; None when it failed and the turn is to be stored verbatim.

        The signal is an exception: the model adapter raises on an answer mem0 could
        not use (mem0 itself would log it and store nothing), and mem0 re-raises a
        failed model call. mem0's log lines about it are held (this thread, this
        call) and shown at debug level: our one warning replaces them.
        """

        def extract(memory: Any) -> Any:
            with memory.llm.extracting():
                return memory.add(payload, infer=True, **options)

        self._engine()  # an engine that cannot start is not an extraction failure: raise it
        failure: Mem0BackendError | None = None
        ids: tuple[str, ...] = ()
        with hold_mem0_logs() as held:
            try:
                ids = _result_ids(self._run(extract))
            except Mem0BackendError as exc:
                failure = exc
        mem0_error = any(record.levelno >= logging.ERROR for record in held)
        if failure is None and (ids or not mem0_error):
            # Facts stored, or validly none (an empty "memory" list, or only known facts).
            _release(held)
            return AddResult(memory_ids=ids)
        for record in held:
            logger.debug("mem0 logged: %s %s", record.levelname, record.getMessage())
        unusable = _cause(failure, UnusableExtractionError)
        if unusable is not None:
            kind, reason = "answer", f"the model's answer is unusable: {unusable}"
        elif failure is not None:
            kind, reason = "call", str(failure)
        else:
            # mem0 swallowed a failure (logged an ERROR, stored nothing), as 2.2 does with
            # an answer it cannot parse; the adapter's check should keep this from happening.
            kind, reason = "answer", "mem0 stored nothing and logged an error"
        with self._lock:
            first = kind not in self._warned
            self._warned.add(kind)
        if first:
            logger.warning(
                "mem0 fact extraction failed (%s); the turn is stored verbatim. "
                "Further failures like this are logged at debug level.",
                reason,
            )
        else:
            logger.debug("mem0 fact extraction failed (%s); storing the turn verbatim", reason)
        return None

    def update(self, memory_id: str, text: str, *, user_id: str) -> None:
        self._check_owner(memory_id, user_id)
        self._run(lambda memory: memory.update(memory_id, text=text))

    def delete(self, memory_id: str, *, user_id: str) -> None:
        self._check_owner(memory_id, user_id)
        self._run(lambda memory: memory.delete(memory_id))

    def close(self) -> None:
        with self._lock:
            memory, self._memory = self._memory, None
            store, self._store = self._store, None
        if memory is not None:
            memory.close()
        if store is not None:
            _release_store(self._qdrant_path)

    @property
    def _qdrant_path(self) -> Path:
        return (self._data_dir / "qdrant").resolve()

    def _check_owner(self, memory_id: str, user_id: str) -> None:
        try:
            uuid.UUID(str(memory_id))
        except ValueError:
            raise Mem0NotFoundError(f"Memory not found: {memory_id}") from None
        found = self._run(lambda memory: memory.get(memory_id))
        if not isinstance(found, Mapping) or found.get("user_id") != user_id:
            raise Mem0NotFoundError(f"Memory not found: {memory_id}")

    def _run(self, operation: Any) -> Any:
        memory, store = self._engine()
        with store.lock:
            try:
                return operation(memory)
            except ValueError as exc:
                if "not found" in str(exc).lower():
                    raise Mem0NotFoundError(str(exc)) from exc
                raise Mem0ClientError(str(exc)) from exc
            except Exception as exc:
                raise Mem0BackendError(
                    f"mem0 local engine failed: {type(exc).__name__}: {exc}"
                ) from exc

    def _engine(self) -> tuple[Any, _SharedStore]:
        with self._lock:
            if self._memory is not None and self._store is not None:
                return self._memory, self._store
            try:
                self._memory, self._store = self._build()
            except Mem0BackendError:
                raise
            except Exception as exc:
                raise Mem0BackendError(
                    f"Cannot start mem0's local engine: {type(exc).__name__}: {exc}"
                ) from exc
            return self._memory, self._store

    def _build(self) -> tuple[Any, _SharedStore]:
        import_mem0(self._data_dir)
        from mem0 import Memory
        from mem0.configs.base import MemoryConfig
        from mem0.embeddings.configs import EmbedderConfig
        from mem0.llms.configs import LlmConfig
        from mem0.vector_stores.configs import VectorStoreConfig

        from hermes_memory_mem0 import mem0_adapters

        mem0_adapters.register_adapters()
        local = self._settings.local
        if local.embedder == "minilm":
            embedder = {
                "provider": mem0_adapters.MINILM_EMBEDDER,
                "config": {"model": str(local.model_path) if local.model_path else None},
            }
        else:
            embedder = {
                "provider": mem0_adapters.HASH_EMBEDDER,
                "config": {"embedding_dims": self.dims},
            }
        store = _acquire_store(self._qdrant_path)
        try:
            config = MemoryConfig(
                vector_store=VectorStoreConfig(
                    provider="qdrant",
                    config={
                        "client": store.client,
                        "path": str(self._qdrant_path),
                        "collection_name": self.collection,
                        "embedding_model_dims": self.dims,
                        "on_disk": True,
                    },
                ),
                # Our names are registered with mem0's factories but not in its config
                # whitelists, so these two are built without that validation.
                embedder=EmbedderConfig.model_construct(**embedder),
                llm=LlmConfig.model_construct(provider=mem0_adapters.DISABLED_LLM, config={}),
                history_db_path=str(self._data_dir / "history.db"),
            )
            with store.lock, warnings.catch_warnings():
                # The shared embedded client ignores payload indexes; qdrant warns about it.
                warnings.filterwarnings("ignore", message="Payload indexes have no effect")
                memory = Memory(config)
        except BaseException:
            _release_store(self._qdrant_path)
            raise
        # Keyword (BM25) scoring would need fastembed, which downloads its model from the
        # Hugging Face hub on first use: keep it off (mem0's "tried, unavailable" marker).
        memory.vector_store._bm25_encoder = False
        if self._chat_client is not None:
            memory.llm = mem0_adapters.ChatClientLLM(self._chat_client)
        return memory, store


def _cause(exc: BaseException | None, kind: type[BaseException]) -> BaseException | None:
    """The first exception of type *kind* in *exc*'s chain of causes, if any."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, kind):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def _result_ids(data: Any) -> tuple[str, ...]:
    results = data.get("results") if isinstance(data, Mapping) else None
    return tuple(
        str(item["id"])
        for item in results or []
        if isinstance(item, Mapping) and item.get("id") is not None
    )


def _add_new(
    memory: Any, payload: list[dict[str, str]], options: Mapping[str, Any]
) -> tuple[str, ...]:
    """Store the messages whose text this user has not stored yet; ids of all of them."""
    texts: list[str] = []
    fresh: list[dict[str, str]] = []
    for message in payload:
        text = message.get("content") or ""
        if message.get("role") != "system" and text and text not in texts:
            texts.append(text)
            fresh.append(message)
    stored = _stored_ids(memory, str(options["user_id"]), texts)
    fresh = [message for message in fresh if message["content"] not in stored]
    ids = [stored[text] for text in texts if text in stored]
    if fresh:
        ids.extend(_result_ids(memory.add(fresh, infer=False, **options)))
    return tuple(ids)


def _stored_ids(memory: Any, user_id: str, texts: list[str]) -> dict[str, str]:
    """Ids of *user_id*'s memories holding exactly one of *texts* (mem0 keys payloads by md5)."""
    if not texts:
        return {}
    digests = [hashlib.md5(text.encode(), usedforsecurity=False).hexdigest() for text in texts]
    found = memory.get_all(
        filters={"user_id": user_id, "hash": {"in": digests}}, top_k=max(20, 4 * len(texts))
    )
    stored: dict[str, str] = {}
    for item in found.get("results", []) if isinstance(found, Mapping) else []:
        if isinstance(item, Mapping) and item.get("memory") in texts:
            stored.setdefault(str(item["memory"]), str(item["id"]))
    return stored
