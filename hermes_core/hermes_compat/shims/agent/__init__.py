"""``agent``: hermes-memory-core standing in for Hermes Agent's ``agent`` package."""

__hermes_compat__ = True
