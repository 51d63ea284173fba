"""``BuiltinMemoryProvider``: the always-on provider of persistent memory and session search.

It owns two tools, routed to it by the ``MemoryManager``:

- ``memory``: add, replace and remove entries of ``MEMORY.md`` / ``USER.md``
  (see :mod:`hermes_memory_builtin.tool`);
- ``session_search``: recall of past conversations from ``state.db`` (see
  :mod:`hermes_memory_builtin.session_search`), opened on first use.

The system-prompt block is the frozen snapshot taken in ``initialize`` (and
again when the session id rotates), so memory writes during a session never
change the prompt.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_core.config import get_hermes_home, load_config
from hermes_core.errors import ConfigError
from hermes_core.provider import MemoryProvider
from hermes_core.users import valid_user_id
from hermes_memory_builtin.documents import PostgresDocuments, memory_url
from hermes_memory_builtin.mirror import WRITE_ORIGIN_ASSISTANT, build_mirror_metadata
from hermes_memory_builtin.policy import CurationPolicy, JudgePolicy
from hermes_memory_builtin.settings import MemorySettings
from hermes_memory_builtin.store import MemoryStore, memory_dir_for
from hermes_memory_builtin.tool import TOOL_NAME as MEMORY_TOOL_NAME
from hermes_memory_builtin.tool import MemoryTool, memory_schema

if TYPE_CHECKING:
    from types import ModuleType

    from hermes_memory_builtin.archive_rows import AnyArchive
    from hermes_memory_builtin.session_search import SessionSearchTool

logger = logging.getLogger(__name__)

SESSION_SEARCH_TOOL_NAME = "session_search"
UNSEEN_TOOLS_PLATFORMS = frozenset({"mcp"})
"""Hosts whose clients run tools memory never sees (an MCP client reads other servers):
outside a turn the client described (from ``on_turn_start`` to ``on_turn_end``), a
write nothing explains has origin ``client``, not ``model``."""
ARCHIVE_SEARCH_TOOL_NAME = "memory_search"
_SESSION_SEARCH_MODULE = "hermes_memory_builtin.session_search"


def _session_search_module() -> ModuleType | None:
    """The session-search module, imported on first need; ``None`` if it cannot load."""
    import importlib

    try:
        return importlib.import_module(_SESSION_SEARCH_MODULE)
    except ModuleNotFoundError as exc:
        if exc.name != _SESSION_SEARCH_MODULE:
            logger.warning("session_search is unavailable: %s", exc)
        return None
    except Exception as exc:  # a broken module must not take memory down with it
        logger.warning("session_search is unavailable: %s", exc)
        return None


def _session_store_installed() -> bool:
    """Whether the core ships the session store ``session_search`` reads (not imported)."""
    import importlib.util

    return importlib.util.find_spec("hermes_core.sessions") is not None


def _error(message: str) -> str:
    return json.dumps({"success": False, "error": message}, ensure_ascii=False)


class BuiltinMemoryProvider(MemoryProvider):
    """Always-on memory: MEMORY.md and USER.md, plus search over past sessions.

    *memory_store* injects a ready store (its own budgets and switches are then
    used); otherwise ``initialize`` builds one from ``$HERMES_HOME/config.yaml``.
    *memory_enabled* / *user_profile_enabled* override the configured switches
    for the system-prompt block.
    """

    def __init__(
        self,
        memory_store: MemoryStore | None = None,
        memory_enabled: bool | None = None,
        user_profile_enabled: bool | None = None,
    ) -> None:
        self._store = memory_store
        self._memory_enabled = memory_enabled
        self._user_profile_enabled = user_profile_enabled
        self._memory_tool = MemoryTool(memory_store)
        self._session_search: SessionSearchTool | None = None
        self._hermes_home: Path | None = None
        self._config: dict[str, Any] = {}
        self._session_id = ""
        self._parent_session_id = ""
        self._platform = ""
        self._agent_context = ""
        self._user_id: str | None = None
        self._owns_store = memory_store is None
        self._policy = CurationPolicy()
        self._archive: AnyArchive | None = None

    # -- identity ------------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return "builtin"

    def is_available(self) -> bool:
        """Always available: it needs nothing but the standard library."""
        return True

    @property
    def store(self) -> MemoryStore | None:
        """The memory store (``None`` before ``initialize`` unless one was injected)."""
        return self._store

    @property
    def memory_enabled(self) -> bool:
        """Whether ``MEMORY.md`` is shown in the prompt and writable."""
        if self._memory_enabled is not None:
            return self._memory_enabled
        return self._store.is_enabled("memory") if self._store is not None else True

    @property
    def user_profile_enabled(self) -> bool:
        """Whether ``USER.md`` is shown in the prompt and writable."""
        if self._user_profile_enabled is not None:
            return self._user_profile_enabled
        return self._store.is_enabled("user") if self._store is not None else True

    @property
    def user_id(self) -> str | None:
        """The user whose memory this provider serves (``None``: the single-user files)."""
        return self._user_id

    @property
    def session_id(self) -> str:
        """The session this provider serves now."""
        return self._session_id

    @property
    def session_search(self) -> SessionSearchTool | None:
        """The ``session_search`` tool, once ``initialize`` created it."""
        return self._session_search

    # -- lifecycle -----------------------------------------------------------------------------

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        """Load memory from ``$HERMES_HOME/memories`` and freeze the prompt snapshot.

        Reads ``hermes_home`` (default: the active ``HERMES_HOME``), ``platform``,
        ``agent_context``, ``parent_session_id`` and ``user_id`` from *kwargs*. With a
        ``user_id``, memory is that user's own files (``memories/users/<id>/``) and
        ``session_search`` sees only that user's sessions. A broken ``memory.*``
        setting is logged and the defaults are used, so memory keeps working; an
        unusable ``user_id`` raises :class:`~hermes_core.errors.ConfigError` (nothing
        of another user is ever served instead).
        """
        home = kwargs.get("hermes_home")
        hermes_home = Path(home) if home else get_hermes_home()
        user_id = valid_user_id(kwargs.get("user_id") or None)
        if self._owns_store and (user_id, hermes_home) != (self._user_id, self._hermes_home):
            self._store = None  # another user (or home) than the files opened so far
        self._user_id = user_id
        self._hermes_home = hermes_home
        self._session_id = session_id or ""
        self._platform = str(kwargs.get("platform") or "")
        self._agent_context = str(kwargs.get("agent_context") or "")
        self._parent_session_id = str(kwargs.get("parent_session_id") or "")
        try:
            self._config = load_config(self._hermes_home)
        except ConfigError as exc:
            logger.warning("%s Builtin memory uses its defaults.", exc)
            self._config = {}
        if self._store is None:
            url = memory_url(self._config)
            documents = PostgresDocuments(url, self._user_id or "") if url else None
            self._store = MemoryStore.from_settings(
                self._settings(), memory_dir_for(self._hermes_home, self._user_id), documents
            )
            self._memory_tool = MemoryTool(self._store)
        self._store.unattributed_origin = (
            "client" if self._platform in UNSEEN_TOOLS_PLATFORMS else "model"
        )
        self._open_archive()
        self._open_judge()
        self._store.load_from_disk()
        self._open_session_search()

    def check_config(self, config: Mapping[str, Any] | None) -> None:
        """Raise :class:`~hermes_core.errors.ConfigError` naming the first ``memory.*``
        setting builtin memory cannot use (``hermes-memory doctor`` reports it; a
        session uses the defaults instead)."""
        MemorySettings.from_config(config)
        CurationPolicy.from_config(config)
        JudgePolicy.from_config(config)

    def _settings(self) -> MemorySettings:
        try:
            return MemorySettings.from_config(self._config)
        except ConfigError as exc:
            logger.warning("%s Builtin memory uses its defaults.", exc)
            return MemorySettings()

    # -- the archive tier and the curator (see archive.py, curator.py) ---------------------------

    def _open_archive(self) -> None:
        """Open the archive beside the memory files and honour ``memory.overflow``."""
        from hermes_memory_builtin.archive import Archive
        from hermes_memory_builtin.archive_rows import PostgresArchive
        from hermes_memory_builtin.overflow import OverflowArchiver

        assert self._store is not None
        try:
            self._policy = CurationPolicy.from_config(self._config)
        except ConfigError as exc:
            logger.warning("%s Builtin memory uses its defaults.", exc)
            self._policy = CurationPolicy()
        if self._archive is not None:
            self._archive.close()
        documents = self._store.documents
        self._archive = PostgresArchive(documents) if documents else Archive(self._store.memory_dir)
        archiving = self._policy.overflow == "archive"
        self._store.overflow = OverflowArchiver(self._archive) if archiving else None

    def _open_judge(self) -> None:
        """Give the store the model judge when ``memory.judge`` is on (see judge.py)."""
        from hermes_memory_builtin.judge import judge_for

        assert self._store is not None
        try:
            policy = JudgePolicy.from_config(self._config)
        except ConfigError as exc:
            logger.warning("%s The model judge is off.", exc)
            policy = JudgePolicy()
        if self._store.judge is not None:
            self._store.judge.close()
        self._store.judge = (
            judge_for(self._config, self._hermes_home, timeout=policy.timeout)
            if policy.enabled
            else None
        )

    @property
    def policy(self) -> CurationPolicy:
        """The ``memory.overflow`` / ``memory.curator`` settings in effect."""
        return self._policy

    @property
    def archive(self) -> AnyArchive | None:
        """The archive tier (``None`` before ``initialize``)."""
        return self._archive

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        """Archived entries relevant to this turn (plain text; the runtime fences it)."""
        from hermes_memory_builtin.archive_search import recall_text, record_prompt_use

        if self._archive is None or self._store is None:
            return ""
        try:
            if self._policy.curator != "off" and self._archive.exists():
                entries = {name: self._store.entries(name) for name in ("memory", "user")}
                record_prompt_use(self._archive, query, entries)
            return recall_text(self._archive, query)
        except Exception as exc:  # recall failing must not fail the turn
            logger.warning("Archive recall failed: %s", exc)
            return ""

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        """Run the curator (``memory.curator: review`` or ``auto``); changes show next session."""
        if self._policy.curator == "off" or self._store is None or self._archive is None:
            return
        from hermes_memory_builtin.curator import Curator
        from hermes_memory_builtin.curator_model import judge_for

        judge = None
        if self._policy.model:
            judge = judge_for(self._config, self._hermes_home, max_calls=self._policy.model_calls)
        curator = Curator(
            self._store.memory_dir,
            self._archive,
            limits={name: self._store.char_limit(name) for name in ("memory", "user")},
            policy=self._policy,
            judge=judge,
        )
        try:
            curator.run(apply=self._policy.curator == "auto")
        except Exception as exc:  # a failed curation leaves the files as they were
            logger.warning("The memory curator failed: %s", exc)

    def _open_session_search(self) -> None:
        if self._session_search is not None:
            self._session_search.close()
            self._session_search = None
        module = _session_search_module()
        if module is None or self._hermes_home is None:
            return
        try:
            tool: SessionSearchTool = module.SessionSearchTool(
                self._hermes_home, self._config, user_id=self._user_id
            )
        except Exception as exc:  # session search failing must not take memory down
            logger.warning("session_search is unavailable: %s", exc)
            return
        tool.set_session(self._session_id or None)
        self._session_search = tool

    def shutdown(self) -> None:
        """Close the session database if session search opened it, the archive, the judge and
        the memory database connection (reopened on the next use)."""
        if self._archive is not None:
            self._archive.close()
        if self._store is not None and self._store.judge is not None:
            self._store.judge.close()
            self._store.judge = None
        if self._owns_store and self._store is not None and self._store.documents is not None:
            self._store.documents.close()
        if self._session_search is not None:
            self._session_search.close()
            self._session_search = None

    def sync_turn(
        self,
        user_content: str,
        assistant_content: str,
        *,
        session_id: str = "",
        messages: list[dict[str, Any]] | None = None,
    ) -> None:
        """After a turn (on the host's background worker): embed new messages for
        ``session_search``'s semantic recall, when it is on; the turn itself is stored by
        the host."""
        if self._session_search is not None:
            self._session_search.index_recent()

    def on_turn_start(self, turn_number: int, message: str, **kwargs: Any) -> None:
        """A new turn: restart the per-turn count of failed memory consolidations and
        remember the user's message (a write repeating it is user-stated). A host that
        announces its turns describes them: writes nothing explains are ``model``."""
        if self._store is not None:
            self._store.consolidation.start_turn()
            self._store.turn_user_message = message if isinstance(message, str) else None
            self._store.turn_tool_output = ""
            self._store.unattributed_origin = "model"

    def on_turn_end(self, turn_number: int, **kwargs: Any) -> None:
        """The turn was handed over. Where the host cannot see the client's tools (MCP), the
        client described that turn only: until it describes the next, a write nothing explains
        is ``client`` again and the finished turn's user message vouches for none. Its tool
        output still counts (a repeat is ``tool``) until the next turn starts, as anywhere.
        Elsewhere nothing changes: the host announces every turn."""
        if self._store is not None and self._platform in UNSEEN_TOOLS_PLATFORMS:
            self._store.turn_user_message = None
            self._store.unattributed_origin = "client"

    def on_tool_result(self, tool_name: str, result: str, **kwargs: Any) -> None:
        """Untrusted output of a tool this turn (a web page, a file, another agent): a write
        repeating it is tool-derived and held for review. Results of the builtin's own tools
        (memory itself, past conversations) do not count."""
        if self._store is None or kwargs.get("provider") == self.name:
            return
        if isinstance(result, str):
            self._store.note_tool_output(result)

    def on_session_switch(
        self,
        new_session_id: str,
        *,
        parent_session_id: str = "",
        reset: bool = False,
        rewound: bool = False,
        **kwargs: Any,
    ) -> None:
        """Follow the new session id; a new session also takes a fresh snapshot.

        ``rewound`` (same session, shorter transcript) keeps the snapshot so the
        prompt stays byte-identical; ``reset`` also forgets consolidation
        failures, since it starts a new conversation.
        """
        self._session_id = new_session_id or ""
        self._parent_session_id = parent_session_id or ""
        if self._session_search is not None:
            self._session_search.set_session(self._session_id or None)
        if self._store is None:
            return
        if reset:
            self._store.reset_consolidation_failures()
        if not rewound:
            self._store.load_from_disk()

    # -- prompt and tools ------------------------------------------------------------------------

    def system_prompt_block(self) -> str:
        """The frozen snapshot: the ``MEMORY.md`` block, then the ``USER.md`` block."""
        if self._store is None:
            return ""
        blocks = []
        if self.memory_enabled:
            blocks.append(self._store.format_for_system_prompt("memory"))
        if self.user_profile_enabled:
            blocks.append(self._store.format_for_system_prompt("user"))
        return "\n\n".join(block for block in blocks if block)

    def _enabled_targets(self) -> list[str]:
        targets = []
        if self.memory_enabled:
            targets.append("memory")
        if self.user_profile_enabled:
            targets.append("user")
        return targets

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        """The ``memory`` schema (when a target is enabled) and the ``session_search`` schema."""
        schemas = []
        targets = self._enabled_targets()
        if targets:
            schema = memory_schema(targets)
            if self._policy.overflow == "archive":
                from hermes_memory_builtin.overflow import archive_schema

                schema = archive_schema(schema)
            schemas.append(schema)
            if self._policy.uses_archive:
                from hermes_memory_builtin.archive_search import SCHEMA as ARCHIVE_SEARCH_SCHEMA

                schemas.append(dict(ARCHIVE_SEARCH_SCHEMA))
        if _session_store_installed():
            from hermes_memory_builtin.session_search_schema import SESSION_SEARCH_SCHEMA

            schemas.append(dict(SESSION_SEARCH_SCHEMA))
        return schemas

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        """Run ``memory`` or ``session_search`` and return its JSON result."""
        if tool_name == MEMORY_TOOL_NAME:
            return self._memory_tool(args)
        if tool_name == ARCHIVE_SEARCH_TOOL_NAME and self._archive is not None:
            from hermes_memory_builtin.archive_search import run_search_tool

            return run_search_tool(self._archive, args)
        if tool_name == SESSION_SEARCH_TOOL_NAME:
            if self._session_search is None:
                return _error(
                    "session_search is not available: the provider is not initialised or "
                    "the session store could not be loaded."
                )
            return self._session_search(args)
        return _error(f"The builtin memory provider has no tool named {tool_name!r}.")

    # -- mirroring -----------------------------------------------------------------------------

    def mirror_metadata(self, **overrides: Any) -> dict[str, str]:
        """Metadata for mirroring a committed write of this session to external providers.

        Defaults come from the session (id, parent, platform, agent context);
        *overrides* may set ``write_origin``, ``task_id``, ``tool_call_id`` …
        """
        values: dict[str, Any] = {
            "write_origin": WRITE_ORIGIN_ASSISTANT,
            "session_id": self._session_id,
            "parent_session_id": self._parent_session_id,
            "platform": self._platform,
            "execution_context": self._agent_context,
            "tool_name": MEMORY_TOOL_NAME,
        }
        values.update(overrides)
        return build_mirror_metadata(**values)

    def metadata_builder(self, **overrides: Any) -> Callable[[], dict[str, str]]:
        """A ``build_metadata`` callable for ``MemoryManager.notify_memory_tool_write``."""
        return lambda: self.mirror_metadata(**overrides)
