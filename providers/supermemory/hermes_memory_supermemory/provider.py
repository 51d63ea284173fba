"""The Supermemory memory provider.

Recall runs on a background thread: ``queue_prefetch`` after a turn starts the
search for the next one, and ``prefetch`` serves what is ready (waiting at most
``prefetch_wait`` seconds when nothing is). Writes (captured turns, mirrored
builtin memory, session-end gaps) go through one ordered background writer;
while the service is unreachable they wait in a bounded backlog and are sent
once it answers again. No hook raises into the turn.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.metadata
import importlib.util
import json
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_core.config import get_hermes_home
from hermes_core.errors import ConfigError
from hermes_core.fencing import clean_text, sanitize_context
from hermes_core.provider import MemoryProvider, RecallStatus, is_trivial_prompt
from hermes_core.resilience import CircuitBreaker
from hermes_core.workers import BackgroundWorker
from hermes_memory_supermemory.errors import ServiceError, ToolArgumentError
from hermes_memory_supermemory.records import Metadata, Profile, Recall
from hermes_memory_supermemory.render import render_recall
from hermes_memory_supermemory.settings import (
    API_KEY_ENV,
    Settings,
    config_schema,
    load_settings,
    write_settings,
)
from hermes_memory_supermemory.tools import TOOL_SCHEMAS, Tools
from hermes_memory_supermemory.turns import (
    Turn,
    memory_document_id,
    turn_document_id,
    turns_from_messages,
)

if TYPE_CHECKING:
    import httpx

    from hermes_memory_supermemory.service import SupermemoryService

log = logging.getLogger(__name__)

LABEL = "Supermemory"
WRITING_CONTEXTS = frozenset({"primary"})
SHUTDOWN_DRAIN_SECONDS = 5.0
SESSION_END_DRAIN_SECONDS = 10.0


@dataclass(frozen=True)
class _Write:
    """One write for the background writer: add a document or delete some."""

    what: str
    doc_id: str
    content: str = ""
    metadata: Metadata = field(default_factory=dict)
    delete: bool = False


@dataclass
class _PendingRecall:
    future: Future[Recall]
    query: str


class SupermemoryProvider(MemoryProvider):
    """Long-term memory in a Supermemory account, over the supermemory 5.x SDK.

    The keyword arguments are seams for tests and benchmarks: *clock* drives the
    circuit breaker, *http_client* replaces the HTTP connection (for example an
    ``httpx.MockTransport``), *sleep* replaces retry backoff sleeps, *env*
    replaces ``os.environ`` when reading settings.
    """

    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.monotonic,
        http_client: httpx.Client | None = None,
        sleep: Callable[[float], None] = time.sleep,
        env: dict[str, str] | None = None,
    ) -> None:
        self._clock = clock
        self._http_client = http_client
        self._sleep = sleep
        self._env = env
        self._lock = threading.RLock()
        self._reset_state()

    def _reset_state(self) -> None:
        self.settings: Settings | None = None
        self.namespace = ""
        self.service: SupermemoryService | None = None
        self.breaker: CircuitBreaker | None = None
        self._tools: Tools | None = None
        self._session_id = ""
        self._writes_enabled = False
        self._recall_worker: BackgroundWorker | None = None
        self._write_worker: BackgroundWorker | None = None
        self._pending: _PendingRecall | None = None
        self._served = 0
        self._profile: Profile | None = None
        self._profile_fresh = False
        self._status: RecallStatus | None = None
        self._captured: set[str] = set()
        self._backlog: deque[_Write] = deque()
        self._dropped_writes = 0
        self._degraded = False

    # ------------------------------------------------------------ availability

    @property
    def name(self) -> str:
        return "supermemory"

    @property
    def active(self) -> bool:
        """Whether ``initialize`` succeeded and the service client exists."""
        return self.service is not None

    def _check(self, hermes_home: str | Path | None = None) -> tuple[Settings | None, str]:
        """Settings and "" when usable; else None and what the user must do."""
        if importlib.util.find_spec("supermemory") is None:
            return None, (
                "The supermemory SDK is not installed: pip install 'supermemory>=5,<6' "
                "(it comes with hermes-memory-supermemory)."
            )
        version = _sdk_version()
        if not version.startswith("5."):
            return None, (
                f"supermemory {version} is installed but this provider speaks the 5.x API: "
                "pip install 'supermemory>=5,<6'."
            )
        home = Path(hermes_home) if hermes_home is not None else get_hermes_home()
        try:
            settings = load_settings(home, self._env)
        except ConfigError as exc:
            return None, f"Invalid Supermemory configuration: {exc}"
        if not settings.api_key:
            return None, (
                f"No Supermemory API key: set {API_KEY_ENV} in the environment or in "
                f"{home / '.env'}."
            )
        return settings, ""

    def is_available(self) -> bool:
        """True when the SDK 5.x is importable, settings are valid and an API key is set."""
        return self._check()[0] is not None

    def unavailable_reason(self) -> str:
        return self._check()[1]

    # ------------------------------------------------------------ lifecycle

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        self._start(session_id, kwargs, inspection=False)

    def initialize_for_inspection(self, session_id: str, **kwargs: Any) -> None:
        """Read-only start: no writes and no background warm-up."""
        self._start(session_id, kwargs, inspection=True)

    def _start(self, session_id: str, kwargs: dict[str, Any], *, inspection: bool) -> None:
        if self.active:
            self.shutdown()
        settings, reason = self._check(kwargs.get("hermes_home"))
        if settings is None:
            log.warning("Supermemory provider inactive: %s", reason)
            return
        from hermes_memory_supermemory.service import SupermemoryService

        context = str(kwargs.get("agent_context") or "primary")
        with self._lock:
            self.settings = settings
            self.namespace = settings.resolve_namespace(
                identity=str(kwargs.get("agent_identity") or ""),
                user_id=str(kwargs.get("user_id") or ""),
            )
            self.breaker = CircuitBreaker(
                LABEL,
                threshold=settings.breaker_threshold,
                cooldown=settings.breaker_cooldown,
                clock=self._clock,
            )
            self.service = SupermemoryService(
                settings, breaker=self.breaker, http_client=self._http_client, sleep=self._sleep
            )
            self._session_id = session_id
            self._writes_enabled = context in WRITING_CONTEXTS and not inspection
            self._tools = Tools(
                self.service,
                self.namespace,
                writes_enabled=self._writes_enabled,
                session_id=lambda: self._session_id,
            )
            self._recall_worker = BackgroundWorker("supermemory-recall", log_errors=False)
            self._write_worker = BackgroundWorker("supermemory-write", log_errors=False)
        if settings.auto_recall and not inspection:
            self._recall_worker.submit("profile", self._warm_profile)

    def shutdown(self) -> None:
        """Send queued writes (bounded wait), then stop the workers and close the client."""
        if not self.active:
            return
        self.flush(SHUTDOWN_DRAIN_SECONDS)
        with self._lock:
            workers = (self._recall_worker, self._write_worker)
            service = self.service
            lost = len(self._backlog) + self._dropped_writes
        for worker in workers:
            if worker is not None:
                worker.drain(0.0)  # cancel what is still queued; a running call ends on its own
                worker.stop()
        if lost:
            log.warning("Supermemory: %d write(s) could not be delivered before shutdown", lost)
        if service is not None:
            service.close()
        with self._lock:
            self._reset_state()

    def flush(self, timeout: float = SESSION_END_DRAIN_SECONDS) -> bool:
        """Wait up to *timeout* seconds for queued writes (and the backlog) to be sent.

        True when nothing is left to send.
        """
        worker = self._write_worker
        if worker is None:
            return True
        try:
            marker = worker.submit("flush", self._drain_backlog)
        except RuntimeError:  # already shut down
            return False
        try:
            marker.result(timeout=timeout)
        except FutureTimeout:
            return False
        return not self._backlog

    # ------------------------------------------------------------ prompt and recall

    def system_prompt_block(self) -> str:
        if not self.active:
            return ""
        lines = [
            "# Supermemory",
            f"Long-term memory is active (namespace `{self.namespace}`). Memories relevant to "
            "the user's message are recalled automatically each turn.",
            "Tools: supermemory_search (look something up), supermemory_store (save a durable "
            "fact), supermemory_forget (drop a wrong or outdated memory), supermemory_profile "
            "(read the user's profile).",
        ]
        if not self._writes_enabled:
            lines.append("This agent reads Supermemory only; it does not store or forget.")
        return "\n".join(lines)

    def _profile_due(self, turn_index: int) -> bool:
        assert self.settings is not None
        return turn_index % self.settings.profile_frequency == 0

    def _submit_recall(self, query: str, turn_index: int) -> _PendingRecall | None:
        worker = self._recall_worker
        if worker is None:
            return None
        due = self._profile_due(turn_index)
        try:
            future = worker.submit("recall", lambda: self._recall(query, due))
        except RuntimeError:
            return None
        return _PendingRecall(future, query)

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        """Recall for this turn: the background result if ready, else wait ``prefetch_wait``."""
        self._status = None
        settings = self.settings
        if settings is None or not settings.auto_recall or is_trivial_prompt(query):
            return ""
        try:
            with self._lock:
                turn_index = self._served
                self._served += 1
                pending, self._pending = self._pending, None
                if pending is None:
                    pending = self._submit_recall(query, turn_index)
            if pending is None:
                return ""
            try:
                recall = pending.future.result(timeout=settings.prefetch_wait)
            except FutureTimeout:
                with self._lock:
                    if self._pending is None:  # keep the late result for the next turn
                        self._pending = pending
                return ""
            text, count = render_recall(recall, limit=settings.max_recall_results)
        except Exception as exc:  # a provider bug must not fail the turn
            log.warning("Supermemory prefetch failed: %s", exc)
            return ""
        if text:
            self._status = RecallStatus(LABEL, count)
        return text

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        """Start recall for the next turn in the background (one in flight at a time)."""
        settings = self.settings
        if settings is None or not settings.auto_recall or is_trivial_prompt(query):
            return
        with self._lock:
            if self._pending is not None and not self._pending.future.done():
                return
            self._pending = self._submit_recall(query, self._served)

    def recall_status(self) -> RecallStatus | None:
        return self._status

    def _fetch_profile(self) -> Profile | None:
        try:
            profile: Profile = self._call(lambda service: service.profile(self.namespace))
        except ServiceError:
            return None
        with self._lock:
            self._profile = profile
        return profile

    def _warm_profile(self) -> None:
        """Fetch the profile at session start so the first turn's recall has it ready."""
        if self._fetch_profile() is not None:
            with self._lock:
                self._profile_fresh = True

    def _recall(self, query: str, with_profile: bool) -> Recall:
        """Search (and, when due, fetch the profile in parallel); failures give empty parts."""
        assert self.settings is not None
        settings = self.settings
        profile_thread: threading.Thread | None = None
        fetched: list[Profile | None] = []
        with self._lock:
            profile = self._profile if with_profile and self._profile_fresh else None
            self._profile_fresh = False
        if with_profile and profile is None:
            profile_thread = threading.Thread(
                target=lambda: fetched.append(self._fetch_profile()),
                name="supermemory-profile",
                daemon=True,
            )
            profile_thread.start()
        try:
            limit = settings.max_recall_results
            memories = tuple(self._call(lambda s: s.search(self.namespace, query, limit=limit)))
        except ServiceError:
            memories = ()
        if profile_thread is not None:
            profile_thread.join(settings.api_timeout * (settings.max_retries + 1) + 5.0)
            profile = (fetched[0] if fetched else None) or self._profile  # older beats none
        return Recall(memories, profile)

    def _call(self, fn: Callable[[SupermemoryService], Any]) -> Any:
        """Run *fn* with the service, logging the first failure of a streak at WARNING."""
        service = self.service
        if service is None:
            raise ServiceError("Supermemory is not initialized.", retryable=False)
        try:
            result = fn(service)
        except ServiceError as exc:
            if self._degraded:
                log.debug("%s", exc)
            else:
                self._degraded = True
                log.warning("%s (continuing without Supermemory until it answers)", exc)
            raise
        if self._degraded:
            self._degraded = False
            log.info("Supermemory answers again")
        return result

    # ------------------------------------------------------------ writes

    def _submit_write(self, write: _Write) -> None:
        worker = self._write_worker
        if worker is None:
            return
        try:
            worker.submit("write", lambda: self._run_write(write))
        except RuntimeError:
            log.debug("Supermemory writer stopped; %s dropped", write.what)

    def _send(self, write: _Write) -> None:
        if write.delete:
            self._call(lambda s: s.delete_documents(self.namespace, [write.doc_id]))
        else:
            self._call(
                lambda s: s.add_document(
                    self.namespace, write.content, doc_id=write.doc_id, metadata=write.metadata
                )
            )

    def _run_write(self, write: _Write) -> None:
        """Writer thread: replay the backlog, then send *write* (or park it in the backlog)."""
        if not self._drain_backlog():
            self._park(write)
            return
        try:
            self._send(write)
        except ServiceError as exc:
            if exc.retryable:
                self._park(write)
            else:
                log.warning("Supermemory dropped %s: %s", write.what, exc)

    def _park(self, write: _Write) -> None:
        assert self.settings is not None
        with self._lock:
            if self.settings.write_backlog == 0:
                self._dropped_writes += 1
                return
            if len(self._backlog) >= self.settings.write_backlog:
                self._backlog.popleft()
                self._dropped_writes += 1
            self._backlog.append(write)

    def _drain_backlog(self) -> bool:
        """Writer thread: send parked writes in order; False if the service still fails."""
        while True:
            with self._lock:
                if not self._backlog:
                    return True
                write = self._backlog[0]
            try:
                self._send(write)
            except ServiceError as exc:
                if exc.retryable:
                    return False
                log.warning("Supermemory dropped %s: %s", write.what, exc)
            with self._lock:
                if self._backlog and self._backlog[0] is write:
                    self._backlog.popleft()

    @property
    def backlog_size(self) -> int:
        """Writes waiting for the service to answer again."""
        return len(self._backlog)

    def _capture(self, turn: Turn, session_id: str) -> None:
        turn = turn.cleaned()
        if not turn.worth_capturing():
            return
        doc_id = turn_document_id(session_id, turn)
        with self._lock:
            if doc_id in self._captured:
                return
            self._captured.add(doc_id)
        metadata: Metadata = {"source": "hermes", "type": "conversation_turn"}
        if session_id:
            metadata["session_id"] = session_id
        self._submit_write(_Write("turn", doc_id, turn.document(), metadata))

    def _may_capture(self) -> bool:
        settings = self.settings
        return settings is not None and settings.auto_capture and self._writes_enabled

    def sync_turn(
        self,
        user_content: str,
        assistant_content: str,
        *,
        session_id: str = "",
        messages: list[dict[str, Any]] | None = None,
    ) -> None:
        """Queue the finished turn for the background writer; returns at once."""
        if not self._may_capture():
            return
        try:
            self._capture(Turn(user_content, assistant_content), session_id or self._session_id)
        except Exception as exc:
            log.warning("Supermemory sync_turn failed: %s", exc)

    def _capture_transcript(self, messages: list[dict[str, Any]] | None) -> None:
        """Queue every turn of *messages* that was not captured yet."""
        if not self._may_capture() or not messages:
            return
        for turn in turns_from_messages(messages):
            self._capture(turn, self._session_id)

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        """Capture turns the host never synced, then wait (bounded) for queued writes."""
        try:
            self._capture_transcript(messages)
            if self.active and not self.flush(SESSION_END_DRAIN_SECONDS):
                log.warning(
                    "Supermemory: %d write(s) still waiting at session end", self.backlog_size
                )
        except Exception as exc:
            log.warning("Supermemory on_session_end failed: %s", exc)

    def on_pre_compress(self, messages: list[dict[str, Any]]) -> str:
        """Capture the turns about to be compressed away; adds nothing to the summary."""
        try:
            self._capture_transcript(messages)
        except Exception as exc:
            log.warning("Supermemory on_pre_compress failed: %s", exc)
        return ""

    def on_session_switch(
        self,
        new_session_id: str,
        *,
        parent_session_id: str = "",
        reset: bool = False,
        rewound: bool = False,
        **kwargs: Any,
    ) -> None:
        """Follow the new session id; a reset drops old-topic recall and re-warms the profile."""
        with self._lock:
            if new_session_id:
                self._session_id = new_session_id
            self._served = 0
            self._captured.clear()
            if reset:
                self._pending = None
                self._profile_fresh = False
        if reset and self.settings is not None and self.settings.auto_recall:
            worker = self._recall_worker
            if worker is not None:
                with contextlib.suppress(RuntimeError):
                    worker.submit("profile", self._warm_profile)

    def on_memory_write(
        self,
        action: str,
        target: str,
        content: str,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        """Mirror builtin memory: ``add`` stores, ``remove`` deletes, ``replace`` does both.

        The mirrored document's id derives from target and text, so a removal finds
        the document its ``add`` created (the removed text comes in
        ``metadata["previous_content"]``).
        """
        settings = self.settings
        if settings is None or not settings.mirror_builtin or not self._writes_enabled:
            return
        if target not in ("memory", "user"):
            return
        meta = dict(metadata or {})
        previous = meta.get("previous_content")
        base: Metadata = {"source": "hermes", "type": "builtin_memory", "target": target}
        if meta.get("session_id"):
            base["session_id"] = str(meta["session_id"])
        # Recalled context must never be stored again: <memory-context> fences go (as in
        # captured turns); an entry left empty by that is not mirrored.
        if action in ("replace", "remove") and isinstance(previous, str):
            previous = _stored_text(previous)
            if previous:
                doc_id = memory_document_id(target, previous)
                self._submit_write(_Write(f"{target} memory removal", doc_id, delete=True))
        text = _stored_text(content) if isinstance(content, str) else ""
        if action in ("add", "replace") and text:
            doc_id = memory_document_id(target, text)
            self._submit_write(_Write(f"{target} memory", doc_id, text, base))

    # ------------------------------------------------------------ tools and config

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return json.loads(json.dumps(TOOL_SCHEMAS))

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        tools = self._tools
        if tools is None:
            reason = self.unavailable_reason() or "the provider was not initialized"
            return _json({"error": f"Supermemory is not configured: {reason}"})
        try:
            return _json(self._call(lambda _service: tools.run(tool_name, args or {})))
        except ToolArgumentError as exc:
            return _json({"error": str(exc)})
        except ServiceError as exc:
            return _json({"error": str(exc), "retryable": exc.retryable})
        except Exception as exc:
            log.warning("Supermemory tool %s failed: %s", tool_name, exc)
            return _json({"error": f"Supermemory tool '{tool_name}' failed: {exc}"})

    def get_config_schema(self) -> list[dict[str, Any]]:
        return config_schema()

    def save_config(self, values: dict[str, Any], hermes_home: str) -> None:
        write_settings(values, hermes_home)


@functools.cache
def _sdk_version() -> str:
    """The installed supermemory SDK's version, read from its metadata once per process."""
    return importlib.metadata.version("supermemory")


def _stored_text(text: str) -> str:
    """*text* as it may be stored: ``<memory-context>`` fences removed, stripped."""
    return clean_text(sanitize_context(text)).strip()


def _json(value: dict[str, Any]) -> str:
    return json.dumps(value, ensure_ascii=False)
