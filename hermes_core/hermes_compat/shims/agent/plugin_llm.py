"""``agent.plugin_llm``: the class behind ``ctx.llm``, answered by the core's model client.

The very objects of :mod:`hermes_core.hermes_compat.plugin_llm`: plugins import
``PluginLlm`` for type hints and the result and input dataclasses to build or
read calls. A call needs a model configured in ``config.yaml``; without one it
raises :class:`~hermes_core.errors.LLMNotConfiguredError`.
"""

from typing import NoReturn

from hermes_core.hermes_compat.finder import missing_attribute
from hermes_core.hermes_compat.plugin_llm import (
    PluginLlm,
    PluginLlmCompleteResult,
    PluginLlmImageInput,
    PluginLlmInput,
    PluginLlmStructuredResult,
    PluginLlmTextInput,
    PluginLlmTrustError,
    PluginLlmUsage,
)

__hermes_compat__ = True

__all__ = [
    "PluginLlm",
    "PluginLlmCompleteResult",
    "PluginLlmImageInput",
    "PluginLlmInput",
    "PluginLlmStructuredResult",
    "PluginLlmTextInput",
    "PluginLlmTrustError",
    "PluginLlmUsage",
]


def __getattr__(name: str) -> NoReturn:
    raise missing_attribute(__name__, name, __all__)
