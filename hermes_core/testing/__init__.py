"""Testing support shipped with hermes-memory-core: the provider conformance suite and fakes.

``from hermes_core.testing import ProviderConformance`` gives the class-based
suite a provider's tests subclass (it needs the ``testing`` extra: pytest and
hypothesis). Names load on first use, so importing this package costs nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_core.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "ProviderConformance": "hermes_core.testing.suite",
    "StoreInspector": "hermes_core.testing.suite",
    "ProviderPool": "hermes_core.testing.pool",
    "Capability": "hermes_core.testing.capabilities",
    "tool_schema_problems": "hermes_core.testing.schema_check",
    "block_network": "hermes_core.testing.netguard",
}

__all__ = [
    "Capability",
    "ProviderConformance",
    "ProviderPool",
    "StoreInspector",
    "block_network",
    "tool_schema_problems",
]

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    # "import X as X": explicit re-exports, so `mypy --strict` accepts
    # `from hermes_core.testing import ProviderConformance` in a provider's tests.
    from hermes_core.testing.capabilities import Capability as Capability
    from hermes_core.testing.netguard import block_network as block_network
    from hermes_core.testing.pool import ProviderPool as ProviderPool
    from hermes_core.testing.schema_check import tool_schema_problems as tool_schema_problems
    from hermes_core.testing.suite import ProviderConformance as ProviderConformance
    from hermes_core.testing.suite import StoreInspector as StoreInspector

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
