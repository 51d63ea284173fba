"""``hermes_constants``: where the active profile lives."""

from hermes_core.config import get_hermes_home

__hermes_compat__ = True

__all__ = ["get_hermes_home"]
