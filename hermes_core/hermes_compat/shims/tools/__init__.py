"""``tools``: hermes-memory-core standing in for Hermes Agent's ``tools`` package."""

__hermes_compat__ = True
