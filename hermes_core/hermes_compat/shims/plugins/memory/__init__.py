"""``plugins.memory``: ``plugins.memory.<name>`` is the loaded folder plugin ``<name>``.

Plugins bundled with Hermes Agent import their own modules absolutely
(``from plugins.memory.holographic.store import MemoryStore``); hermes-memory-core
maps those names onto the folder plugin of that name (see
:mod:`hermes_core.hermes_compat.aliases`).
"""

__hermes_compat__ = True
