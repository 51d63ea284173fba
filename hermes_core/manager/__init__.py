"""The memory manager: one place the host talks to, whatever providers are active.

:class:`MemoryManager` holds the builtin provider and at most one external
provider, routes tool calls to them by name, and fans every lifecycle hook out
to all of them so that one provider failing never fails a turn:

- **registration**: the builtin (``name == "builtin"``) always comes first and
  cannot be removed; a second external provider is refused with a warning;
  tool schemas are read before any state changes;
- **isolation**: each provider's hook runs inside its own ``try``; failures are
  logged (at the level listed in ``docs/manager.md``) and the others still run;
  a ``BaseException`` from provider code (``sys.exit()``, ``GeneratorExit``)
  counts as its failure (:func:`hermes_core.errors.contain`), only
  ``KeyboardInterrupt`` propagates;
- **bounded recall**: an external ``prefetch`` runs on that provider's own
  daemon thread and is waited for at most ``external_prefetch_timeout`` seconds;
  while a timed-out call is still running the provider is skipped, and its late
  result is discarded;
- **background writes**: ``sync_all``, ``queue_prefetch_all`` and
  ``commit_session_boundary_async`` run in order on one daemon worker; an
  external ``queue_prefetch`` runs on its own thread and holds the worker at
  most ``external_prefetch_timeout`` seconds, so a hung warm-up cannot stall
  the turns queued behind it;
  ``flush_pending`` waits for it and ``shutdown_all`` drains it for a bounded
  time, reporting what was abandoned;
- **egress redaction**: everything handed to a provider first goes through
  :func:`hermes_core.redaction.redact_egress`;
- **bounded intake**: text a provider hands back (prompt block, recall, tool
  result, pre-compress notes) is cleaned of unpaired surrogates and cut at a
  size limit, so one provider cannot make every request of a session fail.

Modules, one concept each:

* :mod:`~hermes_core.manager.core` — :class:`MemoryManager`: registration, routing, the hooks;
* :mod:`~hermes_core.manager.registration` — what is read from a provider when it registers;
* :mod:`~hermes_core.manager.intake` — size limits on what providers hand back;
* :mod:`~hermes_core.manager.mirror` — builtin memory writes mirrored to the external provider;
* :mod:`~hermes_core.manager.background` — the background worker and its bounded drain.
"""

from hermes_core.manager.core import (
    BUILTIN_PROVIDER_NAME,
    DEFAULT_DRAIN_TIMEOUT,
    DEFAULT_PREFETCH_TIMEOUT,
    RESERVED_TOOL_NAMES,
    MemoryManager,
    normalize_tool_schema,
)
from hermes_core.manager.intake import (
    MAX_PROMPT_BLOCK_CHARS,
    MAX_RECALL_CHARS,
    MAX_TOOL_RESULT_CHARS,
)

__all__ = [
    "BUILTIN_PROVIDER_NAME",
    "DEFAULT_DRAIN_TIMEOUT",
    "DEFAULT_PREFETCH_TIMEOUT",
    "MAX_PROMPT_BLOCK_CHARS",
    "MAX_RECALL_CHARS",
    "MAX_TOOL_RESULT_CHARS",
    "RESERVED_TOOL_NAMES",
    "MemoryManager",
    "normalize_tool_schema",
]
