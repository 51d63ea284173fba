from __future__ import annotations

import os

from config import FlatConfig
from provider import FlatProvider


def register(ctx: object) -> None:
    hermes_home = os.environ.get("HERMES_HOME", os.path.expanduser("~/.hermes"))
    config = FlatConfig(data_dir=os.path.join(hermes_home, "flatpack"))
    provider = FlatProvider(config=config)
    ctx.register_memory_provider(provider)  # type: ignore[attr-defined]
