"""``plugins``: stand-in for Hermes Agent's plugin tree, so ``plugins.memory.<name>`` resolves."""

__hermes_compat__ = True
