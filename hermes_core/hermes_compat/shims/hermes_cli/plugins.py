"""``hermes_cli.plugins``: the part of Hermes Agent's plugin manager memory plugins build on.

Some memory plugins make a plugin context of their own when the one given to
``register(ctx)`` has no ``llm`` (Hermes' memory discovery gives some contexts
registration only): ``PluginContext(PluginManifest(name=..., key=...),
get_plugin_manager())``, then ``.llm``. Here that context's ``llm`` is
hermes-memory-core's model client for the plugin (``ctx.llm``), which, as Hermes' own,
raises when called while no model is configured. Registrations on it are
logged and ignored, and the manager lists no general plugins: hermes-memory
runs memory providers only.
"""

from typing import Any, NoReturn

from hermes_core.hermes_compat.context import PluginContext as _MemoryPluginContext
from hermes_core.hermes_compat.finder import missing_attribute

__hermes_compat__ = True

__all__ = ["PluginContext", "PluginManager", "PluginManifest", "get_plugin_manager"]


class PluginManifest:
    """A plugin's identity: ``name`` and ``key`` (its id), plus any other manifest field."""

    def __init__(self, name: str = "", key: str | None = None, **fields: Any) -> None:
        self.name = name
        self.key = key or name
        for field, value in fields.items():
            setattr(self, field, value)

    def __repr__(self) -> str:
        return f"PluginManifest(name={self.name!r}, key={self.key!r})"


class PluginManager:
    """Hermes' registry of general plugins; hermes-memory runs none, so it lists none."""

    def list_plugins(self) -> list[Any]:
        """The general plugins loaded: none."""
        return []

    def get_plugin(self, name: str) -> None:
        """The general plugin *name*: never loaded here."""
        return None


_MANAGER = PluginManager()


def get_plugin_manager() -> PluginManager:
    """The process-wide (empty) general-plugin manager."""
    return _MANAGER


class PluginContext(_MemoryPluginContext):
    """A context a plugin builds for itself: ``llm`` for its own model calls."""

    def __init__(self, manifest: Any = None, manager: Any = None, **_: Any) -> None:
        key = str(getattr(manifest, "key", None) or getattr(manifest, "name", None) or "plugin")
        super().__init__(plugin_id=key, label=f"plugin {key!r} (own context)")
        self.manifest = manifest
        self.manager = manager if manager is not None else _MANAGER

    def _plugin_llm(self) -> Any:
        from hermes_core.hermes_compat.plugin_llm import PluginLlm

        # Always present, as in Hermes: without a configured model a call raises
        # LLMNotConfiguredError saying what to set.
        if self._llm is None:
            self._llm = PluginLlm(plugin_id=self.plugin_id, tasks=self.auxiliary_tasks)
        return self._llm


def __getattr__(name: str) -> NoReturn:
    raise missing_attribute(__name__, name, __all__)
