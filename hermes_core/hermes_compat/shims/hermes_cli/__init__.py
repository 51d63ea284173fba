"""``hermes_cli``: hermes-memory-core standing in for Hermes Agent's CLI package."""

__hermes_compat__ = True
