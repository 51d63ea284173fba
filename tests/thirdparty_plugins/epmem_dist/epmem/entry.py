"""Hermes memory-provider discovery entry point."""

from .provider import EpMemProvider


def create_provider(ctx=None) -> EpMemProvider:
    """Create directly, or register with older collector-based Hermes loaders."""
    provider = EpMemProvider()
    if ctx is not None:
        ctx.register_memory_provider(provider)
    return provider
