"""Testing support shipped with hermes-core: the provider conformance suite and fakes.

``from hermes_core.testing import ProviderConformance`` gives the class-based
suite a provider's tests subclass (it needs the ``testing`` extra: pytest and
hypothesis). Names load on first use, so importing this package costs nothing.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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
    from hermes_core.testing.capabilities import Capability
    from hermes_core.testing.netguard import block_network
    from hermes_core.testing.pool import ProviderPool
    from hermes_core.testing.schema_check import tool_schema_problems
    from hermes_core.testing.suite import ProviderConformance, StoreInspector


def __getattr__(name: str) -> Any:
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module 'hermes_core.testing' has no attribute {name!r}")
    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
