"""``hermes_cli``: hermes-core standing in for Hermes Agent's CLI package."""

__hermes_compat__ = True
