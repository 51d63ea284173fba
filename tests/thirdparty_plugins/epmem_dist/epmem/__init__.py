"""epmem — a pip-installed provider exposed through ``hermes_agent.memory_providers``."""

__version__ = "0.5.0"
